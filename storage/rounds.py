"""Rounds and what happens in them: the output under review, each review (with its LLM calls),
the gate, the fix proposal and the append-only decisions. `RoundStore` is the runner's side.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from sqlmodel import Session, col, select

from santa_core.models import (
    FixProposal,
    GateResult,
    LLMCall,
    ReviewOutcome,
    ReviewStatus,
    Rubric,
    RunState,
    RunStatus,
    ScreenCheck,
    ScreenResult,
    Slot,
)
from santa_core.reviewers.base import Served
from santa_core.roles import SYSTEM_ACTORS, Permission, PermissionDenied
from santa_core.run import engine as state_machine
from santa_core.run.store import DecisionAction, DecisionIn
from santa_core.text import sha256_text
from storage import audit
from storage.call_log import CallLogStore, sent_row
from storage.errors import ClaimLost, MoveRefused, RoundConflict
from storage.hashing import json_hash
from storage.people import require
from storage.queries import not_null, stored_id
from storage.rows import (
    call_row,
    check_text,
    decision_row,
    gate_of,
    issue_rows,
    outcome_of,
    proposal_of,
    proposal_row,
    review_values,
    screen_of,
    screen_row,
    state_of,
)
from storage.run_rows import calls_by_id, children, lock_run, require_round, round_row
from storage.slots import check_person_review, person_of
from storage.state_changes import set_state
from storage.tables import CallSentRow, DecisionRow, MergedIssueRow, ProposalRow, ReviewRow, RoundRow, RunRow, ScreenRow
from storage.times import utcnow
from storage.workers import this_worker

DECISION_PERMISSION: dict[str, Permission] = {
    "approve": Permission.DECIDE_FIX,
    "edit": Permission.DECIDE_FIX,
    "reject": Permission.DECIDE_FIX,
    "retry_fix": Permission.DECIDE_FIX,
    "auto_approve": Permission.DECIDE_FIX,  # only a system actor (auto-approve) records these
    "ship_as_is": Permission.RESOLVE_ESCALATION,
    "rereview": Permission.RESOLVE_ESCALATION,
    "resolve_reject": Permission.RESOLVE_ESCALATION,
    "try_again": Permission.RETRY_RUN,
}
"""What a person must be allowed to do to record each decision."""


def start_round_row(s: Session, run_id: int, round_no: int, text: str) -> str | None | Literal[False]:
    """Insert the round; an untouched round may take a new text, a reviewed one may not.

    Returns False when nothing changed, else the hash of the text replaced (None: a new round).
    """
    row = round_row(s, run_id, round_no)
    if row is None:
        s.add(RoundRow(run_id=run_id, round_no=round_no, output_text=text, output_hash=sha256_text(text)))
        return None
    if row.output_text == text:
        return False
    if row.gate_decision is not None or children(s, ReviewRow, run_id, round_no):
        raise RoundConflict(f"round {round_no} of run {run_id} was already reviewed with another text")
    before = row.output_hash
    row.output_text, row.output_hash = text, sha256_text(text)
    s.add(row)
    return before


def insert_calls(s: Session, run_id: int, round_no: int, calls: list[LLMCall], slot: str | None) -> list[int]:
    """Append llm_call rows; their ids in order."""
    rows = [call_row(run_id, round_no, call, slot) for call in calls]
    s.add_all(rows)
    s.flush()
    return [stored_id(row) for row in rows]


def add_decision(s: Session, row: DecisionRow) -> None:
    """Refuse a decision the actor may not take; else append it and its audit event."""
    require(s, row.actor, DECISION_PERMISSION[row.action])
    if row.action == "auto_approve" and row.actor not in SYSTEM_ACTORS:
        raise PermissionDenied(row.actor, Permission.DECIDE_FIX, ())
    s.add(row)
    audit.append(
        s,
        row.actor,
        f"decision.{row.action}",
        "run",
        row.run_id,
        run_id=row.run_id,
        before=row.before_hash,
        after=row.after_hash,
        detail={"round": row.round_no, "reason": row.reason},
    )


def check_person_decision(run: RunRow, new: RunState, decision: DecisionIn) -> None:
    """A person's decision through `commit_decision` is a decision on a fix proposal, with the
    state the engine gives it; an escalation is resolved only by `resolve_escalation`."""
    events: dict[str, state_machine.Event] = {
        "approve": state_machine.Approve(),
        "edit": state_machine.Approve(),
        "reject": state_machine.Reject(),
        "retry_fix": state_machine.RetryFix(),
    }
    event = events.get(decision.action)
    current = state_of(run)
    if event is None or current.status != RunStatus.AWAITING_APPROVAL:
        raise MoveRefused(
            f"{decision.actor} may not record {decision.action!r} on run {run.id} while it is "
            f"{current.status.value}: a person decides here only on a fix waiting for approval"
            "; an escalation is resolved by resolving it"
        )
    expected = state_machine.advance(current, event)
    if new != expected:
        raise MoveRefused(
            f"{decision.actor} may not set run {run.id} to {new.status.value}; the engine's "
            f"move for {decision.action!r} gives {expected.status.value}"
        )


def fence(run: RunRow) -> None:
    """Refuse a runner's write to a run that another process has claimed since (ClaimLost): this process was
    taken for dead (its heartbeat stopped: a pause, a cut network) and the run taken over by another worker.
    A person's writes never reach a running run's slots; they are not fenced."""
    if run.status == RunStatus.RUNNING.value and run.worker and run.worker != this_worker():
        raise ClaimLost(stored_id(run), run.worker)


class RoundStore(CallLogStore):
    """Writes of a run's rounds: each one its own committed transaction that locks the run first."""

    def start_round(self, run_id: int, round_no: int, output_text: str) -> None:
        """Create the round with its output text (idempotent: the same text again writes nothing).

        Audited (`round.started`, actor "worker") when it creates the round or replaces an
        untouched round's text; create_run, commit_decision and resolve_escalation start their
        rounds inside their own audited transaction.
        """
        check_text(output_text, "output")
        with self._tx() as s:
            run = lock_run(s, run_id)
            before = start_round_row(s, run_id, round_no, output_text)
            if before is False:
                return
            run.updated_at = utcnow()
            audit.append(
                s,
                "worker",
                "round.started",
                "round",
                f"{run_id}/{round_no}",
                run_id=run_id,
                before=before,
                after=sha256_text(output_text),
                detail={"round": round_no, "replaced": before is not None},
            )

    def save_review(self, run_id: int, round_no: int, outcome: ReviewOutcome, only_if_empty: bool = False) -> bool:
        """Commit one reviewer's outcome (and its LLM calls); replaces the slot's earlier one.

        With only_if_empty, a slot that already holds a review is left as it is and the call
        returns False (two people filling one slot: the first one counts). A person's review
        (`person:<id>`) always is: it fills only an empty (or pending) slot whose reviewer is a
        person.
        """
        with self._tx() as s:
            run = lock_run(s, run_id)
            require_round(s, run_id, round_no)
            stmt = select(ReviewRow).where(
                ReviewRow.run_id == run_id, ReviewRow.round_no == round_no, ReviewRow.slot == outcome.slot
            )
            row = s.exec(stmt).first()
            person = person_of(outcome.reviewer)
            if person is not None:
                check_person_review(s, run, round_no, outcome.slot, person)
                if row is not None and row.status != ReviewStatus.PENDING.value:
                    return False  # a person never overwrites a review: the first one counts
            else:
                fence(run)
                if row is not None and only_if_empty:
                    return False
            if row is not None and outcome_of(row, calls_by_id(s, row.call_ids)) == outcome:
                return True
            ids = insert_calls(s, run_id, round_no, outcome.calls, outcome.slot)
            values = review_values(outcome, ids, Rubric.model_validate(run.rubric_json))
            if row is None:
                row = ReviewRow(run_id=run_id, round_no=round_no, **values)
            else:
                row.sqlmodel_update({**values, "created_at": utcnow()})
            s.add(row)
            run.updated_at = utcnow()
            # No verdict in the detail: the Audit page is open to everyone, and a person reviewer
            # must not learn the other verdict before giving theirs. The hash covers the answer.
            audit.append(
                s,
                person or "worker",
                "review.saved",
                "review",
                f"{run_id}/{round_no}/{outcome.slot}",
                run_id=run_id,
                after=sha256_text(outcome.raw_response),
                detail={
                    "round": round_no,
                    "slot": outcome.slot,
                    "reviewer": outcome.reviewer,
                    "status": outcome.status.value,
                },
            )
            return True

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
        """Put a model call on record before its request leaves (the write-ahead call log), committed."""
        with self._tx() as s:
            fence(lock_run(s, run_id))  # a process taken for dead sends nothing more for the run
            s.add(sent_row(Served(run_id=run_id, round_no=round_no, slot=slot), purpose, model, request, estimate_usd))

    def noted_since(
        self, run_id: int, round_no: int, slot: Slot | None, purpose: str, model: str, request: dict, since: datetime
    ) -> bool:
        """Whether this process put this call on record since `since` (a try whose connection was cut after it
        committed: `desk.outage` asks before trying again, so a call is never noted twice)."""
        row = sent_row(Served(run_id=run_id, round_no=round_no, slot=slot), purpose, model, request, 0.0)
        with self._read() as s:
            return (
                s.exec(
                    select(CallSentRow.id).where(
                        CallSentRow.run_id == run_id,
                        CallSentRow.round_no == round_no,
                        CallSentRow.slot == slot,
                        CallSentRow.purpose == purpose,
                        CallSentRow.model == model,
                        CallSentRow.worker == row.worker,
                        CallSentRow.request_hash == row.request_hash,
                        CallSentRow.sent_at >= since,
                    )
                ).first()
                is not None
            )

    def save_screen(self, run_id: int, round_no: int, result: ScreenResult) -> None:
        """Commit one known-answer screen of the round, with its LLM call when one was made."""
        with self._tx() as s:
            run = lock_run(s, run_id)
            fence(run)
            require_round(s, run_id, round_no)
            ids = insert_calls(s, run_id, round_no, result.calls, None)  # every attempt; the row names the last
            s.add(screen_row(run_id, round_no, result, ids[-1] if ids else None))
            run.updated_at = utcnow()
            audit.append(
                s,
                "worker",
                "screen.saved",
                "round",
                f"{run_id}/{round_no}",
                run_id=run_id,
                after=result.text_hash,
                detail={
                    "round": round_no,
                    "role": result.role,
                    "model": result.model,
                    "verdict": result.verdict,
                    "cached": result.cached,
                    **({"check": result.check} if result.check != "key" else {}),
                },
            )

    def screened(self, text_hash: str, model: str, check: ScreenCheck = "key") -> ScreenResult | None:
        """An earlier clean verdict of this check of this text by this model, unless any screen of it by this check
        ever took the model over or quoted the text (then None: the text is screened afresh every time, and one
        glitch is not forever). The key check's rows hold NULL in `kind` (as every row before 0022)."""
        kind = col(ScreenRow.kind).is_(None) if check == "key" else col(ScreenRow.kind) == check
        with self._read() as s:
            rows = s.exec(
                select(ScreenRow.verdict, ScreenRow.id).where(
                    ScreenRow.text_hash == text_hash,
                    ScreenRow.model == model,
                    kind,
                    col(ScreenRow.verdict).in_(("clean", "took_over", "quoted")),
                )
            ).all()
            if not rows or any(verdict != "clean" for verdict, _ in rows):
                return None
            return screen_of(s.get_one(ScreenRow, max(not_null(i for _, i in rows))), {})

    def save_gate(self, run_id: int, round_no: int, gate: GateResult) -> None:
        """Commit the gate decision and the merged issues of the round."""
        with self._tx() as s:
            run = lock_run(s, run_id)
            fence(run)
            rnd = require_round(s, run_id, round_no)
            old_issues = children(s, MergedIssueRow, run_id, round_no)
            if gate_of(rnd, old_issues) == gate:
                return
            for issue in old_issues:  # a re-run gate replaces the derived issue list
                s.delete(issue)
            s.flush()
            rnd.gate_decision = gate.decision.value
            rnd.gate_reasons = list(gate.reasons)
            rnd.gate_reviewer_error, rnd.gate_injection = (gate.reviewer_error, gate.injection)
            rnd.gate_checks = None if gate.checks is None else [c.model_dump(mode="json") for c in gate.checks]
            rnd.gate_disagreement = gate.disagreement
            s.add(rnd)
            s.add_all(issue_rows(run_id, round_no, gate.issues))
            run.updated_at = utcnow()
            audit.append(
                s,
                "gate",
                "round.gate",
                "round",
                f"{run_id}/{round_no}",
                run_id=run_id,
                before=rnd.output_hash,
                after=json_hash(gate.model_dump(mode="json")),
                detail={"round": round_no, "decision": gate.decision.value, "issues": len(gate.issues)},
            )

    def save_proposal(self, run_id: int, round_no: int, proposal: FixProposal) -> None:
        """Commit the fix agent's proposal (and its LLM calls); the newest one counts."""
        with self._tx() as s:
            run = lock_run(s, run_id)
            fence(run)
            require_round(s, run_id, round_no)
            old = children(s, ProposalRow, run_id, round_no)
            retries = sum(d.action == "retry_fix" for d in children(s, DecisionRow, run_id, round_no))
            # The same proposal again is a no-op, unless a person set the last one aside: then it is a new attempt.
            if len(old) > retries and proposal_of(old[-1], calls_by_id(s, old[-1].call_ids)) == proposal:
                return
            ids = insert_calls(s, run_id, round_no, proposal.calls, None)
            row = proposal_row(run_id, round_no, proposal, ids)
            s.add(row)
            run.updated_at = utcnow()
            audit.append(
                s,
                "worker",
                "proposal.saved",
                "round",
                f"{run_id}/{round_no}",
                run_id=run_id,
                before=row.before_hash,
                after=row.proposed_hash,
                detail={"round": round_no, "edits": len(proposal.edits)},
            )

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
        row = decision_row(run_id, round_no, action, actor, reason, before_text, after_text)
        with self._tx() as s:
            run = lock_run(s, run_id)
            require_round(s, run_id, round_no)
            add_decision(s, row)
            run.updated_at = utcnow()

    def commit_decision(
        self, run_id: int, expected: RunState, new: RunState, decision: DecisionIn, next_round_text: str | None = None
    ) -> bool:
        """One transaction: the decision row, the next round (if any) and the state change.

        False (and nothing written) when the run is no longer in `expected` status and round,
        e.g. a second person decided first.
        """
        with self._tx() as s:
            run = lock_run(s, run_id)
            if RunStatus(run.status) != expected.status or run.round != expected.round:
                return False
            fence(run)  # an auto-approval by a process whose claim was taken over
            if decision.actor not in SYSTEM_ACTORS:
                check_person_decision(run, new, decision)
            add_decision(
                s,
                decision_row(
                    run_id,
                    expected.round,
                    decision.action,
                    decision.actor,
                    decision.reason,
                    decision.before_text,
                    decision.after_text,
                ),
            )
            if next_round_text is not None:
                start_round_row(s, run_id, new.round, next_round_text)
            set_state(s, run, new, decision.actor, new.note)
            return True
