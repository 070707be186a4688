"""Every state-machine transition, the round cap and each escalation reason."""

from __future__ import annotations

import pytest

from santa_core.models import EscalationReason as Why
from santa_core.models import GateDecision, RunState
from santa_core.models import RunStatus as S
from santa_core.run import engine as e

NICE, NAUGHTY = GateDecision.NICE, GateDecision.NAUGHTY


def st(status: S, rnd: int = 1, cap: int = 3, note: str = "") -> RunState:
    return RunState(status=status, round=rnd, max_rounds=3, round_cap=cap, note=note)


@pytest.mark.parametrize(
    ("before", "event", "status", "rnd", "reason"),
    [
        pytest.param(st(S.QUEUED), e.Claim(), S.RUNNING, 1, None, id="claim"),
        pytest.param(st(S.RUNNING), e.Gate(NICE), S.SHIPPED, 1, None, id="nice-ships"),
        pytest.param(st(S.RUNNING), e.Gate(NAUGHTY), S.RUNNING, 1, None, id="naughty-goes-to-fix"),
        pytest.param(st(S.RUNNING, 3), e.Gate(NAUGHTY), S.ESCALATED, 3, Why.ROUND_CAP, id="cap-after-3"),
        pytest.param(st(S.RUNNING, 2), e.Gate(NAUGHTY), S.RUNNING, 2, None, id="round-2-still-fixes"),
        pytest.param(
            st(S.RUNNING), e.Gate(NAUGHTY, reviewer_error=True), S.ESCALATED, 1, Why.REVIEWER_ERROR, id="reviewer-error"
        ),
        pytest.param(st(S.RUNNING), e.Gate(NAUGHTY, injection=True), S.ESCALATED, 1, Why.INJECTION, id="injection"),
        pytest.param(st(S.RUNNING), e.BudgetExceeded(), S.ESCALATED, 1, Why.BUDGET, id="budget"),
        pytest.param(st(S.RUNNING), e.ProposalReady(applied=2), S.AWAITING_APPROVAL, 1, None, id="proposal"),
        pytest.param(
            st(S.RUNNING),
            e.ProposalReady(applied=1, auto_approve=True),
            S.RUNNING,
            2,
            None,
            id="auto-approve-next-round",
        ),
        pytest.param(
            st(S.RUNNING), e.ProposalReady(applied=0), S.ESCALATED, 1, Why.FIX_FAILED, id="no-applicable-edit"
        ),
        pytest.param(st(S.AWAITING_APPROVAL), e.Approve(), S.QUEUED, 2, None, id="approve"),
        pytest.param(st(S.AWAITING_APPROVAL), e.Reject(), S.ESCALATED, 1, Why.REJECTED_FIX, id="reject"),
        pytest.param(st(S.RUNNING), e.NeedHumanReview(), S.AWAITING_HUMAN_REVIEW, 1, None, id="need-person"),
        pytest.param(st(S.AWAITING_HUMAN_REVIEW), e.HumanReviewSubmitted(), S.QUEUED, 1, None, id="person-in"),
        pytest.param(st(S.RUNNING), e.Interrupt("boom"), S.INTERRUPTED, 1, None, id="interrupt"),
        pytest.param(st(S.INTERRUPTED), e.Resume(), S.QUEUED, 1, None, id="resume"),
        pytest.param(st(S.ESCALATED), e.Resolve("ship_as_is"), S.RESOLVED_SHIPPED, 1, None, id="resolve-ship"),
        pytest.param(st(S.ESCALATED), e.Resolve("reject"), S.RESOLVED_REJECTED, 1, None, id="resolve-reject"),
        pytest.param(st(S.ESCALATED, 3), e.Resolve("rereview"), S.QUEUED, 4, None, id="resolve-rereview"),
    ],
)
def test_transition(before: RunState, event: e.Event, status: S, rnd: int, reason: Why | None) -> None:
    after = e.advance(before, event)
    assert (after.status, after.round, after.escalation_reason) == (status, rnd, reason)
    assert before.status != after.status or after.note  # every step says what happened


def test_rereview_gives_one_more_round_then_escalates_again() -> None:
    state = e.advance(st(S.ESCALATED, 3), e.Resolve("rereview"))
    state = e.advance(e.advance(state, e.Claim()), e.Gate(NAUGHTY))
    assert (state.status, state.escalation_reason, state.round) == (S.ESCALATED, Why.ROUND_CAP, 4)


def test_full_loop_three_naughty_rounds_escalate_on_the_cap() -> None:
    state = st(S.QUEUED)
    for _ in range(2):
        state = e.advance(state, e.Claim())
        state = e.advance(state, e.Gate(NAUGHTY))
        state = e.advance(state, e.ProposalReady(applied=1))
        state = e.advance(state, e.Approve())
    state = e.advance(e.advance(state, e.Claim()), e.Gate(NAUGHTY))
    assert (state.status, state.round, state.escalation_reason) == (S.ESCALATED, 3, Why.ROUND_CAP)


ALL_EVENTS = [
    e.Claim(),
    e.NeedHumanReview(),
    e.HumanReviewSubmitted(),
    e.Gate(NICE),
    e.ProposalReady(1),
    e.Approve(),
    e.Reject(),
    e.BudgetExceeded(),
    e.Interrupt(),
    e.Resume(),
    e.Resolve("reject"),
]


@pytest.mark.parametrize("status", [pytest.param(s, id=s.value) for s in S])
def test_everything_not_in_the_table_is_refused(status: S) -> None:
    state = st(status)
    accepted = set(e.allowed(state))
    for event in ALL_EVENTS:
        if type(event) in accepted:
            e.advance(state, event)
        else:
            with pytest.raises(e.InvalidTransition):
                e.advance(state, event)


SAMPLE = RunState(status=S.RUNNING, round=1, max_rounds=1, round_cap=1, review_only=True)
"""A batch sample's review: one round, no fix, no escalation."""


@pytest.mark.parametrize(
    ("gate", "status", "note"),
    [
        pytest.param(e.Gate(NICE), S.SHIPPED, "both reviewers PASS", id="nice-ships"),
        pytest.param(e.Gate(NAUGHTY), S.SAMPLED, "batch sample: NAUGHTY", id="naughty-is-sampled-not-fixed"),
        pytest.param(
            e.Gate(NAUGHTY, disagreement=True), S.SAMPLED, "batch sample: NAUGHTY", id="no-disagreement-escalation"
        ),
        pytest.param(
            e.Gate(NAUGHTY, reviewer_error=True),
            S.SAMPLED,
            f"batch sample: {e.REVIEWER_FAILED}",
            id="reviewer-error-is-sampled",
        ),
        pytest.param(
            e.Gate(NAUGHTY, injection=True),
            S.SAMPLED,
            "batch sample: text addressing the reviewer was detected",
            id="injection-is-sampled",
        ),
    ],
)
def test_a_batch_sample_review_ends_after_its_gate(gate: e.Gate, status: S, note: str) -> None:
    after = e.advance(SAMPLE, gate)
    assert (after.status, after.round, after.escalation_reason, after.note) == (status, 1, None, note)
    assert "review_only" not in after.model_dump()  # states hash as before in the audit trail
    assert e.allowed(after) == []  # nothing follows: the batch decides


@pytest.mark.parametrize("status", [S.SHIPPED, S.RESOLVED_SHIPPED, S.RESOLVED_REJECTED, S.SAMPLED])
def test_final_states_accept_nothing(status: S) -> None:
    assert e.allowed(st(status)) == []


def test_state_is_immutable() -> None:
    state = st(S.QUEUED)
    e.advance(state, e.Claim())
    assert state.status == S.QUEUED


def test_a_person_fixing_always_gets_the_approval_step() -> None:
    state = e.advance(st(S.RUNNING), e.ProposalReady(applied=0, auto_approve=True, by_person=True))
    assert state.status == S.AWAITING_APPROVAL and state.round == 1


@pytest.mark.parametrize(
    ("before", "gate", "status", "reason"),
    [
        pytest.param(
            st(S.RUNNING, 3),
            e.Gate(NAUGHTY, disagreement=True),
            S.ESCALATED,
            Why.DISAGREEMENT,
            id="cap-with-disagreement",
        ),
        pytest.param(
            st(S.RUNNING, 3),
            e.Gate(NAUGHTY, disagreement=False),
            S.ESCALATED,
            Why.ROUND_CAP,
            id="cap-without-disagreement",
        ),
        pytest.param(
            st(S.RUNNING, 1), e.Gate(NAUGHTY, disagreement=True), S.RUNNING, None, id="below-cap-still-fixing"
        ),
        pytest.param(
            st(S.RUNNING, 2), e.Gate(NAUGHTY, disagreement=True), S.RUNNING, None, id="one-below-cap-still-fixing"
        ),
        pytest.param(
            st(S.RUNNING, 4, cap=4),
            e.Gate(NAUGHTY, disagreement=True),
            S.ESCALATED,
            Why.DISAGREEMENT,
            id="raised-cap-after-rereview",
        ),
        pytest.param(
            st(S.RUNNING, 3),
            e.Gate(NAUGHTY, reviewer_error=True, disagreement=True),
            S.ESCALATED,
            Why.REVIEWER_ERROR,
            id="reviewer-error-comes-first",
        ),
        pytest.param(
            st(S.RUNNING, 3),
            e.Gate(NAUGHTY, injection=True, disagreement=True),
            S.ESCALATED,
            Why.INJECTION,
            id="injection-comes-first",
        ),
        pytest.param(
            st(S.RUNNING, 3), e.Gate(NICE, disagreement=True), S.SHIPPED, None, id="nice-ships-whatever-the-flag"
        ),
    ],
)
def test_disagreement_at_the_round_cap(before: RunState, gate: e.Gate, status: S, reason: Why | None) -> None:
    after = e.advance(before, gate)
    assert (after.status, after.escalation_reason, after.round) == (status, reason, before.round)
    if status == S.RUNNING:
        assert after.note == e.FIXING
    if reason == Why.DISAGREEMENT:
        assert "disagree" in after.note
