"""The rubric studio after issue 34 (point 12): errors shown once the author acts, marked on their fields, the page
opening on Settings' default rubric, and Try it explaining a check vs reviewer disagreement."""

from __future__ import annotations

from storage.runs import RunStore
from tests.ui.test_app import texts
from tests.ui.test_rubric_studio import act, open_rubrics, version_rows


def test_a_new_rubric_opens_without_errors_and_a_save_attempt_marks_the_name(desk_env: RunStore) -> None:
    at = open_rubrics()
    at.selectbox(key="rubric_pick").set_value("+ New rubric")
    act(at)
    assert not at.error, [e.value for e in at.error]  # nothing typed yet: nothing in red
    assert at.text_input(key="rs_name").label == "Rubric name"
    assert "Still to complete before saving: 1 item" in texts(at)
    at.button(key="rs_save").click()
    act(at)
    assert "no rubric name" in texts(at)
    assert "Not saved: 1 error blocks saving; it is marked :material/block: above." in texts(at)
    assert at.text_input(key="rs_name").label == ":material/block: Rubric name"
    assert version_rows(desk_env) == 4  # the built-ins only: the refused save wrote nothing
    at.text_input(key="rs_name").set_value("acme")
    act(at)
    assert not at.error and at.text_input(key="rs_name").label == "Rubric name"


def test_a_new_criterion_shows_only_the_error_of_the_field_typed_in(desk_env: RunStore) -> None:
    at = open_rubrics("general")
    at.button(key="rs_add").click()
    act(at)
    uid = f"k{len(desk_env.rubrics.document('general').criteria)}"
    assert not at.error, [e.value for e in at.error]  # four empty fields, no red yet
    at.text_input(key=f"rc_{uid}_id").set_value("Has Spaces")
    act(at)
    assert len(at.error) == 2 and "is not allowed" in at.error[0].value  # the field's error and the count
    assert "1 error blocks saving; it is marked :material/block: above." in texts(at)
    assert at.text_input(key=f"rc_{uid}_id").label == ":material/block: Id"
    assert at.text_input(key=f"rc_{uid}_name").label == "Name"
    at.button(key="rs_save").click()
    act(at)
    assert "Not saved: 4 errors block saving; they are marked :material/block: above." in texts(at)
    marked = {
        w.key
        for kind in ("text_input", "text_area")
        for w in getattr(at, kind)
        if w.label.startswith(":material/block:")
    }
    assert marked == {f"rc_{uid}_{f}" for f in ("id", "name", "pass_condition", "fail_signal")}
    assert desk_env.rubrics.latest_version("general") == 1


def test_the_page_opens_on_the_default_rubric_of_settings(desk_env: RunStore) -> None:
    from santa_core.config import Defaults, save_defaults

    assert open_rubrics().selectbox(key="rubric_pick").value == "general"  # the built-in default
    save_defaults(desk_env, Defaults(rubric="compliance"), "local", env={})
    at = open_rubrics()
    assert at.selectbox(key="rubric_pick").value == "compliance"
    assert at.text_input(key="rs_name").value == "compliance"
    assert open_rubrics("code").selectbox(key="rubric_pick").value == "code"  # a link still wins


def test_try_it_explains_a_failed_check_the_reviewer_passed(desk_env: RunStore) -> None:
    at = open_rubrics("compliance")
    at.text_area(key="try_output").set_value("Guaranteed returns, risk‑free!")  # the stand-in reviewer passes it
    act(at)
    assert not at.info or "the check fails and the reviewer passes it" not in texts(at)
    at.button(key="try_review").click()
    act(at)
    name = next(c.name for c in desk_env.rubrics.resolved("compliance").criteria if c.id == "no_outcome_guarantees")
    notes = [i.value for i in at.info if "the check fails and the reviewer passes it" in i.value]
    assert len(notes) == 1 and notes[0].startswith(name), notes
    assert "a run would be NAUGHTY whatever the reviewers say" in notes[0]


def test_try_it_adds_no_note_when_check_and_reviewer_agree(desk_env: RunStore) -> None:
    at = open_rubrics("compliance")
    at.text_area(key="try_output").set_value("All investments carry risk.")
    act(at)
    at.button(key="try_review").click()
    act(at)
    assert "With this draft the sample is PASS." in texts(at)
    assert "reviewer passes it" not in texts(at) and "reviewer fails it" not in texts(at)


def test_try_it_says_where_errors_not_yet_shown_will_be_marked(desk_env: RunStore) -> None:
    at = open_rubrics("general")
    at.button(key="rs_add").click()
    act(at)
    assert "The draft has 4 errors (Edit marks each one once you press its save button); fix them to try it." in texts(
        at
    )
    at.button(key="rs_save").click()
    act(at)
    assert "The draft has 4 errors (Edit marks each one); fix them to try it." in texts(at)
