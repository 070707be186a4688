"""AppTest drives the Inbox (person reviewer slots) and the new-run form's roles and slot assignment."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from desk import open_desk
from santa_core.models import CheckResult, Review, RunStatus
from santa_core.run import actions
from storage.runs import RunStore
from tests.conftest import grant
from tests.ui.test_app import CLEAN, SPEC, texts
from ui import identity

INBOX = "pages/inbox.py"
EDITOR, EDITOR2 = "editor@example.com", "editor2@example.com"
MODEL = "claude-sonnet-5-5"


@pytest.fixture
def repo(desk_env: RunStore) -> RunStore:
    """The test people, plus a second editor so two reviewers can compete for slots."""
    return grant(desk_env, {EDITOR2: ("editor",)})


def as_person(email: str | None, page: str, run_id: int | None = None) -> AppTest:
    """The app opened on a page by a signed-in person (None: the local user, an admin)."""
    at = AppTest.from_file("../../app.py", default_timeout=30)
    if email:
        at.user = {"is_logged_in": True, "email": email, "name": email.split("@")[0].title()}
    if run_id is not None:
        at.query_params["run"] = str(run_id)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def waiting_run(
    repo: RunStore, reviewer_b: str = "person", person_b: str | None = None, person_c: str | None = None
) -> int:
    """A run driven until it waits for its person slot(s); slot C is always a person."""
    desk = open_desk(str(repo.engine.url), mark_interrupted=False)
    try:
        run_id = desk.runs.create_run(
            SPEC,
            CLEAN,
            desk.rubrics.resolved("general"),
            reviewer_b,
            "person",
            "person",
            created_by=EDITOR,
            person_b=person_b,
            person_c=person_c,
        )
        assert desk.runner.execute(run_id).status == RunStatus.AWAITING_HUMAN_REVIEW
        return run_id
    finally:
        desk.close()


def open_buttons(at: AppTest) -> set[str]:
    """The slots listed in my inbox, as `<run>_<slot>`."""
    return {b.key.removeprefix("inbox_open_") for b in at.button if b.key and b.key.startswith("inbox_open_")}


def passing_review(repo: RunStore) -> Review:
    rubric = repo.rubrics.resolved("general")
    return Review(
        verdict="PASS",
        checks=[CheckResult(criterion=c.id, result="PASS", detail="ok") for c in rubric.criteria],
        critical_issues=[],
        suggestions=[],
    )


def test_an_assigned_slot_is_only_in_its_reviewers_inbox_an_open_one_in_everyones(repo: RunStore) -> None:
    mine = waiting_run(repo, reviewer_b=MODEL, person_c=EDITOR)
    open_to_all = waiting_run(repo, reviewer_b=MODEL)
    at = as_person(EDITOR, INBOX)
    assert open_buttons(at) == {f"{mine}_C", f"{open_to_all}_C"}
    shown = texts(at)
    assert f"Run #{mine} · round 1 · slot C · assigned to me" in shown
    assert f"Run #{open_to_all} · round 1 · slot C · open to anyone" in shown
    assert "Rubric general v1 · waiting since" in shown
    assert "PASS" not in shown and "USD" not in shown and "$" not in shown  # blind: no verdict, no cost
    other = as_person(EDITOR2, INBOX)
    assert open_buttons(other) == {f"{open_to_all}_C"}
    assert "1 waiting slot hidden: 1 assigned to someone else." in texts(other)
    assert "All waiting slots" not in texts(other)  # an editor may not assign


def test_someone_who_filled_one_slot_does_not_get_the_other(repo: RunStore) -> None:
    run_id = waiting_run(repo)
    actions.submit_person_review(repo, run_id, "B", passing_review(repo), EDITOR)
    at = as_person(EDITOR, INBOX)
    assert open_buttons(at) == set()
    shown = texts(at)
    assert "Nothing waiting for you" in shown
    assert "the other slot of a round you already reviewed" in shown
    assert open_buttons(as_person(EDITOR2, INBOX)) == {f"{run_id}_C"}


def test_nothing_waiting_is_a_friendly_empty_inbox(repo: RunStore) -> None:
    at = as_person(EDITOR, INBOX)
    assert "Nothing waiting for you" in texts(at) and not at.error


@pytest.mark.parametrize("who", ["viewer@example.com", "author@example.com"])
def test_people_who_may_not_review_see_the_refusal(repo: RunStore, who: str) -> None:
    waiting_run(repo)
    at = as_person(who, INBOX)
    shown = texts(at)
    assert "To fill a person reviewer slot you need to be" in shown
    assert open_buttons(at) == set() and "All waiting slots" not in shown


def test_an_admin_reassigns_a_slot_and_the_inboxes_follow(repo: RunStore) -> None:
    run_id = waiting_run(repo, reviewer_b=MODEL, person_c=EDITOR)
    admin = as_person("admin@example.com", INBOX)
    assert open_buttons(admin) == set()  # not theirs to review, but theirs to assign
    assert "1 waiting slot hidden: 1 assigned to someone else. They are listed under All waiting slots" in texts(admin)
    assert admin.dataframe[0].value.iloc[0]["assigned to"] == EDITOR
    admin.selectbox(key="inbox_assign_slot").set_value(f"{run_id}:C")
    picker = admin.selectbox(key=f"inbox_assign_to_{run_id}_C")
    assert picker.value == EDITOR and "anyone who may review" in picker.options and EDITOR2 in picker.options
    assert "viewer@example.com" not in picker.options  # only people who may review
    picker.set_value(EDITOR2)
    admin.button(key="inbox_assign").click().run()
    assert not admin.exception, admin.exception
    assert f"now assigned to {EDITOR2}" in texts(admin).replace("\\", "")
    assert repo.get_run_view(run_id).person_c == EDITOR2
    assert open_buttons(as_person(EDITOR, INBOX)) == set()
    assert "assigned to me" in texts(as_person(EDITOR2, INBOX))
    # back to anyone: both editors see it again
    admin.selectbox(key=f"inbox_assign_to_{run_id}_C").set_value("")
    admin.button(key="inbox_assign").click().run()
    assert repo.get_run_view(run_id).person_c is None
    assert open_buttons(as_person(EDITOR, INBOX)) == {f"{run_id}_C"}
    assert open_buttons(as_person(EDITOR2, INBOX)) == {f"{run_id}_C"}
    events = repo.audit.events(action="review.assigned", run_id=run_id, newest_first=False)
    assert [(e.actor, e.detail["person"]) for e in events] == [
        ("admin@example.com", EDITOR2),
        ("admin@example.com", None),
    ]


def test_storage_refuses_an_assignment_by_an_editor(repo: RunStore) -> None:
    from santa_core.roles import PermissionDenied

    run_id = waiting_run(repo)
    with pytest.raises(PermissionDenied):
        repo.assign_person_slot(run_id, "C", EDITOR2, EDITOR)


def test_opening_a_slot_from_the_inbox_shows_the_blind_review_form(repo: RunStore) -> None:
    run_id = waiting_run(repo, reviewer_b=MODEL, person_c=EDITOR)
    assert "B" in repo.get_run_view(run_id).rounds[0].reviews  # the model reviewer already answered
    at = as_person(EDITOR, INBOX)
    at.button(key=f"inbox_open_{run_id}_C").click().run()
    assert not at.exception, at.exception
    shown = texts(at)
    assert f"Run #{run_id}" in shown and "Your review for slot C (round 1)" in shown
    assert "run history stays hidden" in shown
    assert [b.key for b in at.button if b.key and b.key.endswith("_submit")] == [f"person_{run_id}_1_C_submit"]
    assert not [s for s in at.success if "PASS" in s.value] and "spent" not in shown  # B's verdict, cost hidden
    # AppTest's own page pointer stays on the inbox after a script's switch_page; move it to the run.
    at.switch_page("pages/review.py").run()
    for criterion in repo.rubrics.resolved("general").criterion_ids():
        at.radio(key=f"person_{run_id}_1_C_{criterion}").set_value("PASS")
    at.button(key=f"person_{run_id}_1_C_submit").click().run()
    assert not at.exception, at.exception
    assert repo.get_run_view(run_id).rounds[0].reviews["C"].reviewer == f"person:{EDITOR}"


# --- the new-run form: who may start a run, and who fills a person slot ------------------------


def test_a_viewer_gets_no_new_run_form(repo: RunStore) -> None:
    at = as_person("viewer@example.com", "pages/review.py")
    assert "To start a run you need to be" in texts(at)
    assert not [t for t in at.text_area if t.key == "new_spec"]
    assert not [b for b in at.button if b.key == "start_review"]


def test_an_editor_assigns_a_person_slot_when_starting_a_run(repo: RunStore) -> None:
    at = as_person(EDITOR, "pages/review.py")
    at.text_area(key="new_spec").set_value(SPEC)
    at.text_area(key="new_output").set_value(CLEAN)
    at.selectbox(key="new_reviewer_b").set_value(MODEL)
    at.selectbox(key="new_reviewer_c").set_value("person").run()
    assert not [s for s in at.selectbox if s.key == "new_person_b"]
    picker = at.selectbox(key="new_person_c")
    assert picker.value == "" and picker.options[0] == "anyone who may review" and EDITOR2 in picker.options
    assert "viewer@example.com" not in picker.options
    picker.set_value(EDITOR2)
    at.button(key="start_review").click().run()
    assert not at.exception, at.exception
    run = repo.list_runs(limit=1)[0]
    view = repo.get_run_view(run.id)
    assert (view.person_b, view.person_c, view.created_by) == (None, EDITOR2, EDITOR)


def test_one_person_for_both_slots_is_refused_and_the_text_kept(repo: RunStore) -> None:
    at = as_person(EDITOR, "pages/review.py")
    at.text_area(key="new_spec").set_value(SPEC)
    at.text_area(key="new_output").set_value(CLEAN)
    at.selectbox(key="new_reviewer_b").set_value("person")
    at.selectbox(key="new_reviewer_c").set_value("person").run()
    at.selectbox(key="new_person_b").set_value(EDITOR2)
    at.selectbox(key="new_person_c").set_value(EDITOR2)
    at.button(key="start_review").click().run()
    assert "must come from different reviewers" in texts(at)
    assert repo.list_runs() == []
    assert at.text_area(key="new_output").value == CLEAN


def test_a_refusal_from_storage_is_shown_and_the_text_kept(repo: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identity, "can", lambda permission: True)  # a page that forgot to hide the form
    at = as_person("viewer@example.com", "pages/review.py")
    at.text_area(key="new_spec").set_value(SPEC)
    at.text_area(key="new_output").set_value(CLEAN)
    at.button(key="start_review").click().run()
    assert not at.exception, at.exception
    assert any("may not start a run" in e.value for e in at.error)
    assert repo.list_runs() == []
    assert at.text_area(key="new_output").value == CLEAN


def test_a_signed_in_name_in_the_refusal_is_shown_literally(repo: RunStore) -> None:
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.user = {"is_logged_in": True, "email": "viewer@example.com", "name": "![x](http://127.0.0.1:9/p.png)"}
    at.run()
    at.switch_page(INBOX).run()
    assert not at.exception, at.exception
    refusal = next(i.value for i in at.info if "To fill a person reviewer slot" in i.value)
    assert "\\!\\[x\\]" in refusal and "![x](" not in refusal
