"""The audit chain (`storage.audit`): a full run is on the record in order with its actors, time
filters mean one instant in any zone, and `verify` names the event where the chain breaks
whatever was changed, renumbered, deleted, forged or rehashed (the head row guards the newest
end); concurrent writers make one unforked chain, refused actions leave it intact and starting a
round is audited when it changes something. On SQLite and, with SANTA_TEST_POSTGRES_URL set,
on PostgreSQL.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import Engine, bindparam, func, make_url, text
from sqlmodel import Session, col, select

from santa_core.models import ReviewOutcome, ReviewStatus, RunState
from santa_core.roles import PermissionDenied
from santa_core.run import actions
from santa_core.run.engine import InvalidTransition
from santa_core.text import sha256_text
from storage.audit import GENESIS, AuditStore, event_hash
from storage.errors import RoundConflict
from storage.runs import RunStore
from storage.startup import init_db
from storage.tables import AuditEventRow, AuditHeadRow, EscalationRow, RunRow, SettingsRow
from tests.conftest import DB_KINDS, PG_URL, _pg_database, grant, new_database
from tests.core.run.test_runner import GOOD
from tests.support import people_runs
from tests.support.people import ADMIN, EDITOR, OFFICER, VIEWER
from tests.support.people_runs import S, awaiting_approval, count, escalate, make_runner, new_run

engine, repo = people_runs.engine, people_runs.repo  # the fixtures (an imported name would trip ruff's F811)


# --- the audit chain -------------------------------------------------------------------------------


def chain_a_run(repo: RunStore) -> int:
    """A full run: NAUGHTY round 1, a fix approved by an editor, NICE round 2; its id."""
    run_id = awaiting_approval(repo)
    actions.approve_fix(repo, run_id, EDITOR)
    assert make_runner(repo).execute(run_id).status == S.SHIPPED
    return run_id


ChainedTemplate = Callable[[str], tuple[str, int]]
"""A database kind -> the URL of a database holding `chain_a_run`'s run, and the run's id."""


@pytest.fixture(scope="session")
def chained_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChainedTemplate]:
    """Per database kind, a database holding `chain_a_run`'s run, made at its first use once per test process: each
    test of a chain gets a copy (`db_url` below) instead of running the run again (0.6 s, in ~30 tests)."""
    made: dict[str, tuple[str, int]] = {}
    on_postgres: list[Iterator[str]] = []

    def template(kind: str) -> tuple[str, int]:
        if kind not in made:
            if kind == "sqlite":
                url = f"sqlite:///{tmp_path_factory.mktemp('chained') / 'santa.db'}"
            else:
                on_postgres.append(database := _pg_database(PG_URL))
                url = next(database)
            engine = init_db(url, mark_interrupted=False)
            run_id = chain_a_run(grant(RunStore(engine)))
            engine.dispose()  # a PostgreSQL template takes no connection while it is copied
            made[kind] = (url, run_id)
        return made[kind]

    yield template
    for database in on_postgres:
        database.close()  # dropped


@pytest.fixture(params=DB_KINDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """conftest's `db_url`, except that a test of a chain (`chained`) gets a copy of the chained template."""
    if "chained" not in request.fixturenames:
        yield from new_database(request, tmp_path)
        return
    url, _ = request.getfixturevalue("chained_template")(request.param)
    if request.param == "sqlite":
        copy = tmp_path / "santa.db"
        with closing(sqlite3.connect(make_url(url).database)) as source, closing(sqlite3.connect(copy)) as target:
            source.backup(target)  # the backup API: whatever a write-ahead log still holds is copied too
        yield f"sqlite:///{copy}"
    else:
        yield from _pg_database(PG_URL, make_url(url).database)


@pytest.fixture
def chained(engine: Engine, db_url: str, chained_template: ChainedTemplate) -> tuple[RunStore, int]:
    """A copy of a full run (`chain_a_run`) and its id. Its store grants nobody again: the copy holds the test
    people's roles, set before the run as `repo` sets them, so the chain ends where the run's last event ends it."""
    return RunStore(engine), chained_template("sqlite" if db_url.startswith("sqlite") else "postgres")[1]


def _pairs_sorted(items: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The two reviews of a round are saved in whichever order they finish: compare them sorted."""
    out = list(items)
    for i in range(len(out) - 1):
        if out[i][1] == out[i + 1][1] == "review.saved":
            out[i], out[i + 1] = sorted((out[i], out[i + 1]))
    return out


def test_a_full_run_is_on_the_record_in_order_with_its_actors(chained: tuple[RunStore, int]) -> None:
    repo, run_id = chained
    got = [
        (e.actor, e.action, e.detail.get("to") or e.entity_id)
        for e in repo.audit.events(run_id=run_id, newest_first=False)
    ]
    r = str(run_id)
    assert _pairs_sorted(got) == [
        (EDITOR, "run.created", r),
        ("worker", "run.state", "running"),
        ("worker", "review.saved", f"{r}/1/B"),
        ("worker", "review.saved", f"{r}/1/C"),
        ("gate", "round.gate", f"{r}/1"),
        ("gate", "run.state", "running"),  # fixing
        ("worker", "proposal.saved", f"{r}/1"),
        ("worker", "run.state", "awaiting_approval"),
        (EDITOR, "decision.approve", r),
        (EDITOR, "run.state", "queued"),
        ("worker", "run.state", "running"),
        ("worker", "review.saved", f"{r}/2/B"),
        ("worker", "review.saved", f"{r}/2/C"),
        ("gate", "round.gate", f"{r}/2"),
        ("gate", "run.state", "shipped"),
    ]
    everything = repo.audit.events(newest_first=False, limit=10_000, seals=True)
    assert [e.seq for e in everything] == list(range(1, len(everything) + 1))
    assert [e.prev_hash for e in everything] == [GENESIS] + [e.hash for e in everything[:-1]]
    report = repo.audit.verify()
    assert (report.ok, report.checked, report.broken) == (True, len(everything), None)
    assert "intact" in report.describe()
    # filters: by actor, and an action prefix
    assert [e.action for e in repo.audit.events(actor=EDITOR, newest_first=False)] == [
        "run.created",
        "decision.approve",
        "run.state",
    ]
    assert {e.action for e in repo.audit.events(action="run.", run_id=run_id)} == {"run.created", "run.state"}


def test_events_since_and_until_mean_the_same_instant_in_any_zone(chained: tuple[RunStore, int]) -> None:
    repo, run_id = chained
    everything = repo.audit.events(newest_first=False, limit=10_000, seals=True)
    middle = next(e for e in everything if e.action == "decision.approve")
    later = [e.seq for e in everything if e.created_at >= middle.created_at]
    earlier = [e.seq for e in everything if e.created_at < middle.created_at]
    for zone in (UTC, timezone(timedelta(hours=9)), timezone(timedelta(hours=-7))):
        since = middle.created_at.astimezone(zone)
        assert [e.seq for e in repo.audit.events(since=since, newest_first=False, limit=10_000, seals=True)] == later
        assert [e.seq for e in repo.audit.events(until=since, newest_first=False, limit=10_000, seals=True)] == earlier


def _row(engine: Engine, **where: object) -> AuditEventRow:
    stmt = select(AuditEventRow)
    for key, value in where.items():
        stmt = stmt.where(getattr(AuditEventRow, key) == value)
    with Session(engine) as s:
        return s.exec(stmt).one()


def _set(engine: Engine, row_id: int, column: str, value: object) -> None:
    """Change one column of one stored event by hand, as someone with database access could."""
    column_type = AuditEventRow.__table__.c[column].type
    stmt = text(f"UPDATE audit_event SET {column} = :value WHERE id = :id").bindparams(  # noqa: S608 - fixed names
        bindparam("value", type_=column_type)
    )
    with engine.begin() as conn:
        assert conn.execute(stmt, {"value": value, "id": row_id}).rowcount == 1


TAMPERED: dict[str, Callable[[AuditEventRow], object]] = {
    "actor": lambda r: "mallory@example.com",
    "action": lambda r: "decision.reject",
    "entity_type": lambda r: "rubric",
    "entity_id": lambda r: r.entity_id + "0",
    "run_id": lambda r: r.run_id + 1000,
    "before_hash": lambda r: "f" * 64,
    "after_hash": lambda r: None,
    "detail": lambda r: {**r.detail, "reason": "approved after a call"},
    "created_at": lambda r: r.created_at + timedelta(seconds=1),
    "prev_hash": lambda r: "a" * 64,
    "hash": lambda r: "b" * 64,
}
"""A changed value for each hashed column of the middle event (the editor's approval)."""


@pytest.mark.parametrize("column", list(TAMPERED))
def test_changing_any_column_of_a_middle_event_breaks_the_chain_there(
    chained: tuple[RunStore, int], engine: Engine, column: str
) -> None:
    repo, _ = chained
    target = _row(engine, action="decision.approve")
    newest = repo.audit.events(limit=1, seals=True)[0]
    assert target.seq < newest.seq - 3  # a middle event, not the head
    original = getattr(target, column)
    new = TAMPERED[column](target)
    assert new != original
    _set(engine, target.id, column, new)
    report = repo.audit.verify()
    assert not report.ok and report.broken is not None
    assert (report.broken.id, report.broken.seq, report.checked) == (target.id, target.seq, target.seq - 1)
    assert f"audit event #{target.id}" in report.describe()
    _set(engine, target.id, column, original)  # put back, the chain holds again: the column was the cause
    assert repo.audit.verify().ok


def test_renumbering_a_middle_event_names_that_event(chained: tuple[RunStore, int], engine: Engine) -> None:
    """seq orders the chain: a renumbered event leaves a gap; verify finds the event that still links
    to the last good one under another seq and names it, with its old and new seq."""
    repo, _ = chained
    target = _row(engine, action="decision.approve")
    _set(engine, target.id, "seq", target.seq + 100_000)
    report = repo.audit.verify()
    assert not report.ok and (report.broken.id, report.broken.seq) == (target.id, target.seq + 100_000)
    assert f"changed from {target.seq} to {target.seq + 100_000}" in report.broken.problem


def test_renumbering_the_newest_event_names_it(chained: tuple[RunStore, int], engine: Engine) -> None:
    repo, _ = chained
    newest = repo.audit.events(limit=1, seals=True)[0]
    _set(engine, newest.id, "seq", newest.seq + 1)
    report = repo.audit.verify()
    assert not report.ok and report.broken.id == newest.id


def test_deleting_a_middle_event_names_the_next_one(chained: tuple[RunStore, int], engine: Engine) -> None:
    repo, _ = chained
    target = _row(engine, action="decision.approve")
    after = _row(engine, seq=target.seq + 1)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM audit_event WHERE id = :id"), {"id": target.id})
    report = repo.audit.verify()
    assert not report.ok and (report.broken.id, report.broken.seq, report.checked) == (
        after.id,
        after.seq,
        target.seq - 1,
    )
    assert "missing" in report.broken.problem


def test_deleting_the_newest_event_is_caught_by_the_head(chained: tuple[RunStore, int], engine: Engine) -> None:
    repo, _ = chained
    newest = repo.audit.events(limit=1, seals=True)[0]
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM audit_event WHERE id = :id"), {"id": newest.id})
    report = repo.audit.verify()
    assert not report.ok and report.checked == newest.seq - 1
    assert (report.broken.id, report.broken.seq) == (None, newest.seq)
    assert f"head says {newest.seq}" in report.broken.problem and "BROKEN" in report.describe()


def test_a_forged_event_appended_by_hand_is_caught_by_the_head(chained: tuple[RunStore, int], engine: Engine) -> None:
    """Even a forger who knows the hash recipe is caught unless they also move the head."""
    repo, _ = chained
    newest = repo.audit.events(limit=1, seals=True)[0]
    fields = {
        "seq": newest.seq + 1,
        "created_at": datetime.now(UTC),
        "actor": ADMIN,
        "action": "settings.saved",
        "entity_type": "settings",
        "entity_id": "defaults",
        "run_id": None,
        "before_hash": None,
        "after_hash": None,
        "detail": {},
        "prev_hash": newest.hash,
    }
    with Session(engine) as s:
        forged = AuditEventRow(id=newest.seq + 1, **fields, hash=event_hash(fields))
        s.add(forged)
        s.commit()
    report = repo.audit.verify()
    # The forged row is named (not counted as verified), and the problem says it was added, not removed.
    assert not report.ok and report.checked == newest.seq
    assert (report.broken.id, report.broken.seq) == (newest.seq + 1, newest.seq + 1)
    assert "after the chain's head" in report.broken.problem


def test_an_events_id_is_its_seq_and_a_changed_id_is_named(chained: tuple[RunStore, int], engine: Engine) -> None:
    repo, _ = chained
    events = repo.audit.events(newest_first=False, limit=10_000, seals=True)
    assert all(e.id == e.seq for e in events)
    target = events[len(events) // 2]
    _set(engine, target.id, "id", 999_999)
    report = repo.audit.verify()
    assert not report.ok and (report.broken.id, report.broken.seq) == (999_999, target.seq)
    assert "the id was changed" in report.broken.problem


def test_an_intact_report_gives_the_newest_hash_to_anchor_outside(chained: tuple[RunStore, int]) -> None:
    repo, _ = chained
    report = repo.audit.verify()
    assert report.ok and report.head_hash == repo.audit.events(limit=1, seals=True)[0].hash
    assert report.head_hash in report.describe()


def test_concurrent_writers_make_one_unforked_chain(repo: RunStore, engine: Engine) -> None:
    threads, runs_each, settings_each = 8, 3, 2
    before = count(engine, AuditEventRow)
    start = threading.Barrier(threads)

    def writer(t: int) -> None:
        start.wait()
        for i in range(max(runs_each, settings_each)):
            if i < runs_each:
                run_id = new_run(repo, f"output {t}/{i}")
                assert repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
            if i < settings_each:
                repo.save_settings({f"thread_{t}": i}, actor=ADMIN)

    pool = [threading.Thread(target=writer, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    # each run: created and moved (one event each, one seal each); each settings save: one event, one seal
    expected = before + threads * (runs_each * 4 + settings_each * 2)
    report = repo.audit.verify()
    assert (report.ok, report.checked) == (True, expected), report.describe()
    with Session(engine) as s:
        seqs = s.exec(select(AuditEventRow.seq).order_by(col(AuditEventRow.seq))).all()
        head = s.get(AuditHeadRow, 1)
        newest = s.exec(select(AuditEventRow).where(AuditEventRow.seq == expected)).one()
    assert seqs == list(range(1, expected + 1))
    assert (head.seq, head.hash) == (expected, newest.hash)
    assert count(engine, RunRow) == threads * runs_each
    assert count(engine, SettingsRow) == threads * settings_each


def test_refused_actions_leave_the_chain_intact(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    escalate(repo, run_id)
    for attempt in (
        lambda: repo.resolve_escalation(run_id, "ship_as_is", VIEWER, "x"),
        lambda: repo.save_settings({"max_rounds": 9}, actor=EDITOR),
        lambda: repo.people.set_roles(VIEWER, ["admin"], actor=VIEWER),
    ):
        with pytest.raises(PermissionDenied):
            attempt()
    assert repo.audit.verify().ok
    assert count(engine, EscalationRow, status="open") == 1
    repo.resolve_escalation(run_id, "ship_as_is", OFFICER, "ok")
    audited = count(engine, AuditEventRow)
    with pytest.raises(InvalidTransition):  # a second resolution of a resolved run is refused by the engine
        repo.resolve_escalation(run_id, "ship_as_is", OFFICER, "again")
    assert count(engine, AuditEventRow) == audited and repo.audit.verify().ok


def _forge(engine: Engine, seq: int, prev_hash: str = GENESIS) -> int:
    """Insert a well-formed event by hand (its hash computed by the recipe); its id."""
    fields = {
        "seq": seq,
        "created_at": datetime.now(UTC),
        "actor": ADMIN,
        "action": "decision.ship_as_is",
        "entity_type": "run",
        "entity_id": "1",
        "run_id": None,
        "before_hash": None,
        "after_hash": None,
        "detail": {"reason": "approved long ago"},
        "prev_hash": prev_hash,
    }
    with Session(engine) as s:
        # An explicit id: the app gives every event its seq as id, so PostgreSQL's own id counter never
        # moves and an insert without an id would collide with event 1 (a forger must pick a free id).
        free = (s.exec(select(func.max(AuditEventRow.id))).one() or 0) + 1000
        row = AuditEventRow(id=free, **fields, hash=event_hash(fields))
        s.add(row)
        s.commit()
        return row.id


@pytest.mark.parametrize(
    "seqs", [pytest.param([0], id="seq-0"), pytest.param([-5], id="negative"), pytest.param([0, -3], id="two")]
)
def test_a_row_forged_before_the_chain_is_named(chained: tuple[RunStore, int], engine: Engine, seqs: list[int]) -> None:
    """Rows with seq below 1 are never reached by walking the chain from seq 1; verify still names one."""
    repo, _ = chained
    ids = {seq: _forge(engine, seq) for seq in seqs}
    report = repo.audit.verify()
    first = min(seqs)
    assert not report.ok and (report.broken.id, report.broken.seq) == (ids[first], first)
    assert report.broken.problem == "seq must start at 1: a row was inserted before the chain"
    assert f"BROKEN at audit event #{ids[first]} (seq {first})" in report.describe()


def test_verify_counts_every_stored_row(
    chained: tuple[RunStore, int], engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second guard: the walk must have checked as many events as are stored."""
    repo, _ = chained
    stored = count(engine, AuditEventRow)
    forged = _forge(engine, 0)
    monkeypatch.setattr(
        AuditStore, "_before_the_chain", staticmethod(lambda s: None)
    )  # as if the first check missed it
    report = repo.audit.verify()
    assert not report.ok and report.checked == stored and (report.broken.id, report.broken.seq) == (forged, 0)
    assert f"{stored + 1} events are stored but the chain holds {stored}" in report.broken.problem


def test_a_changed_and_rehashed_row_is_named_by_the_next_link(chained: tuple[RunStore, int], engine: Engine) -> None:
    """Whoever recomputes the changed row's hash leaves the next row's previous-hash pointing at the
    old one: verify breaks at the next row and names both possibilities."""
    repo, _ = chained
    target = _row(engine, action="decision.approve")
    after = _row(engine, seq=target.seq + 1)
    fields = {**target.model_dump(), "detail": {**target.detail, "reason": "approved after a call"}}
    _set(engine, target.id, "detail", fields["detail"])
    _set(engine, target.id, "hash", event_hash(fields))
    report = repo.audit.verify()
    assert not report.ok and (report.broken.id, report.broken.seq, report.checked) == (after.id, after.seq, target.seq)
    assert report.broken.problem == (
        f"its previous-hash does not match audit event #{target.id} (seq {target.seq}): either #{target.id} was "
        "changed and its hash recomputed, or this row's previous-hash was changed"
    )


def test_start_round_is_audited_when_it_changes_something(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    audited = count(engine, AuditEventRow)
    repo.start_round(run_id, 1, GOOD)  # round 1 already holds this text: nothing to record
    assert count(engine, AuditEventRow) == audited
    repo.start_round(run_id, 2, "v2")
    repo.start_round(run_id, 2, "v2")
    repo.start_round(run_id, 2, "v2, edited")
    started = repo.audit.events(action="round.started", newest_first=False)
    assert [(e.actor, e.entity_id, e.run_id, e.before_hash, e.after_hash, e.detail) for e in started] == [
        ("worker", f"{run_id}/2", run_id, None, sha256_text("v2"), {"round": 2, "replaced": False}),
        ("worker", f"{run_id}/2", run_id, sha256_text("v2"), sha256_text("v2, edited"), {"round": 2, "replaced": True}),
    ]
    repo.save_review(run_id, 2, ReviewOutcome(slot="B", reviewer="b", status=ReviewStatus.ERROR, error="down"))
    audited = count(engine, AuditEventRow)
    with pytest.raises(RoundConflict):
        repo.start_round(run_id, 2, "something else")
    assert count(engine, AuditEventRow) == audited and repo.audit.verify().ok


def test_a_deleted_head_row_breaks_the_chain(chained: tuple[RunStore, int], engine: Engine) -> None:
    repo, _ = chained
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM audit_head"))
    report = repo.audit.verify()
    assert not report.ok and "head row (audit_head) is missing" in report.broken.problem


@pytest.mark.parametrize(
    ("reviewer_b", "reviewer_c", "panel", "one_family"),
    [
        pytest.param("claude-sonnet-5-5", "claude-haiku-5-5", "Claude + Claude", True, id="claude-claude"),
        pytest.param("claude-sonnet-5-5", "openai:gpt-5.4-mini", "Claude + GPT", False, id="claude-gpt"),
    ],
)
def test_run_created_names_the_panels_families_and_whether_it_is_one_family(
    repo: RunStore, reviewer_b: str, reviewer_c: str, panel: str, one_family: bool
) -> None:
    run_id = new_run(repo, reviewer_b=reviewer_b, reviewer_c=reviewer_c)
    [created] = repo.audit.events(action="run.created", run_id=run_id)
    assert (created.detail["reviewer_b"], created.detail["reviewer_c"]) == (reviewer_b, reviewer_c)
    assert created.detail["panel"] == panel
    assert created.detail["one_family"] is one_family
    assert repo.audit.verify().ok  # the detail is part of the hashed chain
