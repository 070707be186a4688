"""AppTest: a rubric author marks a criterion high-risk on the Rubrics page; the Review page then offers reviewer D
(models only), prices D in the estimate, and the run page shows three reviewers' cards; a rubric without a high-risk
criterion offers no D."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from santa_core.models import RunStatus
from santa_core.providers import canonical
from storage.runs import RunStore
from tests.support.messages_api import MessagesStub, asked_criteria, schema_properties
from tests.ui.test_app import CLEAN, latest_run, open_app, start_run, texts, wait_for


def act(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_high_risk_criterion_marked_in_the_studio_runs_three_reviewers_from_the_review_page(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    at = open_app()
    assert "new_reviewer_d" not in {s.key for s in at.selectbox}  # general v1 marks nothing: two reviewers
    at.switch_page("pages/rubrics.py").run()
    at.selectbox(key="rubric_pick").set_value("general")
    act(at)
    high_risk = at.text_input(key="rc_k0_id").value
    at.checkbox(key="rc_k0_third_reviewer").check()
    act(at)
    at.text_input(key="rs_note").set_value("a third reviewer on factual accuracy")
    act(at)
    at.button(key="rs_save").click()
    act(at)
    assert desk_env.rubrics.resolved("general", 2).third_reviewer_ids() == [high_risk]

    at.switch_page("pages/review.py").run()
    picker = at.selectbox(key="new_reviewer_d")
    d, options = picker.value, picker.options
    b, c = at.selectbox(key="new_reviewer_b").value, at.selectbox(key="new_reviewer_c").value
    assert "person" not in options and canonical(d) not in {canonical(b), canonical(c)}
    assert f" · D {d} $" in texts(at)  # the round's estimate prices D
    start_run(at, CLEAN)
    run_id = latest_run(desk_env)
    assert desk_env.load_run(run_id).reviewer_d == d
    assert wait_for(desk_env, run_id, lambda s: s == RunStatus.SHIPPED) == RunStatus.SHIPPED
    asked = [c["body"] for c in messages_stub.message_calls() if "verdict" in schema_properties(c["body"])]
    assert sorted(a["model"] for a in asked) == sorted([b, c, d])
    assert [asked_criteria(a) for a in asked if a["model"] == d] == [[high_risk]]
    page = open_app("pages/review.py", run_id)
    shown = texts(page)
    assert f"Reviewer D** · {d}" in shown and "all three reviewers" in shown


def mark_first_high_risk(repo: RunStore) -> None:
    """General v2: v1 with its first criterion marked for a third reviewer, saved as an author saves it."""
    doc = repo.rubrics.document("general", 1)
    marked = [c.model_copy(update={"third_reviewer": i == 0}) for i, c in enumerate(doc.criteria)]
    repo.rubrics.save(doc.model_copy(update={"criteria": marked}), "local", "high-risk accuracy", 1)


def test_settings_save_the_default_third_reviewer_and_the_review_page_starts_on_it(desk_env: RunStore) -> None:
    at = open_app("pages/settings.py")
    assert "person" not in at.selectbox(key="set_d").options  # D is a model
    at.selectbox(key="set_d").set_value("claude-opus-5-5")
    at.button(key="set_save_runs").click().run()
    assert not at.exception, at.exception
    assert desk_env.get_settings()["reviewer_d"] == "claude-opus-5-5"
    mark_first_high_risk(desk_env)
    page = open_app("pages/review.py")
    assert page.selectbox(key="new_reviewer_d").value == "claude-opus-5-5"


NO_KEY_D = "no model provider has a key: a run on this rubric cannot start here"


def test_with_no_key_the_form_says_under_d_that_a_high_risk_rubric_cannot_start(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    mark_first_high_risk(desk_env)
    assert NO_KEY_D not in texts(open_app())  # a key: D can be called, nothing to say
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    at = open_app()
    assert at.selectbox(key="new_reviewer_b").options == ["person"]  # "person reviewers only" …
    assert at.selectbox(key="new_reviewer_d").value != "person"  # … but D is a model: the form says so before Start
    assert any(NO_KEY_D in w.value for w in at.warning), texts(at)
