"""Assembles a run's verification record from the run store and the audit trail."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol

from santa_core.models import ReviewOutcome, Rubric
from santa_core.providers import panel_families, spans_two_families
from santa_core.reports.record import (
    RecordAuditEvent,
    RecordDecision,
    RecordEscalation,
    RecordEscape,
    RecordGate,
    RecordProposal,
    RecordReview,
    RecordRound,
    RecordRubric,
    RecordScreen,
    RecordStateChange,
    VerificationRecord,
    sealed,
)
from santa_core.roles import SYSTEM_ACTORS
from santa_core.run.gate import counted_verdict
from santa_core.run.unreviewed import could_not_review
from santa_core.text import canonical_json, sha256_text, unified_diff
from storage.audit import AuditEvent, AuditStore, canonical_time
from storage.people import PeopleStore
from storage.views import RoundView, RunView


class RecordSource(Protocol):
    """What a record is read from (`storage.runs.RunStore`): the run, its audit events, who the actors are."""

    audit: AuditStore
    people: PeopleStore

    def get_run_view(self, run_id: int) -> RunView:
        """Everything about one run."""
        ...


AUDIT_LIMIT = 1_000_000
"""Every event of one run (a run has tens of events; the limit only bounds a runaway)."""


def rubric_hash(rubric: Rubric) -> str:
    """sha256 of the canonical JSON of the resolved rubric."""
    return sha256_text(canonical_json(rubric.model_dump(mode="json")))


def _review(outcome: ReviewOutcome, rubric: Rubric) -> RecordReview:
    review = outcome.review
    return RecordReview(
        slot=outcome.slot,
        reviewer=outcome.reviewer,
        status=outcome.status.value,
        verdict=counted_verdict(outcome, rubric),
        stated_verdict=None if review is None else review.verdict,
        checks=[] if review is None else review.checks,
        issues=[] if review is None else review.critical_issues,
        suggestions=[] if review is None else review.suggestions,
        error=outcome.error,
        raw_response=outcome.raw_response,
        raw_response_hash=sha256_text(outcome.raw_response),
        cost_usd=outcome.cost_usd,
    )


def _round(rnd: RoundView, next_round: RoundView | None, rubric: Rubric) -> RecordRound:
    gate = None if rnd.gate is None else RecordGate.model_validate(rnd.gate.model_dump(mode="json"))
    proposal = None
    if rnd.proposal is not None:
        p = rnd.proposal
        proposal = RecordProposal(
            before_hash=sha256_text(p.before_text),
            proposed_text=p.proposed_text,
            proposed_hash=sha256_text(p.proposed_text),
            edits=p.edits,
            rejected=p.rejected,
            error=p.error,
            diff=unified_diff(p.before_text, p.proposed_text, f"round {rnd.round_no}", "proposal"),
        )
    unreviewed = could_not_review(rnd)  # the provider failed: the stored NAUGHTY holds the output back, judges nothing
    diff = (
        None
        if next_round is None
        else unified_diff(
            rnd.output_text, next_round.output_text, f"round {rnd.round_no}", f"round {next_round.round_no}"
        )
    )
    return RecordRound(
        round_no=rnd.round_no,
        started_at=rnd.started_at,
        output_text=rnd.output_text,
        output_hash=rnd.output_hash,
        reviews=[_review(o, rubric) for _, o in sorted(rnd.reviews.items())],
        gate=gate,
        proposal=proposal,
        decisions=[RecordDecision(**d.model_dump(include=set(RecordDecision.model_fields))) for d in rnd.decisions],
        screens=[
            RecordScreen(**sc.model_dump(include=set(RecordScreen.model_fields)))
            for _, sc in sorted(rnd.screens.items())
        ],
        diff_to_next=diff,
        unreviewed=unreviewed,
        reviewed=not unreviewed,
    )


def _event(e: AuditEvent) -> RecordAuditEvent:
    """The event with its time as the exact string that was hashed."""
    return RecordAuditEvent(**{**e.model_dump(exclude={"id"}), "created_at": canonical_time(e.created_at)})


def _rounds(view: RunView) -> list[RecordRound]:
    rounds = sorted(view.rounds, key=lambda r: r.round_no)
    return [_round(r, rounds[i + 1] if i + 1 < len(rounds) else None, view.rubric) for i, r in enumerate(rounds)]


def _people(repo: RecordSource, view: RunView, events: list[AuditEvent]) -> dict[str, str]:
    """Every actor id the record names, with who they are now (name and roles)."""
    ids = {
        view.created_by,
        *(e.actor for e in events),
        *(h.actor for h in view.history),
        *(d.actor for r in view.rounds for d in r.decisions),
        *(x.reported_by for x in view.escapes),
        *(
            o.reviewer.removeprefix("person:")
            for r in view.rounds
            for o in r.reviews.values()
            if o.reviewer.startswith("person:")
        ),
        *(who for e in view.escalations for who in (e.owner, e.resolved_by) if who),
        *(who for who in (view.person_b, view.person_c) if who),
    }
    out: dict[str, str] = {}
    for pid in sorted(ids):
        person = repo.people.get(pid)
        if person is not None:
            roles = ", ".join(r.value for r in person.roles) or "no role"
            out[pid] = f"{person.name or pid} ({roles})"
        else:
            out[pid] = "the desk itself (system code)" if pid in SYSTEM_ACTORS else "unknown (not a person now)"
    return out


def verification_record(repo: RecordSource, run_id: int, now: datetime | None = None) -> VerificationRecord:
    """The sealed record of a run (RunNotFound when there is no such run)."""
    view = repo.get_run_view(run_id)
    events = repo.audit.events(run_id=run_id, newest_first=False, limit=AUDIT_LIMIT, seals=True)
    record = VerificationRecord(
        run_id=view.id,
        status=view.status.value,
        escalation_reason=None if view.state.escalation_reason is None else view.state.escalation_reason.value,
        spec=view.spec,
        spec_hash=sha256_text(view.spec),
        rubric=RecordRubric(**view.rubric.model_dump(), hash=rubric_hash(view.rubric)),
        reviewer_b=view.reviewer_b,
        reviewer_c=view.reviewer_c,
        reviewer_d=view.reviewer_d,
        fix_agent=view.fixer,
        panel_families=panel_families(view.reviewer_b, view.reviewer_c),
        spans_two_families=spans_two_families(view.reviewer_b, view.reviewer_c),
        person_b=view.person_b,
        person_c=view.person_c,
        auto_approve=view.auto_approve,
        budget_usd=view.budget_usd,
        created_by=view.created_by,
        created_at=view.created_at,
        source=view.source,
        total_cost_usd=view.total_cost_usd,
        cut_off_calls=view.cut_off + view.in_flight,  # a record of a running run explains its whole figure
        rounds=_rounds(view),
        final_output=view.final_output,
        final_output_hash=None if view.final_output is None else sha256_text(view.final_output),
        history=[RecordStateChange(**h.model_dump(mode="json", exclude={"id"})) for h in view.history],
        escalations=[
            RecordEscalation(**e.model_dump(include=set(RecordEscalation.model_fields))) for e in view.escalations
        ],
        escapes=[RecordEscape(**e.model_dump(include=set(RecordEscape.model_fields))) for e in view.escapes],
        audit_events=[_event(e) for e in events],
        people=_people(repo, view, events),
        generated_at=now or datetime.now(UTC),
    )
    return sealed(record)
