"""Issue 4's acceptance test: escalation → assignment → overdue → resolution → audit trail,
with a viewer who can act neither on the page nor through the storage layer."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from santa_core import words
from santa_core.models import RunStatus
from santa_core.roles import PermissionDenied
from storage.runs import RunStore
from tests.ui.test_app import plain, texts
from tests.ui.test_escalation_queue import escalate, item_id, open_as, queue, sidebar_text

ADMIN, OFFICER, VIEWER = "admin@example.com", "officer@example.com", "viewer@example.com"
CONTROLS = ("res_{}", "res_go_{}", "res_why_{}", "esc_owner_{}", "esc_assign_{}", "esc_due_go_{}")


def widget_keys(at) -> set[str]:
    return {
        w.key
        for kind in ("button", "radio", "text_area", "selectbox", "date_input", "time_input")
        for w in getattr(at, kind)
        if w.key
    }


def test_escalate_assign_overdue_resolve_and_audit(desk_env: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # A run escalates: NAUGHTY in its only round.
    run_id = escalate(desk_env, by="editor@example.com")
    esc = item_id(desk_env, run_id)
    due_at = desk_env.list_escalations()[0].due_at
    assert due_at is not None  # the default due time for its reason

    # An admin assigns it to a compliance officer on the Escalations page.
    admin = open_as(ADMIN)
    assert queue(admin) == [run_id]
    admin.selectbox(key=f"esc_owner_{esc}").set_value(OFFICER)
    admin.button(key=f"esc_assign_{esc}").click().run()
    assert not admin.exception, admin.exception
    assert desk_env.list_escalations()[0].owner == OFFICER

    # A viewer opening the same page sees the evidence but no control; the storage refuses too.
    viewer = open_as(VIEWER)
    assert queue(viewer) == [run_id]
    assert not widget_keys(viewer) & {k.format(esc) for k in CONTROLS}
    assert "To resolve an escalation you need to be a compliance officer or an admin" in texts(viewer)
    with pytest.raises(PermissionDenied):
        desk_env.resolve_escalation(run_id, "ship_as_is", VIEWER, "I would like it shipped.")
    with pytest.raises(PermissionDenied):
        desk_env.assign_escalation(run_id, VIEWER, actor=VIEWER)
    with pytest.raises(PermissionDenied):
        desk_env.set_due(run_id, due_at + timedelta(days=7), actor=VIEWER)
    assert desk_env.load_run(run_id).state.status == RunStatus.ESCALATED

    # After its due time, the officer sees it overdue (in the queue and counted in the sidebar).
    monkeypatch.setattr("ui.clock.now", lambda: due_at + timedelta(minutes=5))
    assert ":material/warning: 1 overdue" in sidebar_text(open_as(OFFICER, page=None))
    officer = open_as(OFFICER)
    assert officer.dataframe[0].value["overdue"].tolist() == ["overdue"]
    # the owner by their label ("Officer <officer@…>" once their sign-in named them; the labels are
    # cached for two seconds, so a fast run may still show the bare e-mail)
    assert [OFFICER in owner for owner in officer.dataframe[0].value["owner"].tolist()] == [True]
    assert "1 open, 1 overdue" in texts(officer)

    # ... and resolves it: ship as is, with a justification.
    officer.radio(key=f"res_{esc}").set_value("ship_as_is")
    officer.button(key=f"res_go_{esc}").click().run()
    assert any("justification is required" in e.value for e in officer.error)
    officer.text_area(key=f"res_why_{esc}").set_value("Legal confirmed the wording.")
    officer.button(key=f"res_go_{esc}").click().run()
    assert not officer.exception, officer.exception
    view = desk_env.get_run_view(run_id)
    assert view.status == RunStatus.RESOLVED_SHIPPED
    assert (view.escalation.resolved_by, view.escalation.justification) == (OFFICER, "Legal confirmed the wording.")
    assert "Nothing is escalated" in texts(officer)

    # The Audit page shows each step in order, with the right actors.
    audit = open_as(VIEWER, "pages/audit.py")
    audit.text_input(key="audit_run").set_value(str(run_id)).run()
    table = audit.dataframe[0].value.iloc[::-1]  # the page lists newest first
    # The page names people as `Name <e-mail>`; the e-mail is the recorded id.
    steps = [(a, re.sub(r"^.*<(.+)>$", r"\1", who)) for a, who in zip(table["action"], table["actor"], strict=True)]
    after_escalation = steps[[a for a, _ in steps].index(words.audit_action("escalation.opened")) :]
    assert after_escalation == [
        (words.audit_action(a), who)
        for a, who in [
            ("escalation.opened", "system"),
            ("escalation.assigned", ADMIN),
            ("decision.ship_as_is", OFFICER),
            ("run.state", OFFICER),  # escalated → resolved_shipped
            ("escalation.resolved", OFFICER),
        ]
    ]
    assert steps[0] == ("run started", "editor@example.com")
    last_state = desk_env.audit.events(run_id=run_id, action="run.state", limit=1)[0]
    assert (last_state.detail["from"], last_state.detail["to"]) == ("escalated", "resolved_shipped")
    audit.button(key="audit_verify").click().run()
    assert any("The audit chain is intact" in plain(s.value) for s in audit.success)
    # The viewer on the Audit page can read and verify, nothing more.
    assert not widget_keys(audit) & {k.format(esc) for k in CONTROLS}


def test_an_escape_on_a_resolved_shipped_run_promises_no_dashboard(desk_env: RunStore) -> None:
    """The success message says what is true now: recorded on the run, counted once metrics exist."""
    run_id = escalate(desk_env)
    desk_env.resolve_escalation(run_id, "ship_as_is", OFFICER, "Legal confirmed the wording.")
    at = open_as(VIEWER, None)
    at.query_params["run"] = str(run_id)
    at.switch_page("pages/review.py").run()
    key = f"escape_{run_id}"
    at.text_area(key=f"{key}_description").set_value("The launch year is wrong.")
    at.button(key=f"{key}_submit").click().run()
    assert not at.exception, at.exception
    assert [e.reported_by for e in desk_env.escapes(run_id)] == [VIEWER]
    success = [plain(s.value) for s in at.success]
    assert any("recorded on this run; it will count in the escape rate." in s for s in success), success
    shown = texts(at).lower()
    assert "counts in the escape rate" not in shown and "dashboard" not in shown
