"""A database outage under real `santa worker` processes on one host (issue 33's fault campaign), on a PostgreSQL
cluster of the test's own that is halted and resumed (the shared one must not go away under other tests).

The timings are the tests' fast ones (heartbeat 0.5 s, dead after 2 s of silence), and every outage lasts several
times the silence after which a worker counts as dead, as a 60-second outage does against the production 30 s:
what matters is the ratio, not the clock. `bench/db_outage.py` measures the production case (60 s, two workers,
30 runs) and prints the settle times.

What the model server saw is the oracle: it records every call it answered, so an answer it returned during the
outage that was asked for again afterwards (bought twice) is counted there, not by the desk's own bookkeeping.
"""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from desk.hand_over import HANDED_OVER, MOVING, TAKEN_OVER
from desk.task_engine import task_engine
from storage.db import normalise_url
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import PG_URL
from tests.support.outage import (
    OwnCluster,
    RecordingModel,
    WorkerProcess,
    audit_verify,
    bought_twice,
    first_calls_after,
    repeated,
    settle,
    start_workers,
    stop_workers,
)
from tests.support.workers import SETTLED, claimed_by, reviews_per_slot, state_notes, statuses, wait_until
from tests.workers.test_worker_behaviour import new_run

pytestmark = pytest.mark.skipif(not PG_URL, reason="SANTA_TEST_POSTGRES_URL not set")

OUTAGE_S = 6.0
"""Three times the tests' 2 s of silence after which a worker counts as dead."""
SLOW_OUTAGE_S = 8.5
"""The outage of the tests with SLOW_BEAT: longer than its 5 s of silence by more than three heartbeats, so every live
worker's last heartbeat is older than the silence when the database is back, and only the guard
(`desk.engine_timing.silence_counts_after_s`) keeps a recovery pass from taking their jobs over."""
LATENCY = (1.0, 2.0)
SLOW_BEAT = {"SANTA_WORKER_HEARTBEAT_S": "1", "SANTA_WORKER_STALLED_S": "5", "SANTA_WORKER_RECOVER_S": "0.2"}
"""A heartbeat slower than the recovery passes, as in production (10 s and 5 s): once the database is back, a
recovery pass comes before a live worker's next heartbeat, so only the guard keeps its jobs from being taken. The
silence that counts is 5 s (production's 30 s would make the tests wait): at 2.5 s, a CI run under load once had a
live worker's jobs taken over after the outage; the tests that use it expect no take-over, so a longer silence costs
them no time."""


@pytest.fixture
def cluster() -> Iterator[OwnCluster]:
    with OwnCluster(prefix="santa-pg-outage-") as own:
        yield own


def open_trial(cluster: OwnCluster, messages_stub, runs: int) -> tuple[str, RunStore, RecordingModel, list[int]]:
    """The database migrated, the recording model installed, `runs` runs made (not yet queued)."""
    url = normalise_url(cluster.url)
    model = RecordingModel(latency=LATENCY).install(messages_stub)
    store = RunStore(init_db(url, mark_interrupted=False))
    ids = [
        new_run(store, output=f"Acme's rocket launched in {'DEFECT' if n % 3 == 0 else 2018}. #{n}")
        for n in range(runs)
    ]
    return url, store, model, ids


@contextmanager
def trial(url: str, db, store: RunStore, workers: list[WorkerProcess]) -> Iterator[None]:
    """Around a trial: its workers stopped and its connections closed whatever happens, then `audit verify` as an
    operator runs it."""
    try:
        yield
    finally:
        stop_workers(workers)
        db.dispose()
        store.engine.dispose()
        task_engine(url).close()
    ok, out = audit_verify(url)
    assert ok, out


def all_settle(db, ids: list[int], back: float) -> None:
    """Every run settles (the wait polls from `back`, when the database answered again)."""
    done = settle(db, ids, back, timeout=120)
    assert done.seconds is not None, f"runs not settled: {done.left}"


def enqueue(url: str, store: RunStore, ids: list[int]) -> None:
    engine = task_engine(url)
    for run_id in ids:
        engine.enqueue(store, run_id, "cli")


def held(db, workers: list[WorkerProcess]) -> dict[int, int]:
    """Run id → pid of the worker claiming it, for the runs running now."""
    return {run_id: w.pid for w in workers for run_id in claimed_by(db, w.pid)}


def test_two_workers_on_one_host_ride_out_an_outage_keeping_their_runs_and_answers(
    cluster, messages_stub, tmp_path: Path
) -> None:
    url, store, model, ids = open_trial(cluster, messages_stub, 12)
    workers = start_workers(url, messages_stub.url, tmp_path, count=2, concurrency=6, production=False, **SLOW_BEAT)
    db = create_engine(url, pool_pre_ping=True)
    with trial(url, db, store, workers):
        enqueue(url, store, ids)
        wait_until(
            "both workers to hold runs mid-review",
            lambda: len(held(db, workers)) >= 10 and len(set(held(db, workers).values())) == 2,
            timeout=90,
            every=0.05,
        )
        in_flight = held(db, workers)
        retried = RetriedJobs(db)
        start = time.monotonic()
        cluster.halt()
        time.sleep(SLOW_OUTAGE_S)
        cluster.resume()
        back, back_wall = time.monotonic(), datetime.now(UTC)
        all_settle(db, ids, back)
        retried.stop()
        # No job was tried again: no worker's silence during the outage counted as its death.
        assert retried.seen == set()
        calls = model.calls
        # Nothing was asked twice: not the answers that came while the database was away, not anything else.
        assert bought_twice(calls, start, back) == []
        assert repeated(calls) == {}
        assert max(reviews_per_slot(db).values()) == 1
        # Each worker carried on with its own runs: none was taken over, handed over or claimed again.
        assert not any(n.startswith(MOVING) for n in state_notes(db, ids))
        assert reclaimed(db, list(in_flight), back_wall) == []
        assert set(statuses(db, ids).values()) <= SETTLED
        # The desk said, in its own words, that the database went away and came back.
        for w in workers:
            lines = "\n".join(w.lines())
            assert "the database is unreachable" in lines and "the database is back after" in lines, lines[-2000:]


class RetriedJobs:
    """Watches the task engine's jobs (every 0.1 s, until `stop`) for any tried again: the ids seen."""

    def __init__(self, db) -> None:
        self.seen: set[int] = set()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, args=(db,), daemon=True)
        self._thread.start()

    def _watch(self, db) -> None:
        while not self._done.wait(0.1):
            try:
                with db.connect() as conn:
                    self.seen |= set(
                        conn.execute(text("SELECT id FROM procrastinate_jobs WHERE attempts > 0")).scalars()
                    )
            except DBAPIError:
                continue  # the database is away

    def stop(self) -> None:
        self._done.set()
        self._thread.join(10)


def reclaimed(db, run_ids: list[int], since: datetime) -> list[tuple]:
    """Runs claimed again (queued → running, by whichever worker) since `since`: a run that left its worker."""
    sql = """SELECT run_id, note FROM state_change WHERE run_id = ANY(:ids) AND created_at >= :since
               AND from_status IN ('queued', 'interrupted')"""
    with db.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql), {"ids": run_ids, "since": since}).all()]


def one_worker(url: str, stub_url: str, tmp_path: Path, grace_s: str) -> tuple[WorkerProcess, object]:
    """One worker of concurrency 4 with the stop grace `grace_s`, and an engine of the test's own to watch it."""
    first = start_workers(
        url, stub_url, tmp_path / "a", count=1, concurrency=4, production=False, SANTA_WORKER_STOP_GRACE_S=grace_s
    )[0]
    return first, create_engine(url, pool_pre_ping=True)


def holding_four(url: str, store: RunStore, ids: list[int], db, worker: WorkerProcess) -> None:
    """The runs queued, and the worker holding four of them mid-review."""
    enqueue(url, store, ids)
    wait_until("the worker to hold four runs", lambda: len(claimed_by(db, worker.pid)) == 4, timeout=90, every=0.05)


def named(text: str, after: str) -> set[int]:
    """The run ids (#N) a stop line names after `after`, up to the next ';'."""
    part = text.split(after, 1)[1].split(";", 1)[0] if after in text else ""
    return {int(n) for n in re.findall(r"#(\d+)", part)}


def test_a_worker_stopped_during_an_outage_hands_over_once_the_database_answers_and_those_runs_start_first(
    cluster, messages_stub, tmp_path: Path
) -> None:
    """SIGTERM while the database is away, which comes back within the stop grace: the worker stores what it holds,
    hands its runs over and exits; the next worker starts exactly those first, ahead of runs that waited longer in
    the queue's order but were never started."""
    url, store, model, ids = open_trial(cluster, messages_stub, 8)
    first, db = one_worker(url, messages_stub.url, tmp_path, grace_s="60")
    workers = [first]
    with trial(url, db, store, workers):
        holding_four(url, store, ids, db, first)
        cluster.halt()
        first.signal_stop(signal.SIGTERM)
        time.sleep(OUTAGE_S)
        assert first.proc.poll() is None  # it waits (within its grace) for the database to store what it holds
        cluster.resume()
        back_wall = datetime.now(UTC)
        first.proc.wait(60)
        said = "\n".join(first.lines())
        handed = named(said, "handed over to the queue, first in line:")
        assert handed and "could not hand over" not in said, said[-2000:]
        waiting = [i for i in ids if statuses(db, [i])[i].value == "queued"]
        assert handed <= set(waiting)
        # As many slots as runs handed over: its first fetches, one per slot in the queue's order, take exactly those.
        workers += start_workers(
            url, messages_stub.url, tmp_path / "b", count=1, concurrency=len(handed), production=False
        )
        all_settle(db, ids, time.monotonic())
        order = [run_id for run_id, _, _ in first_calls_after(db, ids, back_wall)]
        assert set(order[: len(handed)]) == handed, (order, handed)
        notes = state_notes(db, list(handed))
        assert sum(n.startswith(HANDED_OVER) for n in notes) == len(handed)
        taken = [n for n in state_notes(db, ids) if n.startswith(TAKEN_OVER)]
        assert taken == []  # the notes say why a run was taken over
        assert bought_twice(model.calls, 0.0, time.monotonic()) == []
        assert max(reviews_per_slot(db).values()) == 1


def test_a_worker_stopped_during_a_long_outage_leaves_within_its_grace_and_says_what_is_left(
    cluster, messages_stub, tmp_path: Path
) -> None:
    """SIGTERM while the database stays away past the stop grace: the worker leaves without it, names the runs it
    could not hand over, and once the database is back another worker takes exactly those over."""
    url, store, model, ids = open_trial(cluster, messages_stub, 4)
    first, db = one_worker(url, messages_stub.url, tmp_path, grace_s="2")
    workers = [first]
    with trial(url, db, store, workers):
        holding_four(url, store, ids, db, first)
        mine = set(claimed_by(db, first.pid))
        cluster.halt()
        first.signal_stop(signal.SIGTERM)
        first.proc.wait(60)  # the database is still away: the worker left without it
        said = "\n".join(first.lines())
        left = named(said, "could not hand over")
        assert left == mine, said[-2000:]
        assert "handed over to the queue" not in said
        cluster.resume()
        workers += start_workers(url, messages_stub.url, tmp_path / "b", count=1, concurrency=4, production=False)
        all_settle(db, ids, time.monotonic())
        taken = {
            i for i in ids if any(n.startswith(TAKEN_OVER) and "its process is gone" in n for n in state_notes(db, [i]))
        }
        assert taken == left
        assert max(reviews_per_slot(db).values()) == 1
        # What it said it dropped is what the model server was asked for again (its record is the oracle).
        found = re.search(r"(\d+) answer\(s\) received but not stored were dropped", said)
        assert len(bought_twice(model.calls, 0.0, time.monotonic())) == (int(found.group(1)) if found else 0)


def test_an_outage_longer_than_the_hold_gives_the_runs_back_and_asks_again_only_what_was_dropped(
    cluster, messages_stub, tmp_path: Path
) -> None:
    """Past SANTA_OUTAGE_HOLD_S the workers stop waiting: the answers they held are dropped (each said in the log),
    and once the database is back each worker gives its runs back to the queue and puts its own jobs back, with a
    note that says why; every run settles, and what the model server was asked again is exactly what was dropped."""
    url, store, model, ids = open_trial(cluster, messages_stub, 8)
    workers = start_workers(
        url, messages_stub.url, tmp_path, count=2, concurrency=4, production=False, SANTA_OUTAGE_HOLD_S="2", **SLOW_BEAT
    )
    db = create_engine(url, pool_pre_ping=True)
    with trial(url, db, store, workers):
        enqueue(url, store, ids)
        wait_until(
            "both workers to hold runs mid-review",
            lambda: len(held(db, workers)) >= 6 and len(set(held(db, workers).values())) == 2,
            timeout=90,
            every=0.05,
        )
        in_flight = held(db, workers)
        cluster.halt()
        time.sleep(SLOW_OUTAGE_S)
        cluster.resume()
        all_settle(db, ids, time.monotonic())
        given_back = {
            i
            for i in in_flight
            if any(n.startswith(HANDED_OVER) and "the database was unreachable" in n for n in state_notes(db, [i]))
        }
        assert given_back == set(in_flight) - settled_before(db, list(in_flight))
        lasted = [
            int(m.group(1))
            for n in state_notes(db, list(given_back))
            if (m := re.search(r"the database was unreachable for (\d+) s", n))
        ]
        assert lasted and min(lasted) >= 2  # the note says how long the outage had lasted, longer than the hold
        taken = [n for n in state_notes(db, ids) if n.startswith(TAKEN_OVER)]
        assert taken == []  # the notes say why a run was taken over
        assert max(reviews_per_slot(db).values()) == 1
        dropped = sum(line.count("dropping an answer") for w in workers for line in w.lines())
        assert len(bought_twice(model.calls, 0.0, time.monotonic())) == dropped


def settled_before(db, run_ids: list[int]) -> set[int]:
    """Runs that reached a final or waiting state without ever being given back (their last step was stored before
    the outage, or needed no database)."""
    with db.connect() as conn:
        rows = (
            conn.execute(
                text("SELECT run_id FROM state_change WHERE run_id = ANY(:ids) AND note LIKE :moved"),
                {"ids": run_ids, "moved": f"{HANDED_OVER}%"},
            )
            .scalars()
            .all()
        )
    return set(run_ids) - set(rows)
