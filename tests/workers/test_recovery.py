"""Recovery beyond a plain kill: recovery while every slot is busy, a run left queued with no job, and a worker
taken for dead that comes back (paused past its heartbeat, on another host): its late writes and any new
request are refused, so nothing is paid or decided twice."""

from __future__ import annotations

import os
import signal

from sqlalchemy import create_engine, text

from desk.task_engine import task_engine
from santa_core.models import RunStatus
from storage.db import normalise_url
from storage.runs import RunStore
from storage.startup import init_db
from tests.support.messages_api import schema_properties
from tests.support.workers import (
    answer_after,
    answered_calls_per_slot,
    claimed_by,
    reviews_per_slot,
    start_worker,
    statuses,
    stop_worker,
    wait_until,
    worker_env,
)
from tests.workers.test_worker_behaviour import new_run


def test_a_dead_workers_jobs_go_back_to_the_queue_while_every_slot_is_busy(pg_db, messages_stub) -> None:
    """Recovery is not a job: it does not wait for a free slot, so a backlog never holds a take-over back."""
    messages_stub.handler = answer_after(10.0)
    runs = RunStore(init_db(pg_db, mark_interrupted=False))
    engine = task_engine(pg_db)
    ids = [new_run(runs) for _ in range(2)]
    env = worker_env(pg_db, messages_stub.url)
    doomed, busy = (start_worker(env, concurrency=1) for _ in range(2))
    db = create_engine(normalise_url(pg_db))
    try:
        for run_id in ids:
            engine.enqueue(runs, run_id, "cli")
        wait_until(
            "each worker to hold a run",
            lambda: len(claimed_by(db, doomed.pid)) == len(claimed_by(db, busy.pid)) == 1,
            timeout=60,
            every=0.05,
        )
        held_by_busy = claimed_by(db, busy.pid)
        os.kill(doomed.pid, signal.SIGKILL)  # not reaped yet: a zombie process, which counts as dead
        wait_until(
            "the dead worker's job to be back in the queue", lambda: retried_jobs(db) == 1, timeout=60, every=0.1
        )
        # the only live worker's only slot is still busy with its own run: the recovery did not wait for it
        assert statuses(db, held_by_busy) == {held_by_busy[0]: RunStatus.RUNNING}
        wait_until("both runs to ship", lambda: set(statuses(db, ids).values()) == {RunStatus.SHIPPED}, timeout=120)
    finally:
        stop_worker(doomed)
        stop_worker(busy)
        engine.close()


def retried_jobs(db) -> int:
    with db.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM procrastinate_jobs WHERE attempts > 0")).scalar()


def test_a_run_left_queued_without_a_job_is_worked(pg_db, messages_stub) -> None:
    messages_stub.handler = answer_after(0.2)
    runs = RunStore(init_db(pg_db, mark_interrupted=False))
    engine = task_engine(pg_db)
    worker = start_worker(worker_env(pg_db, messages_stub.url), concurrency=2)
    db = create_engine(normalise_url(pg_db))
    try:
        wait_until("the worker to heartbeat", lambda: engine.status().live_workers == 1, timeout=60)
        left = new_run(runs)  # committed, but its process died before it enqueued the run
        wait_until("the swept run to ship", lambda: statuses(db, [left])[left] == RunStatus.SHIPPED, timeout=60)
    finally:
        stop_worker(worker)
        engine.close()


def test_a_worker_taken_for_dead_that_comes_back_pays_and_decides_nothing_twice(pg_db, messages_stub, tmp_path) -> None:
    messages_stub.handler = answer_after(1.5)
    runs = RunStore(init_db(pg_db, mark_interrupted=False))
    engine = task_engine(pg_db)
    ids = [new_run(runs, f"Acme's rocket launched in DEFECT. #{n}") for n in range(2)]
    for run_id in ids:
        engine.enqueue(runs, run_id, "cli")
    env = worker_env(pg_db, messages_stub.url)
    paused = start_worker({**env, "SANTA_HOST_NAME": "host-a"}, concurrency=2, log=tmp_path / "host-a.log")
    db = create_engine(normalise_url(pg_db))
    other = None
    try:
        wait_until("host A to hold both runs", lambda: len(claimed_by(db, paused.pid)) == 2, timeout=60, every=0.05)
        os.kill(paused.pid, signal.SIGSTOP)  # its reviewers' calls are in flight; its heartbeat stops
        other = start_worker({**env, "SANTA_HOST_NAME": "host-b"}, concurrency=2, log=tmp_path / "host-b.log")
        try:
            wait_until(
                "host B to take both runs over",
                lambda: all(w and w.startswith("host-b:") for w in workers_of(db, ids)),
                timeout=90,
                every=0.1,
            )
        except AssertionError:
            print("host B said:", (tmp_path / "host-b.log").read_text()[-4000:])
            with db.connect() as conn:
                print(
                    conn.execute(
                        text(
                            "SELECT pid, state, wait_event_type, left(query, 80) FROM pg_stat_activity "
                            "WHERE datname = current_database()"
                        )
                    ).all()
                )
            raise
        os.kill(paused.pid, signal.SIGCONT)  # back: its answers arrive, its next steps would follow
        # auto-approve is off: a defective run waits for a person's approval of its one fix
        try:
            wait_until(
                "both runs to wait for approval",
                lambda: set(statuses(db, ids).values()) == {RunStatus.AWAITING_APPROVAL},
                timeout=90,
            )
        except AssertionError:
            with db.connect() as conn:
                print(conn.execute(text("SELECT id, status, worker, note FROM run")).all())
                print(conn.execute(text("SELECT run_id, from_status, to_status, note FROM state_change")).all())
                print(conn.execute(text("SELECT id, status, attempts, worker_id, args FROM procrastinate_jobs")).all())
            raise
        wait_until("host A to finish what it had", lambda: not claimed_by(db, paused.pid), timeout=30)
    finally:
        os.kill(paused.pid, signal.SIGCONT)
        stop_worker(paused)
        if other is not None:
            stop_worker(other)
        engine.close()
    assert max(reviews_per_slot(db).values()) == 1
    assert max(answered_calls_per_slot(db).values()) == 1  # host A's late answers were not stored
    with db.connect() as conn:
        proposals = conn.execute(text("SELECT run_id, count(*) FROM proposal GROUP BY run_id")).all()
        waits = conn.execute(
            text("SELECT run_id, count(*) FROM state_change WHERE to_status = 'awaiting_approval' GROUP BY run_id")
        ).all()
        sent_a = conn.execute(text("SELECT count(*) FROM llm_call_sent WHERE worker LIKE 'host-a:%'")).scalar()
    assert sorted(c for _, c in proposals) == [1, 1]  # one fix asked for per run, by host B
    assert sorted(c for _, c in waits) == [1, 1]
    # Host A sent only what was in flight when it paused: the screen and both reviews of each run at most.
    assert sent_a <= 6
    fixes = [c for c in messages_stub.message_calls() if "edits" in schema_properties(c["body"])]
    assert len(fixes) == 2


def workers_of(db, ids: list[int]) -> list[str | None]:
    with db.connect() as conn:
        return [w for (w,) in conn.execute(text("SELECT worker FROM run WHERE id = ANY(:ids)"), {"ids": ids}).all()]


def test_a_dead_claim_an_app_start_marks_interrupted_during_the_take_over_is_still_worked(pg_db, messages_stub) -> None:
    """The app's start (`open_desk`: dead claims → interrupted) may mark a run between a worker's check that its
    claim is dead and its take-over: the worker resumes it instead of leaving it interrupted, its job done."""
    import subprocess
    import sys

    from desk.wiring import open_desk
    from santa_core.run.engine import Claim, advance
    from storage.workers import this_worker

    messages_stub.handler = answer_after(0.0)
    runs = RunStore(init_db(pg_db, mark_interrupted=False))
    run_id = new_run(runs)
    assert runs.transition(run_id, {RunStatus.QUEUED}, advance(runs.load_run(run_id).state, Claim()), "worker")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    with runs.engine.begin() as conn:  # claimed by a process of this host that has exited
        conn.exec_driver_sql(
            f"UPDATE run SET worker = '{this_worker().split(':')[0]}:{dead.stdout.strip()}:1' WHERE id = {run_id}"
        )
    desk = open_desk(pg_db, mark_interrupted=False, queued=True)
    try:
        real_dead_claim = desk.jobs._dead_claim

        def app_starts_meanwhile(run: int, worker: str | None) -> bool:
            dead_claim = real_dead_claim(run, worker)
            assert runs.mark_interrupted() == [run_id]  # the app's start, between the check and the take-over
            return dead_claim

        desk.jobs._dead_claim = app_starts_meanwhile
        desk.jobs.work_run(run_id, retried=True)
        assert runs.load_run(run_id).state.status == RunStatus.SHIPPED
    finally:
        desk.close()


def test_the_sweep_leaves_a_paused_batchs_queued_review_to_its_driver(pg_db) -> None:
    """A run left queued with no job goes back on the queue, but not a review of a paused batch: its driver starts
    it when the batch is resumed (a pause holds every review that has not begun)."""
    import asyncio

    from desk.wiring import open_desk
    from santa_core.batch.file import read_batch
    from tests.core.batch.test_driver import config, planted_csv

    desk = open_desk(pg_db, mark_interrupted=False)
    engine = task_engine(pg_db)
    db = create_engine(normalise_url(pg_db))
    try:
        plain = new_run(desk.runs)
        file = read_batch(planted_csv(20)[0], "emails.csv", strata=["template"])
        batch_id = desk.batches.create(file, config(file), "cli")
        sample_id = desk.batches.draw(batch_id, "cli")
        held = desk.batches.store.start_review(sample_id, desk.batches.store.pending_items(sample_id)[0])
        desk.batches.pause(batch_id, "cli")
        with db.begin() as conn:  # both committed a while ago by a process that died before it enqueued them
            conn.execute(text("UPDATE run SET updated_at = now() - interval '1 hour'"))
        put_back: list[int] = []
        engine.enqueue_left = lambda run_id, source: put_back.append(run_id)

        async def sweep_once() -> int:
            async with engine.app.open_async():
                return await engine.sweep_queued()

        assert asyncio.run(sweep_once()) == 1 and put_back == [plain]
        assert statuses(db, [held]) == {held: RunStatus.QUEUED}
    finally:
        desk.close()
        engine.close()
