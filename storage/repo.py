"""`Repo`: the `Store` the runner persists through, plus the queries the pages render.

Every public method is one short transaction that has committed when it returns. Write
transactions lock the run row first (SQLite: `BEGIN IMMEDIATE` already holds the database write
lock; PostgreSQL: `SELECT ... FOR UPDATE`), so concurrent writers of a run are serialised and a
read-modify-write never loses an update. Reads use a snapshot that takes no write lock.

`decision`, `state_change` and `llm_call` rows are only ever inserted: nothing in this module
updates or deletes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, get_args

from pydantic import BaseModel
from sqlalchemy import Engine, func
from sqlmodel import Session, SQLModel, select

from santa_core.config import Defaults
from santa_core.models import (
    MAX_TEXT_CHARS,
    SETTLED_STATUSES,
    CheckOutcome,
    EscalationReason,
    FixEdit,
    FixProposal,
    GateDecision,
    GateResult,
    LLMCall,
    MergedIssue,
    RejectedEdit,
    Review,
    ReviewOutcome,
    ReviewStatus,
    Rubric,
    RunState,
    RunStatus,
    Slot,
    Usage,
)
from santa_core.reviewers.base import PERSON
from santa_core.roles import SYSTEM_ACTORS, Permission, PermissionDenied, must_differ
from santa_core.run import engine as state_machine
from santa_core.run.store import DecisionAction, DecisionIn, RoundRecord, RunRecord
from storage import audit
from storage.audit import AuditStore
from storage.hashing import content_hash, json_hash, sha256_text
from storage.metrics import MetricsStore, refresh_touched, touch
from storage.people import PeopleStore, require
from storage.rubrics import RubricStore
from storage.sessions import Transactions
from storage.sessions import utc as _utc
from storage.tables import (
    DecisionRow,
    EscalationRow,
    EscapeRow,
    LLMCallRow,
    MergedIssueRow,
    ProposalRow,
    ReviewRow,
    RoundRow,
    RunRow,
    SettingsRow,
    StateChangeRow,
    utcnow,
)
from storage.workers import is_orphaned, this_worker

Resolution = Literal["ship_as_is", "rereview", "reject"]
Source = Literal["app", "cli", "batch"]

RESOLUTION_ACTION: dict[str, DecisionAction] = {
    "ship_as_is": "ship_as_is",
    "rereview": "rereview",
    "reject": "resolve_reject",
}
"""The decision action recorded for each way of resolving an escalation."""

DECISION_PERMISSION: dict[str, Permission] = {
    "approve": Permission.DECIDE_FIX,
    "edit": Permission.DECIDE_FIX,
    "reject": Permission.DECIDE_FIX,
    "auto_approve": Permission.DECIDE_FIX,  # only a system actor (auto-approve) records these
    "ship_as_is": Permission.RESOLVE_ESCALATION,
    "rereview": Permission.RESOLVE_ESCALATION,
    "resolve_reject": Permission.RESOLVE_ESCALATION,
}
"""What a person must be allowed to do to record each decision."""

_PERSON_MOVES: dict[RunStatus, tuple[state_machine.Event, Permission]] = {
    RunStatus.INTERRUPTED: (state_machine.Resume(), Permission.RESUME_RUN),
    RunStatus.AWAITING_HUMAN_REVIEW: (state_machine.HumanReviewSubmitted(), Permission.PERSON_REVIEW),
}
"""The only moves `transition` makes for a person (not system code): from this status, the
engine's state after this event, with this permission. Every other move is the engine's own
(system actors), and an escalation is left only through `resolve_escalation`."""

SEVERITIES = ("critical", "major", "minor")
"""How bad an escape is, as the reporter judges it."""

_RESOLVED_AS: dict[RunStatus, Resolution] = {
    RunStatus.RESOLVED_SHIPPED: "ship_as_is",
    RunStatus.RESOLVED_REJECTED: "reject",
}
_USAGE_COLS = tuple(Usage.model_fields)
_RUN_COPIED = frozenset(
    {
        "id",
        "spec",
        "original_output",
        "reviewer_b",
        "reviewer_c",
        "fixer",
        "auto_approve",
        "budget_usd",
        "created_by",
        "source",
        "rubric_name",
        "rubric_version",
        "person_b",
        "person_c",
    }
)
"""Run columns that views copy as they are."""


_SETTLED = SETTLED_STATUSES


class RunNotFound(LookupError):
    """No run has this id."""

    def __init__(self, run_id: int) -> None:
        super().__init__(f"run {run_id} does not exist")
        self.run_id = run_id


class RoundNotFound(LookupError):
    """The run has no stored round with this number (start_round was not called)."""

    def __init__(self, run_id: int, round_no: int) -> None:
        super().__init__(f"run {run_id} has no round {round_no}")
        self.run_id, self.round_no = run_id, round_no


class SlotAssigned(ValueError):
    """A person may not fill this reviewer slot: it is someone else's, or they filled the other one."""


class EscalationNotOpen(LookupError):
    """The run has no open escalation to assign, re-date or resolve."""


class RoundConflict(ValueError):
    """start_round with a different text for a round that reviewers already worked on."""


class MoveRefused(ValueError):
    """A person asked `transition` for a move that only system code (or resolve_escalation) makes."""


# --- views for the pages --------------------------------------------------------------------


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
    current_output: str
    final_output: str | None
    """The text that shipped (shipped / resolved_shipped), else None."""

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
        (the same rule as `Repo.blind_run_ids`: settled and escalated runs wait for no reviewer)."""
        if self.status in _SETTLED:
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


# --- pure helpers ---------------------------------------------------------------------------


def _utc_or_none(value: datetime | None) -> datetime | None:
    """`_utc` that passes None through."""
    return None if value is None else _utc(value)


def _usage_values(usage: Usage) -> dict[str, int]:
    """Usage as column values."""
    return usage.model_dump()


def _usage_of(row: SQLModel) -> Usage:
    """The usage columns of a row."""
    return Usage(**{k: getattr(row, k) for k in _USAGE_COLS})


def _state_of(row: RunRow) -> RunState:
    """The engine's view of a run row."""
    return RunState(
        status=RunStatus(row.status),
        round=row.round,
        max_rounds=row.max_rounds,
        round_cap=row.round_cap,
        escalation_reason=row.escalation_reason,
        note=row.note,
        review_only=row.batch_id is not None,
    )


def _call_row(
    run_id: int, round_no: int, call: LLMCall, slot: str | None
) -> LLMCallRow:
    """An llm_call row for one request/response pair."""
    return LLMCallRow(
        run_id=run_id,
        round_no=round_no,
        purpose=call.purpose,
        slot=slot,
        model=call.model,
        request_json=call.request,
        response_text=call.response,
        content_hash=content_hash(call.request, call.response),
        cost_usd=call.cost_usd,
        latency_s=call.latency_s,
        error=call.error,
        **_usage_values(call.usage),
    )


def _call_of(row: LLMCallRow) -> LLMCall:
    """An LLMCall back from its row."""
    return LLMCall(
        purpose=row.purpose,
        model=row.model,
        request=row.request_json,
        response=row.response_text,
        usage=_usage_of(row),
        cost_usd=row.cost_usd,
        latency_s=row.latency_s,
        error=row.error,
    )


def _review_values(outcome: ReviewOutcome, call_ids: list[int]) -> dict[str, Any]:
    """Column values of a review row for an outcome."""
    review = outcome.review
    return {
        "slot": outcome.slot,
        "reviewer": outcome.reviewer,
        "status": outcome.status.value,
        "verdict": outcome.effective_verdict,
        "review_json": None if review is None else review.model_dump(mode="json"),
        "error": outcome.error,
        "cost_usd": outcome.cost_usd,
        "latency_s": outcome.latency_s,
        "raw_response": outcome.raw_response,
        "call_ids": call_ids,
        **_usage_values(outcome.usage),
    }


def _outcome_of(row: ReviewRow, calls: dict[int, LLMCallRow]) -> ReviewOutcome:
    """A ReviewOutcome back from its row and its llm_call rows."""
    review = None if row.review_json is None else Review.model_validate(row.review_json)
    return ReviewOutcome(
        slot=row.slot,
        reviewer=row.reviewer,
        status=ReviewStatus(row.status),
        review=review,
        error=row.error,
        usage=_usage_of(row),
        cost_usd=row.cost_usd,
        latency_s=row.latency_s,
        raw_response=row.raw_response,
        calls=[_call_of(calls[i]) for i in row.call_ids],
    )


def _issue_rows(
    run_id: int, round_no: int, issues: list[MergedIssue]
) -> list[MergedIssueRow]:
    """merged_issue rows in gate order."""
    return [
        MergedIssueRow(run_id=run_id, round_no=round_no, idx=i, **issue.model_dump())
        for i, issue in enumerate(issues)
    ]


def _gate_of(row: RoundRow, issues: list[MergedIssueRow]) -> GateResult | None:
    """The round's GateResult, or None before the gate ran."""
    if row.gate_decision is None:
        return None
    ordered = sorted(issues, key=lambda i: i.idx)
    return GateResult(
        decision=GateDecision(row.gate_decision),
        issues=[MergedIssue.model_validate(i, from_attributes=True) for i in ordered],
        reasons=list(row.gate_reasons or []),
        reviewer_error=bool(row.gate_reviewer_error),
        injection=bool(row.gate_injection),
        disagreement=bool(row.gate_disagreement),
        checks=None if row.gate_checks is None else [CheckOutcome.model_validate(c) for c in row.gate_checks],
    )


def _proposal_row(
    run_id: int, round_no: int, proposal: FixProposal, call_ids: list[int]
) -> ProposalRow:
    """A proposal row for a FixProposal."""
    return ProposalRow(
        run_id=run_id,
        round_no=round_no,
        issues_json=[i.model_dump(mode="json") for i in proposal.issues],
        edits_json=[e.model_dump(mode="json") for e in proposal.edits],
        rejected_json=[r.model_dump(mode="json") for r in proposal.rejected],
        before_text=proposal.before_text,
        proposed_text=proposal.proposed_text,
        before_hash=sha256_text(proposal.before_text),
        proposed_hash=sha256_text(proposal.proposed_text),
        cost_usd=proposal.cost_usd,
        error=proposal.error,
        call_ids=call_ids,
        **_usage_values(proposal.usage),
    )


def _proposal_of(row: ProposalRow, calls: dict[int, LLMCallRow]) -> FixProposal:
    """A FixProposal back from its row and its llm_call rows."""
    return FixProposal(
        issues=[MergedIssue.model_validate(i) for i in row.issues_json],
        edits=[FixEdit.model_validate(e) for e in row.edits_json],
        rejected=[RejectedEdit.model_validate(r) for r in row.rejected_json],
        before_text=row.before_text,
        proposed_text=row.proposed_text,
        usage=_usage_of(row),
        cost_usd=row.cost_usd,
        calls=[_call_of(calls[i]) for i in row.call_ids],
        error=row.error,
    )


def _decision_row(
    run_id: int,
    round_no: int,
    action: str,
    actor: str,
    reason: str,
    before: str,
    after: str,
) -> DecisionRow:
    """An append-only decision row (the before text is kept as its hash only)."""
    if action not in get_args(DecisionAction):
        raise ValueError(f"unknown decision action {action!r}")
    return DecisionRow(
        run_id=run_id,
        round_no=round_no,
        action=action,
        actor=actor,
        reason=reason,
        before_hash=sha256_text(before),
        after_hash=sha256_text(after),
        after_text=after,
    )


def _decision_of(row: DecisionRow) -> DecisionView:
    """A decision row for the page."""
    return DecisionView.model_validate(
        {**row.model_dump(), "created_at": _utc(row.created_at)}
    )


def _state_change_of(row: StateChangeRow) -> StateChangeView:
    """A state_change row for the page."""
    return StateChangeView.model_validate(
        {**row.model_dump(), "created_at": _utc(row.created_at)}
    )


def _escalation_of(row: EscalationRow, run: RunRow) -> EscalationView:
    """An escalation row plus the run facts the queue shows."""
    return EscalationView(
        **row.model_dump(exclude={"created_at", "resolved_at", "due_at"}),
        created_at=_utc(row.created_at),
        resolved_at=_utc_or_none(row.resolved_at),
        due_at=_utc_or_none(row.due_at),
        run_status=RunStatus(run.status),
        round=run.round,
        rubric_name=run.rubric_name,
        rubric_version=run.rubric_version,
        run_created_at=_utc(run.created_at),
    )


def _summary_of(row: RunRow, cost: float) -> RunSummary:
    """One runs-list line."""
    return RunSummary(
        **row.model_dump(include=set(_RUN_COPIED & RunSummary.model_fields.keys())),
        status=RunStatus(row.status),
        escalation_reason=row.escalation_reason,
        rounds=row.round,
        cost_usd=cost,
        created_at=_utc(row.created_at),
        updated_at=_utc(row.updated_at),
    )


def _check_text(text: str, what: str) -> None:
    """Refuse empty texts and texts over the size the app accepts."""
    if not text.strip():
        raise ValueError(f"the {what} is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(
            f"the {what} has {len(text):,} characters; limit {MAX_TEXT_CHARS:,}"
        )


# --- rows of one run, fetched together ------------------------------------------------------


@dataclass
class _RunRows:
    """Every child row of a run (or of one of its rounds), fetched in one snapshot."""

    rounds: list[RoundRow]
    reviews: list[ReviewRow]
    issues: list[MergedIssueRow]
    proposals: list[ProposalRow]
    decisions: list[DecisionRow]
    calls: dict[int, LLMCallRow]

    def round_record(self, rnd: RoundRow) -> dict[str, Any]:
        """RoundRecord fields of one stored round."""
        n = rnd.round_no
        proposals = [p for p in self.proposals if p.round_no == n]
        return {
            "round_no": n,
            "output_text": rnd.output_text,
            "reviews": {
                r.slot: _outcome_of(r, self.calls)
                for r in self.reviews
                if r.round_no == n
            },
            "gate": _gate_of(rnd, [i for i in self.issues if i.round_no == n]),
            "proposal": _proposal_of(proposals[-1], self.calls) if proposals else None,
        }

    def round_view(self, rnd: RoundRow) -> RoundView:
        """A RoundView of one stored round (cost includes superseded proposals)."""
        n = rnd.round_no
        cost = sum(r.cost_usd for r in self.reviews if r.round_no == n)
        cost += sum(p.cost_usd for p in self.proposals if p.round_no == n)
        return RoundView(
            **self.round_record(rnd),
            output_hash=rnd.output_hash,
            started_at=_utc(rnd.started_at),
            decisions=[_decision_of(d) for d in self.decisions if d.round_no == n],
            cost_usd=cost,
        )


def _children(s: Session, model: Any, run_id: int, round_no: int | None) -> list[Any]:
    """Rows of `model` for the run (and round), oldest first."""
    stmt = select(model).where(model.run_id == run_id)
    if round_no is not None:
        stmt = stmt.where(model.round_no == round_no)
    return list(s.exec(stmt.order_by(model.id)).all())


def _calls_by_id(s: Session, ids: Iterable[int]) -> dict[int, LLMCallRow]:
    """llm_call rows by id."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = s.exec(select(LLMCallRow).where(LLMCallRow.id.in_(wanted))).all()
    return {row.id: row for row in rows}


def _run_rows(s: Session, run_id: int, round_no: int | None = None) -> _RunRows:
    """All child rows of a run (or one round)."""
    reviews = _children(s, ReviewRow, run_id, round_no)
    proposals = _children(s, ProposalRow, run_id, round_no)
    call_ids = [i for row in (*reviews, *proposals) for i in row.call_ids]
    rounds = sorted(_children(s, RoundRow, run_id, round_no), key=lambda r: r.round_no)
    return _RunRows(
        rounds=rounds,
        reviews=reviews,
        issues=_children(s, MergedIssueRow, run_id, round_no),
        proposals=proposals,
        decisions=_children(s, DecisionRow, run_id, round_no),
        calls=_calls_by_id(s, call_ids),
    )


def _sum_by_run(s: Session, model: Any, run_ids: list[int]) -> dict[int, float]:
    """Sum of `model.cost_usd` per run."""
    if not run_ids:
        return {}
    stmt = (
        select(model.run_id, func.coalesce(func.sum(model.cost_usd), 0.0))
        .where(model.run_id.in_(run_ids))
        .group_by(model.run_id)
    )
    return {run_id: float(total) for run_id, total in s.exec(stmt).all()}


def _costs(s: Session, run_ids: list[int]) -> dict[int, float]:
    """Money spent per run: review costs plus every proposal's cost."""
    reviews = _sum_by_run(s, ReviewRow, run_ids)
    proposals = _sum_by_run(s, ProposalRow, run_ids)
    return {i: reviews.get(i, 0.0) + proposals.get(i, 0.0) for i in run_ids}


# --- the repository -------------------------------------------------------------------------


class Repo(Transactions):
    """Implements `santa_core.run.store.Store` and the app's queries over one engine."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self.rubrics = RubricStore(engine)
        """Stored rubric versions and trials."""
        self.people = PeopleStore(engine)
        """Who may act, with which roles."""
        self.audit = AuditStore(engine)
        """The hash-chained audit trail (reads and verify)."""
        self.metrics = MetricsStore(engine)
        """The Metrics page's figures, summed by the database."""

    @contextmanager
    def _tx(self) -> Iterator[Session]:
        """A write transaction; before it commits, the facts of every run it touched are rewritten."""
        with super()._tx() as s:
            yield s
            refresh_touched(s)

    @staticmethod
    def _lock_run(s: Session, run_id: int) -> RunRow:
        """The run row, locked for this transaction (RunNotFound if missing)."""
        stmt = select(RunRow).where(RunRow.id == run_id).with_for_update()
        row = s.exec(stmt).first()
        if row is None:
            raise RunNotFound(run_id)
        touch(s, run_id)  # every write to a run locks it first: its metric facts follow
        return row

    @staticmethod
    def _get_run(s: Session, run_id: int) -> RunRow:
        """The run row (RunNotFound if missing)."""
        row = s.get(RunRow, run_id)
        if row is None:
            raise RunNotFound(run_id)
        return row

    @staticmethod
    def _round(s: Session, run_id: int, round_no: int) -> RoundRow | None:
        """The round row, if stored."""
        stmt = select(RoundRow).where(
            RoundRow.run_id == run_id, RoundRow.round_no == round_no
        )
        return s.exec(stmt).first()

    def _require_round(self, s: Session, run_id: int, round_no: int) -> RoundRow:
        """The round row (RoundNotFound if missing)."""
        row = self._round(s, run_id, round_no)
        if row is None:
            raise RoundNotFound(run_id, round_no)
        return row

    # Store: reads ---------------------------------------------------------------------------

    def load_run(self, run_id: int) -> RunRecord:
        """The run with its current state, rubric and money spent so far."""
        with self._read() as s:
            row = self._get_run(s, run_id)
            return RunRecord(
                id=run_id,
                state=_state_of(row),
                spec=row.spec,
                rubric=Rubric.model_validate(row.rubric_json),
                reviewer_b=row.reviewer_b,
                reviewer_c=row.reviewer_c,
                fixer=row.fixer,
                auto_approve=row.auto_approve,
                budget_usd=row.budget_usd,
                spent_usd=_costs(s, [run_id])[run_id],
            )

    def load_round(self, run_id: int, round_no: int) -> RoundRecord | None:
        """The stored round, or None when it has not started."""
        with self._read() as s:
            self._get_run(s, run_id)
            rows = _run_rows(s, run_id, round_no)
            if not rows.rounds:
                return None
            return RoundRecord(**rows.round_record(rows.rounds[0]))

    def spent_usd(self, run_id: int) -> float:
        """Money spent on the run: review costs plus every proposal's cost."""
        with self._read() as s:
            self._get_run(s, run_id)
            return _costs(s, [run_id])[run_id]

    # Store: state ---------------------------------------------------------------------------

    def transition(
        self,
        run_id: int,
        expected: set[RunStatus],
        new: RunState,
        actor: str,
        note: str = "",
    ) -> bool:
        """Compare-and-set the run state; False when the run was not in `expected`."""
        if new.status == RunStatus.ESCALATED and new.escalation_reason is None:
            raise ValueError("an escalated state needs an escalation_reason")
        wanted = {RunStatus(s) for s in expected}
        with self._tx() as s:
            row = self._lock_run(s, run_id)
            if RunStatus(row.status) not in wanted:
                return False
            if actor not in SYSTEM_ACTORS:
                self._check_person_move(s, row, new, actor)
            self._set_state(s, row, new, actor, note or new.note)
            return True

    @staticmethod
    def _check_person_move(s: Session, row: RunRow, new: RunState, actor: str) -> None:
        """Refuse every move a person may not make through `transition` (see `_PERSON_MOVES`)."""
        current = _state_of(row)
        if current.status == RunStatus.ESCALATED:
            raise MoveRefused(
                f"{actor} may not move run {row.id} out of escalated this way: an escalation is resolved "
                "only by resolving it (ship as is, re-review or reject), which records the justification")
        move = _PERSON_MOVES.get(current.status)
        if move is None or new.status != RunStatus.QUEUED:
            raise MoveRefused(
                f"{actor} may not move run {row.id} from {current.status.value} to {new.status.value}: "
                "a person only resumes an interrupted run or hands back a run whose person reviews are in; "
                "every other move is made by the desk itself")
        event, permission = move
        require(s, actor, permission)
        expected = state_machine.advance(current, event)
        if new != expected:
            raise MoveRefused(f"{actor} may not set run {row.id} to {new.model_dump(mode='json')}; "
                              f"the engine's move gives {expected.model_dump(mode='json')}")
        if current.status == RunStatus.AWAITING_HUMAN_REVIEW:
            done = {r.slot for r in _children(s, ReviewRow, row.id, row.round)
                    if r.status != ReviewStatus.PENDING.value}
            missing = [slot for slot, _ in _slots(row) if slot not in done]
            if missing:
                raise MoveRefused(f"run {row.id} still waits for a review in slot {' and '.join(missing)} "
                                  f"of round {row.round}; it goes back to the queue once both are in")

    def _set_state(
        self, s: Session, row: RunRow, new: RunState, actor: str, note: str
    ) -> None:
        """Write the state, its state_change row and audit event, and open or close the escalation."""
        old = RunStatus(row.status)
        before = _state_of(row)
        touch(s, row.id)
        row.status = new.status.value
        row.round, row.max_rounds, row.round_cap = (
            new.round,
            new.max_rounds,
            new.round_cap,
        )
        row.escalation_reason = _enum_value(new.escalation_reason)
        row.note = new.note
        row.updated_at = utcnow()
        row.worker = this_worker() if new.status == RunStatus.RUNNING else None
        s.add(row)
        change = StateChangeRow(
            run_id=row.id,
            from_status=old.value,
            to_status=row.status,
            actor=actor,
            note=note,
        )
        s.add(change)
        audit.append(s, actor, "run.state", "run", row.id, run_id=row.id,
                     before=json_hash(before.model_dump(mode="json")), after=json_hash(new.model_dump(mode="json")),
                     detail={"from": old.value, "to": row.status, "round": row.round, "note": note,
                             "reason": row.escalation_reason})
        if new.status == RunStatus.ESCALATED and old != RunStatus.ESCALATED:
            self._open_escalation(s, row)
        elif old == RunStatus.ESCALATED and new.status != RunStatus.ESCALATED:
            self._close_escalations(
                s, row.id, _RESOLVED_AS.get(new.status, "rereview"), actor
            )

    @staticmethod
    def _open_escalation(s: Session, run: RunRow) -> None:
        """A new open escalation, due after the Settings' default time for its reason."""
        saved = s.exec(select(SettingsRow).order_by(SettingsRow.id.desc()).limit(1)).first()
        hours = Defaults.model_validate(saved.values_json if saved else {}).due_hours_for(run.escalation_reason)
        esc = EscalationRow(run_id=run.id, reason=run.escalation_reason)
        esc.due_at = esc.created_at + timedelta(hours=hours)
        s.add(esc)
        s.flush()
        audit.append(s, "system", "escalation.opened", "escalation", esc.id, run_id=run.id,
                     detail={"reason": esc.reason, "due_at": esc.due_at.isoformat()})

    def _close_escalations(
        self,
        s: Session,
        run_id: int,
        resolution: str,
        actor: str,
        why: str | None = None,
    ) -> None:
        """Resolve the run's open escalations (justification: `why` or the latest decision)."""
        stmt = select(EscalationRow).where(
            EscalationRow.run_id == run_id, EscalationRow.status == "open"
        )
        if why is None:
            why = self._latest_resolution_reason(s, run_id)
        for esc in s.exec(stmt).all():
            esc.status, esc.resolution, esc.resolved_by = "resolved", resolution, actor
            esc.resolved_at, esc.justification = utcnow(), why
            s.add(esc)
            audit.append(s, actor, "escalation.resolved", "escalation", esc.id, run_id=run_id,
                         after=None if why is None else sha256_text(why),
                         detail={"resolution": resolution, "justification": why})

    @staticmethod
    def _latest_resolution_reason(s: Session, run_id: int) -> str | None:
        """Reason of the run's latest escalation-resolving decision."""
        stmt = (
            select(DecisionRow.reason)
            .where(DecisionRow.run_id == run_id)
            .where(DecisionRow.action.in_(list(RESOLUTION_ACTION.values())))
            .order_by(DecisionRow.id.desc())
        )
        return s.exec(stmt).first()

    # Store: round steps ---------------------------------------------------------------------

    def start_round(self, run_id: int, round_no: int, output_text: str) -> None:
        """Create the round with its output text (idempotent: the same text again writes nothing).

        Audited (`round.started`, actor "worker") when it creates the round or replaces an
        untouched round's text; create_run, commit_decision and resolve_escalation start their
        rounds inside their own audited transaction.
        """
        _check_text(output_text, "output")
        with self._tx() as s:
            run = self._lock_run(s, run_id)
            before = self._start_round(s, run_id, round_no, output_text)
            if before is False:
                return
            run.updated_at = utcnow()
            audit.append(s, "worker", "round.started", "round", f"{run_id}/{round_no}", run_id=run_id,
                         before=before, after=sha256_text(output_text),
                         detail={"round": round_no, "replaced": before is not None})

    def _start_round(self, s: Session, run_id: int, round_no: int, text: str) -> str | None | Literal[False]:
        """Insert the round; an untouched round may take a new text, a reviewed one may not.

        Returns False when nothing changed, else the hash of the text replaced (None: a new round).
        """
        row = self._round(s, run_id, round_no)
        if row is None:
            s.add(
                RoundRow(
                    run_id=run_id,
                    round_no=round_no,
                    output_text=text,
                    output_hash=sha256_text(text),
                )
            )
            return None
        if row.output_text == text:
            return False
        if row.gate_decision is not None or _children(s, ReviewRow, run_id, round_no):
            raise RoundConflict(
                f"round {round_no} of run {run_id} was already reviewed with another text"
            )
        before = row.output_hash
        row.output_text, row.output_hash = text, sha256_text(text)
        s.add(row)
        return before

    def save_review(
        self, run_id: int, round_no: int, outcome: ReviewOutcome, only_if_empty: bool = False
    ) -> bool:
        """Commit one reviewer's outcome (and its LLM calls); replaces the slot's earlier one.

        With only_if_empty, a slot that already holds a review is left as it is and the call
        returns False (two people filling one slot: the first one counts). A person's review
        (`person:<id>`) always is: it fills only an empty (or pending) slot whose reviewer is a
        person.
        """
        with self._tx() as s:
            run = self._lock_run(s, run_id)
            self._require_round(s, run_id, round_no)
            stmt = select(ReviewRow).where(
                ReviewRow.run_id == run_id,
                ReviewRow.round_no == round_no,
                ReviewRow.slot == outcome.slot,
            )
            row = s.exec(stmt).first()
            person = _person_of(outcome.reviewer)
            if person is not None:
                self._check_person_review(s, run, round_no, outcome.slot, person)
                if row is not None and row.status != ReviewStatus.PENDING.value:
                    return False  # a person never overwrites a review: the first one counts
            elif row is not None and only_if_empty:
                return False
            if (
                row is not None
                and _outcome_of(row, _calls_by_id(s, row.call_ids)) == outcome
            ):
                return True
            ids = self._insert_calls(s, run_id, round_no, outcome.calls, outcome.slot)
            values = _review_values(outcome, ids)
            if row is None:
                row = ReviewRow(run_id=run_id, round_no=round_no, **values)
            else:
                row.sqlmodel_update({**values, "created_at": utcnow()})
            s.add(row)
            run.updated_at = utcnow()
            # No verdict in the detail: the Audit page is open to everyone, and a person reviewer
            # must not learn the other verdict before giving theirs. The hash covers the answer.
            audit.append(s, person or "worker", "review.saved", "review", f"{run_id}/{round_no}/{outcome.slot}",
                         run_id=run_id, after=sha256_text(outcome.raw_response),
                         detail={"round": round_no, "slot": outcome.slot, "reviewer": outcome.reviewer,
                                 "status": outcome.status.value})
            return True

    @staticmethod
    def _check_person_review(s: Session, run: RunRow, round_no: int, slot: str, person: str) -> None:
        """A person may fill a slot if they may review, the slot is a person's, it is theirs (or
        nobody's), and they did not fill the round's other slot: two slots by one person would not
        be independent."""
        require(s, person, Permission.PERSON_REVIEW)
        reviewer = run.reviewer_b if slot == "B" else run.reviewer_c
        if reviewer != PERSON:
            raise SlotAssigned(f"slot {slot} of run {run.id} is reviewed by {reviewer}, not by a person")
        assignee = run.person_b if slot == "B" else run.person_c
        if assignee and assignee != person:
            raise SlotAssigned(f"slot {slot} of run {run.id} is assigned to {assignee}, not {person}")
        others = s.exec(select(ReviewRow.reviewer).where(
            ReviewRow.run_id == run.id, ReviewRow.round_no == round_no, ReviewRow.slot != slot)).all()
        if must_differ(person) and f"person:{person}" in others:
            raise SlotAssigned(f"{person} already reviewed the other slot of round {round_no}; "
                             "the two reviews must come from different reviewers")

    @staticmethod
    def _insert_calls(
        s: Session, run_id: int, round_no: int, calls: list[LLMCall], slot: str | None
    ) -> list[int]:
        """Append llm_call rows; their ids in order."""
        rows = [_call_row(run_id, round_no, call, slot) for call in calls]
        s.add_all(rows)
        s.flush()
        return [row.id for row in rows]

    def save_gate(self, run_id: int, round_no: int, gate: GateResult) -> None:
        """Commit the gate decision and the merged issues of the round."""
        with self._tx() as s:
            run = self._lock_run(s, run_id)
            rnd = self._require_round(s, run_id, round_no)
            old_issues = _children(s, MergedIssueRow, run_id, round_no)
            if _gate_of(rnd, old_issues) == gate:
                return
            for issue in old_issues:  # a re-run gate replaces the derived issue list
                s.delete(issue)
            s.flush()
            rnd.gate_decision = gate.decision.value
            rnd.gate_reasons = list(gate.reasons)
            rnd.gate_reviewer_error, rnd.gate_injection = (
                gate.reviewer_error,
                gate.injection,
            )
            rnd.gate_checks = None if gate.checks is None else [c.model_dump(mode="json") for c in gate.checks]
            rnd.gate_disagreement = gate.disagreement
            s.add(rnd)
            s.add_all(_issue_rows(run_id, round_no, gate.issues))
            run.updated_at = utcnow()
            audit.append(s, "gate", "round.gate", "round", f"{run_id}/{round_no}", run_id=run_id,
                         before=rnd.output_hash, after=json_hash(gate.model_dump(mode="json")),
                         detail={"round": round_no, "decision": gate.decision.value, "issues": len(gate.issues)})

    def save_proposal(self, run_id: int, round_no: int, proposal: FixProposal) -> None:
        """Commit the fix agent's proposal (and its LLM calls); the newest one counts."""
        with self._tx() as s:
            run = self._lock_run(s, run_id)
            self._require_round(s, run_id, round_no)
            old = _children(s, ProposalRow, run_id, round_no)
            if (
                old
                and _proposal_of(old[-1], _calls_by_id(s, old[-1].call_ids)) == proposal
            ):
                return
            ids = self._insert_calls(s, run_id, round_no, proposal.calls, None)
            row = _proposal_row(run_id, round_no, proposal, ids)
            s.add(row)
            run.updated_at = utcnow()
            audit.append(s, "worker", "proposal.saved", "round", f"{run_id}/{round_no}", run_id=run_id,
                         before=row.before_hash, after=row.proposed_hash,
                         detail={"round": round_no, "edits": len(proposal.edits)})

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
        row = _decision_row(
            run_id, round_no, action, actor, reason, before_text, after_text
        )
        with self._tx() as s:
            run = self._lock_run(s, run_id)
            self._require_round(s, run_id, round_no)
            self._add_decision(s, row)
            run.updated_at = utcnow()

    @staticmethod
    def _add_decision(s: Session, row: DecisionRow) -> None:
        """Refuse a decision the actor may not take; else append it and its audit event."""
        require(s, row.actor, DECISION_PERMISSION[row.action])
        if row.action == "auto_approve" and row.actor not in SYSTEM_ACTORS:
            raise PermissionDenied(row.actor, Permission.DECIDE_FIX, ())
        s.add(row)
        audit.append(s, row.actor, f"decision.{row.action}", "run", row.run_id, run_id=row.run_id,
                     before=row.before_hash, after=row.after_hash,
                     detail={"round": row.round_no, "reason": row.reason})

    # app: writes ----------------------------------------------------------------------------

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
    ) -> int:
        """Commit a queued run with round 1 holding `output`; returns its id.

        `person_b` / `person_c` assign a `person` reviewer slot to one person (None: anyone).
        `generation_cost_usd` is what producing the output cost, when known (for the Metrics page).
        """
        _check_text(spec, "spec")
        _check_text(output, "output")
        if source not in get_args(Source) or max_rounds < 1:
            raise ValueError(f"bad source {source!r} or max_rounds {max_rounds}")
        if generation_cost_usd is not None and not 0 <= generation_cost_usd < 1e9:
            raise ValueError(f"the generation cost must be a positive amount in USD, not {generation_cost_usd}")
        with self._tx() as s:
            require(s, created_by, Permission.START_RUN)
            for who in (person_b, person_c):
                if who:
                    require(s, who, Permission.PERSON_REVIEW)
            return self._insert_run(
                s, RunRow(person_b=person_b or None, person_c=person_c or None, max_rounds=max_rounds,
                          round_cap=max_rounds, spec=spec, original_output=output, rubric_name=rubric.name,
                          rubric_version=rubric.version, rubric_json=rubric.model_dump(mode="json"),
                          reviewer_b=reviewer_b, reviewer_c=reviewer_c, fixer=fixer, auto_approve=auto_approve,
                          budget_usd=budget_usd, created_by=created_by, source=source,
                          generation_cost_usd=generation_cost_usd, status=RunStatus.QUEUED.value))

    def _insert_run(self, s: Session, run: RunRow) -> int:
        """Add a queued run, its round 1, its first state change and its audit event (inside `s`)."""
        s.add(run)
        s.flush()
        touch(s, run.id)
        self._start_round(s, run.id, 1, run.original_output)
        s.add(StateChangeRow(run_id=run.id, to_status=run.status, actor=run.created_by, note="created"))
        audit.append(s, run.created_by, "run.created", "run", run.id, run_id=run.id,
                     after=sha256_text(run.original_output),
                     detail={"rubric": f"{run.rubric_name}@{run.rubric_version}", "spec_hash": sha256_text(run.spec),
                             "reviewer_b": run.reviewer_b, "reviewer_c": run.reviewer_c, "fixer": run.fixer,
                             "source": run.source, "person_b": run.person_b, "person_c": run.person_c,
                             **({"batch": run.batch_id} if run.batch_id is not None else {})})
        return run.id

    def commit_decision(
        self,
        run_id: int,
        expected: RunState,
        new: RunState,
        decision: DecisionIn,
        next_round_text: str | None = None,
    ) -> bool:
        """One transaction: the decision row, the next round (if any) and the state change.

        False (and nothing written) when the run is no longer in `expected` status and round,
        e.g. a second person decided first.
        """
        with self._tx() as s:
            run = self._lock_run(s, run_id)
            if RunStatus(run.status) != expected.status or run.round != expected.round:
                return False
            if decision.actor not in SYSTEM_ACTORS:
                self._check_person_decision(run, new, decision)
            self._add_decision(s, _decision_row(run_id, expected.round, decision.action, decision.actor,
                                                decision.reason, decision.before_text, decision.after_text))
            if next_round_text is not None:
                self._start_round(s, run_id, new.round, next_round_text)
            self._set_state(s, run, new, decision.actor, new.note)
            return True

    @staticmethod
    def _check_person_decision(run: RunRow, new: RunState, decision: DecisionIn) -> None:
        """A person's decision through `commit_decision` is a decision on a fix proposal, with the
        state the engine gives it; an escalation is resolved only by `resolve_escalation`."""
        event = {"approve": state_machine.Approve(), "edit": state_machine.Approve(),
                 "reject": state_machine.Reject()}.get(decision.action)
        current = _state_of(run)
        if event is None or current.status != RunStatus.AWAITING_APPROVAL:
            raise MoveRefused(f"{decision.actor} may not record {decision.action!r} on run {run.id} while it is "
                              f"{current.status.value}: a person decides here only on a fix waiting for approval"
                              "; an escalation is resolved by resolving it")
        expected = state_machine.advance(current, event)
        if new != expected:
            raise MoveRefused(f"{decision.actor} may not set run {run.id} to {new.status.value}; the engine's "
                              f"move for {decision.action!r} gives {expected.status.value}")

    def resolve_escalation(
        self,
        run_id: int,
        resolution: Resolution,
        actor: str,
        justification: str,
        edited_output: str | None = None,
        escalation_id: int | None = None,
    ) -> RunState:
        """Resolve an escalated run in ONE transaction: decision, next round, state, escalation.

        `escalation_id` is the escalation the person looked at: when the run has moved on (someone
        else resolved it and it escalated again), EscalationNotOpen is raised and nothing written,
        so a click never resolves an escalation, or ships an output, the person did not see.

        The new state comes from `santa_core.run.engine.advance(state, Resolve(resolution))`, so the
        engine still decides it; `rereview` starts the next round on `edited_output` (or the
        current output). Raises `engine.InvalidTransition` when the run is not escalated.
        """
        if not justification.strip():
            raise ValueError("a justification is required to resolve an escalation")
        if edited_output is not None:
            if resolution != "rereview":
                raise ValueError("only a re-review may change the output")
            _check_text(edited_output, "edited output")
        with self._tx() as s:
            run = self._lock_run(s, run_id)
            if escalation_id is not None:
                self._open_escalation_row(s, run_id, escalation_id)
            state = _state_of(run)
            new = state_machine.advance(state, state_machine.Resolve(resolution))
            rnd = self._require_round(s, run_id, state.round)
            after = rnd.output_text if edited_output is None else edited_output
            action = RESOLUTION_ACTION[resolution]
            self._add_decision(s, _decision_row(run_id, state.round, action, actor, justification,
                                                rnd.output_text, after))
            if resolution == "rereview":
                self._start_round(s, run_id, new.round, after)
            self._set_state(s, run, new, actor, new.note)
            return new

    def mark_interrupted(self) -> list[int]:
        """Runs left `running` by a process that is gone → `interrupted` (actor "system"); their ids.

        Runs whose worker is alive (a command line next to the app, another app process) stay.
        """
        note = "the server stopped while this run was running"
        with self._tx() as s:
            stmt = (
                select(RunRow)
                .where(RunRow.status == RunStatus.RUNNING.value)
                .order_by(RunRow.id)
                .with_for_update()
            )
            rows = [r for r in s.exec(stmt).all() if is_orphaned(r.worker, r.updated_at)]
            for row in rows:
                new = state_machine.advance(
                    _state_of(row), state_machine.Interrupt(note=note)
                )
                self._set_state(s, row, new, "system", note)
            return [row.id for row in rows]

    # app: reads -----------------------------------------------------------------------------

    def get_run_view(self, run_id: int) -> RunView:
        """Everything about one run, from one snapshot."""
        with self._read() as s:
            run = self._get_run(s, run_id)
            rows = _run_rows(s, run_id)
            history = _children(s, StateChangeRow, run_id, None)
            escalations = _children(s, EscalationRow, run_id, None)
            escapes = _children(s, EscapeRow, run_id, None)
            rounds = [rows.round_view(r) for r in rows.rounds]
            return RunView(
                **run.model_dump(
                    include=set(_RUN_COPIED & RunView.model_fields.keys())
                ),
                state=_state_of(run),
                created_at=_utc(run.created_at),
                updated_at=_utc(run.updated_at),
                rubric=Rubric.model_validate(run.rubric_json),
                rounds=rounds,
                history=[_state_change_of(h) for h in history],
                escalations=[_escalation_of(e, run) for e in escalations],
                escapes=[_escape_of(e) for e in escapes],
                total_cost_usd=_costs(s, [run_id])[run_id],
                current_output=_current_output(run, rounds),
                final_output=_final_output(run, rounds),
            )

    def run_json(self, run_id: int) -> dict[str, Any]:
        """The run as one JSON-ready dict (the CLI's --json answer)."""
        return _run_json(self.get_run_view(run_id))

    def list_runs(
        self, limit: int = 200, status: RunStatus | str | None = None
    ) -> list[RunSummary]:
        """Newest runs first, optionally of one status."""
        stmt = select(RunRow).order_by(RunRow.id.desc()).limit(limit)
        if status is not None:
            stmt = stmt.where(RunRow.status == RunStatus(status).value)
        with self._read() as s:
            return self._summaries(s, list(s.exec(stmt).all()))

    @staticmethod
    def _summaries(s: Session, rows: list[RunRow]) -> list[RunSummary]:
        """Runs-list lines with their costs."""
        costs = _costs(s, [r.id for r in rows])
        return [_summary_of(r, costs[r.id]) for r in rows]

    def runs_to_resume(self) -> list[RunSummary]:
        """Runs to pick up after a restart: `queued` (resubmit) and `interrupted` (resume)."""
        wanted = (RunStatus.QUEUED.value, RunStatus.INTERRUPTED.value)
        stmt = select(RunRow).where(RunRow.status.in_(wanted)).order_by(RunRow.id)
        with self._read() as s:
            return self._summaries(s, list(s.exec(stmt).all()))

    def list_escalations(
        self, status: Literal["open", "resolved"] | None = "open"
    ) -> list[EscalationView]:
        """Escalations, oldest first (all of them when `status` is None)."""
        stmt = (
            select(EscalationRow, RunRow)
            .join(RunRow, RunRow.id == EscalationRow.run_id)
            .order_by(EscalationRow.id)
        )
        if status is not None:
            stmt = stmt.where(EscalationRow.status == status)
        with self._read() as s:
            return [_escalation_of(esc, run) for esc, run in s.exec(stmt).all()]

    def pending_human_reviews(self) -> list[PendingReview]:
        """Slots a person still has to fill, for runs `awaiting_human_review`."""
        stmt = (
            select(RunRow)
            .where(RunRow.status == RunStatus.AWAITING_HUMAN_REVIEW.value)
            .order_by(RunRow.id)
        )
        with self._read() as s:
            items: list[PendingReview] = []
            for run in s.exec(stmt).all():
                done = {
                    r.slot: r.reviewer
                    for r in _children(s, ReviewRow, run.id, run.round)
                    if r.status != ReviewStatus.PENDING.value
                }
                items += [
                    _pending(run, slot, who, done)
                    for slot, who in _slots(run)
                    if slot not in done
                ]
            return items

    def blind_run_ids(self) -> set[int]:
        """Runs whose reviews are still blind: a `person` reviewer slot, no gate yet on the current round.

        Pages everyone may read leave these runs' events, reasons and spend out until the gate is
        in: they would show a person reviewer the other review or earlier rounds before theirs.
        Final runs are done; an escalated run waits for a compliance officer, not a reviewer.
        """
        settled = [s.value for s in _SETTLED]
        current = (RoundRow.run_id == RunRow.id) & (RoundRow.round_no == RunRow.round)
        stmt = (
            select(RunRow.id)
            .outerjoin(RoundRow, current)  # no stored current round yet: no gate either
            .where(RunRow.status.not_in(settled))
            .where((RunRow.reviewer_b == PERSON) | (RunRow.reviewer_c == PERSON))
            .where(RoundRow.gate_decision.is_(None))
        )
        with self._read() as s:
            return set(s.exec(stmt).all())

    # app: escalation queue, reviewer slots, escapes ------------------------------------------

    @staticmethod
    def _open_escalation_row(s: Session, run_id: int, escalation_id: int | None = None) -> EscalationRow:
        """The run's open escalation; EscalationNotOpen when there is none, or it is not `escalation_id`."""
        stmt = select(EscalationRow).where(EscalationRow.run_id == run_id, EscalationRow.status == "open")
        row = s.exec(stmt.with_for_update()).first()
        if row is None:
            raise EscalationNotOpen(f"run {run_id} has no open escalation: someone resolved it meanwhile; reload")
        if escalation_id is not None and row.id != escalation_id:
            raise EscalationNotOpen(f"the escalation you looked at (#{escalation_id}) was resolved meanwhile and run "
                                    f"{run_id} escalated again (#{row.id}); reload to see what is open now")
        return row

    def assign_escalation(self, run_id: int, owner: str | None, actor: str, escalation_id: int | None = None) -> None:
        """Give the run's open escalation an owner who may resolve it (None: unassign)."""
        with self._tx() as s:
            require(s, actor, Permission.ASSIGN)
            if owner:
                try:
                    require(s, owner, Permission.RESOLVE_ESCALATION)
                except PermissionDenied as exc:
                    raise ValueError(f"{owner} cannot own an escalation: {exc}") from exc
            esc = self._open_escalation_row(s, run_id, escalation_id)
            before, esc.owner = esc.owner, owner or None
            s.add(esc)
            audit.append(s, actor, "escalation.assigned", "escalation", esc.id, run_id=run_id,
                         detail={"before": before, "owner": esc.owner})

    def set_due(self, run_id: int, due_at: datetime, actor: str, escalation_id: int | None = None) -> None:
        """Set or change the due time of the run's open escalation."""
        due_at = _utc(due_at)
        with self._tx() as s:
            require(s, actor, Permission.ASSIGN)
            esc = self._open_escalation_row(s, run_id, escalation_id)
            before = _utc_or_none(esc.due_at)
            esc.due_at = due_at
            s.add(esc)
            audit.append(s, actor, "escalation.due_set", "escalation", esc.id, run_id=run_id,
                         detail={"before": None if before is None else before.isoformat(), "due_at": due_at.isoformat()})

    def overdue_count(self, now: datetime) -> int:
        """Open escalations whose due time has passed."""
        now = _utc(now)  # SQLite compares stored UTC wall-clock times: never pass another zone's
        stmt = select(func.count()).select_from(EscalationRow).where(
            EscalationRow.status == "open", EscalationRow.due_at.is_not(None), EscalationRow.due_at <= now)
        with self._read() as s:
            return int(s.exec(stmt).one())

    def assign_person_slot(self, run_id: int, slot: Slot, person: str | None, actor: str) -> None:
        """Assign a `person` reviewer slot to someone who may review (None: anyone may take it)."""
        with self._tx() as s:
            require(s, actor, Permission.ASSIGN)
            if person:
                require(s, person, Permission.PERSON_REVIEW)
            run = self._lock_run(s, run_id)
            column = "person_b" if slot == "B" else "person_c"
            before = getattr(run, column)
            setattr(run, column, person or None)
            s.add(run)
            audit.append(s, actor, "review.assigned", "run", run_id, run_id=run_id,
                         detail={"slot": slot, "before": before, "person": person or None})

    def report_escape(self, run_id: int, criterion: str, description: str, severity: str, actor: str) -> int:
        """Record a defect found after the run shipped; its id."""
        if severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {', '.join(SEVERITIES)}")
        if not criterion.strip():
            raise ValueError("say which criterion the defect falls under")
        _check_text(description, "escape description")
        with self._tx() as s:
            require(s, actor, Permission.REPORT_ESCAPE)
            run = self._lock_run(s, run_id)
            if RunStatus(run.status) not in (RunStatus.SHIPPED, RunStatus.RESOLVED_SHIPPED):
                raise ValueError(f"run {run_id} is {run.status}: escapes are reported on shipped runs only")
            row = EscapeRow(run_id=run_id, criterion=criterion.strip(), description=description.strip(),
                            severity=severity, reported_by=actor)
            s.add(row)
            s.flush()
            audit.append(s, actor, "escape.reported", "escape", row.id, run_id=run_id,
                         after=sha256_text(row.description),
                         detail={"criterion": row.criterion, "severity": severity})
            return row.id

    def escapes(self, run_id: int | None = None) -> list[EscapeView]:
        """Escapes, oldest first (of one run, or all)."""
        stmt = select(EscapeRow).order_by(EscapeRow.id)
        if run_id is not None:
            stmt = stmt.where(EscapeRow.run_id == run_id)
        with self._read() as s:
            return [_escape_of(r) for r in s.exec(stmt).all()]

    # app: settings ---------------------------------------------------------------------------

    def get_settings(self) -> dict[str, Any]:
        """The saved defaults for new runs ({} before the first save)."""
        stmt = select(SettingsRow).order_by(SettingsRow.id.desc()).limit(1)
        with self._read() as s:
            row = s.exec(stmt).first()
            return dict(row.values_json) if row else {}

    def save_settings(self, values: dict[str, Any], actor: str) -> None:
        """Append a settings row: the previous values updated with `values`."""
        stmt = select(SettingsRow).order_by(SettingsRow.id.desc()).limit(1)
        with self._tx() as s:
            require(s, actor, Permission.EDIT_SETTINGS)
            row = s.exec(stmt).first()
            before = row.values_json if row else {}
            merged = {**before, **values}
            s.add(SettingsRow(values_json=merged, saved_by=actor))
            audit.append(s, actor, "settings.saved", "settings", "defaults", before=json_hash(before),
                         after=json_hash(merged), detail={"changed": sorted(k for k in merged if merged[k] != before.get(k))})


def _enum_value(value: EscalationReason | None) -> str | None:
    """The stored string of an optional enum."""
    return None if value is None else value.value


def _slots(run: RunRow) -> list[tuple[Slot, str]]:
    """(slot, reviewer) pairs of a run."""
    return [("B", run.reviewer_b), ("C", run.reviewer_c)]


def _person_of(reviewer: str) -> str | None:
    """The person behind a `person:<id>` reviewer name, else None (a model)."""
    return reviewer.removeprefix("person:") if reviewer.startswith("person:") else None


def _escape_of(row: EscapeRow) -> EscapeView:
    return EscapeView(**{**row.model_dump(), "created_at": _utc(row.created_at)})


def _pending(run: RunRow, slot: Slot, reviewer: str, done: dict[str, str]) -> PendingReview:
    """A slot waiting for a person."""
    other = next((r for sl, r in done.items() if sl != slot), None)
    return PendingReview(
        assignee=run.person_b if slot == "B" else run.person_c,
        filled_other_slot_by=None if other is None else _person_of(other),
        run_id=run.id,
        round_no=run.round,
        slot=slot,
        reviewer=reviewer,
        rubric_name=run.rubric_name,
        rubric_version=run.rubric_version,
        waiting_since=_utc(run.updated_at),
    )


def _current_output(run: RunRow, rounds: list[RoundView]) -> str:
    """The text under review now: the state's round, else the newest stored round."""
    current = [r for r in rounds if r.round_no == run.round] or rounds[-1:]
    return current[0].output_text if current else run.original_output


def _final_output(run: RunRow, rounds: list[RoundView]) -> str | None:
    """What shipped: the NICE round's text, or the text a person shipped as is."""
    if run.status == RunStatus.SHIPPED.value:
        return _current_output(run, rounds)
    if run.status != RunStatus.RESOLVED_SHIPPED.value:
        return None
    shipped = [d for r in rounds for d in r.decisions if d.action == "ship_as_is"]
    return shipped[-1].after_text if shipped else _current_output(run, rounds)


def _review_json(outcome: ReviewOutcome) -> dict[str, Any]:
    """A review slot for the CLI's JSON answer."""
    return {
        "reviewer": outcome.reviewer,
        "status": outcome.status.value,
        "verdict": outcome.effective_verdict,
        "error": outcome.error,
        "cost_usd": outcome.cost_usd,
        "review": None
        if outcome.review is None
        else outcome.review.model_dump(mode="json"),
    }


def _round_json(rnd: RoundView) -> dict[str, Any]:
    """A round for the CLI's JSON answer."""
    return {
        "round": rnd.round_no,
        "output_hash": rnd.output_hash,
        "reviews": {slot: _review_json(o) for slot, o in sorted(rnd.reviews.items())},
        "gate": None if rnd.gate is None else rnd.gate.decision.value,
        "issues": [] if rnd.gate is None else [i.model_dump() for i in rnd.gate.issues],
        "checks": None if rnd.gate is None or rnd.gate.checks is None else [c.model_dump() for c in rnd.gate.checks],
        "proposal": None if rnd.proposal is None else rnd.proposal.proposed_text,
        "decisions": [d.model_dump(mode="json") for d in rnd.decisions],
        "cost_usd": rnd.cost_usd,
    }


def _run_json(view: RunView) -> dict[str, Any]:
    """A run for the CLI's JSON answer."""
    escalation = view.escalation
    return {
        "run_id": view.id,
        "status": view.status.value,
        "escalation_reason": _enum_value(view.state.escalation_reason),
        "note": view.state.note,
        "round": view.state.round,
        "rubric": {"name": view.rubric.name, "version": view.rubric.version},
        "reviewer_b": view.reviewer_b,
        "reviewer_c": view.reviewer_c,
        "fixer": view.fixer,
        "created_by": view.created_by,
        "source": view.source,
        "created_at": view.created_at.isoformat(),
        "cost_usd": view.total_cost_usd,
        "rounds": [_round_json(r) for r in view.rounds],
        "escalation": None
        if escalation is None
        else escalation.model_dump(mode="json"),
        "escapes": [e.model_dump(mode="json") for e in view.escapes],
        "current_output": view.current_output,
        "final_output": view.final_output,
    }
