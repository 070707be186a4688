"""`audit verify` covers what the record and the export rely on, not only runs: a desk flow (a run through the real
adapters, a batch with a pattern fix, a settings save, a role change, a rubric save, a trial, an escape, a dismissed
rubric suggestion) verifies clean, and a change by hand to any of its sealed rows (a batch item's text, a role, a setting, a call's cost, ...)
is named. On SQLite and, when configured, PostgreSQL; one desk flow per database, tampered and restored in turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, select, text
from sqlmodel import Session

from santa_core.alerts import AlertSettings, Hook
from santa_core.batch.driver import BatchDriver
from santa_core.batch.file import read_batch
from santa_core.models import RunStatus
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer
from santa_core.rubrics.learning import Suggestion
from santa_core.rubrics.library import load_builtin
from santa_core.run.runner import Runner
from santa_core.spotchecks.model import RuleDraft
from storage.alerts import AlertStore
from storage.batches import BatchStore
from storage.records import verification_record
from storage.runs import RunStore
from storage.seals import SEAL_ACTION, SEALED
from storage.tables import AuditEventRow, BatchItemRow, LLMCallRow, SettingsRow
from tests.conftest import granted_store
from tests.core.batch.test_driver import config, fixer, planted_csv, strict
from tests.storage.test_call_log import new_run, runner
from tests.support.messages_api import MessagesStub, santa_scenario

Desk = tuple[RunStore, int, int]
"""The store, the run through the real adapters, the batch with a fix."""


@pytest.fixture
def desk(db_url: str, messages_stub: MessagesStub) -> Iterator[Desk]:
    repo = granted_store(db_url, mark_interrupted=False)
    messages_stub.handler = santa_scenario
    repo.spot_checks.save_rule(RuleDraft(rubric_name="general", share_percent=100), "a seed", "ann")  # drawn at ship
    run_id = new_run(repo, "Acme launched its rocket in DEFECT.")
    assert runner(repo).execute(run_id).status == RunStatus.SHIPPED  # screen, reviews, issues, a fix, calls
    repo.report_escape(run_id, "factual_accuracy", "the year was wrong", "major", actor="ann")
    repo.save_settings({"max_rounds": 4}, actor="ann")
    repo.people.set_roles("editor@example.com", ["editor", "rubric_author"], actor="ann")
    repo.rubrics.record_trial("try", load_builtin("general"), "A text to try.", [], None, actor="ann", verdict="PASS")
    doc = repo.rubrics.document("general")
    assert repo.rubrics.save(doc.model_copy(update={"criteria": doc.criteria[:-1]}), "ann", "shorter", 1).created
    alerts = AlertStore(repo)  # the run's events, one delivered to a hook
    first = alerts.due(AlertSettings(hooks=[Hook(name="ops", url="http://127.0.0.1:9/in")], secret="s"))[0]
    alerts.finish(alerts.claim(first), True, 200, None)
    repo.suggestions.decide(
        Suggestion(
            key="s-1",
            rubric="general",
            criterion="factual_accuracy",
            criterion_name="Facts",
            kind="pass_condition",
            phrase="in 2019",
            runs=[run_id],
        ),
        "dismissed",
        "ann",
        "not now",
    )
    yield repo, run_id, a_batch_with_a_fix(repo)
    repo.engine.dispose()


def a_batch_with_a_fix(repo: RunStore) -> int:
    """A small planted batch: a sample, its pattern, the fix approved across the batch."""
    reviewers = {"b": FunctionReviewer("b", strict), "c": FunctionReviewer("c", strict)}
    fx = FunctionFixer("fixer", fixer)
    batch_runner = Runner(repo, lambda name: reviewers[name], lambda name: fx, workers=2)
    svc = BatchDriver(repo, BatchStore(repo), batch_runner, lambda name: fx)
    try:
        data, planted = planted_csv()
        file = read_batch(data, "emails.csv", strata=["template"])
        batch_id = svc.create(file, config(file), "ann")
        first = svc.wait(svc.sample(batch_id, "ann"), timeout=60)
        [pattern] = svc.find_patterns(first.id)
        svc.propose(pattern.id, "ann")
        assert svc.approve(pattern.id, "ann", reason="the offer ended", seen=svc.preview(pattern.id).version) == len(
            planted
        )
        return batch_id
    finally:
        svc.shutdown()
        batch_runner.shutdown()


def _one(engine: Engine, model: Any, where: Any) -> tuple[Any, dict[str, Any]]:
    with Session(engine) as s:
        row = s.exec(select(model.__table__).where(where).limit(1)).mappings().one()
    return row["id"], dict(row)


def _set(engine: Engine, model: Any, row_id: Any, values: dict[str, Any]) -> None:
    """A change made straight in the database (no desk, no seal)."""
    table = model.__table__
    with engine.begin() as conn:
        conn.execute(table.update().where(table.c.id == row_id).values(**values))


def test_a_desk_flow_verifies_clean_seals_every_table_and_names_a_change_by_hand_to_any_row(desk: Desk) -> None:
    """One desk flow (3 s of CPU a database to make) for both checks: first clean and sealed, then tampered with."""
    a_desk_flow_verifies_clean_and_seals_every_table_it_wrote(desk)
    a_change_by_hand_to_any_sealed_row_is_named(desk)


def a_desk_flow_verifies_clean_and_seals_every_table_it_wrote(desk: Desk) -> None:
    repo, run_id, _ = desk
    report = repo.audit.verify()
    assert report.ok, report.describe()
    with Session(repo.engine) as s:
        sealed = {
            key.partition(":")[0]
            for detail in s.exec(select(AuditEventRow.detail).where(AuditEventRow.action == SEAL_ACTION)).scalars()
            for key in detail["rows"]
        }
    # every table this flow writes (`escalation` aside: nothing escalated) has its rows under a seal
    assert set(SEALED) - sealed == {"escalation"}
    # a run's seals are its own and in its verification record
    record = verification_record(repo, run_id)
    in_record = {key for e in record.audit_events if e.action == SEAL_ACTION for key in e.detail["rows"]}
    with Session(repo.engine) as s:
        calls = s.exec(select(LLMCallRow.__table__.c.id).where(LLMCallRow.__table__.c.run_id == run_id)).all()
    assert len(calls) == 9 and {f"llm_call:{i}" for (i,) in calls} <= in_record  # key, extraction, B, C, fix; again
    escape_id, _ = _one(repo.engine, SEALED["escape"], SEALED["escape"].__table__.c.run_id == run_id)
    assert {f"run:{run_id}", f"escape:{escape_id}"} <= in_record
    # Blind review hides a run's events by their run id: every seal names only rows of its own run (a seal of no
    # run names no run's row), so no seal shows a run's rows under another run or none.
    newest = {
        key: event.run_id
        for event in repo.audit.events(action=SEAL_ACTION, limit=100_000, newest_first=False)
        for key, digest in event.detail["rows"].items()
        if digest is not None
    }
    assert newest == _rows_by_run(repo.engine)


def a_change_by_hand_to_any_sealed_row_is_named(desk: Desk) -> None:
    repo, run_id, batch_id = desk
    engine = repo.engine
    item_id, item = _one(engine, BatchItemRow, BatchItemRow.__table__.c.batch_id == batch_id)
    call_id, call = _one(engine, LLMCallRow, LLMCallRow.__table__.c.run_id == run_id)
    settings_id, settings = _one(engine, SettingsRow, SettingsRow.__table__.c.id > 0)
    tampered = [  # (table, row, the change, the values to restore)
        ("batch_item", item_id, {"output": item["output"] + " Plus a sentence nobody verified."}, item),
        ("person", "editor@example.com", {"roles": ["admin"]}, {"roles": ["editor", "rubric_author"]}),
        ("settings", settings_id, {"values_json": {"max_rounds": 40}}, settings),
        ("llm_call", call_id, {"cost_usd": 0.0}, call),
    ]
    for kind in (
        "batch_change",
        "llm_call_sent",
        "merged_issue",
        "screen",
        "rubric_version",
        "rubric_trial",
        "escape",
        "state_change",
        "batch_pattern",
        "batch_sample",
        "batch_sample_item",
        "batch",
        "alert",
        "alert_delivery",
        "rubric_suggestion",
        "spot_rule",
        "spot_check",
    ):
        row_id, row = _one(engine, SEALED[kind], SEALED[kind].__table__.c.id.isnot(None))
        if kind == "batch_sample_item":
            tampered.append((kind, row_id, {"run_id": None if row["run_id"] else run_id}, row))
            continue
        column = next(
            c
            for c in (
                "created_by",
                "actor",
                "reported_by",
                "author",
                "worker",
                "flagged_by",
                "key",
                "model",
                "item_key",
                "status",
            )
            if isinstance(row.get(c), str)
        )
        tampered.append((kind, row_id, {column: row[column] + "-x"}, row))
    assert {t[0] for t in tampered} == set(SEALED) - {
        "run",
        "round",
        "review",
        "proposal",
        "decision",
        "escalation",
    }  # the first six: tests/storage/test_seals.py
    # One verify per change, not two (each reads the whole chain and every sealed row): that a restore left verify
    # clean again, the next change's verify shows (it names that change's row alone), the last one's the verify below.
    for kind, row_id, change, original in tampered:
        _set(engine, SEALED[kind], row_id, change)
        problems = repo.audit.verify().row_problems
        assert [p.split(" differs")[0] for p in problems] == [f"{kind} {row_id}"], (kind, problems)
        _set(engine, SEALED[kind], row_id, {k: original[k] for k in change})
    assert repo.audit.verify().ok  # restored: verify is clean again
    # and as a person with a SQL console would do it
    with engine.begin() as conn:
        conn.execute(text(f"UPDATE batch_item SET output = 'We guarantee everything.' WHERE id = {item_id}"))
    report = repo.audit.verify()
    seq = _last_seal_of(engine, f"batch_item:{item_id}")
    assert not report.ok and report.row_problems == [
        f"batch_item {item_id} differs from its last sealed state (audit seq {seq}): it was changed outside the desk"
    ]


def _rows_by_run(engine: Engine) -> dict[str, int | None]:
    """Each sealed row's key and the run it belongs to, read straight from the tables."""
    out: dict[str, int | None] = {}
    with engine.connect() as conn:
        for kind, model in SEALED.items():
            table = model.__table__
            run = table.c.id if kind == "run" else table.c.run_id if "run_id" in table.c else None
            stmt = select(table.c.id, run) if run is not None else select(table.c.id)
            for row in conn.execute(stmt):
                out[f"{kind}:{row[0]}"] = row[1] if run is not None else None
    return out


def _last_seal_of(engine: Engine, key: str) -> int:
    with Session(engine) as s:
        rows = s.exec(select(AuditEventRow.seq, AuditEventRow.detail).where(AuditEventRow.action == SEAL_ACTION)).all()
    return max(seq for seq, detail in rows if key in detail["rows"])
