"""`audit verify` covers the data: rows changed, added or cut outside the desk are named.

Every write transaction seals the rows of the sealed tables it wrote in the audit chain (`storage.seals`);
verify recomputes them (the tables beyond a run's first six: tests/storage/test_seal_coverage.py). A deleted tail with a rewritten head is
caught by checking a head hash kept outside the database (`--expect`, the anchor file). On SQLite and,
when configured, PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import Engine, create_engine
from sqlalchemy import select as sa_select
from sqlmodel import Session, select

from santa_core.models import GateDecision, GateResult, MergedIssue, ReviewOutcome, ReviewStatus, RunState, RunStatus
from storage.chain import append
from storage.db import alembic_config
from storage.runs import RunStore
from storage.seals import FIRST_SEALED, SEAL_ACTION, SEALED, full_row_hash, row_hash
from storage.startup import init_db
from storage.tables import (
    AuditEventRow,
    AuditHeadRow,
    DecisionRow,
    MergedIssueRow,
    ReviewRow,
    SpotCheckRow,
    SpotRuleRow,
)
from tests.conftest import grant, granted_store
from tests.core.run.test_runner import RUBRIC, SPEC


@pytest.fixture
def repo(db_url: str) -> RunStore:
    return granted_store(db_url)


def a_reviewed_run(repo: RunStore) -> int:
    run_id = repo.create_run(
        spec=SPEC, output="Acme launched its rocket in 2018.", rubric=RUBRIC, reviewer_b="b", reviewer_c="c", fixer="f"
    )
    assert repo.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
    for slot in ("B", "C"):
        repo.save_review(
            run_id, 1, ReviewOutcome(slot=slot, reviewer=slot.lower(), status=ReviewStatus.ERROR, error="rate limited")
        )
    repo.save_gate(run_id, 1, GateResult(decision=GateDecision.NAUGHTY, issues=[], reviewer_error=True))
    return run_id


SPOT_CHECK_COLUMNS = ("source VARCHAR", "spot_check_id INTEGER", "evidence TEXT", "passed_by JSON")
"""The escape's columns of 0018."""


@contextmanager
def lent_spot_checks(engine: Engine) -> Iterator[None]:
    """Today's desk reads the spot-check tables and escape columns of 0018 when a run ships: lend them to an older
    database for the write, then take them away again."""
    SpotRuleRow.__table__.create(engine)
    SpotCheckRow.__table__.create(engine)
    for column in SPOT_CHECK_COLUMNS:
        sql(engine, f'ALTER TABLE "escape" ADD COLUMN {column}')
    yield
    for column in SPOT_CHECK_COLUMNS:
        sql(engine, f'ALTER TABLE "escape" DROP COLUMN {column.split()[0]}')
    SpotCheckRow.__table__.drop(engine)
    SpotRuleRow.__table__.drop(engine)


def sql(engine: Engine, statement: str) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql(statement)


def test_an_untouched_desk_verifies_with_its_rows(repo: RunStore) -> None:
    a_reviewed_run(repo)
    report = repo.audit.verify()
    assert report.ok and report.rows_checked >= 4, report.describe()  # run, round, two reviews
    assert f"{report.rows_checked} rows verified" in report.describe()


def test_a_run_status_changed_in_the_database_is_named(repo: RunStore) -> None:
    run_id = a_reviewed_run(repo)
    sql(repo.engine, f"UPDATE run SET status = 'shipped' WHERE id = {run_id}")
    report = repo.audit.verify()
    assert not report.ok and report.broken is None  # the chain itself is intact: the data is not
    assert report.row_problems == [
        f"run {run_id} differs from its last sealed state (audit seq "
        f"{_last_seal_of(repo, f'run:{run_id}')}): it was changed outside the desk"
    ]
    assert "DATA DIFFERS" in report.describe()


def test_a_review_verdict_changed_in_the_database_is_named(repo: RunStore) -> None:
    run_id = a_reviewed_run(repo)
    with Session(repo.engine) as s:
        review_id = s.exec(select(ReviewRow.id).where(ReviewRow.run_id == run_id, ReviewRow.slot == "C")).one()
    sql(repo.engine, f"UPDATE review SET verdict = 'PASS', status = 'ok' WHERE id = {review_id}")
    report = repo.audit.verify()
    assert not report.ok and [p.split(" differs")[0] for p in report.row_problems] == [f"review {review_id}"]


def test_a_row_inserted_outside_the_desk_is_named(repo: RunStore) -> None:
    run_id = a_reviewed_run(repo)
    with Session(repo.engine) as s:
        s.add(
            DecisionRow(
                run_id=run_id, round_no=1, action="approve", actor="mallory", reason="", before_hash="", after_hash=""
            )
        )
        s.commit()
        decision_id = s.exec(select(DecisionRow.id)).one()
    report = repo.audit.verify()
    assert report.row_problems == [
        f"decision {decision_id} is not covered by any seal: it was written outside the desk"
    ]


def test_a_cut_tail_with_a_rewritten_head_is_caught_by_the_hash_kept_outside(
    repo: RunStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    anchor = tmp_path / "audit-heads.txt"
    monkeypatch.setenv("SANTA_AUDIT_ANCHOR_FILE", str(anchor))
    a_reviewed_run(repo)
    kept = repo.audit.verify().head_hash
    assert anchor.read_text().splitlines()[-1].split() == [str(_head(repo)[0]), kept]  # appended on each commit
    assert repo.audit.verify(expect=kept).ok
    seq, _ = _head(repo)
    # cut the newest events (here: the last seal and its step), then rewrite the head to the new end
    with Session(repo.engine) as s:
        cut_to = seq - 2
        new_head = s.exec(select(AuditEventRow.hash).where(AuditEventRow.seq == cut_to)).one()
    sql(repo.engine, f"DELETE FROM audit_event WHERE seq > {cut_to}")
    sql(repo.engine, f"UPDATE audit_head SET seq = {cut_to}, hash = '{new_head}' WHERE id = 1")
    assert repo.audit.verify().broken is None  # the chain alone cannot tell
    report = repo.audit.verify(expect=kept)
    assert not report.ok and "does not reach the hash you kept" in report.describe()


def test_rows_written_before_seals_existed_are_sealed_at_upgrade(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_engine(url)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0010")
    # Today's desk writes the run_metric columns of 0012 too: lend them for the write, then take them away again.
    later = ("review_input_tokens", "review_cache_write_tokens", "review_cache_read_tokens")
    for name in later:
        sql(engine, f"ALTER TABLE run_metric ADD COLUMN {name} INTEGER")
    sql(engine, "ALTER TABLE run ADD COLUMN reviewer_d VARCHAR")  # and run.reviewer_d of 0019 (NULL: not hashed)
    with lent_spot_checks(engine):
        old = grant(RunStore(engine))
        run_id = a_reviewed_run(old)  # written through the desk, so sealed; now forget those seals
    for name in later:
        sql(engine, f"ALTER TABLE run_metric DROP COLUMN {name}")
    sql(engine, "ALTER TABLE run DROP COLUMN reviewer_d")
    _forget_every_event(engine)
    report = RunStore(init_db(url)).audit.verify()  # the upgrade to 0011 seals them (and 0016 the rest)
    assert report.ok and report.rows_checked >= 4, report.describe()
    assert {f"run:{run_id}", "person:ann"} <= set(_seal_keys(engine))


def _at_0015(table):
    """A sealed table's columns as a 0015 database has them (today's tables also hold 0019's run.reviewer_d)."""
    return [c for c in table.c if c.name != "reviewer_d"]


def test_the_upgrade_to_0016_seals_the_new_tables_and_keeps_naming_a_row_changed_before(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'at0015.db'}"
    engine = create_engine(url)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0015")
    # 0016 adds no column; 0019's run.reviewer_d is lent for today's desk's writes (NULL there: not hashed)
    sql(engine, "ALTER TABLE run ADD COLUMN reviewer_d VARCHAR")
    with lent_spot_checks(engine):  # 0018's columns are lent for the write
        old = grant(RunStore(engine))
        run_id = a_reviewed_run(old)
        old.save_settings({"max_rounds": 4}, actor="ann")
    sql(engine, "ALTER TABLE run DROP COLUMN reviewer_d")
    # What 0011 to 0015 left: no seal of the new tables, the first six sealed with every column hashed, NULLs too.
    _forget_every_event(engine)
    with engine.begin() as conn, Session(bind=conn) as s:
        legacy = {
            f"{kind}:{i}": full_row_hash(dict(row))
            for kind in FIRST_SEALED
            for row in conn.execute(sa_select(*_at_0015(SEALED[kind].__table__))).mappings()
            for i in [row["id"]]
        }
        append(s, "system", SEAL_ACTION, "rows", "as 0015 sealed", detail={"rows": legacy})
    with Session(engine) as s:
        review_id = s.exec(select(ReviewRow.id).where(ReviewRow.run_id == run_id, ReviewRow.slot == "C")).one()
    sql(engine, f"UPDATE review SET verdict = 'PASS', status = 'ok' WHERE id = {review_id}")  # before the upgrade
    report = RunStore(init_db(url)).audit.verify()
    # the run (with NULL columns: person_b, ...) re-sealed under today's rule; settings, people sealed; the review
    # changed before the upgrade still named
    assert [p.split(" differs")[0] for p in report.row_problems] == [f"review {review_id}"], report.describe()
    assert {f"run:{run_id}", "settings:1", "person:ann"} <= set(_seal_keys(engine))


def test_a_column_added_later_as_null_leaves_a_seal_valid() -> None:
    row = {"id": 3, "output": "Free shipping on orders over $50.", "spec": None}
    assert row_hash({**row, "added_later": None}) == row_hash(row)
    assert row_hash({**row, "added_later": ""}) != row_hash(row)  # a value is hashed, an empty one too
    assert row_hash({**row, "output": "Free shipping."}) != row_hash(row)


def test_merged_issues_a_re_run_gate_replaces_are_sealed_as_gone(repo: RunStore) -> None:
    run_id = a_reviewed_run(repo)
    issue = MergedIssue(criterion="factual_accuracy", description="wrong year", evidence="2018", flagged_by="B")
    repo.save_gate(run_id, 1, GateResult(decision=GateDecision.NAUGHTY, issues=[issue, issue]))
    repo.save_gate(run_id, 1, GateResult(decision=GateDecision.NAUGHTY, issues=[issue]))  # the desk deletes one
    with Session(repo.engine) as s:
        assert len(s.exec(select(MergedIssueRow.id).where(MergedIssueRow.run_id == run_id)).all()) == 1
    report = repo.audit.verify()
    assert report.ok, report.describe()
    with Session(repo.engine) as s:
        kept = s.exec(select(MergedIssueRow.id).where(MergedIssueRow.run_id == run_id)).one()
    sql(repo.engine, f"DELETE FROM merged_issue WHERE id = {kept}")  # and one by hand
    assert [p.split(" (sealed")[0] for p in repo.audit.verify().row_problems] == [f"merged_issue {kept} is gone"]


def _forget_every_event(engine: Engine) -> None:
    """The chain as a database from before seals would have it: empty."""
    sql(engine, "DELETE FROM audit_event")
    sql(engine, "UPDATE audit_head SET seq = 0, hash = '" + "0" * 64 + "' WHERE id = 1")


def _seal_keys(engine: Engine) -> list[str]:
    with Session(engine) as s:
        details = s.exec(select(AuditEventRow.detail).where(AuditEventRow.action == SEAL_ACTION)).all()
    return [key for detail in details for key in detail["rows"]]


def _head(repo: RunStore) -> tuple[int, str]:
    with Session(repo.engine) as s:
        head = s.get(AuditHeadRow, 1)
        return head.seq, head.hash


def _last_seal_of(repo: RunStore, key: str) -> int:
    with Session(repo.engine) as s:
        rows = s.exec(
            select(AuditEventRow.seq, AuditEventRow.detail).where(AuditEventRow.action == "rows.sealed")
        ).all()
    return max(seq for seq, detail in rows if key in detail["rows"])


def test_a_row_deleted_outside_the_desk_is_named(repo: RunStore) -> None:
    run_id = a_reviewed_run(repo)
    with Session(repo.engine) as s:
        review_id = s.exec(select(ReviewRow.id).where(ReviewRow.run_id == run_id, ReviewRow.slot == "B")).one()
    sql(repo.engine, f"DELETE FROM review WHERE id = {review_id}")
    report = repo.audit.verify()
    assert not report.ok and [p.split(" (sealed")[0] for p in report.row_problems] == [f"review {review_id} is gone"]


def test_the_database_time_zone_does_not_change_a_seal(repo: RunStore, db_url: str) -> None:
    if not db_url.startswith("postgres"):
        pytest.skip("SQLite keeps no session time zone")
    from storage.db import normalise_url

    a_reviewed_run(repo)
    with repo.engine.connect() as conn:
        name = conn.exec_driver_sql("SELECT current_database()").scalar()
    sql(repo.engine, f"ALTER DATABASE \"{name}\" SET timezone = 'America/New_York'")
    elsewhere = create_engine(normalise_url(db_url))  # a new session: times come back in New York time
    try:
        assert RunStore(elsewhere).audit.verify().ok
    finally:
        elsewhere.dispose()
