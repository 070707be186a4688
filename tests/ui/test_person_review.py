"""AppTest: a person's review starts unjudged, is refused until complete, and stays blind one slot at a time."""

from __future__ import annotations

import pytest

from santa_core.models import ReviewIssue, RunStatus
from santa_core.run import actions
from santa_core.run.actions import ActionError
from storage.runs import RunStore
from tests.ui.test_run_page import CLEAN, EDITOR, SPEC, as_person, passing_review, texts, wait_for

MODEL_B = "claude-sonnet-5-5"


def person_run(repo: RunStore, reviewer_b: str = MODEL_B) -> int:
    """A run with a person in slot C (and in B too when reviewer_b is "person"), started by the local user."""
    from desk import open_desk

    desk = open_desk(str(repo.engine.url), mark_interrupted=False)
    try:
        run_id = desk.runs.create_run(
            SPEC, CLEAN, desk.rubrics.resolved("general"), reviewer_b, "person", MODEL_B, created_by="local"
        )
        desk.runner.execute(run_id)
        return run_id
    finally:
        desk.close()


def criteria(repo: RunStore) -> list[str]:
    return repo.rubrics.resolved("general").criterion_ids()


def test_no_criterion_starts_judged_and_an_unjudged_one_blocks_submit(desk_env: RunStore) -> None:
    run_id = person_run(desk_env)
    at = as_person(None, run_id)
    key = f"person_{run_id}_1_C"
    assert all(at.radio(key=f"{key}_{c}").value is None for c in criteria(desk_env))
    at.button(key=f"{key}_submit").click().run()  # submitted without reading
    assert not at.exception, at.exception
    assert "Judge every criterion before submitting" in texts(at)
    assert "C" not in desk_env.load_round(run_id, 1).reviews
    for c in criteria(desk_env)[:-1]:
        at.radio(key=f"{key}_{c}").set_value("PASS")
    at.button(key=f"{key}_submit").click().run()
    assert "not set yet: Technical correctness" in texts(at) or "not set yet" in texts(at)
    assert "C" not in desk_env.load_round(run_id, 1).reviews


def test_a_fail_needs_a_note_or_a_quote_and_a_quote_must_be_in_the_output(desk_env: RunStore) -> None:
    run_id = person_run(desk_env)
    at = as_person(None, run_id)
    key = f"person_{run_id}_1_C"
    ids = criteria(desk_env)
    for c in ids:
        at.radio(key=f"{key}_{c}").set_value("PASS")
    at.radio(key=f"{key}_{ids[0]}").set_value("FAIL")
    at.button(key=f"{key}_submit").click().run()
    assert "Say what is wrong for each FAIL" in texts(at)
    at.text_input(key=f"{key}_{ids[0]}_quote").set_value("launched in 2019")  # not in the output
    at.button(key=f"{key}_submit").click().run()
    assert "copied from the output word for word" in texts(at)
    assert "C" not in desk_env.load_round(run_id, 1).reviews
    at.text_input(key=f"{key}_{ids[0]}_quote").set_value("launched   in 2018")  # spacing differs: still found
    at.button(key=f"{key}_submit").click().run()
    assert not at.exception, at.exception
    review = desk_env.load_round(run_id, 1).reviews["C"].review
    assert review.verdict == "FAIL" and review.critical_issues[0].evidence == "launched in 2018"


def test_the_keyless_local_user_sees_one_slot_form_at_a_time(desk_env: RunStore) -> None:
    run_id = person_run(desk_env, reviewer_b="person")
    assert desk_env.load_run(run_id).state.status == RunStatus.AWAITING_HUMAN_REVIEW
    at = as_person(None, run_id)
    forms = [b.key for b in at.button if b.key and b.key.endswith("_submit") and b.key.startswith("person_")]
    assert forms == [f"person_{run_id}_1_B_submit"]
    assert "Slot C's form opens once the review for slot B is saved" in texts(at)
    for c in criteria(desk_env):
        at.radio(key=f"person_{run_id}_1_B_{c}").set_value("PASS")
    at.button(key=f"person_{run_id}_1_B_submit").click().run()
    assert not at.exception, at.exception
    forms = [b.key for b in at.button if b.key and b.key.endswith("_submit") and b.key.startswith("person_")]
    assert forms == [f"person_{run_id}_1_C_submit"]
    assert not [s for s in at.success if "PASS" in s.value]  # B's verdict stays hidden while C is open


def test_the_action_refuses_an_incomplete_or_misquoting_person_review(desk_env: RunStore) -> None:
    """The one door checks it too, so no page or command can store a review that skipped a criterion."""
    run_id = person_run(desk_env)
    full = passing_review(desk_env)
    with pytest.raises(ActionError, match="Judge every criterion"):
        actions.submit_person_review(desk_env, run_id, "C", full.model_copy(update={"checks": full.checks[1:]}), EDITOR)
    issue = ReviewIssue(criterion=full.checks[0].criterion, description="x", evidence="nowhere in the text")
    bad = full.model_copy(update={"verdict": "FAIL", "critical_issues": [issue]})
    with pytest.raises(ActionError, match="must stand in the output"):
        actions.submit_person_review(desk_env, run_id, "C", bad, EDITOR)
    assert "C" not in desk_env.load_round(run_id, 1).reviews


# --- the form's shortcuts and messages (issue 34, point 14) -------------------------------------------------


def _flat(node: object) -> list[object]:
    """Every element of the page in the order it is drawn, top to bottom."""
    children = getattr(node, "children", None)
    if not children:
        return [node]
    return [e for child in children.values() for e in _flat(child)]


def test_the_form_says_what_is_missing_above_its_submit_button(desk_env: RunStore) -> None:
    run_id = person_run(desk_env)
    at = as_person(None, run_id)
    key = f"person_{run_id}_1_C"
    at.button(key=f"{key}_submit").click().run()
    order = _flat(at.main)
    said = next(i for i, e in enumerate(order) if type(e).__name__ == "Error" and "Judge every criterion" in e.value)
    button = next(i for i, e in enumerate(order) if getattr(e, "key", None) == f"{key}_submit")
    assert said < button


def test_all_pass_sets_every_unjudged_criterion_and_keeps_a_chosen_fail(desk_env: RunStore) -> None:
    run_id = person_run(desk_env)
    at = as_person(None, run_id)
    key = f"person_{run_id}_1_C"
    ids = criteria(desk_env)
    at.radio(key=f"{key}_{ids[0]}").set_value("FAIL")
    at.text_input(key=f"{key}_{ids[0]}_detail").set_value("the launch year is wrong")
    at.button(key=f"{key}_all_pass").click().run()
    assert [at.radio(key=f"{key}_{c}").value for c in ids] == ["FAIL"] + ["PASS"] * (len(ids) - 1)
    assert "C" not in desk_env.load_round(run_id, 1).reviews  # a shortcut, not a submit
    at.button(key=f"{key}_submit").click().run()
    review = desk_env.load_round(run_id, 1).reviews["C"].review
    assert review.verdict == "FAIL" and [c.result for c in review.checks].count("PASS") == len(ids) - 1


def test_the_local_user_is_warned_before_filling_the_second_slot_too(desk_env: RunStore) -> None:
    run_id = person_run(desk_env, reviewer_b="person")
    at = as_person(None, run_id)
    assert "You reviewed slot" not in texts(at)  # the first slot: nothing to warn about
    at.button(key=f"person_{run_id}_1_B_all_pass").click().run()
    at.button(key=f"person_{run_id}_1_B_submit").click().run()
    assert not at.exception, at.exception
    assert f"person_{run_id}_1_C_submit" in {b.key for b in at.button}  # the local user may fill both
    assert "You reviewed slot B of this round. Two reviews by one person are not independent" in texts(at)
    assert "C" not in desk_env.load_round(run_id, 1).reviews  # said before, not after, the second review


def test_a_review_in_progress_survives_a_visit_to_another_page(desk_env: RunStore) -> None:
    run_id = person_run(desk_env)
    at = as_person(None, run_id)
    key = f"person_{run_id}_1_C"
    first = criteria(desk_env)[0]
    at.radio(key=f"{key}_{first}").set_value("FAIL")
    at.text_input(key=f"{key}_{first}_detail").set_value("wrong year")
    at.run()
    at.switch_page("pages/runs.py").run()
    at.query_params["run"] = str(run_id)
    at.switch_page("pages/review.py").run()
    assert not at.exception, at.exception
    assert at.radio(key=f"{key}_{first}").value == "FAIL"
    assert at.text_input(key=f"{key}_{first}_detail").value == "wrong year"


def test_a_review_by_people_shows_no_tokens_price_latency_or_spend(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person's review has no tokens, no price and no model latency, and a run only people worked on spent
    nothing: none of it is shown as "0 in / 0 out tokens · $0.00 · 0.0s" or "$0.00 spent"."""
    monkeypatch.setenv("SANTA_SCREEN", "off")  # no model at all: the injection screen would be one
    run_id = person_run(desk_env, reviewer_b="person")
    at = as_person(None, run_id)
    for slot in ("B", "C"):
        for c in criteria(desk_env):
            at.radio(key=f"person_{run_id}_1_{slot}_{c}").set_value("PASS")
        at.button(key=f"person_{run_id}_1_{slot}_submit").click().run()
        assert not at.exception, at.exception
    wait_for(desk_env, run_id, RunStatus.SHIPPED)
    at = as_person(None, run_id)
    shown = texts(at)
    assert "Reviewer B" in shown and "Reviewer C" in shown  # the cards are there
    for said in ("tokens", "price unknown", "0.0s", "spent", "$0"):
        assert said not in shown, said
