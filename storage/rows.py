"""Rows ↔ the method's models: how a run, its calls, reviews, gate, proposals and decisions are stored and read back."""

from __future__ import annotations

from typing import Any, TypedDict, cast, get_args

from sqlmodel import SQLModel

from santa_core.models import (
    CallPurpose,
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
    ScreenCheck,
    ScreenResult,
    ScreenRole,
    ScreenVerdict,
    Slot,
    Usage,
)
from santa_core.run.gate import counted_verdict
from santa_core.run.store import DecisionAction
from santa_core.text import sha256_text, text_problem
from storage.hashing import content_hash, json_hash
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
    ScreenRow,
    StateChangeRow,
)
from storage.times import utc, utc_or_none
from storage.views import DecisionView, EscalationView, EscapeView, RunSummary, StateChangeView

USAGE_COLS = tuple(Usage.model_fields)

"""What an LLM call was for (`santa_core.models.LLMCall.purpose`)."""


RUN_COPIED = frozenset(
    {
        "id",
        "spec",
        "original_output",
        "reviewer_b",
        "reviewer_c",
        "reviewer_d",
        "fixer",
        "auto_approve",
        "budget_usd",
        "created_by",
        "source",
        "rubric_name",
        "rubric_version",
        "person_b",
        "person_c",
        "worker",
    }
)
"""Run columns that views copy as they are."""


class UsageValues(TypedDict):
    """Usage as the values of its columns (`storage.tables.columns.UsageColumns`)."""

    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int


def usage_values(usage: Usage) -> UsageValues:
    """Usage as column values."""
    return UsageValues(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
    )


def usage_of(row: SQLModel) -> Usage:
    """The usage columns of a row."""
    return Usage(**{k: getattr(row, k) for k in USAGE_COLS})


def reason_of(row: RunRow) -> EscalationReason | None:
    """Why the run is escalated, if it is."""
    return None if row.escalation_reason is None else EscalationReason(row.escalation_reason)


def state_of(row: RunRow) -> RunState:
    """The engine's view of a run row."""
    return RunState(
        status=RunStatus(row.status),
        round=row.round,
        max_rounds=row.max_rounds,
        round_cap=row.round_cap,
        escalation_reason=reason_of(row),
        note=row.note,
        review_only=row.batch_id is not None,
    )


def call_row(
    run_id: int | None,
    round_no: int,
    call: LLMCall,
    slot: str | None,
    batch_id: int | None = None,
    trial_key: str | None = None,
) -> LLMCallRow:
    """An llm_call row for one request/response pair, tied to the run, batch or trial it served."""
    return LLMCallRow(
        run_id=run_id,
        batch_id=batch_id,
        trial_key=trial_key,
        round_no=round_no,
        purpose=call.purpose,
        slot=slot,
        model=call.model,
        request_json=call.request,
        response_text=call.response,
        content_hash=content_hash(call.request, call.response),
        request_hash=json_hash(call.request) if call.request else None,
        cost_usd=call.cost_usd,
        latency_s=call.latency_s,
        error=call.error,
        **usage_values(call.usage),
    )


def call_of(row: LLMCallRow) -> LLMCall:
    """An LLMCall back from its row."""
    return LLMCall(
        purpose=cast(CallPurpose, row.purpose),
        model=row.model,
        request=row.request_json,
        response=row.response_text,
        usage=usage_of(row),
        cost_usd=row.cost_usd,
        latency_s=row.latency_s,
        error=row.error,
    )


def review_values(outcome: ReviewOutcome, call_ids: list[int], rubric: Rubric) -> dict[str, Any]:
    """Column values of a review row for an outcome; `verdict` is what the gate counts it as under `rubric`."""
    review = outcome.review
    return {
        "slot": outcome.slot,
        "reviewer": outcome.reviewer,
        "status": outcome.status.value,
        "verdict": counted_verdict(outcome, rubric),
        "review_json": None if review is None else review.model_dump(mode="json"),
        "error": outcome.error,
        "cost_usd": outcome.cost_usd,
        "latency_s": outcome.latency_s,
        "raw_response": outcome.raw_response,
        "call_ids": call_ids,
        **usage_values(outcome.usage),
    }


def outcome_of(row: ReviewRow, calls: dict[int, LLMCallRow]) -> ReviewOutcome:
    """A ReviewOutcome back from its row and its llm_call rows."""
    review = None if row.review_json is None else Review.model_validate(row.review_json)
    return ReviewOutcome(
        slot=cast(Slot, row.slot),
        reviewer=row.reviewer,
        status=ReviewStatus(row.status),
        review=review,
        error=row.error,
        usage=usage_of(row),
        cost_usd=row.cost_usd,
        latency_s=row.latency_s,
        raw_response=row.raw_response,
        calls=[call_of(calls[i]) for i in row.call_ids],
    )


def issue_rows(run_id: int, round_no: int, issues: list[MergedIssue]) -> list[MergedIssueRow]:
    """merged_issue rows in gate order."""
    return [
        MergedIssueRow(run_id=run_id, round_no=round_no, idx=i, **issue.model_dump()) for i, issue in enumerate(issues)
    ]


def gate_of(row: RoundRow, issues: list[MergedIssueRow]) -> GateResult | None:
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


def proposal_row(run_id: int, round_no: int, proposal: FixProposal, call_ids: list[int]) -> ProposalRow:
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
        **usage_values(proposal.usage),
    )


def proposal_of(row: ProposalRow, calls: dict[int, LLMCallRow]) -> FixProposal:
    """A FixProposal back from its row and its llm_call rows."""
    return FixProposal(
        issues=[MergedIssue.model_validate(i) for i in row.issues_json],
        edits=[FixEdit.model_validate(e) for e in row.edits_json],
        rejected=[RejectedEdit.model_validate(r) for r in row.rejected_json],
        before_text=row.before_text,
        proposed_text=row.proposed_text,
        usage=usage_of(row),
        cost_usd=row.cost_usd,
        calls=[call_of(calls[i]) for i in row.call_ids],
        error=row.error,
    )


def decision_row(
    run_id: int, round_no: int, action: str, actor: str, reason: str, before: str, after: str
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


def decision_of(row: DecisionRow) -> DecisionView:
    """A decision row for the page."""
    return DecisionView.model_validate({**row.model_dump(), "created_at": utc(row.created_at)})


def state_change_of(row: StateChangeRow) -> StateChangeView:
    """A state_change row for the page."""
    return StateChangeView.model_validate({**row.model_dump(), "created_at": utc(row.created_at)})


def escalation_of(row: EscalationRow, run: RunRow) -> EscalationView:
    """An escalation row plus the run facts the queue shows."""
    return EscalationView(
        **row.model_dump(exclude={"created_at", "resolved_at", "due_at"}),
        created_at=utc(row.created_at),
        resolved_at=utc_or_none(row.resolved_at),
        due_at=utc_or_none(row.due_at),
        run_status=RunStatus(run.status),
        round=run.round,
        rubric_name=run.rubric_name,
        rubric_version=run.rubric_version,
        run_created_at=utc(run.created_at),
    )


def summary_of(row: RunRow, cost: float) -> RunSummary:
    """One runs-list line."""
    return RunSummary(
        **row.model_dump(include=set(RUN_COPIED & RunSummary.model_fields.keys())),
        status=RunStatus(row.status),
        escalation_reason=reason_of(row),
        rounds=row.round,
        cost_usd=cost,
        created_at=utc(row.created_at),
        updated_at=utc(row.updated_at),
    )


def escape_of(row: EscapeRow) -> EscapeView:
    return EscapeView(**{**row.model_dump(), "created_at": utc(row.created_at), "source": row.source or "reported"})


def enum_value(value: EscalationReason | None) -> str | None:
    """The stored string of an optional enum."""
    return None if value is None else value.value


def check_text(text: str, what: str) -> None:
    """Refuse empty texts and texts over the size the app accepts (`santa_core.text.text_problem`)."""
    if problem := text_problem(text, f"the {what}"):
        raise ValueError(problem)


def screen_row(run_id: int, round_no: int, result: ScreenResult, call_id: int | None) -> ScreenRow:
    """A screen row for one known-answer screen of a round's text."""
    return ScreenRow(
        run_id=run_id,
        round_no=round_no,
        role=result.role,
        text_hash=result.text_hash,
        model=result.model,
        verdict=result.verdict,
        secret=result.secret,
        answer=result.answer,
        error=result.error,
        cost_usd=result.cost_usd,
        cached=result.cached,
        call_id=call_id,
        # NULL for the key check: its rows stay as they were (a NULL column is not hashed by a seal)
        kind=None if result.check == "key" else result.check,
        quotes=None if result.check == "key" else list(result.quotes),
    )


def screen_of(row: ScreenRow, calls: dict[int, LLMCallRow]) -> ScreenResult:
    """A ScreenResult back from its row (and its llm_call row, when a call was made)."""
    return ScreenResult(
        role=cast(ScreenRole, row.role),
        text_hash=row.text_hash,
        model=row.model,
        verdict=cast(ScreenVerdict, row.verdict),
        secret=row.secret,
        answer=row.answer,
        error=row.error,
        cost_usd=row.cost_usd,
        cached=row.cached,
        calls=[call_of(calls[row.call_id])] if row.call_id in calls else [],
        check=cast(ScreenCheck, row.kind or "key"),
        quotes=list(row.quotes or []),
    )
