"""The Audit page: filters, the detail view, CSV export, and verify naming a tampered row."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pandas as pd
import pytest
import streamlit as st
from sqlalchemy import text

from desk import open_desk
from santa_core.models import CheckResult, Review, RunStatus
from santa_core.run import actions
from storage.runs import RunStore
from tests.ui.test_app import CLEAN, DEFECTIVE, SPEC, plain, texts
from tests.ui.test_escalation_queue import escalate, open_as
from ui import table_fit
from ui.audit import frame


def shown(at) -> pd.DataFrame:
    return at.dataframe[0].value


def test_events_newest_first_and_filters(desk_env: RunStore) -> None:
    run_id = escalate(desk_env)
    desk_env.assign_escalation(run_id, "officer@example.com", actor="admin@example.com")
    other = escalate(desk_env)
    at = open_as("viewer@example.com", "pages/audit.py")  # every role may read the trail
    table = shown(at)
    assert table["seq"].tolist() == sorted(table["seq"].tolist(), reverse=True)
    assert list(table) == ["seq", "time", "actor", "action", "entity", "run", "detail", "hash"]
    assert all(len(h) == 13 for h in table["hash"])  # 12 characters and an ellipsis; all four hashes whole below
    config = json.loads(at.dataframe[0].proto.columns)
    assert {c for c, e in config.items() if "width" in e} >= set(table)  # every column fitted, and together
    assert sum(e["width"] for e in config.values() if "width" in e) <= table_fit.PAGE_PX  # they fit the page

    at.selectbox(key="audit_action").set_value("escalation.").run()
    assert set(shown(at)["action"]) == {"escalation opened", "escalation assigned"}
    at.selectbox(key="audit_actor").set_value("admin@example.com").run()
    assert shown(at)["action"].tolist() == ["escalation assigned"]
    at.selectbox(key="audit_actor").set_value("any")
    at.selectbox(key="audit_action").set_value("any")
    at.text_input(key="audit_run").set_value(str(other)).run()
    assert set(shown(at)["run"]) == {other}
    at.selectbox(key="audit_entity").set_value("escalation").run()
    assert shown(at)["action"].tolist() == ["escalation opened"]
    at.text_input(key="audit_run").set_value("abc").run()
    assert any("is not a run number" in plain(e.value) for e in at.error)
    assert not at.exception, at.exception


def test_date_range_detail_and_csv_export(desk_env: RunStore) -> None:
    run_id = escalate(desk_env)
    newest = desk_env.audit.events(limit=1)[0]
    # The day before the oldest event: the test database is copied from a template whose events may be a day older
    # than this test's (a run that crosses midnight), so the day before the newest can still hold some.
    oldest = min(e.created_at for e in desk_env.audit.events())
    at = open_as(None, "pages/audit.py")
    at.date_input(key="audit_until").set_value(oldest.date() - timedelta(days=1)).run()
    assert not at.exception, at.exception
    assert any("No audit event matches" in i.value for i in at.info), [i.value for i in at.info]
    at.date_input(key="audit_until").set_value(None)
    at.date_input(key="audit_since").set_value(newest.created_at.date()).run()
    assert run_id in shown(at)["run"].dropna().tolist()
    detail = at.code[-1].value  # the newest event in full, with whole hashes
    assert newest.hash in detail and newest.prev_hash in detail
    assert at.get("download_button"), "no CSV export"
    csv = pd.read_csv(io.StringIO(frame(desk_env.audit.events(), full=True).to_csv(index=False)))
    assert csv["hash"].tolist()[0] == newest.hash and csv["actor"].tolist()[0] == newest.actor


def test_verify_passes_then_names_a_tampered_row(desk_env: RunStore) -> None:
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


def test_verify_shows_the_head_to_copy_checks_a_kept_hash_and_names_changed_data(desk_env: RunStore) -> None:
    run_id = escalate(desk_env)
    at = open_as("viewer@example.com", "pages/audit.py")
    at.button(key="audit_verify").click().run()
    head = desk_env.audit.verify().head_hash
    assert head in [c.value for c in at.code]  # shown whole, to copy out
    at.text_input(key="audit_expect").set_value("f" * 64).run()
    at.button(key="audit_verify").click().run()
    assert any("does not reach the hash you kept" in plain(e.value) for e in at.error)
    at.text_input(key="audit_expect").set_value(head).run()
    with desk_env.engine.begin() as conn:
        conn.execute(text("UPDATE run SET status = 'shipped' WHERE id = :id"), {"id": run_id})
    at.button(key="audit_verify").click().run()
    errors = [plain(e.value) for e in at.error]
    assert any("DATA DIFFERS" in e and f"run {run_id} differs from its last sealed state" in e for e in errors), errors


def chain_counts(repo: RunStore, but_run: int | None = None) -> tuple[int, int]:
    """(every event, row seals) as the table holds them (read with SQL, not through the desk), optionally
    leaving out one run's events."""
    with repo.engine.begin() as conn:
        rows = conn.execute(text("SELECT action, run_id FROM audit_event")).all()
    kept = [a for a, r in rows if but_run is None or r != but_run]
    return len(kept), sum(a == "rows.sealed" for a in kept)


def test_the_list_says_how_many_events_it_shows_of_how_many_and_why(desk_env: RunStore) -> None:
    escalate(desk_env)
    at = open_as("viewer@example.com", "pages/audit.py").run()  # a first sign-in is an event: counted from here
    total, seals = chain_counts(desk_env)
    assert seals and total - seals > 10
    caption = (
        f"{total - seals} shown of {total} events, newest first: {seals} row seals hidden (system "
        "bookkeeping; tick *Show the row seals* to list them)"
    )
    assert caption in texts(at) and len(shown(at)) == total - seals
    at.button(key="audit_verify").click().run()
    assert any(f"intact: {total} events" in plain(s.value) for s in at.success)  # the number Verify gives
    at.checkbox(key="audit_seals").check().run()
    assert f"{total} events, newest first" in texts(at) and len(shown(at)) == total
    assert "rows sealed" in shown(at)["action"].tolist()
    at.number_input(key="audit_limit").set_value(10).run()
    assert f"10 shown of {total} events, newest first: {total - 10} older past *Show at most*" in texts(at)
    at.checkbox(key="audit_seals").uncheck()
    at.selectbox(key="audit_action").set_value("escalation.").run()
    assert "1 event, newest first" in texts(at)  # escalation opened; no seal is an escalation event


# --- blind review: pages everyone reads hide runs waiting for a person reviewer ---------------

EDITOR, OFFICER, MODEL = "editor@example.com", "officer@example.com", "claude-sonnet-5-5"
SECRET = "Fixed the launch year by hand (SECRET-REASON)"


def _passing(repo: RunStore) -> Review:
    rubric = repo.rubrics.resolved("general")
    return Review(
        verdict="PASS",
        checks=[CheckResult(criterion=c.id, result="PASS", detail="ok") for c in rubric.criteria],
        critical_issues=[],
        suggestions=[],
    )


def blind_second_round(repo: RunStore) -> int:
    """B a model, C a person (the editor): round 1 escalates, an officer sends an edit for fresh
    review with a justification, and round 2 waits for C after B answered."""
    desk = open_desk(str(repo.engine.url), mark_interrupted=False)
    try:
        run_id = desk.runs.create_run(
            SPEC,
            DEFECTIVE,
            desk.rubrics.resolved("general"),
            MODEL,
            "person",
            "person",
            max_rounds=1,
            created_by=EDITOR,
            person_c=EDITOR,
        )
        assert desk.runner.execute(run_id).status == RunStatus.AWAITING_HUMAN_REVIEW
        actions.submit_person_review(desk.runs, run_id, "C", _passing(repo), EDITOR)
        assert desk.runner.execute(run_id).status == RunStatus.ESCALATED  # B found the defect
        desk.runs.resolve_escalation(run_id, "rereview", OFFICER, SECRET, edited_output=CLEAN)
        assert desk.runner.execute(run_id).status == RunStatus.AWAITING_HUMAN_REVIEW
        return run_id
    finally:
        desk.close()


def finish_round(repo: RunStore, run_id: int) -> None:
    """C submits, and the worker stores round 2's gate."""
    desk = open_desk(str(repo.engine.url), mark_interrupted=False)
    try:
        actions.submit_person_review(desk.runs, run_id, "C", _passing(repo), EDITOR)
        assert desk.runner.execute(run_id).status == RunStatus.SHIPPED
    finally:
        desk.close()


def csv_spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Audit page's CSV exports, as the page hands them to the download button."""
    seen: list[str] = []
    real = st.download_button

    def spy(label, data=None, *args, **kwargs):
        if kwargs.get("key") == "audit_csv":
            seen.append(data)
        return real(label, data, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    return seen


def everything(at) -> str:
    """Text, tables and codes of a page, as one string (for "does X appear anywhere")."""
    tables = "\n".join(d.value.to_csv(index=False) for d in at.dataframe)
    return texts(at) + "\n" + tables + "\n" + "\n".join(str(s.options) for s in at.selectbox)


def test_blind_run_ids_follow_the_current_round(desk_env: RunStore) -> None:
    run_id = blind_second_round(desk_env)
    model_run = escalate(desk_env)  # no person slot: never blind
    assert desk_env.blind_run_ids() == {run_id}
    finish_round(desk_env, run_id)
    assert desk_env.blind_run_ids() == set()
    assert model_run not in desk_env.blind_run_ids()


def test_a_person_reviewer_sees_nothing_of_the_run_until_their_review_is_in(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = blind_second_round(desk_env)
    b_hash = desk_env.audit.events(action="review.saved", run_id=run_id)[0].after_hash  # B's round-2 answer
    gate_events = desk_env.audit.events(action="round.gate", run_id=run_id)
    of_run = len(desk_env.audit.events(run_id=run_id, limit=10_000))
    exports = csv_spy(monkeypatch)

    # The Audit page: no event of the run in the table, the detail view or the CSV; the count is said.
    at = open_as(EDITOR, "pages/audit.py")
    assert run_id not in shown(at)["run"].dropna().tolist()
    page = everything(at) + "\n" + exports[-1]
    for secret in (b_hash, SECRET, *(e.hash for e in gate_events)):
        assert secret not in page
    assert "round.gate" not in exports[-1] and "escalation.resolved" not in exports[-1]
    assert of_run  # the note gives no number: a count that moves would say the other review is in
    note = "Events of runs waiting for a person reviewer, or drawn for a spot-check you may judge, are hidden"
    assert note in texts(at)
    total, seals = chain_counts(desk_env, but_run=run_id)  # the counts leave the run out too
    assert f"{total - seals} shown of {total} events" in texts(at)
    at.text_input(key="audit_run").set_value(str(run_id)).run()
    assert "No audit event matches these filters." in texts(at) and note in texts(at)

    # The Escalations page: the earlier escalation's justification stays out of the resolved table.
    esc = open_as(EDITOR)
    assert SECRET not in everything(esc)
    assert "1 resolved escalation of runs waiting for a person reviewer is hidden" in texts(esc)

    # The Runs page: no spend for the run (it would say B answered).
    runs = open_as(EDITOR, "pages/runs.py")
    row = runs.dataframe[0].value.set_index("run").loc[f"./review?run={run_id}"]
    assert pd.isna(row["cost"])
    assert "No cost is shown for runs waiting for a person reviewer" in texts(runs)

    # C submits and the gate is in: everything shows.
    finish_round(desk_env, run_id)
    at = open_as(EDITOR, "pages/audit.py")
    assert run_id in shown(at)["run"].dropna().tolist()
    assert b_hash in exports[-1] and SECRET in exports[-1]
    assert "hidden until the reviews are in" not in texts(at)
    esc = open_as(EDITOR)
    assert SECRET in esc.dataframe[-1].value["justification"].tolist()
    runs = open_as(EDITOR, "pages/runs.py")
    cost = runs.dataframe[0].value.set_index("run").loc[f"./review?run={run_id}", "cost"]
    assert cost.startswith("$0.") and cost != "$0.00"
    assert "No cost is shown" not in texts(runs)
