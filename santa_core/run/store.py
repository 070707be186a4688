"""The persistence contract the runner needs; `storage.repo.Repo` implements it.

Every method commits before it returns, so a step the runner has finished is never lost.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, Field

from santa_core.models import (
    FixProposal,
    GateResult,
    ReviewOutcome,
    Rubric,
    RunState,
    RunStatus,
    Slot,
)

DecisionAction = Literal[
    "approve", "edit", "reject", "auto_approve", "ship_as_is", "rereview", "resolve_reject"
]


class DecisionIn(BaseModel):
    """A decision to append: what a person (or auto-approve) did, and the text before and after."""

    action: DecisionAction
    actor: str
    reason: str
    before_text: str
    after_text: str


class RunRecord(BaseModel):
    """A run as the runner reads it."""

    id: int
    state: RunState
    spec: str
    rubric: Rubric
    reviewer_b: str
    reviewer_c: str
    fixer: str
    auto_approve: bool = False
    budget_usd: float | None = None
    spent_usd: float = 0.0


class RoundRecord(BaseModel):
    """One round as stored: its input output text and whatever has been committed so far."""

    round_no: int
    output_text: str
    reviews: dict[Slot, ReviewOutcome] = Field(default_factory=dict)
    gate: GateResult | None = None
    proposal: FixProposal | None = None


class Store(Protocol):
    """What the runner persists through. Every call is its own committed transaction."""

    def load_run(self, run_id: int) -> RunRecord:
        """The run with its current state, rubric and money spent so far."""
        ...

    def load_round(self, run_id: int, round_no: int) -> RoundRecord | None:
        """The stored round, or None when it has not started."""
        ...

    def transition(
        self, run_id: int, expected: set[RunStatus], new: RunState, actor: str, note: str = ""
    ) -> bool:
        """Compare-and-set the run state; False when the run was not in `expected`."""
        ...

    def start_round(self, run_id: int, round_no: int, output_text: str) -> None:
        """Create the round with its output text (idempotent)."""
        ...

    def save_review(
        self, run_id: int, round_no: int, outcome: ReviewOutcome, only_if_empty: bool = False
    ) -> bool:
        """Commit one reviewer's outcome (and its LLM calls) for the round.

        With only_if_empty, an occupied slot is left alone and the call returns False.
        """
        ...

    def save_gate(self, run_id: int, round_no: int, gate: GateResult) -> None:
        """Commit the gate decision and the merged issues of the round."""
        ...

    def save_proposal(self, run_id: int, round_no: int, proposal: FixProposal) -> None:
        """Commit the fix agent's proposal (and its LLM calls) for the round."""
        ...

    def commit_decision(
        self,
        run_id: int,
        expected: RunState,
        new: RunState,
        decision: DecisionIn,
        next_round_text: str | None = None,
    ) -> bool:
        """Atomically: append the decision, start the next round (if given), move the state.

        False, with nothing written, when the run is no longer in `expected` status and round.
        """
        ...

    def record_decision(
        self,
        run_id: int,
        round_no: int,
        action: DecisionAction,
        actor: str,
        reason: str,
        before_text: str,
        after_text: str,
    ) -> None:
        """Append a decision row (never updated, never deleted)."""
        ...
