"""What a person can do to a run: approve, edit or reject a fix, fill a reviewer slot,
resolve an escalation, resume an interrupted run.

Each action records an append-only decision, then changes the state through the engine. The
caller hands the run back to the runner when the returned state is `queued`.
"""

from __future__ import annotations

from typing import Literal

from santa_core import engine
from santa_core.models import MAX_TEXT_CHARS, Review, ReviewOutcome, ReviewStatus, RunState, RunStatus, Slot
from santa_core.runner import SLOTS, advance_run
from santa_core.store import Store


class ActionError(ValueError):
    """The action cannot be taken (wrong state, missing justification, bad text)."""


def _require(store: Store, run_id: int, *statuses: RunStatus):
    run = store.load_run(run_id)
    if run.state.status not in statuses:
        wanted = " or ".join(s.value for s in statuses)
        raise ActionError(f"run {run_id} is {run.state.status.value}, not {wanted}")
    return run


def _check_text(text: str, what: str) -> str:
    if not text.strip():
        raise ActionError(f"The {what} is empty.")
    if len(text) > MAX_TEXT_CHARS:
        raise ActionError(f"The {what} has {len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}.")
    return text


def approve_fix(store: Store, run_id: int, actor: str, edited_text: str | None = None, reason: str = "") -> RunState:
    """Approve the proposal (or the person's edit of it); the next round reviews that text."""
    run = _require(store, run_id, RunStatus.AWAITING_APPROVAL)
    rnd = store.load_round(run_id, run.state.round)
    proposed = rnd.proposal.proposed_text
    after = _check_text(edited_text, "edited output") if edited_text is not None else proposed
    action = "approve" if after == proposed else "edit"
    new_round = run.state.round + 1
    store.record_decision(run_id, rnd.round_no, action, actor, reason or action, rnd.output_text, after)
    store.start_round(run_id, new_round, after)
    return advance_run(store, run_id, run.state, engine.Approve(), actor)


def reject_fix(store: Store, run_id: int, actor: str, reason: str) -> RunState:
    """Reject the proposal; the run escalates to a person."""
    run = _require(store, run_id, RunStatus.AWAITING_APPROVAL)
    rnd = store.load_round(run_id, run.state.round)
    store.record_decision(run_id, rnd.round_no, "reject", actor, reason or "rejected",
                          rnd.output_text, rnd.proposal.proposed_text)
    return advance_run(store, run_id, run.state, engine.Reject(), actor)


def submit_person_review(store: Store, run_id: int, slot: Slot, review: Review, actor: str) -> RunState:
    """A person fills a reviewer slot; once both slots are in the run goes back to the queue."""
    run = _require(store, run_id, RunStatus.AWAITING_HUMAN_REVIEW, RunStatus.RUNNING, RunStatus.QUEUED)
    rnd = store.load_round(run_id, run.state.round)
    if slot in rnd.reviews:
        raise ActionError(f"slot {slot} of round {rnd.round_no} already has a review")
    outcome = ReviewOutcome(slot=slot, reviewer=f"person:{actor}", status=ReviewStatus.OK, review=review,
                            raw_response=review.model_dump_json())
    store.save_review(run_id, rnd.round_no, outcome)
    run = store.load_run(run_id)
    rnd = store.load_round(run_id, run.state.round)
    if run.state.status == RunStatus.AWAITING_HUMAN_REVIEW and all(s in rnd.reviews for s in SLOTS):
        return advance_run(store, run_id, run.state, engine.HumanReviewSubmitted(), actor)
    return run.state


Resolution = Literal["ship_as_is", "reject", "rereview"]


def resolve_escalation(
    store: Store, run_id: int, resolution: Resolution, actor: str, justification: str,
    edited_output: str | None = None,
) -> RunState:
    """A person decides an escalated run: ship as is, reject, or edit and send for fresh review."""
    run = _require(store, run_id, RunStatus.ESCALATED)
    if not justification.strip():
        raise ActionError("A justification is required to resolve an escalation.")
    rnd = store.load_round(run_id, run.state.round)
    after = _check_text(edited_output, "edited output") if edited_output is not None else rnd.output_text
    action = {"ship_as_is": "ship_as_is", "reject": "resolve_reject", "rereview": "rereview"}[resolution]
    store.record_decision(run_id, rnd.round_no, action, actor, justification, rnd.output_text, after)
    if resolution == "rereview":
        store.start_round(run_id, run.state.round + 1, after)
    return advance_run(store, run_id, run.state, engine.Resolve(resolution), actor)


def resume(store: Store, run_id: int, actor: str) -> RunState:
    """Put an interrupted run back in the queue; it continues from its last committed step."""
    run = _require(store, run_id, RunStatus.INTERRUPTED)
    return advance_run(store, run_id, run.state, engine.Resume(), actor)
