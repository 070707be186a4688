"""The persistence contracts of a run: what the runner writes through (`Store`) and what a
person's actions write through (`ActionStore`); `storage.runs.RunStore` implements both.

Every method commits before it returns, so a step the runner has finished is never lost.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from santa_core.models import (
    FixProposal,
    GateResult,
    ReviewOutcome,
    Rubric,
    RunState,
    RunStatus,
    ScreenCheck,
    ScreenResult,
    Slot,
)
from santa_core.reviewers.base import CallLog

Resolution = Literal["ship_as_is", "rereview", "reject"]
"""How a person resolves an escalation on the Escalations page."""
Closing = Resolution | Literal["try_again"]
"""Every move of a person that closes an escalation: a resolution, or Try again (only a run the model provider
failed, `santa_core.run.actions.try_again`)."""
Source = Literal["app", "cli", "batch"]
"""Where a run was started: the app's New run page, the command line, or a batch."""
DecisionAction = Literal[
    "approve", "edit", "reject", "retry_fix", "auto_approve", "ship_as_is", "rereview", "resolve_reject", "try_again"
]


class Conflict(RuntimeError):
    """Someone else changed the run's state first, or holds its claim now; this worker stops touching it."""


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
    reviewer_d: str | None = None
    """The third reviewer's model, for a rubric with high-risk criteria (None: the run has none)."""
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
    fix_attempts: int = 0
    """How many fix proposals this round has had (a person may ask the fix agent again)."""
    screens: dict[str, ScreenResult] = Field(default_factory=dict)
    """The screens of this round's texts, by `ScreenResult.entry`: the known-answer screen by role ("spec and
    output"), the extraction check by "<role> (extraction)"."""


class Store(CallLog, Protocol):
    """What the runner persists through. Every call is its own committed transaction."""

    def load_run(self, run_id: int) -> RunRecord:
        """The run with its current state, rubric and money spent so far."""
        ...

    def load_round(self, run_id: int, round_no: int) -> RoundRecord | None:
        """The stored round, or None when it has not started."""
        ...

    def transition(self, run_id: int, expected: set[RunStatus], new: RunState, actor: str, note: str = "") -> bool:
        """Compare-and-set the run state; False when the run was not in `expected`."""
        ...

    def start_round(self, run_id: int, round_no: int, output_text: str) -> None:
        """Create the round with its output text (idempotent)."""
        ...

    def save_review(self, run_id: int, round_no: int, outcome: ReviewOutcome, only_if_empty: bool = False) -> bool:
        """Commit one reviewer's outcome (and its LLM calls) for the round.

        With only_if_empty, an occupied slot is left alone and the call returns False.
        """
        ...

    def save_gate(self, run_id: int, round_no: int, gate: GateResult) -> None:
        """Commit the gate decision and the merged issues of the round."""
        ...

    def note_sent(
        self,
        run_id: int,
        round_no: int,
        slot: Slot | None,
        purpose: str,
        model: str,
        request: dict,
        estimate_usd: float,
    ) -> None:
        """Commit a model call as *sent* before its request leaves (the write-ahead call log). Its answer,
        when it comes, is stored with the review, screen or proposal; until then the run's cost counts the
        call at `estimate_usd`, the most it may cost."""
        ...

    def save_screen(self, run_id: int, round_no: int, result: ScreenResult) -> None:
        """Commit one known-answer screen of the round (and its LLM call, when one was made)."""
        ...

    def screened(self, text_hash: str, model: str, check: ScreenCheck = "key") -> ScreenResult | None:
        """An earlier clean verdict of this check of this text by this model, unless any took the model over (or
        quoted the text)."""
        ...

    def save_proposal(self, run_id: int, round_no: int, proposal: FixProposal) -> None:
        """Commit the fix agent's proposal (and its LLM calls) for the round."""
        ...

    def commit_decision(
        self, run_id: int, expected: RunState, new: RunState, decision: DecisionIn, next_round_text: str | None = None
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


def current_round(store: Store, run: RunRecord) -> RoundRecord:
    """The run's current round: stored with the state that points at it, so its absence is a broken store."""
    rnd = store.load_round(run.id, run.state.round)
    if rnd is None:
        raise RuntimeError(f"run {run.id} has no stored round {run.state.round}")
    return rnd


class ActionStore(Store, Protocol):
    """What a person's actions write through, beyond the runner's steps. Each call checks the actor's
    stored roles inside its own transaction and writes nothing when it refuses."""

    def create_run(
        self,
        spec: str,
        output: str,
        rubric: Rubric,
        reviewer_b: str,
        reviewer_c: str,
        fixer: str,
        auto_approve: bool = False,
        budget_usd: float | None = None,
        max_rounds: int = 3,
        created_by: str = "local",
        source: Source = "app",
        person_b: str | None = None,
        person_c: str | None = None,
        generation_cost_usd: float | None = None,
        reviewer_d: str | None = None,
    ) -> int:
        """Commit a queued run with round 1 holding `output`; its id."""
        ...

    def resolve_escalation(
        self,
        run_id: int,
        resolution: Closing,
        actor: str,
        justification: str,
        edited_output: str | None = None,
        escalation_id: int | None = None,
    ) -> RunState:
        """Resolve the run's open escalation (the one the person looked at) in one transaction; the new state."""
        ...

    def assign_escalation(self, run_id: int, owner: str | None, actor: str, escalation_id: int | None = None) -> None:
        """Give the open escalation an owner (None: unassign)."""
        ...

    def set_due(self, run_id: int, due_at: datetime, actor: str, escalation_id: int | None = None) -> None:
        """Set the open escalation's due time."""
        ...

    def assign_person_slot(self, run_id: int, slot: Slot, person: str | None, actor: str) -> None:
        """Assign a person reviewer slot to someone who may review (None: anyone)."""
        ...

    def report_escape(self, run_id: int, criterion: str, description: str, severity: str, actor: str) -> int:
        """Record a defect found after the run shipped; its id."""
        ...

    def mark_interrupted(self) -> list[int]:
        """Runs left `running` by a process that is gone become `interrupted`; their ids."""
        ...
