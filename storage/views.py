"""Read models of runs for the pages and the command line: a run, its rounds, decisions, history,
escalations and escapes, a runs-list line and a slot waiting for a person.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from santa_core.models import SETTLED_STATUSES, EscalationReason, Rubric, RunState, RunStatus, Slot
from santa_core.reports.record_cost import CutOffCall
from santa_core.reviewers.base import PERSON
from santa_core.run.store import RoundRecord


class DecisionView(BaseModel):
    """One append-only decision row."""

    id: int
    round_no: int
    action: str
    actor: str
    reason: str
    before_hash: str
    after_hash: str
    after_text: str
    created_at: datetime


class StateChangeView(BaseModel):
    """One committed status change (`from_status` is None for the run's creation)."""

    id: int
    from_status: RunStatus | None
    to_status: RunStatus
    actor: str
    note: str
    created_at: datetime


class EscalationView(BaseModel):
    """An escalation with the run facts the queue shows."""

    id: int
    run_id: int
    reason: EscalationReason
    status: Literal["open", "resolved"]
    created_at: datetime
    resolution: str | None = None
    resolved_by: str | None = None
    resolved_at: datetime | None = None
    justification: str | None = None
    owner: str | None = None
    due_at: datetime | None = None
    run_status: RunStatus
    round: int
    rubric_name: str
    rubric_version: int = 0
    run_created_at: datetime | None = None

    def overdue(self, now: datetime) -> bool:
        """Open and past its due time."""
        return self.status == "open" and self.due_at is not None and self.due_at <= now


class EscapeView(BaseModel):
    """A defect reported after the run shipped."""

    id: int
    run_id: int
    criterion: str
    description: str
    severity: str
    reported_by: str
    created_at: datetime
    source: str = "reported"
    """"reported" or "spot_check" (a blind spot-check failed the criterion)."""
    spot_check_id: int | None = None
    evidence: str | None = None
    passed_by: list[str] | None = None
    """The reviewers of the shipped round that PASSed the criterion (spot-check escapes)."""


class RoundView(RoundRecord):
    """A stored round with its hash, start time, decisions and cost."""

    output_hash: str
    started_at: datetime
    decisions: list[DecisionView]
    cost_usd: float


class RunView(BaseModel):
    """Everything a page needs to render one run."""

    id: int
    state: RunState
    created_at: datetime
    updated_at: datetime
    spec: str
    original_output: str
    rubric: Rubric
    reviewer_b: str
    reviewer_c: str
    reviewer_d: str | None = None
    """The third reviewer's model, for a rubric with high-risk criteria (None: two reviewers)."""
    fixer: str
    auto_approve: bool
    budget_usd: float | None
    created_by: str
    source: str
    person_b: str | None = None
    person_c: str | None = None
    rounds: list[RoundView]
    history: list[StateChangeView]
    escalations: list[EscalationView]
    escapes: list[EscapeView] = []
    total_cost_usd: float
    cut_off: list[CutOffCall] = []
    """Calls sent and never answered that no live process waits for any more (a crash, a kill, a lost connection);
    their estimates are in total_cost_usd."""
    in_flight: list[CutOffCall] = []
    """Calls sent whose answer the process driving the run still waits for (the run is running under its live
    claim); their estimates are in total_cost_usd too, until the answer replaces them."""
    current_output: str
    final_output: str | None
    """The text that shipped (shipped / resolved_shipped), else None."""
    batch_id: int | None = None
    """The batch whose sample this run reviews (None: a run of its own)."""
    batch_paused: bool = False
    """Whether that batch is paused (its queued reviews wait for it to be resumed)."""

    @property
    def status(self) -> RunStatus:
        """The run's status."""
        return self.state.status

    @property
    def escalation(self) -> EscalationView | None:
        """The latest escalation, open or resolved."""
        return self.escalations[-1] if self.escalations else None

    @property
    def current_round(self) -> RoundView | None:
        """The round the state points at, once stored."""
        return next((r for r in self.rounds if r.round_no == self.state.round), None)

    @property
    def blind(self) -> bool:
        """A person reviewer's slot of the current round is open, so everything else stays hidden
        (the same rule as `RunStore.blind_run_ids`: settled and escalated runs wait for no reviewer)."""
        if self.status in SETTLED_STATUSES:
            return False
        rnd = self.current_round
        reviews = {} if rnd is None else rnd.reviews
        persons = [slot for slot, who in (("B", self.reviewer_b), ("C", self.reviewer_c)) if who == PERSON]
        return (rnd is None or rnd.gate is None) and any(slot not in reviews for slot in persons)


class RunSummary(BaseModel):
    """One line of the runs list."""

    id: int
    status: RunStatus
    rubric_name: str
    rubric_version: int
    rounds: int
    cost_usd: float
    created_at: datetime
    updated_at: datetime
    escalation_reason: EscalationReason | None
    created_by: str
    source: str
    reviewer_b: str
    reviewer_c: str
    auto_approve: bool
    batch_id: int | None = None
    """The batch whose sample this run reviews (None: a run of its own)."""
    worker: str | None = None
    """The process that claimed the run (running) or queued it (queued): host:pid:start."""
    preview: str = ""
    """The beginning of the output as submitted, on one line."""


class RunClaim(BaseModel):
    """Who holds a run (the sweep's judgement of a batch sample's reviews)."""

    status: RunStatus
    note: str
    worker: str | None
    """The process that claimed the run (running) or queued it (queued): host:pid:start."""
    updated_at: datetime


class PendingReview(BaseModel):
    """A reviewer slot a person still has to fill."""

    run_id: int
    round_no: int
    slot: Slot
    reviewer: str
    assignee: str | None = None
    """The person the slot is assigned to; None: anyone who may review."""
    filled_other_slot_by: str | None = None
    """Who already filled the run's other slot this round (they may not fill this one too)."""
    rubric_name: str
    rubric_version: int
    waiting_since: datetime
