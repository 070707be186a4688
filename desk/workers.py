"""Working the task engine's jobs (`desk.task_engine`): the worker loop of `santa worker` and of the app, which works
the jobs of `desk.job_host.JobHost` (the runner that enqueues and the batch driver that defers looks are in
`desk.queued`; the notes of a run moved between workers in `desk.hand_over`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from procrastinate.worker import Worker

from desk.alerts import alert_pass
from desk.engine_timing import FETCH_POLL_S, POOL_WAIT_S, env_float, heartbeat_s, stalled_s
from desk.job_host import JobHost
from desk.outage import OUTAGE
from desk.outage import log as outage_log
from desk.task_engine import QUEUES, TaskEngine
from storage.alerts import AlertStore

log = logging.getLogger(__name__)

STOP_GRACE_DB_S = 30.0
"""How long a worker told to stop waits for an unreachable database (SANTA_WORKER_STOP_GRACE_S)."""


def stop_grace_s() -> float:
    """SANTA_WORKER_STOP_GRACE_S: how long a stopping worker waits for an unreachable database (default 30 s) to
    store the answers it holds and hand its runs over; past it, it leaves them to be taken over."""
    return env_float("SANTA_WORKER_STOP_GRACE_S", STOP_GRACE_DB_S, 0.0, 600.0)


RESTART_S = (1.0, 30.0)
"""The first and the longest wait before a worker loop that lost its database starts again (doubling)."""


def work_jobs(
    task_engine: TaskEngine, host: JobHost, concurrency: int, queues: tuple[str, ...] = QUEUES, name: str | None = None
) -> None:
    """Work the engine's jobs until stopped (SIGINT/SIGTERM in the main thread, or `host.stop()`).

    Each job's run is driven on a thread of the loop's executor, `concurrency` at a time; the runner's
    reviewer calls go to its own pool, so a run never waits for a thread its own reviewers need. When the
    database goes away (a restart, a failover) the loop ends; it starts again, waiting longer each time, until
    the database answers: jobs it held are retried once its old heartbeat is silent (`JobHost.work_run`)."""
    task_engine.work_run = host.work_run
    task_engine.drive_sample = host.drive_sample
    task_engine.enqueue_left = lambda run_id, source: task_engine.enqueue(host.runs, run_id, source)
    task_engine.alert_pass = lambda: alert_pass(AlertStore(host.runs.db))
    loop = asyncio.new_event_loop()
    loop.set_default_executor(ThreadPoolExecutor(concurrency + 2, thread_name_prefix="santa-job"))
    stopped = threading.Event()
    current: list[Worker] = []

    OUTAGE.started()  # a process working jobs again (a test's second worker loop) waits for the database again

    def stop_all(signum: int | None = None) -> None:
        if stopped.is_set() and signum is not None:  # a second SIGINT/SIGTERM: leave at once, saying what is left
            held = sorted(host.runner.active_runs())
            outage_log.error(
                "santa worker: stopped at once (a second signal): runs %s are taken over once this worker "
                "is silent; %d answer(s) received but not stored are dropped",
                held or "none",
                OUTAGE.dropped_answers + OUTAGE.waiting()[1],
            )
            os._exit(128 + signum)  # its runs are taken over once its heartbeat is silent
        stopped.set()
        task_engine.jobs.stopping.set()  # no job is fetched from now on
        # A database away is waited for at most the grace, less one wait for a connection (a try under way when the
        # grace ends still ends within it).
        OUTAGE.stop(max(0.0, stop_grace_s() - POOL_WAIT_S))
        host.runner.stop()  # no new step, no new request; steps in flight finish and are stored
        if current:
            current[0].stop()

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop_all, sig)

    def stop_soon() -> None:
        try:
            loop.call_soon_threadsafe(stop_all)
        except RuntimeError:  # the loop has ended already
            host.runner.stop()

    host.stop = stop_soon

    async def main() -> None:
        async with task_engine.app.open_async():
            worker = Worker(
                task_engine.app,
                queues=list(queues),
                concurrency=concurrency,
                name=name or f"santa@{socket.gethostname()}:{os.getpid()}",
                delete_jobs="successful",
                update_heartbeat_interval=heartbeat_s(),
                stalled_worker_timeout=stalled_s(),
                install_signal_handlers=False,
                fetch_job_polling_interval=FETCH_POLL_S,
            )
            current[:] = [worker]
            if stopped.is_set():
                return
            sides = [
                loop.create_task(_heartbeat_while_stopping(task_engine, worker, stopped)),
                loop.create_task(task_engine.maintain(lambda: _reconcile(task_engine, host, worker))),
            ]
            try:
                await worker.run()
            finally:
                for side in sides:
                    side.cancel()

    wait_s = RESTART_S[0]
    try:
        while not stopped.is_set():
            try:
                loop.run_until_complete(main())
                wait_s = RESTART_S[0]
            except Exception:  # noqa: BLE001 - the database went away: start again once it answers
                log.exception("the worker loop stopped; starting it again in %g s", wait_s)
            if not stopped.is_set():
                loop.run_until_complete(
                    asyncio.wait(
                        [loop.create_task(asyncio.sleep(wait_s)), loop.create_task(_until(stopped))],
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                )
                wait_s = min(RESTART_S[1], 2 * wait_s)
    finally:
        loop.close()


async def _heartbeat_while_stopping(task_engine: TaskEngine, worker: Worker, stopped: threading.Event) -> None:
    """Keep the worker's heartbeat going while it finishes its jobs after a stop (procrastinate stops its own
    heartbeat first): otherwise another worker would take over runs whose answers are still on their way."""
    while True:
        await asyncio.sleep(heartbeat_s())
        if stopped.is_set() and worker.worker_id is not None:
            try:
                await task_engine.app.job_manager.update_heartbeat(worker.worker_id)
            except Exception:  # noqa: BLE001 - the database is away: the take-over is the fallback
                log.warning("could not send the stopping worker's heartbeat")


async def _reconcile(task_engine: TaskEngine, host: JobHost, worker: Worker) -> None:
    """After the database was away: give back the runs this worker still claims but no thread drives, and try again
    at once the jobs the table says it does that it does not (a fetch whose answer was lost, a job's end that could
    not be written). Only once a call failed, and not while stopping (the next worker takes those over)."""
    jobs = task_engine.jobs
    if not jobs.unsure or worker.worker_id is None or jobs.stopping.is_set():
        return
    jobs.unsure = False
    try:
        running = _running_ids(worker)
        doing = await jobs.own_doing(worker.worker_id)  # first: its answer says the database is back (for the notes)
        await asyncio.to_thread(host.release_orphans)
        idle = set(doing) - running - _running_ids(worker)
        # Only a job seen idle on two passes: one fetched a moment ago may be in the table before its task is.
        again, host.idle_jobs = idle & host.idle_jobs, idle - host.idle_jobs
        if host.idle_jobs:
            jobs.unsure = True  # look at them again on the next pass
        for job_id in sorted(again):
            outage_log.warning(
                "santa: job %s was this worker's but no thread worked on it: it is due again now", job_id
            )
            await jobs.retry_job_by_id_async(job_id, retry_at=datetime.now(UTC))
    except Exception:
        jobs.unsure = True  # the database went away again: the next pass tries
        raise


def _running_ids(worker: Worker) -> set[int]:
    """The jobs the procrastinate worker runs now (procrastinate 3.10 keeps no public list of them)."""
    jobs = [context.job for context in list(worker._running_jobs.values())]  # noqa: SLF001
    return {job.id for job in jobs if job.id is not None}


async def _until(event: threading.Event) -> None:
    while not event.is_set():
        await asyncio.sleep(0.2)


def start_in_app(task_engine: TaskEngine, host: JobHost, concurrency: int) -> threading.Thread:
    """Work jobs on a daemon thread of this process (the app, SANTA_WORKERS_IN_APP=1); `host.stop()` stops it."""
    thread = threading.Thread(
        target=work_jobs,
        args=(task_engine, host, concurrency, QUEUES, f"santa-app@{socket.gethostname()}:{os.getpid()}"),
        name="santa-in-app-worker",
        daemon=True,
    )
    host.thread = thread
    thread.start()
    return thread


def workers_in_app() -> bool:
    """SANTA_WORKERS_IN_APP: whether the app works jobs too (default 1; set 0 when separate workers run)."""
    return os.environ.get("SANTA_WORKERS_IN_APP", "1").strip().lower() not in ("0", "false", "no", "off")
