"""The run page and the Escalations page say before the click when a text is one both reviewers already
judged (issue 18: a round whose output is unchanged is never reviewed again); a click on it anyway is
refused with nothing recorded, an edit goes through, and after a reviewer error the same text may go.
"""

from __future__ import annotations

from desk import open_desk
from santa_core.models import EscalationReason, RunStatus
from santa_core.reviewers.base import PERSON
from santa_core.run import engine
from santa_core.run.store import DecisionIn
from storage.runs import RunStore
from tests.support.messages_api import MessagesStub, error_reply
from tests.ui.test_app import plain
from tests.ui.test_escalation_queue import drive, escalate, item_id, open_as
from tests.ui.test_run_page import DEFECTIVE, EDITOR, MODEL_B, MODEL_C, SPEC, as_person, texts

FIXED = "Acme's rocket launched in 2018. It is ready for you."
OFFICER = "officer@example.com"


def fixed_by_a_person(repo: RunStore) -> int:
    """A run NAUGHTY in round 1 whose fix a person writes: the proposal is the judged text, unchanged."""
    desk = open_desk(str(repo.engine.url), mark_interrupted=False)
    try:
        run_id = desk.runs.create_run(
            SPEC, DEFECTIVE, desk.rubrics.resolved("general"), MODEL_B, MODEL_C, PERSON, created_by=EDITOR
        )
        desk.runner.execute(run_id)
    finally:
        desk.close()
    assert repo.load_run(run_id).state.status == RunStatus.AWAITING_APPROVAL
    return run_id


def test_approve_says_beforehand_that_the_unchanged_text_is_refused(desk_env: RunStore) -> None:
    run_id = fixed_by_a_person(desk_env)
    at = as_person(EDITOR, run_id)
    assert at.button(key="approve_fix").label == "Approve — edit the text first"
    assert "Approve will be refused: this text is exactly the output round 1 reviewed" in texts(at)
    assert "another round would only ask them again for the verdict they already gave" in texts(at)
    assert "pay them" not in texts(at)  # the reviewers may be people: nobody is paid per round
    at.button(key="approve_fix").click().run()  # clicked anyway: refused, nothing recorded
    assert not at.exception, at.exception
    assert any("Nothing was recorded" in plain(e.value) for e in at.error)
    assert desk_env.load_run(run_id).state.status == RunStatus.AWAITING_APPROVAL
    assert desk_env.get_run_view(run_id).rounds[0].decisions == []

    at.text_area(key=f"edit_{run_id}_1").set_value(FIXED).run()  # the person writes the fix
    assert at.button(key="approve_fix").label == "Approve"
    assert "Approve will be refused" not in texts(at)
    at.button(key="approve_fix").click().run()
    assert not at.exception, at.exception
    view = desk_env.get_run_view(run_id)
    assert [d.action for d in view.rounds[0].decisions] == ["edit"] and view.rounds[1].output_text == FIXED


def test_rereview_says_beforehand_that_a_judged_text_is_refused(desk_env: RunStore) -> None:
    run_id = escalate(desk_env)  # round_cap: both reviewers judged DEFECTIVE NAUGHTY
    esc = item_id(desk_env, run_id)
    at = open_as(OFFICER)
    at.radio(key=f"res_{esc}").set_value("rereview").run()
    assert any("Sending this text will be refused" in plain(w.value) for w in at.warning)
    at.text_area(key=f"res_why_{esc}").set_value("Try again.")
    at.button(key=f"res_go_{esc}").click().run()
    assert not at.exception, at.exception
    assert any("both reviewers already gave their verdict" in plain(e.value) for e in at.error)
    assert (
        desk_env.load_run(run_id).state.status == RunStatus.ESCALATED and len(desk_env.get_run_view(run_id).rounds) == 1
    )

    at.text_area(key=f"res_text_{esc}").set_value(FIXED).run()
    assert not any("will be refused" in plain(w.value) for w in at.warning)
    at.button(key=f"res_go_{esc}").click().run()
    assert not at.exception, at.exception
    assert desk_env.load_round(run_id, 2).output_text == FIXED


def test_after_a_reviewer_error_the_same_text_may_go_for_fresh_review(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    messages_stub.handler = lambda body: error_reply(400, "invalid_request_error", "the reviewer is down")
    run_id = escalate(desk_env)
    assert desk_env.load_run(run_id).state.escalation_reason == EscalationReason.PROVIDER_FAILED  # no answer came
    esc = item_id(desk_env, run_id)
    at = open_as(OFFICER)
    at.radio(key=f"res_{esc}").set_value("rereview").run()
    assert not any("will be refused" in plain(w.value) for w in at.warning)
    assert "No reviewer gave a complete verdict on this text yet" in texts(at)
    at.text_area(key=f"res_why_{esc}").set_value("The reviewer was down.")
    at.button(key=f"res_go_{esc}").click().run()
    assert not at.exception, at.exception
    assert desk_env.load_round(run_id, 2).output_text == DEFECTIVE


def test_a_round_the_runner_would_not_review_again_is_explained_on_the_escalation(desk_env: RunStore) -> None:
    run_id = desk_env.create_run(
        SPEC, DEFECTIVE, desk_env.rubrics.resolved("general"), MODEL_B, MODEL_C, MODEL_B, created_by=EDITOR
    )
    drive(desk_env, run_id)  # round 1 judged in full: NAUGHTY, the fix agent's proposal waits
    # Past the refusals (system code starting round 2 on the same text): the runner escalates it unreviewed.
    state = desk_env.load_run(run_id).state
    decision = DecisionIn(
        action="auto_approve", actor="auto-approve", reason="test", before_text=DEFECTIVE, after_text=DEFECTIVE
    )
    assert desk_env.commit_decision(run_id, state, engine.advance(state, engine.Approve()), decision, DEFECTIVE)
    drive(desk_env, run_id)
    assert "round 2 not reviewed" in desk_env.load_run(run_id).state.note
    esc = item_id(desk_env, run_id)
    at = open_as(OFFICER)
    assert "Round 2 was not reviewed (round 2 not reviewed: this text is exactly the output round 1" in texts(at)
    at.radio(key=f"res_{esc}").set_value("rereview").run()
    assert any("Sending this text will be refused" in plain(w.value) for w in at.warning)
