"""The database under the stores: the schema pinned after migrate, the migrations step by step,
SQLite pragmas and write transactions, the database URL and the engine cache, 8 concurrent writers
that lose nothing, and start-up (migrate, mark the runs of dead workers interrupted). A test that
takes a database runs on SQLite and, when SANTA_TEST_POSTGRES_URL is set, on PostgreSQL too.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, event
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, SQLModel

from santa_core.models import Criterion, Rubric, RunState
from storage import db, startup
from storage.db import database_url, make_engine, migrate, redacted_url
from storage.run_rows import lock_run
from storage.runs import RunStore
from storage.tables import DecisionRow, LLMCallRow, ReviewRow, RunRow, StateChangeRow
from tests.conftest import grant
from tests.support import runs
from tests.support.records import make_outcome
from tests.support.runs import S, count, new_run

engine, repo = runs.engine, runs.repo  # the fixtures (an imported name would trip ruff's F811)


SCHEMA: dict[str, list[str]] = {
    "alembic_version": ["version_num"],
    "batch": [
        "id", "created_at", "updated_at", "created_by", "source", "name", "file_format", "columns", "layout", "id_column",
        "output_column", "spec_column", "spec", "strata", "rubric_name", "rubric_version", "rubric_json",
        "reviewer_b", "reviewer_c", "fixer", "sample_rate", "min_sample", "seed", "concurrency", "message_batches",
        "auto_approve", "confidence", "paused", "note",
    ],
    "batch_item": ["id", "batch_id", "position", "item_key", "spec", "strata", "record", "original_output", "output"],
    "batch_sample": ["id", "batch_id", "number", "created_at", "created_by", "seed", "size", "finished_at",
                     "api_batch_id", "api_status", "api_jobs"],
    "batch_sample_item": ["id", "sample_id", "item_id", "run_id"],
    "batch_pattern": ["id", "batch_id", "sample_id", "key", "criterion", "title", "pattern", "status", "proposal",
                      "approved_edits", "decided_by", "decided_at", "reason", "item_fixes", "fix_spent_usd"],  # 0013
    "batch_change": ["id", "batch_id", "item_id", "pattern_id", "created_at", "actor", "before_text", "after_text",
                     "before_hash", "after_hash", "applied", "skipped", "by_hand"],  # 0013
    "run": [
        "id", "created_at", "updated_at", "status", "round", "max_rounds", "round_cap",
        "escalation_reason", "note", "spec", "original_output", "rubric_name",
        "rubric_version", "rubric_json", "reviewer_b", "reviewer_c", "fixer", "auto_approve",
        "budget_usd", "created_by", "source", "worker", "person_b", "person_c", "generation_cost_usd", "batch_id",
        "reviewer_d",  # 0019
    ],
    "round": [
        "id", "run_id", "round_no", "output_text", "output_hash", "gate_decision",
        "gate_reasons", "gate_reviewer_error", "gate_injection", "started_at", "gate_checks",
        "gate_disagreement",
    ],
    "review": [
        "id", "run_id", "round_no", "slot", "reviewer", "status", "verdict", "review_json",
        "error", "input_tokens", "output_tokens", "cache_creation_input_tokens",
        "cache_read_input_tokens", "cost_usd", "latency_s", "raw_response", "call_ids",
        "created_at",
    ],
    "merged_issue": [
        "id", "run_id", "round_no", "idx", "criterion", "description", "evidence",
        "flagged_by",
    ],
    "proposal": [
        "id", "run_id", "round_no", "issues_json", "edits_json", "rejected_json",
        "before_text", "proposed_text", "before_hash", "proposed_hash", "cost_usd",
        "input_tokens", "output_tokens", "cache_creation_input_tokens",
        "cache_read_input_tokens", "error", "call_ids", "created_at",
    ],
    "decision": [
        "id", "run_id", "round_no", "action", "actor", "reason", "before_hash", "after_hash",
        "after_text", "created_at",
    ],
    "escalation": [
        "id", "run_id", "reason", "created_at", "status", "resolution", "resolved_by",
        "resolved_at", "justification", "owner", "due_at",
    ],
    "llm_call": [
        "id", "run_id", "round_no", "purpose", "slot", "model", "request_json",
        "response_text", "content_hash", "input_tokens", "output_tokens",
        "cache_creation_input_tokens", "cache_read_input_tokens", "cost_usd", "latency_s",
        "error", "created_at", "request_hash", "batch_id", "trial_key",  # 0015
    ],
    "llm_call_sent": ["id", "run_id", "round_no", "purpose", "slot", "model", "request_hash", "estimate_usd", "worker",
                      "sent_at", "batch_id", "trial_key"],
    "state_change": ["id", "run_id", "from_status", "to_status", "actor", "note", "created_at"],
    "settings": ["id", "values_json", "saved_by", "saved_at"],
    "rubric_version": [
        "id", "name", "version", "domain", "document_json", "resolved_json", "content_hash", "author",
        "change_note", "source", "created_at",
    ],
    "rubric_trial": [
        "id", "kind", "run_id", "rubric_name", "rubric_version", "rubric_json", "output_text", "output_hash",
        "check_outcomes_json", "reviewer", "review_status", "verdict", "review_json", "error", "request_json",
        "response_text", "content_hash", "input_tokens", "output_tokens", "cache_creation_input_tokens",
        "cache_read_input_tokens", "cost_usd", "latency_s", "actor", "created_at",
        "trial_key",  # 0015
    ],
    "rubric_suggestion": [  # 0020
        "id", "rubric_name", "suggestion_key", "action", "criterion", "kind", "phrase", "runs_json", "version", "note",
        "actor", "created_at",
    ],
    "person": ["id", "name", "roles", "created_at", "updated_at", "updated_by"],
    "escape": ["id", "run_id", "criterion", "description", "severity", "reported_by", "created_at", "source",
               "spot_check_id", "evidence", "passed_by"],
    "spot_rule": ["id", "rubric_name", "share", "floor", "panel", "domain", "seed", "created_by", "created_at",
                  "active", "retired_by", "retired_at", "replaces"],
    "spot_check": ["id", "rule_id", "run_id", "round_no", "rubric_name", "rubric_version", "drawn_by", "seed",
                   "share", "number", "status", "owner", "due_at", "created_at", "submitted_by", "submitted_at",
                   "judgements"],
    "audit_event": [
        "id", "seq", "created_at", "actor", "action", "entity_type", "entity_id", "run_id", "before_hash",
        "after_hash", "detail", "prev_hash", "hash",
    ],
    "audit_head": ["id", "seq", "hash"],
    "screen": [
        "id", "run_id", "round_no", "role", "text_hash", "model", "verdict", "secret", "answer", "error", "cost_usd",
        "cached", "call_id", "created_at", "kind", "quotes",  # kind, quotes: 0022
    ],
    "run_metric": [
        "day", "rubric_name", "rubric_version", "domain", "reviewer_b", "reviewer_c", "run_id", "created_by", "status", "rounds", "nice_round",
        "generation_cost_usd", "review_cost_usd", "fix_cost_usd", "input_tokens", "output_tokens",
        "cache_write_tokens", "cache_read_tokens", "cache_savings_usd", "escapes", "b_reviews", "b_errors",
        "b_latency_s", "b_latency_max_s", "b_cost_usd", "c_reviews", "c_errors", "c_latency_s", "c_latency_max_s",
        "c_cost_usd", "rounds_reviewed", "round_latency_s",
        "review_input_tokens", "review_cache_write_tokens", "review_cache_read_tokens",  # 0012
    ],
    "criterion_result": [
        "day", "rubric_name", "rubric_version", "domain", "reviewer_b", "reviewer_c", "id", "run_id", "round_no", "criterion", "category", "severity", "b", "c",
        "check_result",
    ],
    "criterion_day": [
        "day", "rubric_name", "rubric_version", "domain", "reviewer_b", "reviewer_c", "id", "criterion", "category", "severity", "pp", "pf", "fp", "ff", "b_fail",
        "c_fail", "check_fail", "unscored",
    ],
    "alert": ["id", "key", "kind", "subject", "run_id", "payload", "created_at", "done"],  # 0021
    "alert_delivery": ["id", "alert_id", "hook", "attempt", "status", "status_code", "error", "at", "finished_at"],
}  # fmt: skip


# --- schema ---------------------------------------------------------------------------------


def test_schema_is_pinned_after_migrate(engine: Engine) -> None:
    insp = sa_inspect(engine)
    actual = {t: [c["name"] for c in insp.get_columns(t)] for t in insp.get_table_names()}
    assert actual == SCHEMA


def test_migration_matches_the_tables_and_is_idempotent(engine: Engine) -> None:
    migrate(engine)  # a second run is a no-op
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(ctx, SQLModel.metadata) == []
        assert conn.exec_driver_sql("SELECT version_num FROM alembic_version").all() == [("0022",)]


def test_indexes_on_status_created_at_and_foreign_keys(engine: Engine) -> None:
    insp = sa_inspect(engine)
    indexed = {(t, tuple(ix["column_names"])) for t in SCHEMA for ix in insp.get_indexes(t)}
    assert {("run", ("status",)), ("run", ("created_at",))} <= indexed
    no_run_fk = {
        "run",
        "alembic_version",
        "settings",
        "rubric_version",
        "person",
        "audit_event",
        "audit_head",
        "criterion_day",
        "run_metric",  # run_metric's run_id is its primary key
        "batch",
        "batch_item",
        "batch_sample",
        "batch_pattern",
        "batch_change",
        "batch_sample_item",
        "alert_delivery",
        "rubric_suggestion",
        "spot_rule",
    }  # a delivery's alert names the run
    assert ("alert_delivery", ("alert_id",)) in indexed
    assert {
        (t, ("batch_id",)) for t in ("run", "batch_item", "batch_sample", "batch_pattern", "batch_change")
    } <= indexed
    assert sorted(
        (f["constrained_columns"][0], f["referred_table"]) for f in insp.get_foreign_keys("batch_sample_item")
    ) == [("item_id", "batch_item"), ("run_id", "run"), ("sample_id", "batch_sample")]
    assert [(f["constrained_columns"], f["referred_table"]) for f in insp.get_foreign_keys("run_metric")] == [
        (["run_id"], "run")
    ]
    served_by_calls = {"llm_call", "llm_call_sent"}  # a call serves a run or a batch (or a trial, by its key)
    assert sorted((f["constrained_columns"][0], f["referred_table"]) for f in insp.get_foreign_keys("spot_check")) == [
        ("rule_id", "spot_rule"),
        ("run_id", "run"),
    ]
    for table in set(SCHEMA) - no_run_fk - {"spot_check"}:
        assert (table, ("run_id",)) in indexed, table
        fks = insp.get_foreign_keys(table)
        assert sorted((f["constrained_columns"], f["referred_table"]) for f in fks) == (
            [(["batch_id"], "batch"), (["run_id"], "run")] if table in served_by_calls else [(["run_id"], "run")]
        )
    assert {(t, (c,)) for t in served_by_calls for c in ("batch_id", "trial_key")} <= indexed


# --- migrations -----------------------------------------------------------------------------


def test_migrations_upgrade_step_by_step(empty_db_url: str) -> None:
    """0001 alone, then head: the chain applies in order on an existing database."""
    eng = make_engine(empty_db_url)
    try:
        with eng.begin() as conn:
            command.upgrade(db.alembic_config(conn), "0001")
        assert "settings" not in sa_inspect(eng).get_table_names()
        migrate(eng)
        assert "settings" in sa_inspect(eng).get_table_names()
    finally:
        eng.dispose()


def _fill(conn: Any, table: str, **given: object) -> None:
    """Insert a row giving every NOT NULL column a value of its type (what a test does not care about)."""
    values: dict[str, object] = {}
    for c in sa_inspect(conn).get_columns(table):
        if c["name"] in given or c["nullable"] or c["name"] == "id":
            continue
        kind = str(c["type"]).upper()
        values[c["name"]] = (
            datetime.now(UTC)
            if "DATE" in kind or "TIME" in kind
            else 0
            if "INT" in kind
            else False
            if "BOOL" in kind
            else 0.0
            if any(k in kind for k in ("FLOAT", "REAL", "DOUBLE", "NUMERIC"))
            else {}
            if "JSON" in kind
            else "x"
        )
    values.update(given)
    table_ = sa.Table(table, sa.MetaData(), autoload_with=conn)
    conn.execute(table_.insert().values(**values))


def test_migration_0008_keeps_runs_and_their_rounds(empty_db_url: str) -> None:
    """Adding run.batch_id (a foreign key: SQLite rebuilds the run table) loses no run or row pointing at one."""
    eng = make_engine(empty_db_url)
    try:
        with eng.begin() as conn:
            command.upgrade(db.alembic_config(conn), "0007")
        with eng.begin() as conn:
            _fill(conn, "run", id=7, status="shipped", spec="the spec")
            _fill(conn, "round", run_id=7, round_no=1, output_text="the output")
        migrate(eng)
        with eng.connect() as conn:
            assert conn.exec_driver_sql("SELECT id, status, spec, batch_id FROM run").all() == [
                (7, "shipped", "the spec", None)
            ]
            assert conn.exec_driver_sql("SELECT run_id, output_text FROM round").all() == [(7, "the output")]
    finally:
        eng.dispose()


def test_migration_0012_leaves_old_facts_for_start_up_to_recompute(empty_db_url: str) -> None:
    """run_metric's review_* token columns arrive NULL on an old row (not 0: unknown), and the backfill
    recomputes that row from the run's own calls, with net cache savings."""
    from santa_core.pricing import cache_savings_usd
    from storage.metric_facts import backfill

    eng = make_engine(empty_db_url)
    try:
        with eng.begin() as conn:
            command.upgrade(db.alembic_config(conn), "0011")
        with eng.begin() as conn:
            _fill(
                conn,
                "run",
                id=7,
                status="shipped",
                reviewer_b="claude-opus-5",
                reviewer_c="claude-haiku-4-5",
                rubric_json={},
            )
            _fill(
                conn,
                "llm_call",
                run_id=7,
                purpose="review",
                model="claude-opus-5",
                input_tokens=1000,
                cache_creation_input_tokens=300,
                cache_read_input_tokens=600,
            )
            _fill(
                conn,
                "run_metric",
                run_id=7,
                day="2025-01-06",
                status="shipped",
                cache_read_tokens=600,
                cache_savings_usd=0.0027,
            )  # gross, as before 0012
        migrate(eng)
        columns = "review_input_tokens, review_cache_write_tokens, review_cache_read_tokens, cache_savings_usd"
        with eng.connect() as conn:
            assert conn.exec_driver_sql(f"SELECT {columns} FROM run_metric").all() == [(None, None, None, 0.0027)]
        assert backfill(eng) == 1
        with eng.connect() as conn:
            assert conn.exec_driver_sql(f"SELECT {columns} FROM run_metric").all() == [
                (1000, 300, 600, pytest.approx(cache_savings_usd("claude-opus-5", 600, 300)))
            ]
        assert backfill(eng) == 0
    finally:
        eng.dispose()


def test_migration_0017_derives_again_the_facts_of_runs_with_calls_cut_off(empty_db_url: str) -> None:
    """A run's facts stored before the one definition of cost left out a call cut off before its answer (its page
    counted it at its estimate): after 0017 the start-up backfill derives them again, the cut-off call at its
    estimate; a run with no sent note keeps its facts."""
    from storage.metric_facts import backfill

    eng = make_engine(empty_db_url)
    try:
        with eng.begin() as conn:
            command.upgrade(db.alembic_config(conn), "0016")
        with eng.begin() as conn:
            for run_id in (7, 8):
                _fill(
                    conn,
                    "run",
                    id=run_id,
                    status="shipped",
                    reviewer_b="claude-opus-5",
                    reviewer_c="claude-haiku-4-5",
                    rubric_json={},
                )
                _fill(
                    conn,
                    "llm_call",
                    run_id=run_id,
                    purpose="review",
                    slot="B",
                    model="claude-opus-5",
                    cost_usd=0.25,
                    request_hash=f"answered-{run_id}",
                )
                _fill(
                    conn,
                    "run_metric",
                    run_id=run_id,
                    day="2025-01-06",
                    status="shipped",
                    review_cost_usd=0.25,
                    review_cache_read_tokens=0,
                )  # as derived before: the answered call only
            _fill(
                conn,
                "llm_call_sent",
                run_id=7,
                purpose="review",
                slot="C",
                model="claude-haiku-4-5",
                request_hash="cut-off",
                estimate_usd=0.125,
            )  # run 7's reviewer C never answered
        migrate(eng)
        assert backfill(eng) == 1
        with eng.connect() as conn:
            assert conn.exec_driver_sql("SELECT run_id, review_cost_usd FROM run_metric ORDER BY run_id").all() == [
                (7, pytest.approx(0.25 + 0.125)),
                (8, pytest.approx(0.25)),
            ]
        assert backfill(eng) == 0
    finally:
        eng.dispose()


# --- engine and URL -------------------------------------------------------------------------


def test_sqlite_pragmas_are_in_effect(tmp_path: Path) -> None:
    eng = make_engine(f"sqlite:///{tmp_path / 'p.db'}")
    try:
        with eng.connect() as conn:
            got = {
                p: conn.exec_driver_sql(f"PRAGMA {p}").scalar()
                for p in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous")
            }
        assert got == {"journal_mode": "wal", "foreign_keys": 1, "busy_timeout": 30000, "synchronous": 1}
    finally:
        eng.dispose()


def test_sqlite_writes_begin_immediate_and_reads_do_not(tmp_path: Path) -> None:
    eng = make_engine(f"sqlite:///{tmp_path / 'b.db'}")
    migrate(eng)
    repo = RunStore(eng)
    seen: list[str] = []
    event.listen(eng, "before_cursor_execute", lambda *a: seen.append(a[2]))
    try:
        run_id = new_run(repo)
        assert seen[0] == "BEGIN IMMEDIATE"
        seen.clear()
        repo.load_run(run_id)
        assert seen[0] == "BEGIN" and "BEGIN IMMEDIATE" not in seen
        orphan = DecisionRow(run_id=12345, round_no=1, action="approve", actor="x", before_hash="", after_hash="")
        with pytest.raises(IntegrityError, match="FOREIGN KEY"), Session(eng) as s, s.begin():
            s.add(orphan)
    finally:
        eng.dispose()


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param("postgres://u:p@h/db", "postgresql+psycopg://u:p@h/db", id="heroku"),
        pytest.param("postgresql://u@h:5/db", "postgresql+psycopg://u@h:5/db", id="plain"),
        pytest.param("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db", id="psycopg"),
        pytest.param("sqlite:///x.db", "sqlite:///x.db", id="sqlite"),
    ],
)
def test_database_url_normalises_postgres(given: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", given)
    assert database_url() == expected


def test_default_url_is_a_sqlite_file_under_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    url = database_url()
    assert url == f"sqlite:///{db.REPO_ROOT / 'data' / 'santa.db'}"
    assert (db.REPO_ROOT / "data").is_dir()


def test_get_engine_is_cached_per_url(tmp_path: Path) -> None:
    try:
        a = db.get_engine(f"sqlite:///{tmp_path / 'a.db'}")
        assert db.get_engine(f"sqlite:///{tmp_path / 'a.db'}") is a
        assert db.get_engine(f"sqlite:///{tmp_path / 'b.db'}") is not a
    finally:
        db.dispose_engines()


def test_redacted_url_hides_the_password() -> None:
    assert redacted_url("postgresql+psycopg://u:s3cret@h/db") == "postgresql+psycopg://u:***@h/db"


# --- concurrency ----------------------------------------------------------------------------


def test_eight_concurrent_writers_lose_nothing(repo: RunStore, engine: Engine) -> None:
    threads, runs_each, increments = 8, 6, 25
    grant(repo, {f"t{t}": ("editor",) for t in range(threads)})
    counter = new_run(repo)
    targets = [new_run(repo) for _ in range(12)]
    start = threading.Barrier(threads + 2)
    done = threading.Event()

    def writer(t: int) -> tuple[list[int], int]:
        start.wait()
        mine, won = [], 0
        for i in range(max(runs_each, increments)):
            if i < runs_each:
                run_id = new_run(repo, created_by=f"t{t}")
                repo.save_review(run_id, 1, make_outcome("B", calls=1))
                repo.save_review(run_id, 1, make_outcome("C", calls=1))
                mine.append(run_id)
            with repo._tx() as s:  # a read-modify-write increment through the repo's tx
                row = lock_run(s, counter)
                row.round_cap += 1
            if i < len(targets):
                claim = RunState(status=S.RUNNING, note=f"t{t}")
                won += repo.transition(targets[i], {S.QUEUED}, claim, "worker")
        return mine, won

    def reader() -> int:
        start.wait()
        reads = 0
        while not done.is_set() or reads == 0:
            repo.list_runs()
            repo.get_run_view(counter)
            reads += 1
        return reads

    with ThreadPoolExecutor(threads + 2) as pool:
        readers = [pool.submit(reader) for _ in range(2)]
        try:
            results = list(pool.map(writer, range(threads)))
        finally:
            done.set()  # readers stop even when a writer failed
        assert all(r.result() > 0 for r in readers)

    created = [run_id for mine, _ in results for run_id in mine]
    assert len(set(created)) == threads * runs_each
    assert sum(won for _, won in results) == len(targets)  # each claim won exactly once
    assert repo.load_run(counter).state.round_cap == 3 + threads * increments
    assert count(engine, RunRow) == 1 + len(targets) + threads * runs_each
    assert count(engine, ReviewRow) == 2 * threads * runs_each
    assert count(engine, LLMCallRow) == 2 * threads * runs_each
    for run_id in targets:
        assert count(engine, StateChangeRow, run_id=run_id) == 2
    assert repo.audit.verify().ok  # every writer appended to one unforked chain
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"


# --- start-up -------------------------------------------------------------------------------


def test_init_db_migrates_and_marks_interrupted_once_per_process(empty_db_url: str) -> None:
    try:
        repo = RunStore(startup.init_db(empty_db_url))
        run_id = new_run(repo)
        repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
        assert startup.init_db(empty_db_url) is db.get_engine(empty_db_url)  # cached: nothing marked now
        assert repo.load_run(run_id).state.status == S.RUNNING
        with repo.engine.begin() as conn:  # the worker that claimed it is gone
            conn.exec_driver_sql(f"UPDATE run SET worker = NULL WHERE id = {run_id}")
        db.dispose_engines()  # a "restart"
        RunStore(startup.init_db(empty_db_url))
        assert repo.load_run(run_id).state.status == S.INTERRUPTED
    finally:
        db.dispose_engines()


def test_init_db_can_leave_running_runs_alone(empty_db_url: str) -> None:
    try:
        repo = RunStore(startup.init_db(empty_db_url))
        run_id = new_run(repo)
        repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
        db.dispose_engines()  # a second process (the CLI) opens the same database
        startup.init_db(empty_db_url, mark_interrupted=False)
        assert repo.load_run(run_id).state.status == S.RUNNING
    finally:
        db.dispose_engines()


def test_app_start_leaves_runs_of_live_workers_alone(tmp_path: Path) -> None:
    """Only runs whose worker process is gone are interrupted; a live command-line run keeps going."""
    import subprocess
    import sys

    from santa_core.run.engine import Claim, advance
    from storage.workers import this_worker

    repo = RunStore(startup.init_db(f"sqlite:///{tmp_path / 'w.db'}", mark_interrupted=False))
    rubric = Rubric(name="r", criteria=[Criterion(id="a", name="A", category="c", pass_condition="p", fail_signal="f")])
    ids = [
        repo.create_run(spec="s", output="o", rubric=rubric, reviewer_b="b", reviewer_c="c", fixer="f")
        for _ in range(3)
    ]
    for run_id in ids:
        state = repo.load_run(run_id).state
        assert repo.transition(run_id, {state.status}, advance(state, Claim()), "worker")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = this_worker().split(":")[0]
    with repo.engine.begin() as conn:  # ids[1]: a process that has exited; ids[2]: unknown worker
        conn.exec_driver_sql(f"UPDATE run SET worker = '{host}:{dead.stdout.strip()}:1' WHERE id = {ids[1]}")
        conn.exec_driver_sql(f"UPDATE run SET worker = NULL WHERE id = {ids[2]}")
    assert repo.mark_interrupted() == [ids[1], ids[2]]
    assert repo.load_run(ids[0]).state.status == "running"  # claimed by this live process


def test_a_postgresql_server_that_never_answers_fails_the_open_in_the_connect_timeout(monkeypatch) -> None:
    """A database that takes the connection and says nothing (a stuck proxy, a firewall that drops) fails the open
    in CONNECT_TIMEOUT_S with a timeout error, instead of libpq's two minutes."""
    import socket

    import sqlalchemy.exc

    from storage import db

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    monkeypatch.setattr(db, "CONNECT_TIMEOUT_S", 1)
    try:
        engine = db.make_engine(f"postgresql://santa@127.0.0.1:{listener.getsockname()[1]}/santa")
        with pytest.raises(sqlalchemy.exc.OperationalError, match="timeout"):
            engine.connect()
    finally:
        listener.close()
