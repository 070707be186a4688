"""The round engine: an explicit state machine, `advance(state, event) -> state`.

Only this module decides a run's next state. It is pure: no I/O, no clock, no randomness.

    queued ──Claim──▶ running ──Gate(NICE)──▶ shipped
    running ──Gate(NAUGHTY)──▶ running (fixing) │ escalated(round_cap | disagreement | reviewer_error | injection)
    running ──Gate(unreviewed)──▶ escalated(provider_failed): nobody judged the output (the provider failed)
                               │ sampled (a batch sample's review: the batch fixes by pattern)
    running ──ProposalReady──▶ awaiting_approval (always, when a person fixes) │ running, round+1
                               (auto-approve) │ escalated(fix_failed)
    running ──NeedHumanReview──▶ awaiting_human_review ──HumanReviewSubmitted──▶ queued
    awaiting_approval ──Approve──▶ queued, round+1      ──Reject──▶ escalated(rejected_fix)
                      ──RetryFix──▶ queued (same round: the fix agent is asked again)
    running ──BudgetExceeded──▶ escalated(budget)       ──Interrupt──▶ interrupted ──Resume──▶ queued
    escalated ──Resolve(ship|reject|rereview)──▶ resolved_shipped │ resolved_rejected │ queued, round+1
    escalated(provider_failed) ──Resolve(try_again)──▶ queued, round+1 (the unreviewed round does not count)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from santa_core.models import EscalationReason as Why
from santa_core.models import GateDecision, RunState
from santa_core.models import RunStatus as S
from santa_core.run.unreviewed import TRIED_AGAIN

INJECTED = "text addressing the reviewer was detected"
REVIEWER_FAILED = "a reviewer's answer did not count (it failed after retries, or its PASS was compromised)"
"""Why a round failed when a reviewer's answer could not be counted."""
FIXING = "fixing"
PARTIAL_HELD = "partial fix proposal waiting for a person (not auto-approved)"
"""The note of a run set to auto-approve whose fix proposal leaves a flagged issue unfixed."""
"""Note of a run that is still `running` after a NAUGHTY gate: the fix agent is next."""


class InvalidTransition(ValueError):
    """The event is not allowed in the run's current state."""


@dataclass(frozen=True)
class Claim:
    """A worker takes a queued run."""


@dataclass(frozen=True)
class NeedHumanReview:
    """A person reviewer slot is still empty after the model reviewers answered."""


@dataclass(frozen=True)
class HumanReviewSubmitted:
    """The person filled their slot; the run goes back to the queue for the gate."""


@dataclass(frozen=True)
class Gate:
    """Both reviews (and the pre-checks) are in; the gate decided."""

    decision: GateDecision
    reviewer_error: bool = False
    injection: bool = False
    disagreement: bool = False
    """The reviewers disagree on a critical criterion (decides the reason at the round cap)."""
    issues: int | None = None
    """How many merged issues the gate found (None: not told). A NAUGHTY gate with none has
    nothing for the fix agent to fix, so it is not paid to try."""
    why: str = ""
    """What failed, when it was not a reviewer (the injection screen, a check that could not finish): the note."""
    unreviewed: str = ""
    """Which calls the model provider failed, when nobody could judge the output (`santa_core.run.unreviewed`)."""


@dataclass(frozen=True)
class ProposalReady:
    """The fix proposal is stored; `applied` is how many edits could be applied.

    `by_person`: a person writes the fix (the fix agent is a person, or no flagged issue could be
    located in the output), so the proposal is the unchanged output for them to edit in the
    approval step (no key needed, nothing auto-approved).
    """

    applied: int
    why: str = ""
    """What went wrong when nothing could be applied (the fix agent's error, e.g. a truncated answer)."""
    auto_approve: bool = False
    by_person: bool = False
    complete: bool = True
    """Every flagged issue got an applied edit; a partial proposal is never auto-approved."""


@dataclass(frozen=True)
class Approve:
    """A person approved the proposal (possibly after editing it)."""


@dataclass(frozen=True)
class Reject:
    """A person rejected the proposal."""


@dataclass(frozen=True)
class RetryFix:
    """A person set the proposal aside and asks the fix agent again (a counted, paid attempt)."""


@dataclass(frozen=True)
class BudgetExceeded:
    """The run spent its budget."""


@dataclass(frozen=True)
class Interrupt:
    """The process died, or the worker failed unexpectedly, mid-run."""

    note: str = ""


@dataclass(frozen=True)
class Resume:
    """A person resumes an interrupted run from its last committed step."""


@dataclass(frozen=True)
class Resolve:
    """A person resolves an escalation."""

    resolution: Literal["ship_as_is", "reject", "rereview", "try_again"]


Event = (
    Claim
    | NeedHumanReview
    | HumanReviewSubmitted
    | Gate
    | ProposalReady
    | Approve
    | Reject
    | RetryFix
    | BudgetExceeded
    | Interrupt
    | Resume
    | Resolve
)


def _to(state: RunState, status: S, **changes: object) -> RunState:
    return state.model_copy(update={"status": status, **changes})


def _escalate(state: RunState, why: Why, note: str = "") -> RunState:
    return _to(state, S.ESCALATED, escalation_reason=why, note=note or why.value)


def _on_gate(state: RunState, event: Gate) -> RunState:
    """NICE ships; NAUGHTY escalates for injection, reviewer error or the cap, else stays to fix."""
    if event.decision == GateDecision.NICE:
        return _to(state, S.SHIPPED, note="both reviewers PASS")
    if state.review_only:
        # Why no fix and no escalation: a batch fixes failures by pattern across all its items,
        # so one sampled item's NAUGHTY verdict is evidence for the batch, not a run to repair.
        why = (
            (event.why or INJECTED)
            if event.injection
            else (event.why or event.unreviewed or REVIEWER_FAILED)
            if event.reviewer_error
            else "NAUGHTY"
        )
        return _to(state, S.SAMPLED, note=f"batch sample: {why}")
    if event.injection:
        return _escalate(state, Why.INJECTION, event.why or INJECTED)
    if event.unreviewed:
        # Why not a reviewer error: nobody judged the output, so neither NAUGHTY nor "a reviewer failed" is
        # true. It still fails closed (nothing ships), and a person may try again once the provider answers.
        return _escalate(state, Why.PROVIDER_FAILED, event.why or event.unreviewed)
    if event.reviewer_error:
        return _escalate(state, Why.REVIEWER_ERROR, event.why or REVIEWER_FAILED)
    if event.issues == 0:
        return _escalate(state, Why.REVIEWER_ERROR, "NAUGHTY without a named issue: nothing for the fix agent to fix")
    if state.round >= state.round_cap and event.disagreement:
        # Why a reason of its own: more rounds will not settle a criterion the reviewers read
        # differently; a person should decide, and the rubric author should hear about it.
        return _escalate(
            state,
            Why.DISAGREEMENT,
            f"still NAUGHTY after round {state.round}; the reviewers disagree on a critical criterion",
        )
    if state.round >= state.round_cap:
        return _escalate(state, Why.ROUND_CAP, f"still NAUGHTY after round {state.round}")
    return _to(state, S.RUNNING, note=FIXING)


def _on_proposal(state: RunState, event: ProposalReady) -> RunState:
    if event.by_person:
        return _to(state, S.AWAITING_APPROVAL, note="waiting for a person to fix the flagged issues")
    if event.applied == 0:
        return _escalate(
            state, Why.FIX_FAILED, "the fix agent produced no applicable edit" + (f": {event.why}" if event.why else "")
        )
    if event.auto_approve and event.complete:
        return _to(state, S.RUNNING, round=state.round + 1, note="fix auto-approved")
    if event.auto_approve:
        return _to(state, S.AWAITING_APPROVAL, note=PARTIAL_HELD)
    return _to(state, S.AWAITING_APPROVAL, note="fix proposal waiting for a person")


def _on_resolve(state: RunState, event: Resolve) -> RunState:
    if event.resolution == "try_again":
        if state.escalation_reason != Why.PROVIDER_FAILED:
            raise InvalidTransition(
                "Try again is for a run the model provider failed; this one was judged "
                f"({state.escalation_reason.value if state.escalation_reason else 'no reason'})"
            )
        # Why the cap moves too: the round nobody could judge is not one of the rounds the run was given.
        return _to(
            state,
            S.QUEUED,
            round=state.round + 1,
            round_cap=state.round_cap + 1,
            escalation_reason=None,
            note=TRIED_AGAIN,
        )
    if event.resolution == "ship_as_is":
        return _to(state, S.RESOLVED_SHIPPED, note="shipped as is by a person")
    if event.resolution == "reject":
        return _to(state, S.RESOLVED_REJECTED, note="rejected by a person")
    nxt = state.round + 1
    # Why a new cap of one round: a person already looked; if fresh reviewers still say
    # NAUGHTY the run comes straight back to that person instead of looping on its own.
    return _to(state, S.QUEUED, round=nxt, round_cap=nxt, escalation_reason=None, note="re-review")


_TABLE: dict[tuple[S, type], object] = {
    (S.QUEUED, Claim): lambda s, e: _to(s, S.RUNNING, note="reviewing"),
    (S.RUNNING, NeedHumanReview): lambda s, e: _to(s, S.AWAITING_HUMAN_REVIEW, note="waiting for a person reviewer"),
    (S.AWAITING_HUMAN_REVIEW, HumanReviewSubmitted): lambda s, e: _to(s, S.QUEUED, note="person review in"),
    (S.RUNNING, Gate): _on_gate,
    (S.RUNNING, ProposalReady): _on_proposal,
    (S.AWAITING_APPROVAL, Approve): lambda s, e: _to(s, S.QUEUED, round=s.round + 1, note="fix approved"),
    (S.AWAITING_APPROVAL, Reject): lambda s, e: _escalate(s, Why.REJECTED_FIX, "a person rejected the fix"),
    # Back through the queue: the worker re-applies the round's gate and asks the fix agent again.
    (S.AWAITING_APPROVAL, RetryFix): lambda s, e: _to(s, S.QUEUED, note="asking the fix agent again"),
    (S.RUNNING, BudgetExceeded): lambda s, e: _escalate(s, Why.BUDGET, "the run's budget is spent"),
    (S.RUNNING, Interrupt): lambda s, e: _to(s, S.INTERRUPTED, note=e.note or "interrupted"),
    (S.INTERRUPTED, Resume): lambda s, e: _to(s, S.QUEUED, note="resumed"),
    (S.ESCALATED, Resolve): _on_resolve,
}


def allowed(state: RunState) -> list[type]:
    """Event types the state accepts (for tests and the UI)."""
    return [ev for (st, ev) in _TABLE if st == state.status]


def advance(state: RunState, event: Event) -> RunState:
    """The next state, or InvalidTransition when the event does not apply."""
    step = _TABLE.get((state.status, type(event)))
    if step is None:
        raise InvalidTransition(f"{type(event).__name__} is not allowed when the run is {state.status.value}")
    # _TABLE pairs each step with the event type it takes, a pairing a dict's type cannot state
    return step(state, event)  # type: ignore[operator]
