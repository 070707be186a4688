"""The escalation queue, driven like a person would: filters, sort, assignment, due times, overdue."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from streamlit.testing.v1 import AppTest

from santa_core.models import RunStatus
from santa_core.runner import Runner
from storage.desk import model_fixer, model_reviewer
from storage.repo import Repo
from tests.test_app import plain, texts

SPEC = "Announce the Acme rocket in two sentences. Mention the 2018 launch."
DEFECTIVE = "Acme's rocket launched in DEFECT. It is ready for you."


def escalate(repo: Repo, output: str = DEFECTIVE, rubric: str = "general", by: str = "editor@example.com") -> int:
    """A run that is NAUGHTY in its only round, so it escalates with reason round_cap."""
    run_id = repo.create_run(spec=SPEC, output=output, rubric=repo.rubrics.resolved(rubric),
                             reviewer_b="claude-sonnet-5-5", reviewer_c="claude-haiku-5-5", fixer="claude-opus-5-5",
                             max_rounds=1, created_by=by)
    runner = Runner(repo, model_reviewer, model_fixer, workers=1)
    try:
        runner.execute(run_id)
    finally:
        runner.pool.shutdown(wait=True)
        runner.review_pool.shutdown(wait=True)
    assert repo.load_run(run_id).state.status == RunStatus.ESCALATED
    return run_id


def open_as(email: str | None, page: str | None = "pages/escalations.py") -> AppTest:
    """The app with `email` signed in (None: the local user), on `page` (None: the start page)."""
    at = AppTest.from_file("../app.py", default_timeout=30)
    if email is not None:
        at.user = {"is_logged_in": True, "email": email, "name": email.split("@")[0].title()}
    at.run()
    if page is not None:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def queue(at: AppTest) -> list[int]:
    """The run numbers in the queue table, in the order shown (the first dataframe on the page)."""
    return [int(r) for r in at.dataframe[0].value["run"].tolist()]


def sidebar_text(at: AppTest) -> str:
    """What app.py wrote in the sidebar. Read on the start page: AppTest drops the entry script's
    sidebar elements after `switch_page` (a real browser keeps them; test_browser checks that)."""
    return "\n".join(plain(e.value) for kind in ("markdown", "caption") for e in getattr(at.sidebar, kind))


def item_id(repo: Repo, run_id: int) -> int:
    return next(e.id for e in repo.list_escalations() if e.run_id == run_id)


def test_filters_and_sort_change_what_is_shown(desk_env: Repo) -> None:
    first = escalate(desk_env)
    second = escalate(desk_env, rubric="content")
    third = escalate(desk_env)
    desk_env.assign_escalation(second, "officer@example.com", actor="admin@example.com")
    desk_env.assign_escalation(third, "admin@example.com", actor="admin@example.com")
    at = open_as("admin@example.com")
    assert queue(at) == [first, second, third]  # oldest first
    assert "3 open, 0 overdue" in texts(at)

    at.selectbox(key="esc_f_rubric").set_value("content").run()
    assert queue(at) == [second]
    at.selectbox(key="esc_f_rubric").set_value("all rubrics").run()

    at.selectbox(key="esc_f_owner").set_value("me").run()
    assert queue(at) == [third]
    at.selectbox(key="esc_f_owner").set_value("unassigned").run()
    assert queue(at) == [first]
    at.selectbox(key="esc_f_owner").set_value("officer@example.com").run()
    assert queue(at) == [second]
    at.selectbox(key="esc_f_owner").set_value("anyone").run()

    at.multiselect(key="esc_f_reason").set_value(["budget"]).run()
    assert "No open escalation matches" in texts(at)
    at.multiselect(key="esc_f_reason").set_value(["round_cap"]).run()
    assert len(queue(at)) == 3

    at.selectbox(key="esc_sort").set_value("owner").run()
    assert queue(at) == [third, second, first]  # admin@… < officer@… < unassigned
    at.selectbox(key="esc_sort").set_value("rubric").run()
    assert queue(at) == [second, first, third]  # content, then general oldest first
    assert not at.exception, at.exception


def test_disagreement_reason_is_explained(desk_env: Repo) -> None:
    from ui.escalations import REASON_HELP

    assert "reviewers disagree on a critical criterion" in REASON_HELP["disagreement"]
    assert "rubric may need tightening" in REASON_HELP["disagreement"]


def test_assign_and_set_due_then_overdue_is_highlighted_and_counted(desk_env: Repo,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = escalate(desk_env)
    esc = item_id(desk_env, run_id)
    at = open_as("admin@example.com")
    at.selectbox(key=f"esc_owner_{esc}").set_value("officer@example.com")
    at.button(key=f"esc_assign_{esc}").click().run()
    assert not at.exception, at.exception
    assert desk_env.list_escalations()[0].owner == "officer@example.com"
    assert any("owner officer@example.com" in s.value for s in at.success)

    due = datetime(2031, 5, 6, 14, 30, tzinfo=UTC)
    at.date_input(key=f"esc_due_date_{esc}").set_value(due.date())
    at.time_input(key=f"esc_due_time_{esc}").set_value(due.time())
    at.button(key=f"esc_due_go_{esc}").click().run()
    assert not at.exception, at.exception
    assert desk_env.list_escalations()[0].due_at == due
    assert "1 open · 0 overdue" in sidebar_text(open_as("admin@example.com", page=None))
    assert at.dataframe[0].value["overdue"].tolist() == [""]

    monkeypatch.setattr("ui.services.now", lambda: due + timedelta(minutes=1))
    assert "⚠ 1 overdue" in sidebar_text(open_as("officer@example.com", page=None))
    at = open_as("officer@example.com")
    assert "1 open, 1 overdue" in texts(at)
    assert at.dataframe[0].value["overdue"].tolist() == ["⚠ overdue"]
    assert any("overdue" in plain(e.value) for e in at.error)  # the panel's owner line turns red


def test_a_refused_resolution_shows_the_storage_error_and_keeps_the_text(desk_env: Repo) -> None:
    run_id = escalate(desk_env)
    esc = item_id(desk_env, run_id)
    at = open_as("officer@example.com")
    at.radio(key=f"res_{esc}").set_value("rereview").run()
    too_long = "x" * 200_001
    at.text_area(key=f"res_text_{esc}").set_value(too_long)
    at.text_area(key=f"res_why_{esc}").set_value("Try once more with the long version.")
    at.button(key=f"res_go_{esc}").click().run()
    assert not at.exception, at.exception
    assert any("200,001 characters" in plain(e.value) for e in at.error)
    assert at.text_area(key=f"res_text_{esc}").value == too_long  # nothing typed is lost
    assert at.text_area(key=f"res_why_{esc}").value == "Try once more with the long version."
    assert desk_env.load_run(run_id).state.status == RunStatus.ESCALATED


def test_a_viewer_sees_the_evidence_but_no_controls(desk_env: Repo) -> None:
    run_id = escalate(desk_env)
    esc = item_id(desk_env, run_id)
    at = open_as("viewer@example.com")
    assert queue(at) == [run_id]
    assert any(c.value == DEFECTIVE for c in at.code)  # the output under decision
    keys = {w.key for kind in ("button", "radio", "text_area", "selectbox", "date_input", "time_input")
            for w in getattr(at, kind)}
    for key in (f"res_{esc}", f"res_go_{esc}", f"res_why_{esc}", f"esc_owner_{esc}", f"esc_assign_{esc}",
                f"esc_due_go_{esc}"):
        assert key not in keys
    shown = texts(at)
    assert "To resolve an escalation you need to be a compliance officer or an admin" in shown
    assert "To assign escalations" in shown


def test_an_editor_may_not_resolve_and_an_officer_resolves_with_the_history_shown(desk_env: Repo) -> None:
    run_id = escalate(desk_env)
    esc = item_id(desk_env, run_id)
    editor = open_as("editor@example.com")
    assert not any(b.key == f"res_go_{esc}" for b in editor.button)
    officer = open_as("officer@example.com")
    history = next(d.value for d in officer.dataframe if {"from", "to", "by"} <= set(d.value.columns))
    assert "editor@example.com" in history["by"].tolist()
    assert "🚨 escalated" in history["to"].tolist()
    officer.radio(key=f"res_{esc}").set_value("reject")
    officer.text_area(key=f"res_why_{esc}").set_value("Not fit to ship.")
    officer.button(key=f"res_go_{esc}").click().run()
    assert not officer.exception, officer.exception
    assert desk_env.get_run_view(run_id).status == RunStatus.RESOLVED_REJECTED
    resolved = officer.dataframe[-1].value
    assert resolved["justification"].tolist() == ["Not fit to ship."]
    assert resolved["by"].tolist() == ["officer@example.com"]
