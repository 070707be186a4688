"""The Audit page: filters, the detail view, CSV export, and verify naming a tampered row."""

from __future__ import annotations

import io
from datetime import timedelta

import pandas as pd
from sqlalchemy import text

from storage.repo import Repo
from tests.test_app import plain
from tests.test_escalation_queue import escalate, open_as
from ui.audit import frame


def shown(at) -> pd.DataFrame:
    return at.dataframe[0].value


def test_events_newest_first_and_filters(desk_env: Repo) -> None:
    run_id = escalate(desk_env)
    desk_env.assign_escalation(run_id, "officer@example.com", actor="admin@example.com")
    other = escalate(desk_env)
    at = open_as("viewer@example.com", "pages/audit.py")  # every role may read the trail
    table = shown(at)
    assert table["seq"].tolist() == sorted(table["seq"].tolist(), reverse=True)
    assert {"seq", "time", "actor", "action", "entity", "run", "before", "after", "prev", "hash", "detail"} <= set(table)
    assert all(len(h) == 13 for h in table["prev"])  # 12 characters and an ellipsis

    at.selectbox(key="audit_action").set_value("escalation.").run()
    assert set(shown(at)["action"]) == {"escalation.opened", "escalation.assigned"}
    at.selectbox(key="audit_actor").set_value("admin@example.com").run()
    assert shown(at)["action"].tolist() == ["escalation.assigned"]
    at.selectbox(key="audit_actor").set_value("any")
    at.selectbox(key="audit_action").set_value("any")
    at.text_input(key="audit_run").set_value(str(other)).run()
    assert set(shown(at)["run"]) == {other}
    at.selectbox(key="audit_entity").set_value("escalation").run()
    assert shown(at)["action"].tolist() == ["escalation.opened"]
    at.text_input(key="audit_run").set_value("abc").run()
    assert any("is not a run number" in plain(e.value) for e in at.error)
    assert not at.exception, at.exception


def test_date_range_detail_and_csv_export(desk_env: Repo) -> None:
    run_id = escalate(desk_env)
    newest = desk_env.audit.events(limit=1)[0]
    at = open_as(None, "pages/audit.py")
    at.date_input(key="audit_until").set_value(newest.created_at.date() - timedelta(days=1)).run()
    assert not at.exception, at.exception
    assert any("No audit event matches" in i.value for i in at.info), [i.value for i in at.info]
    at.date_input(key="audit_until").set_value(None)
    at.date_input(key="audit_since").set_value(newest.created_at.date()).run()
    assert run_id in shown(at)["run"].tolist()
    detail = at.code[-1].value  # the newest event in full, with whole hashes
    assert newest.hash in detail and newest.prev_hash in detail
    assert at.get("download_button"), "no CSV export"
    csv = pd.read_csv(io.StringIO(frame(desk_env.audit.events(), full=True).to_csv(index=False)))
    assert csv["hash"].tolist()[0] == newest.hash and csv["actor"].tolist()[0] == newest.actor


def test_verify_passes_then_names_a_tampered_row(desk_env: Repo) -> None:
    escalate(desk_env)
    at = open_as("viewer@example.com", "pages/audit.py")
    at.button(key="audit_verify").click().run()
    assert any("The audit chain is intact" in plain(s.value) for s in at.success)
    victim = desk_env.audit.events(action="escalation.opened")[0]
    with desk_env.engine.begin() as conn:
        conn.execute(text("UPDATE audit_event SET actor = 'mallory' WHERE id = :id"), {"id": victim.id})
    at.button(key="audit_verify").click().run()
    errors = [plain(e.value) for e in at.error]
    assert any(f"BROKEN at audit event #{victim.id} (seq {victim.seq})" in e for e in errors), errors
    assert any("does not match its hash" in e for e in errors)
