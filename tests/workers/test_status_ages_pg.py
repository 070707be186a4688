"""`worker --status` ages on the throwaway PostgreSQL, checked against procrastinate's own events: a waiting job is
aged since it became due (made, put back for a retry, or its scheduled time), a working job since its latest start.
Jobs are made, started, retried and recovered through procrastinate's own functions, then their events and
scheduled times are set back by known amounts; no worker runs, so nothing moves while the figures are read."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

import psycopg
import pytest

from desk.engine_status import QueueFigures
from desk.task_engine import WORK_RUN, task_engine
from storage.db import normalise_url
from tests.conftest import PG_URL
from tests.support.cli import santa_in_process

pytestmark = pytest.mark.skipif(not PG_URL, reason="SANTA_TEST_POSTGRES_URL not set")

PUT_IN_TODO = {"deferred", "deferred_for_retry", "retried"}
"""The events procrastinate writes when a job enters `todo` (schema.sql: made; doing → todo; failed → todo)."""


@dataclass
class Job:
    """A live job as the events table tells it."""

    queue: str
    status: str
    scheduled_at: datetime | None
    events: list[tuple[str, datetime]]


def live_jobs(conn: psycopg.Connection) -> list[Job]:
    """Every job waiting or working, with its events in the order they were written."""
    rows = conn.execute(
        "SELECT j.id, j.queue_name, j.status::text, j.scheduled_at, e.type::text, e.at "
        "FROM procrastinate_jobs j JOIN procrastinate_events e ON e.job_id = j.id "
        "WHERE j.status IN ('todo', 'doing') ORDER BY j.id, e.id"
    ).fetchall()
    jobs: dict[int, Job] = {}
    for job_id, queue, status, scheduled_at, kind, at in rows:
        jobs.setdefault(job_id, Job(queue, status, scheduled_at, [])).events.append((kind, at))
    return list(jobs.values())


def oracle(jobs: list[Job], at: datetime) -> dict[str, tuple[int, datetime | None, int, datetime | None]]:
    """Per queue, read at `at`: (due jobs waiting, the earliest time one became due, jobs working, the earliest
    latest start). Due: the later of the scheduled time and the last entry into `todo`."""
    out: dict[str, list] = {}
    for job in jobs:
        fig = out.setdefault(job.queue, [0, None, 0, None])
        if job.status == "doing":
            since = [t for kind, t in job.events if kind == "started"][-1]
            fig[2] += 1
            fig[3] = since if fig[3] is None else min(fig[3], since)
            continue
        entered = [t for kind, t in job.events if kind in PUT_IN_TODO][-1]
        due = entered if job.scheduled_at is None else max(entered, job.scheduled_at)
        if due <= at:
            fig[0] += 1
            fig[1] = due if fig[1] is None else min(fig[1], due)
    return {queue: tuple(fig) for queue, fig in out.items()}


def assert_age(shown: float | None, since: datetime | None, t0: datetime, t1: datetime) -> None:
    """`shown` is the age of `since` read some time between t0 and t1 (the database's clock), or None for none."""
    if since is None:
        assert shown is None
        return
    assert shown is not None and (t0 - since).total_seconds() - 0.001 <= shown <= (t1 - since).total_seconds() + 0.001


def test_worker_status_ages_waiting_jobs_since_due_and_working_jobs_since_their_latest_start(
    pg_db, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("SANTA_WORKER_STALLED_S", "3600")  # the live worker stays live however slow the machine
    url = normalise_url(pg_db)
    engine = task_engine(url)
    sync = engine.sync_app()
    try:
        with psycopg.connect(engine.conninfo, autocommit=True) as conn:

            def now() -> datetime:
                return conn.execute("SELECT now()").fetchone()[0]

            base = now()

            def ago(seconds: float) -> datetime:
                return base - timedelta(seconds=seconds)

            def defer(queue: str, **options: object) -> int:
                return sync.configure_task(WORK_RUN, queue=queue, **options).defer(run_id=0)

            def start(queue: str, worker: int) -> int:
                return conn.execute(
                    "SELECT id FROM procrastinate_fetch_job_v2(ARRAY[%s]::varchar[], %s)", (queue, worker)
                ).fetchone()[0]

            def set_event(job: int, kind: str, seconds_ago: float, nth: int = -1) -> None:
                ids = [
                    r[0]
                    for r in conn.execute(
                        "SELECT id FROM procrastinate_events WHERE job_id = %s AND type = %s ORDER BY id", (job, kind)
                    ).fetchall()
                ]
                conn.execute("UPDATE procrastinate_events SET at = %s WHERE id = %s", (ago(seconds_ago), ids[nth]))

            def set_scheduled(job: int, seconds_ago: float) -> None:
                conn.execute("UPDATE procrastinate_jobs SET scheduled_at = %s WHERE id = %s", (ago(seconds_ago), job))

            live = conn.execute("SELECT procrastinate_register_worker_v1()").fetchone()[0]
            dead = conn.execute("SELECT procrastinate_register_worker_v1()").fetchone()[0]
            # One queue per case, so each queue's figures show that case alone.
            expected: dict[str, tuple[float | None, float | None]] = {}  # queue: (waiting, working) ages as set

            # Made long ago for later (schedule_in, as a sample's next look), due only recently: waiting since due.
            job = defer("due-late", schedule_in={"seconds": 3600})
            set_event(job, "deferred", 1000)
            set_scheduled(job, 100)
            expected["due-late"] = (100, None)

            # Made long ago, started recently: working since it started, not since it was made.
            job = defer("started-late")
            assert start("started-late", live) == job
            set_event(job, "deferred", 1000)
            set_event(job, "started", 50)
            expected["started-late"] = (None, 50)

            # Retried (the task's RetryStrategy puts it back for later) and started again: since its newest start.
            job = defer("restarted")
            start("restarted", live)
            sync.job_manager.retry_job_by_id(job, base + timedelta(seconds=5))
            set_scheduled(job, 0)
            assert start("restarted", live) == job
            set_event(job, "deferred", 1000)
            set_event(job, "started", 900, nth=0)
            set_event(job, "deferred_for_retry", 600)
            set_scheduled(job, 595)
            set_event(job, "started", 30)
            expected["restarted"] = (None, 30)

            # Put back with a retry time already past: due since it was put back, not since that time nor since made.
            job = defer("put-back")
            start("put-back", live)
            sync.job_manager.retry_job_by_id(job, ago(400))
            set_event(job, "deferred", 1000)
            set_event(job, "started", 900)
            set_event(job, "deferred_for_retry", 200)
            expected["put-back"] = (200, None)

            # Failed, then tried again by hand (`retried`): due since then.
            job = defer("failed-retried")
            start("failed-retried", live)
            conn.execute("SELECT procrastinate_finish_job_v1(%s, 'failed', false)", (job,))
            sync.job_manager.retry_job_by_id(job, ago(400))
            set_event(job, "deferred", 1000)
            set_event(job, "started", 900)
            set_event(job, "retried", 150)
            expected["failed-retried"] = (150, None)

            # Made long ago for later, not due yet: not counted.
            job = defer("not-due", schedule_in={"seconds": 600})
            set_event(job, "deferred", 1000)
            expected["not-due"] = (None, None)

            # Several on one queue: the oldest of each counts; one not due is left out.
            for seconds in (70, 20):
                job = defer("mixed")
                assert start("mixed", live) == job
                set_event(job, "deferred", 1000)
                set_event(job, "started", seconds)
            for seconds in (40, 10):
                job = defer("mixed")
                set_event(job, "deferred", 1000 + seconds)
                set_scheduled(job, seconds)
            set_event(defer("mixed", schedule_in={"seconds": 60}), "deferred", 2000)
            expected["mixed"] = (40, 70)

            # A dead worker's job, put back by the stalled-job recovery (its own retry time): due since recovered.
            job = defer("recovered")
            start("recovered", dead)
            set_event(job, "deferred", 1000)
            set_event(job, "started", 900)
            conn.execute("UPDATE procrastinate_workers SET last_heartbeat = %s WHERE id = %s", (ago(10000), dead))

            async def recover() -> int:
                async with engine.app.open_async():
                    return await engine.recover_stalled()

            assert asyncio.run(recover()) == 1

            # A sample's look deferred long ago for an hour later, made due by a person's Try again: due since then.
            assert engine.defer_drive(5, {"after_s": 3600})
            job = conn.execute("SELECT id FROM procrastinate_jobs WHERE queue_name = 'batch'").fetchone()[0]
            set_event(job, "deferred", 1000)
            before_try_again = now()
            assert engine.look_now(5)

            t0 = now()
            status = engine.status()
            done = santa_in_process(["worker", "--status", "--json"], {**os.environ, "DATABASE_URL": url}, tmp_path)
            t1 = now()
            jobs = live_jobs(conn)
        assert done.returncode == 0, done.stderr  # a live worker: healthy
        shown = json.loads(done.stdout)
        assert (shown["live_workers"], shown["silent_workers"], status.live_workers) == (1, 1, 1)
        truth = oracle(jobs, t0)
        for figures in (status.as_json(), shown):
            by_queue = {q["queue"]: q for q in figures["queues"]}
            assert set(by_queue) - {"runs"} == {queue for queue, fig in truth.items() if fig[0] or fig[2]}
            for queue, (waiting, due, working, started) in truth.items():
                fig = by_queue.get(queue, asdict(QueueFigures(queue)))
                assert (fig["waiting"], fig["working"]) == (waiting, working), queue
                assert_age(fig["oldest_waiting_s"], due, t0, t1)
                assert_age(fig["oldest_working_s"], started, t0, t1)
            for queue, (waiting_s, working_s) in expected.items():  # the times as set, against the same figures
                fig = by_queue.get(queue, asdict(QueueFigures(queue)))
                assert_age(fig["oldest_waiting_s"], None if waiting_s is None else ago(waiting_s), t0, t1)
                assert_age(fig["oldest_working_s"], None if working_s is None else ago(working_s), t0, t1)
            # Put back by the recovery after `base`, made due by Try again after `before_try_again`: not 1000 s.
            assert 0 <= by_queue["recovered"]["oldest_waiting_s"] <= (t1 - base).total_seconds()
            assert 0 <= by_queue["batch"]["oldest_waiting_s"] <= (t1 - before_try_again).total_seconds()
    finally:
        engine.close()
