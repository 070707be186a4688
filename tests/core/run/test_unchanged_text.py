"""A round whose output is unchanged is never reviewed again (issue 18): approving a fix proposal that
leaves the judged text as it was, or re-reviewing an escalated text both reviewers already judged, is
refused with nothing recorded; where the reviewers gave no complete verdict on the text (a reviewer
error, a budget stop) the same text may go for review again; and the runner itself never reviews a
round whose text the previous round fully judged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from santa_core.models import EscalationReason, GateDecision, GateResult, ReviewOutcome, ReviewStatus, RunStatus
from santa_core.reviewers.base import PERSON, ReviewRequest
from santa_core.reviewers.doubles import FunctionReviewer, passing
from santa_core.run import actions, engine
from santa_core.run.store import DecisionIn, RoundRecord
from santa_core.run.unchanged import complete_verdict, judged_before
from storage.escalations import UnchangedText
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant, migrated_sqlite
from tests.core.run.test_runner import BAD, GOOD, RUBRIC, SPEC, make_runner, new_run, strict


@pytest.fixture
def repo(tmp_path: Path) -> RunStore:
    return grant(RunStore(init_db(migrated_sqlite(tmp_path / "santa.db"))))


def strict_pair() -> dict[str, FunctionReviewer]:
    return {"b": FunctionReviewer("b", strict), "c": FunctionReviewer("c", strict)}


def nothing_recorded(repo: RunStore, run_id: int, status: RunStatus) -> None:
    """The run is where it was: same status, still round 1, no decision appended."""
    view = repo.get_run_view(run_id)
    assert view.status == status and view.state.round == 1 and [r.round_no for r in view.rounds] == [1]
    assert view.rounds[0].decisions == []


def escalated_after_a_full_verdict(repo: RunStore) -> int:
    """A run whose round 1 both reviewers judged NAUGHTY, escalated because a person rejected the fix."""
    runner, _ = make_runner(repo, strict_pair())
    run_id = new_run(repo, BAD)
    assert runner.execute(run_id).status == RunStatus.AWAITING_APPROVAL
    assert actions.reject_fix(repo, run_id, "ann", "wrong fix").status == RunStatus.ESCALATED
    return run_id


# --- approving a fix -------------------------------------------------------------------------


def test_approving_a_persons_fix_unedited_is_refused_and_records_nothing(repo: RunStore) -> None:
    runner, _ = make_runner(repo, strict_pair())
    run_id = new_run(repo, BAD, fixer=PERSON)
    assert runner.execute(run_id).status == RunStatus.AWAITING_APPROVAL
    assert repo.load_round(run_id, 1).proposal.proposed_text == BAD  # a person's fix starts as the judged text
    with pytest.raises(actions.ActionError) as refused:
        actions.approve_fix(repo, run_id, "ann")
    message = str(refused.value)
    assert message.startswith("Nothing was recorded") and "exactly the output round 1 reviewed" in message
    assert "edit the text" in message and "reject the fix" in message
    assert "ask the fix agent again" not in message  # a person writes this fix: there is no agent to ask
    with pytest.raises(actions.ActionError, match="would only ask them again for the verdict they already gave"):
        actions.approve_fix(repo, run_id, "ann", BAD, "looks fine to me")  # the same text, "edited"
    nothing_recorded(repo, run_id, RunStatus.AWAITING_APPROVAL)


def test_approving_a_real_edit_works_and_the_next_round_reviews_it(repo: RunStore) -> None:
    pair = strict_pair()
    runner, _ = make_runner(repo, pair)
    run_id = new_run(repo, BAD, fixer=PERSON)
    runner.execute(run_id)
    assert actions.approve_fix(repo, run_id, "ann", GOOD, "fixed the year").status == RunStatus.QUEUED
    assert runner.execute(run_id).status == RunStatus.SHIPPED
    assert [r.output for r in pair["b"].requests] == [BAD, GOOD]


def test_an_edit_that_restores_the_judged_text_is_refused_and_names_the_fix_agent(repo: RunStore) -> None:
    runner, _ = make_runner(repo, strict_pair())
    run_id = new_run(repo, BAD)
    runner.execute(run_id)
    assert repo.load_round(run_id, 1).proposal.proposed_text == GOOD
    with pytest.raises(actions.ActionError, match="ask the fix agent again"):
        actions.approve_fix(repo, run_id, "ann", BAD, "keep the original")
    nothing_recorded(repo, run_id, RunStatus.AWAITING_APPROVAL)
    assert actions.approve_fix(repo, run_id, "ann").round == 2  # the agent's real fix still goes through


# --- re-reviewing an escalation ----------------------------------------------------------------


def test_rereview_of_a_fully_judged_unchanged_text_is_refused(repo: RunStore) -> None:
    run_id = escalated_after_a_full_verdict(repo)
    for edited in (None, BAD):  # no edit, or an "edit" equal to the current text
        with pytest.raises(actions.ActionError) as refused:
            actions.resolve_escalation(repo, run_id, "rereview", "ann", "try again", edited)
        message = str(refused.value)
        assert "both reviewers already gave their verdict" in message
        assert "edit the output" in message and "ship it as is or reject it" in message
    view = repo.get_run_view(run_id)
    assert view.status == RunStatus.ESCALATED and view.escalation.status == "open" and len(view.rounds) == 1
    assert [d.action for d in view.rounds[0].decisions] == ["reject"]  # the rejection only
    # The store refuses too, inside its transaction (for any caller that skips the actions).
    with pytest.raises(UnchangedText, match="Nothing was recorded"):
        repo.resolve_escalation(run_id, "rereview", "ann", "try again")
    assert repo.get_run_view(run_id).escalation.status == "open"
    # An edited text goes for fresh review.
    state = actions.resolve_escalation(repo, run_id, "rereview", "ann", "fixed the year", GOOD)
    assert (state.status, state.round) == (RunStatus.QUEUED, 2)


def test_rereview_after_a_reviewer_error_may_send_the_same_text(repo: RunStore) -> None:
    answers = {"n": 0}

    def times_out_once(request):
        answers["n"] += 1
        return ReviewStatus.TIMEOUT if answers["n"] == 1 else passing(request)

    reviewers = {"b": FunctionReviewer("b", times_out_once), "c": FunctionReviewer("c", passing)}
    runner, _ = make_runner(repo, reviewers)
    run_id = new_run(repo, GOOD)
    state = runner.execute(run_id)
    assert (state.status, state.escalation_reason) == (RunStatus.ESCALATED, EscalationReason.PROVIDER_FAILED)
    assert not complete_verdict(repo.load_round(run_id, 1))
    state = actions.resolve_escalation(repo, run_id, "rereview", "ann", "the reviewer timed out")
    assert (state.status, state.round) == (RunStatus.QUEUED, 2)
    assert runner.execute(run_id).status == RunStatus.SHIPPED  # the runner reviews it: no verdict to repeat
    assert repo.load_round(run_id, 2).output_text == GOOD


def test_rereview_after_a_budget_stop_before_any_review_may_send_the_same_text(repo: RunStore) -> None:
    runner, _ = make_runner(repo, strict_pair())
    run_id = new_run(repo, BAD, budget_usd=0.0)
    assert runner.execute(run_id).escalation_reason == EscalationReason.BUDGET
    # The action refuses a paid round over budget (issue 34) ...
    with pytest.raises(actions.ActionError, match=r"budget .* is spent"):
        actions.resolve_escalation(repo, run_id, "rereview", "ann", "budget raised")
    # ... and so does the store itself (every door), for the budget: not as an unchanged text, since nobody judged it.
    with pytest.raises(actions.ActionError, match=r"budget .* is spent") as refused:
        repo.resolve_escalation(run_id, "rereview", "ann", "budget raised")
    assert "exactly the output" not in str(refused.value)
    assert repo.load_run(run_id).state.status == RunStatus.ESCALATED


# --- the runner's last line of defence ---------------------------------------------------------


def test_the_runner_never_reviews_a_round_whose_text_the_previous_round_fully_judged(repo: RunStore) -> None:
    pair = strict_pair()
    runner, _ = make_runner(repo, pair)
    run_id = new_run(repo, BAD)
    runner.execute(run_id)
    # Past the actions' refusal (system code writing the next round itself): round 2 holds round 1's text.
    state = repo.load_run(run_id).state
    decision = DecisionIn(action="auto_approve", actor="auto-approve", reason="test", before_text=BAD, after_text=BAD)
    assert repo.commit_decision(run_id, state, engine.advance(state, engine.Approve()), decision, BAD)
    state = runner.execute(run_id)
    assert (state.status, state.escalation_reason) == (RunStatus.ESCALATED, EscalationReason.REVIEWER_ERROR)
    assert "round 2 not reviewed" in state.note and "exactly the output round 1 reviewed" in state.note
    assert len(pair["b"].requests) == len(pair["c"].requests) == 1  # nobody was paid for round 2
    rnd = repo.load_round(run_id, 2)
    assert rnd.gate is None and rnd.reviews == {}  # nothing was decided on it: no gate stored
    # The unreviewed round does not hide the verdict behind it: an unchanged re-review is still refused.
    with pytest.raises(actions.ActionError, match="exactly the output round 1 reviewed"):
        actions.resolve_escalation(repo, run_id, "rereview", "ann", "again")
    assert actions.resolve_escalation(repo, run_id, "rereview", "ann", "fixed", GOOD).status == RunStatus.QUEUED
    assert runner.execute(run_id).status == RunStatus.SHIPPED


def test_judged_before_walks_back_only_over_the_same_text() -> None:
    review = passing(ReviewRequest(rubric=RUBRIC, spec=SPEC, output=GOOD))
    ok = {s: ReviewOutcome(slot=s, reviewer="m", status=ReviewStatus.OK, review=review) for s in ("B", "C")}
    gate = GateResult(decision=GateDecision.NAUGHTY, issues=[])
    judged = RoundRecord(round_no=1, output_text="A", reviews=ok, gate=gate)
    other = RoundRecord(round_no=2, output_text="B", reviews=ok, gate=gate)
    unreviewed = RoundRecord(round_no=3, output_text="A")
    assert judged_before([judged], "A") is judged and judged_before([judged], "A ") is None  # byte for byte
    assert judged_before([unreviewed, judged], "A") is judged
    assert judged_before([unreviewed, other, judged], "A") is None  # restoring an older text is a change
    failed = judged.model_copy(update={"gate": gate.model_copy(update={"reviewer_error": True})})
    half = judged.model_copy(update={"reviews": {"B": ok["B"]}})
    assert not complete_verdict(failed) and not complete_verdict(half) and complete_verdict(judged)
