"""AppTest drives the run page as different people: role gating, escapes, the verification record."""

from __future__ import annotations

import json
import time

import pytest
from streamlit.testing.v1 import AppTest

from desk import open_desk
from santa_core.models import CheckResult, Review, RunState, RunStatus
from santa_core.roles import PermissionDenied
from santa_core.run import actions
from storage.errors import SlotAssigned
from storage.runs import RunStore
from tests.ui.test_app import plain

SPEC = "Announce the Acme rocket in two sentences. Mention the 2018 launch."
CLEAN = "Acme's rocket launched in 2018. It is ready for you."
DEFECTIVE = "Acme's rocket launched in DEFECT. It is ready for you."
MODEL_B, MODEL_C = "claude-sonnet-5-5", "claude-haiku-5-5"
EDITOR, OFFICER, VIEWER = "editor@example.com", "officer@example.com", "viewer@example.com"


def as_person(email: str | None, run_id: int) -> AppTest:
    """The run page opened by a signed-in person (None: the local user, an admin)."""
    at = AppTest.from_file("../../app.py", default_timeout=30)
    if email:
        at.user = {"is_logged_in": True, "email": email, "name": email.split("@")[0].title()}
    at.query_params["run"] = str(run_id)
    at.run()
    at.switch_page("pages/review.py").run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    """Everything the page shows as text (escapes removed)."""
    parts = [
        e.value
        for kind in ("subheader", "markdown", "text", "caption", "success", "error", "warning", "info", "code")
        for e in getattr(at, kind)
    ]
    return "\n".join(plain(p) for p in parts)


def keys(at: AppTest, kind: str = "button") -> set[str]:
    return {w.key for w in getattr(at, kind) if w.key}


def driven_run(repo: RunStore, output: str, reviewer_c: str = MODEL_C, person_c: str | None = None) -> int:
    """A run started by an editor and driven (synchronously) to its first stop."""
    desk = open_desk(str(repo.engine.url), mark_interrupted=False)
    try:
        run_id = desk.runs.create_run(
            SPEC,
            output,
            desk.rubrics.resolved("general"),
            MODEL_B,
            reviewer_c,
            MODEL_B,
            created_by=EDITOR,
            person_c=person_c,
        )
        desk.runner.execute(run_id)
        return run_id
    finally:
        desk.close()


def wait_for(repo: RunStore, run_id: int, status: RunStatus) -> None:
    deadline = time.monotonic() + 30
    while repo.load_run(run_id).state.status != status:
        assert time.monotonic() < deadline, f"run {run_id} stuck in {repo.load_run(run_id).state.status}"
        time.sleep(0.1)


def passing_review(repo: RunStore) -> Review:
    rubric = repo.rubrics.resolved("general")
    return Review(
        verdict="PASS",
        checks=[CheckResult(criterion=c.id, result="PASS", detail="ok") for c in rubric.criteria],
        critical_issues=[],
        suggestions=[],
    )


@pytest.fixture
def awaiting(desk_env: RunStore) -> int:
    run_id = driven_run(desk_env, DEFECTIVE)
    assert desk_env.load_run(run_id).state.status == RunStatus.AWAITING_APPROVAL
    return run_id


@pytest.fixture
def shipped(desk_env: RunStore) -> int:
    run_id = driven_run(desk_env, CLEAN)
    assert desk_env.load_run(run_id).state.status == RunStatus.SHIPPED
    return run_id


# --- approval --------------------------------------------------------------------------------


def test_a_viewer_sees_the_refusal_instead_of_approve(desk_env: RunStore, awaiting: int) -> None:
    at = as_person(VIEWER, awaiting)
    assert not {"approve_fix", "reject_fix"} & keys(at)
    assert not any(t.key == f"edit_{awaiting}_1" for t in at.text_area)
    shown = texts(at)
    assert "A fix is waiting for approval. You are acting as Viewer <viewer@example.com> (viewer)." in shown
    assert "To approve, edit or reject a fix you need to be an editor or an admin." in shown
    assert "NAUGHTY" in shown  # a viewer still reads everything
    with pytest.raises(PermissionDenied):  # and the storage refuses the action too
        actions.approve_fix(desk_env, awaiting, VIEWER)
    assert desk_env.load_run(awaiting).state.status == RunStatus.AWAITING_APPROVAL


def test_an_editor_approves(desk_env: RunStore, awaiting: int) -> None:
    at = as_person(EDITOR, awaiting)
    at.text_input(key=f"reason_{awaiting}_1").set_value("the year is right now")
    at.button(key="approve_fix").click().run()
    assert not at.exception, at.exception
    assert not any("may not" in plain(e.value) for e in at.error)
    wait_for(desk_env, awaiting, RunStatus.SHIPPED)
    view = desk_env.get_run_view(awaiting)
    (decision,) = view.rounds[0].decisions
    assert (decision.action, decision.actor, decision.reason) == ("approve", EDITOR, "the year is right now")
    at = as_person(None, awaiting)
    assert f"Editor <{EDITOR}> · approved the fix: the year is right now" in texts(at)
    assert f"started by Editor <{EDITOR}>" in texts(at)


def test_roles_taken_away_meanwhile_show_an_error_and_keep_the_text(desk_env: RunStore, awaiting: int) -> None:
    at = as_person(EDITOR, awaiting)
    edited = "Acme's rocket launched in 2018. Edited by hand."
    at.text_area(key=f"edit_{awaiting}_1").set_value(edited)
    desk_env.people.set_roles(EDITOR, ["viewer"], actor="local")  # an admin changes roles mid-decision
    at.button(key="approve_fix").click().run()
    assert not at.exception, at.exception
    assert any("Your decision was not recorded: your roles no longer allow it" in e.value for e in at.error)
    assert any(c.value == edited for c in at.code)  # nothing typed is lost
    assert "To approve, edit or reject a fix you need to be an editor or an admin." in texts(at)
    assert desk_env.load_run(awaiting).state.status == RunStatus.AWAITING_APPROVAL
    assert desk_env.get_run_view(awaiting).rounds[0].decisions == []


def test_local_user_shows_by_name(desk_env: RunStore, awaiting: int) -> None:
    at = as_person(None, awaiting)
    at.button(key="approve_fix").click().run()
    wait_for(desk_env, awaiting, RunStatus.SHIPPED)
    at = as_person(None, awaiting)
    assert "local user (local) · approve" in texts(at)


# --- escapes ---------------------------------------------------------------------------------


def test_anyone_reports_an_escape_on_a_shipped_run(desk_env: RunStore, shipped: int) -> None:
    at = as_person(VIEWER, shipped)
    key = f"escape_{shipped}"
    assert at.selectbox(key=f"{key}_criterion").options[-1] == "other (no criterion of the rubric)"
    at.button(key=f"{key}_submit").click().run()  # nothing described yet
    assert any("escape description is empty" in plain(e.value) for e in at.error)
    assert desk_env.escapes(shipped) == []
    at.selectbox(key=f"{key}_criterion").set_value("factual_accuracy")
    at.text_area(key=f"{key}_description").set_value("The launch was in 2019, not 2018. <b>bold</b>")
    at.radio(key=f"{key}_severity").set_value("major")
    at.button(key=f"{key}_submit").click().run()
    assert not at.exception, at.exception
    (escape,) = desk_env.escapes(shipped)
    assert (escape.criterion, escape.severity, escape.reported_by) == ("factual_accuracy", "major", VIEWER)
    assert escape.description == "The launch was in 2019, not 2018. <b>bold</b>"
    assert any("Escape reported" in s.value for s in at.success)
    assert at.text_area(key=f"{key}_description").value == ""  # ready for the next one
    listed = at.dataframe[-1].value
    assert listed["description"].tolist() == [escape.description] and listed["by"].tolist() == [f"Viewer <{VIEWER}>"]


def test_other_criterion(desk_env: RunStore, shipped: int) -> None:
    at = as_person(None, shipped)
    key = f"escape_{shipped}"
    at.selectbox(key=f"{key}_criterion").set_value("other")
    at.text_area(key=f"{key}_description").set_value("The logo is the old one.")
    at.button(key=f"{key}_submit").click().run()
    assert [(e.criterion, e.severity) for e in desk_env.escapes(shipped)] == [("other", "critical")]


def test_no_escapes_section_before_shipping(desk_env: RunStore, awaiting: int) -> None:
    at = as_person(None, awaiting)
    assert f"escape_{awaiting}_submit" not in keys(at)
    assert "Escapes" not in [m.value.lstrip("# ") for m in at.markdown]  # an escape is found after shipping
    assert "No escapes reported." not in texts(at)


# --- verification record ---------------------------------------------------------------------


def test_record_downloads_once_the_run_is_final(desk_env: RunStore, awaiting: int, shipped: int) -> None:
    at = as_person(VIEWER, shipped)
    assert {f"record_{f}_{shipped}" for f in ("json", "html", "pdf")} <= keys(at, "download_button")
    assert "Verification record" in texts(at)
    at = as_person(VIEWER, awaiting)  # still being fixed: its story is not written yet
    assert not keys(at, "download_button") and "Verification record" not in texts(at)


def test_record_waits_while_a_person_review_is_open(desk_env: RunStore) -> None:
    run_id = driven_run(desk_env, CLEAN, reviewer_c="person")
    at = as_person(EDITOR, run_id)
    assert not keys(at, "download_button")  # the record would show the other review
    assert "Verification record" not in texts(at)


# --- person reviewer slots -------------------------------------------------------------------


def test_a_slot_assigned_to_someone_else_cannot_be_filled_by_me(desk_env: RunStore) -> None:
    run_id = driven_run(desk_env, CLEAN, reviewer_c="person", person_c=OFFICER)
    assert desk_env.load_run(run_id).state.status == RunStatus.AWAITING_HUMAN_REVIEW
    at = as_person(EDITOR, run_id)
    assert not any(k.endswith("_C_submit") for k in keys(at))
    assert f"Slot C is assigned to {OFFICER}: only they can fill it." in texts(at)
    with pytest.raises(SlotAssigned):
        actions.submit_person_review(desk_env, run_id, "C", passing_review(desk_env), EDITOR)
    officer = as_person(OFFICER, run_id)
    assert f"person_{run_id}_1_C_submit" in keys(officer)
    assert "run history stays hidden" in texts(officer)  # still blind


def test_a_viewer_may_not_fill_a_person_slot(desk_env: RunStore) -> None:
    run_id = driven_run(desk_env, CLEAN, reviewer_c="person")
    at = as_person(VIEWER, run_id)
    assert not any(k.endswith("_C_submit") for k in keys(at))
    assert "To fill a person reviewer slot you need to be" in texts(at)


def test_who_filled_one_slot_is_told_why_not_the_other(desk_env: RunStore) -> None:
    desk = open_desk(str(desk_env.engine.url), mark_interrupted=False)
    try:
        run_id = desk.runs.create_run(
            SPEC, CLEAN, desk.rubrics.resolved("general"), "person", "person", MODEL_B, created_by=EDITOR
        )
        desk.runner.execute(run_id)
    finally:
        desk.close()
    actions.submit_person_review(desk_env, run_id, "B", passing_review(desk_env), EDITOR)
    at = as_person(EDITOR, run_id)
    assert not any(k.endswith("_C_submit") for k in keys(at))
    assert "You reviewed slot B of this round, so slot C needs someone else" in texts(at)
    assert f"person_{run_id}_1_C_submit" in keys(as_person(OFFICER, run_id))


def test_resume_only_for_those_who_may(desk_env: RunStore, shipped: int) -> None:
    run_id = driven_run(desk_env, DEFECTIVE)
    state = desk_env.load_run(run_id).state
    stopped = RunState(status=RunStatus.INTERRUPTED, round=state.round, note="the server stopped")
    assert desk_env.transition(run_id, {RunStatus.AWAITING_APPROVAL}, stopped, "system")
    viewer = as_person(VIEWER, run_id)
    assert "resume_run" not in keys(viewer)
    assert "To resume an interrupted run you need to be an editor or an admin." in texts(viewer)
    assert "resume_run" in keys(as_person(EDITOR, run_id))


def test_download_data_is_built_on_click_from_the_database(desk_env: RunStore, shipped: int) -> None:
    from ui.run_record import FORMATS, _builder

    built = {fmt: _builder(desk_env, shipped, render)() for fmt, (_, _, render) in FORMATS.items()}
    assert json.loads(built["json"])["run_id"] == shipped
    assert built["html"].startswith("<!DOCTYPE html>") and built["pdf"].startswith(b"%PDF")


def test_a_call_cut_off_by_a_crash_is_named_and_counted_on_the_run_page(desk_env: RunStore) -> None:
    run_id = driven_run(desk_env, CLEAN)
    before = desk_env.get_run_view(run_id).total_cost_usd
    desk_env.note_sent(
        run_id, 1, "C", "review", MODEL_C, {"model": MODEL_C, "max_tokens": 8192, "x": "never answered"}, 0.125
    )
    assert desk_env.get_run_view(run_id).total_cost_usd == pytest.approx(before + 0.125)
    shown = texts(as_person(None, run_id))
    assert "1 call(s) were cut off before their answer was stored" in shown
    assert f"review C ({MODEL_C}) in round 1, counted at $0.125" in shown


def test_a_call_a_live_worker_waits_for_is_in_flight_not_cut_off_until_its_process_dies(desk_env: RunStore) -> None:
    """While the reviewers are working the page raises no alarm: the call the run's live process waits for is shown
    in flight, outside "spent". Once that process is gone (a kill -9: its claim names a process that no longer
    runs) the same call is cut off and the warning names it."""
    from sqlalchemy import text

    from storage.workers import host_name
    from ui import components

    run_id = desk_env.create_run(
        SPEC, CLEAN, desk_env.rubrics.resolved("general"), MODEL_B, MODEL_C, MODEL_B, created_by=EDITOR
    )
    assert desk_env.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")  # ours
    desk_env.note_sent(run_id, 1, "B", "review", MODEL_B, {"model": MODEL_B, "max_tokens": 8192, "x": "working"}, 0.125)
    shown = texts(as_person(None, run_id))
    assert "cut off" not in shown, shown
    assert f"{components.usd(0.0)} spent · 1 call(s) in flight (up to {components.usd(0.125)} more)" in shown
    view = desk_env.get_run_view(run_id)
    assert [c.slot for c in view.in_flight] == ["B"] and view.cut_off == []
    with desk_env.engine.begin() as conn:  # its process killed: the claim names a process that is gone
        conn.execute(text("UPDATE run SET worker = :w WHERE id = :r"), {"w": f"{host_name()}:999999999:1", "r": run_id})
    shown = texts(as_person(None, run_id))
    assert "1 call(s) were cut off before their answer was stored" in shown
    assert f"review B ({MODEL_B}) in round 1, counted at $0.125" in shown
