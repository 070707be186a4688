"""The escalation queue, driven like a person would: filters, sort, assignment, due times, overdue."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import Session, select
from streamlit.testing.v1 import AppTest

from desk.wiring import model_fixer, model_reviewer
from santa_core.models import EscalationReason, RunStatus
from santa_core.run.runner import Runner
from storage.errors import EscalationNotOpen
from storage.runs import RunStore
from storage.tables import EscalationRow
from tests.conftest import grant
from tests.ui.test_app import plain, texts
from tests.ui.test_signin import AUTH

SPEC = "Announce the Acme rocket in two sentences. Mention the 2018 launch."
DEFECTIVE = "Acme's rocket launched in DEFECT. It is ready for you."


def escalate(repo: RunStore, output: str = DEFECTIVE, rubric: str = "general", by: str = "editor@example.com") -> int:
    """A run that is NAUGHTY in its only round, so it escalates with reason round_cap."""
    run_id = repo.create_run(
        spec=SPEC,
        output=output,
        rubric=repo.rubrics.resolved(rubric),
        reviewer_b="claude-sonnet-5-5",
        reviewer_c="claude-haiku-5-5",
        fixer="claude-opus-5-5",
        max_rounds=1,
        created_by=by,
    )
    drive(repo, run_id)
    assert repo.load_run(run_id).state.status == RunStatus.ESCALATED
    return run_id


def drive(repo: RunStore, run_id: int) -> None:
    """Run the method on a queued run until it stops (stand-in models on the loopback stub)."""
    runner = Runner(repo, model_reviewer, model_fixer, workers=1)
    try:
        runner.execute(run_id)
    finally:
        runner.pool.shutdown(wait=True)
        runner.review_pool.shutdown(wait=True)


def open_as(email: str | None, page: str | None = "pages/escalations.py") -> AppTest:
    """The app with `email` signed in (None: the local user), on `page` (None: the start page)."""
    at = AppTest.from_file("../../app.py", default_timeout=30)
    if email is not None:
        at.secrets["auth"] = AUTH  # signed in the way Streamlit produces it: with [auth] configured
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


def item_id(repo: RunStore, run_id: int) -> int:
    return next(e.id for e in repo.list_escalations() if e.run_id == run_id)


def test_filters_and_sort_change_what_is_shown(desk_env: RunStore) -> None:
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


def test_disagreement_reason_is_explained(desk_env: RunStore) -> None:
    from ui.escalation_queue import REASON_HELP

    assert "reviewers disagree on a critical criterion" in REASON_HELP["disagreement"]
    assert "rubric may need tightening" in REASON_HELP["disagreement"]


def test_the_queue_fits_the_page_and_says_why_in_its_help_and_the_open_escalation(desk_env: RunStore) -> None:
    """The queue's columns fit a 1,280 px window's main area with room for the row circles; the sentence
    for each reason is in the reason column's help and atop the escalation a row opens (not a column)."""
    from ui import table_fit
    from ui.escalation_queue import QUEUE_REASON_HELP, REASON_HELP

    escalate(desk_env)
    at = open_as(None)
    config = json.loads(at.dataframe[0].proto.columns)
    assert "why" not in at.dataframe[0].value.columns
    assert sum(c["width"] for c in config.values() if "width" in c) <= table_fit.PAGE_PX - table_fit.MARKER_PX
    assert config["reason"]["help"] == QUEUE_REASON_HELP
    assert all(sentence in QUEUE_REASON_HELP for sentence in REASON_HELP.values())
    assert REASON_HELP["round_cap"] in texts(at)


def test_assign_and_set_due_then_overdue_is_highlighted_and_counted(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
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

    monkeypatch.setattr("ui.clock.now", lambda: due + timedelta(minutes=1))
    assert ":material/warning: 1 overdue" in sidebar_text(open_as("officer@example.com", page=None))
    at = open_as("officer@example.com")
    assert "1 open, 1 overdue" in texts(at)
    assert at.dataframe[0].value["overdue"].tolist() == ["overdue"]
    assert any("overdue" in plain(e.value) for e in at.error)  # the panel's owner line turns red


def test_a_refused_resolution_shows_the_storage_error_and_keeps_the_text(desk_env: RunStore) -> None:
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


def test_a_viewer_sees_the_evidence_but_no_controls(desk_env: RunStore) -> None:
    run_id = escalate(desk_env)
    esc = item_id(desk_env, run_id)
    at = open_as("viewer@example.com")
    assert queue(at) == [run_id]
    assert any(c.value == DEFECTIVE for c in at.code)  # the output under decision
    keys = {
        w.key
        for kind in ("button", "radio", "text_area", "selectbox", "date_input", "time_input")
        for w in getattr(at, kind)
    }
    for key in (
        f"res_{esc}",
        f"res_go_{esc}",
        f"res_why_{esc}",
        f"esc_owner_{esc}",
        f"esc_assign_{esc}",
        f"esc_due_go_{esc}",
    ):
        assert key not in keys
    shown = texts(at)
    assert "To resolve an escalation you need to be a compliance officer or an admin" in shown
    assert "To assign escalations" in shown


def test_an_editor_may_not_resolve_and_an_officer_resolves_with_the_history_shown(desk_env: RunStore) -> None:
    run_id = escalate(desk_env)
    esc = item_id(desk_env, run_id)
    editor = open_as("editor@example.com")
    assert not any(b.key == f"res_go_{esc}" for b in editor.button)
    officer = open_as("officer@example.com")
    history = next(d.value for d in officer.dataframe if {"from", "to", "by"} <= set(d.value.columns))
    assert any("<editor@example.com>" in by for by in history["by"].tolist())  # shown as `Name <e-mail>`
    assert "escalated" in history["to"].tolist()
    officer.radio(key=f"res_{esc}").set_value("reject")
    officer.text_area(key=f"res_why_{esc}").set_value("Not fit to ship.")
    officer.button(key=f"res_go_{esc}").click().run()
    assert not officer.exception, officer.exception
    assert desk_env.get_run_view(run_id).status == RunStatus.RESOLVED_REJECTED
    resolved = officer.dataframe[-1].value
    assert resolved["justification"].tolist() == ["Not fit to ship."]
    # The officer, by e-mail: shown as `Name <e-mail>` once the page's people labels (cached for 2 s) were read after
    # the officer's sign-in stored the name, as the bare e-mail before (a loaded machine takes either path).
    (by,) = resolved["by"].tolist()
    assert by in ("officer@example.com", "Officer <officer@example.com>"), by


def budget_escalation(repo: RunStore) -> int:
    """A run whose fix pushes its spend over budget: round 2 starts and stops before any review."""
    run_id = repo.create_run(
        spec=SPEC,
        output=DEFECTIVE,
        rubric=repo.rubrics.resolved("general"),
        reviewer_b="claude-sonnet-5-5",
        reviewer_c="claude-haiku-5-5",
        fixer="claude-opus-5-5",
        auto_approve=True,
        budget_usd=0.001,
        created_by="editor@example.com",
    )
    runner = Runner(repo, model_reviewer, model_fixer, workers=1)
    try:
        state = runner.execute(run_id)
    finally:
        runner.pool.shutdown(wait=True)
        runner.review_pool.shutdown(wait=True)
    assert (state.status, state.escalation_reason, state.round) == (RunStatus.ESCALATED, EscalationReason.BUDGET, 2)
    return run_id


def test_a_budget_escalation_shows_the_last_reviewed_round_and_the_output_it_ships(desk_env: RunStore) -> None:
    run_id = budget_escalation(desk_env)
    view = desk_env.get_run_view(run_id)
    assert view.current_round.reviews == {} and view.current_output != DEFECTIVE  # round 2: the fixed text
    at = open_as("officer@example.com")
    evidence = at.tabs[0]
    shown = "\n".join(plain(e.value) for kind in ("markdown", "caption", "info") for e in getattr(evidence, kind))
    assert "Round 1: the last reviews, side by side, and the open issues" in shown
    assert "Round 2 was not reviewed" in shown and "No review yet." not in shown
    assert [e.value for e in evidence.error].count("FAIL") == 2  # both last reviews, side by side
    issues = [d.value for d in evidence.dataframe if "flagged by" in d.value.columns]
    assert len(issues) == 1 and issues[0]["criterion"].tolist() == ["Factual accuracy"]  # the open issues, by name
    codes = [c.value for c in evidence.code]
    assert codes[0] == view.current_output  # what Ship as is ships, apart from the reviewed text
    changed = view.current_output.split(". ")[0] + "."  # the fix changed the first sentence, which alone is shown
    assert any("- Acme's rocket launched in DEFECT." in c and f"+ {changed}" in c for c in codes[1:])  # the diff
    assert not at.exception, at.exception


def _age(repo: RunStore, run_id: int, created_at: datetime) -> None:
    with Session(repo.engine) as s:
        row = s.exec(select(EscalationRow).where(EscalationRow.run_id == run_id)).one()
        row.created_at = created_at
        s.add(row)
        s.commit()


def test_older_than_filters_by_age_on_the_moved_clock(desk_env: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime(2031, 5, 6, 12, 0, tzinfo=UTC)
    monkeypatch.setattr("ui.clock.now", lambda: now)
    fresh, hours, days = escalate(desk_env), escalate(desk_env), escalate(desk_env)
    _age(desk_env, fresh, now - timedelta(minutes=20))
    _age(desk_env, hours, now - timedelta(hours=5))
    _age(desk_env, days, now - timedelta(days=2))
    at = open_as("admin@example.com")
    assert at.selectbox(key="esc_f_age").options == ["any", "1 h", "4 h", "1 day", "3 days", "1 week"]
    assert sorted(queue(at)) == [fresh, hours, days]
    expected = {"1 h": [hours, days], "4 h": [hours, days], "1 day": [days], "any": [fresh, hours, days]}
    for choice, runs in expected.items():
        at.selectbox(key="esc_f_age").set_value(choice).run()
        assert sorted(queue(at)) == runs, choice
    at.selectbox(key="esc_f_age").set_value("3 days").run()
    assert "No open escalation matches" in texts(at)
    monkeypatch.setattr("ui.clock.now", lambda: now + timedelta(days=2))  # the clock moves on
    at.run()
    assert sorted(queue(at)) == [days]
    assert not at.exception, at.exception


def test_resolving_someone_elses_escalation_says_so_and_is_recorded_under_my_name(desk_env: RunStore) -> None:
    grant(desk_env, {"officer2@example.com": ("compliance_officer",)})
    run_id = escalate(desk_env)
    esc = item_id(desk_env, run_id)
    notice = "your resolution will be recorded under your name"
    assert not any(notice in plain(w.value) for w in open_as("officer@example.com").warning)  # unassigned
    desk_env.assign_escalation(run_id, "officer@example.com", actor="admin@example.com")
    assert not any(notice in plain(w.value) for w in open_as("officer@example.com").warning)  # mine
    other = open_as("officer2@example.com")
    warnings = [plain(w.value) for w in other.warning]
    assert f"Assigned to Officer <officer@example.com>; {notice}." in warnings
    other.radio(key=f"res_{esc}").set_value("reject")
    other.text_area(key=f"res_why_{esc}").set_value("Officer away; the claim cannot ship.")
    other.button(key=f"res_go_{esc}").click().run()  # still allowed
    assert not other.exception, other.exception
    view = desk_env.get_run_view(run_id)
    assert view.status == RunStatus.RESOLVED_REJECTED
    assert (view.escalation.owner, view.escalation.resolved_by) == ("officer@example.com", "officer2@example.com")


def test_a_resolution_names_the_escalation_it_was_made_on(desk_env: RunStore) -> None:
    """Resolving with the id of an escalation that was resolved meanwhile changes nothing, even though
    the run escalated again: a click never ships an output its author did not see."""
    run_id = escalate(desk_env)
    first = item_id(desk_env, run_id)
    desk_env.resolve_escalation(run_id, "rereview", "admin@example.com", "try again", "Still DEFECT, new text.", first)
    drive(desk_env, run_id)
    second = item_id(desk_env, run_id)
    assert second != first and desk_env.load_run(run_id).state.status == RunStatus.ESCALATED
    decisions = len(desk_env.get_run_view(run_id).rounds[-1].decisions)
    for call in (
        lambda: desk_env.resolve_escalation(run_id, "ship_as_is", "officer@example.com", "I saw v1", None, first),
        lambda: desk_env.assign_escalation(run_id, "officer@example.com", "admin@example.com", first),
        lambda: desk_env.set_due(run_id, datetime.now(UTC), "admin@example.com", first),
    ):
        with pytest.raises(EscalationNotOpen, match=f"#{first}"):
            call()
    assert desk_env.load_run(run_id).state.status == RunStatus.ESCALATED
    assert len(desk_env.get_run_view(run_id).rounds[-1].decisions) == decisions
    assert (
        desk_env.resolve_escalation(run_id, "reject", "officer@example.com", "seen v2", None, second).status
        == RunStatus.RESOLVED_REJECTED
    )


def test_a_click_on_an_escalation_resolved_meanwhile_is_reported_and_the_text_kept(desk_env: RunStore) -> None:
    run_id = escalate(desk_env)
    esc = item_id(desk_env, run_id)
    at = open_as("officer@example.com")
    at.text_area(key=f"res_why_{esc}").set_value("Legal approved the wording I saw")
    desk_env.resolve_escalation(run_id, "reject", "admin@example.com", "rejected first", None, esc)  # elsewhere
    at.button(key=f"res_go_{esc}").click().run()
    assert not at.exception, at.exception
    assert any("resolved by someone else" in w.value for w in at.warning)
    assert any(c.value == "Legal approved the wording I saw" for c in at.code)
    (decision,) = desk_env.get_run_view(run_id).rounds[-1].decisions
    assert (decision.actor, decision.action) == ("admin@example.com", "resolve_reject")


def opened(at: AppTest) -> int:
    """The run of the escalation open below the queue (its heading, `### Run #N · reason`)."""
    (heading,) = [m.value for m in at.markdown if m.value.startswith("### Run #")]
    return int(heading.removeprefix("### Run #").split(" ")[0])


def click_row(at: AppTest, row: int) -> AppTest:
    at.session_state[at.dataframe[0].key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, at.exception
    return at


def test_clicking_a_queue_row_opens_that_escalation(desk_env: RunStore) -> None:
    first, second, third = escalate(desk_env), escalate(desk_env, rubric="content"), escalate(desk_env)
    at = open_as("admin@example.com")
    assert queue(at) == [first, second, third] and opened(at) == first  # the first row, selected, is open
    assert json.loads(at.dataframe[0].proto.selection_default)["selection"]["rows"] == [0]
    click_row(at, 2)
    assert opened(at) == third and at.selectbox(key="esc_pick").value == third  # the select box follows
    assert f"esc_owner_{item_id(desk_env, third)}" in {s.key for s in at.selectbox}  # its controls, not another's
    # The select box (keyboard, screen reader) opens one too, and the queue's selection moves to its row.
    at.selectbox(key="esc_pick").set_value(second).run()
    assert opened(at) == second
    assert json.loads(at.dataframe[0].proto.selection_default)["selection"]["rows"] == [1]
    # Filters that change the rows start a fresh selection: row 1 of the old list (`second`, filtered out) does
    # not open row 1 of the new list (`third`), which nobody clicked; the first row is selected and open.
    click_row(at, 1)
    at.selectbox(key="esc_f_rubric").set_value("general").run()
    assert queue(at) == [first, third] and opened(at) == first
    assert at.dataframe[0].value["reason"].tolist() == ["still NAUGHTY after the last round"] * 2
