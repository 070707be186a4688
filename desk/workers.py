"""Working the task engine's jobs (`desk.task_engine`): the runner that enqueues instead of running, the batch
driver that defers looks at a sample instead of holding a thread, the job that drives one run (with take-over
and hand-over), the job that looks at a sample once, and the worker loop of `santa worker` and of the app.

- **Take-over.** A job retried because its worker stopped heartbeating finds its run `running` under that
  dead claim: it marks the run interrupted ("taken over"), queues it again and claims it with the run's own
  compare-and-set. A claim held by a live process on this host (a command line) is never taken.
- **Hand-over.** SIGTERM (a rolling deploy) stops the worker taking jobs and stops every run after the step
  in flight (the answers in flight are stored: they were paid for); each run it held is then marked
  "handed over" and queued again for the other workers. Nothing is asked twice and nothing is lost.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import asdict
from datetime import UTC, datetime

import anthropic
from procrastinate.worker import Worker

from desk.alerts import alert_pass
from desk.batch_lanes import batch_room
from desk.engine_timing import FETCH_POLL_S, env_float, heartbeat_s, stalled_s
from desk.outage import OUTAGE, database_away, patient
from desk.outage import log as outage_log
from desk.patient_jobs import HandedOver
from desk.task_engine import POOL_WAIT_S, QUEUES, RETRIED_ERRORS, ClaimHeld, DatabaseUnavailable, TaskEngine
from santa_core.batch.driver import BatchDriver, Look
from santa_core.batch.store import Batch, SampleProgress
from santa_core.models import RunState, RunStatus
from santa_core.reviewers.base import Fixer, Reviewer, Screen
from santa_core.run import engine
from santa_core.run.runner import Conflict, Runner, advance_run
from storage.alerts import AlertStore
from storage.batches import BatchStore
from storage.runs import RunStore
from storage.workers import alive_on_this_host, host_name, this_worker

log = logging.getLogger(__name__)

TAKEN_OVER = "taken over:"
HANDED_OVER = "handed over:"
MOVING = (TAKEN_OVER, HANDED_OVER)
"""How the notes of an interrupted run that the task engine is moving to another worker begin (not a stop to wait
on); the rest says what happened (`taken_over`, `HANDED_OVER_NOTE`, `given_back`)."""
HANDED_OVER_NOTE = f"{HANDED_OVER} the worker working on this run was stopped; the next free worker takes it first"
CLAIM_WAIT_S = 60.0
"""How long a job waits for a run still claimed by a live worker (finishing its step as it stops, or paused) before
it is tried again: it waits in place, it does not bounce between workers."""
STOP_GRACE_DB_S = 30.0
"""How long a worker told to stop waits for an unreachable database (SANTA_WORKER_STOP_GRACE_S)."""


def stop_grace_s() -> float:
    """SANTA_WORKER_STOP_GRACE_S: how long a stopping worker waits for an unreachable database (default 30 s) to
    store the answers it holds and hand its runs over; past it, it leaves them to be taken over."""
    return env_float("SANTA_WORKER_STOP_GRACE_S", STOP_GRACE_DB_S, 0.0, 600.0)


def taken_over(worker: str | None) -> str:
    """The note of a run taken over from `worker`'s claim, saying why the claim counted as dead."""
    if worker == this_worker():
        why = "no thread of it drives the run any more (it gave up waiting for the database)"
    elif worker and worker.partition(":")[0] == host_name():
        why = "its process is gone"
    else:
        why = f"it sent no heartbeat for over {stalled_s():g} s while the database answered"
    return f"{TAKEN_OVER} the worker working on this run ({worker or 'unknown'}) stopped: {why}"


def given_back() -> str:
    """The note of a run a worker gives back after waiting for the database longer than it holds answers."""
    return (
        f"{HANDED_OVER} the database was unreachable for {OUTAGE.last_away_s:.0f} s, longer than a worker waits "
        f"for it ({OUTAGE.hold_s:g} s); the next free worker carries on from the last stored step"
    )


DATABASE_ERRORS = ("OperationalError", "InterfaceError")
"""Worker errors that say the database went away, not that the run is wrong: its job is tried again."""
WAIT_POLL_S = 0.5
STOP_GRACE_S = 150.0
"""How long an app that stops waits for its own jobs to store their steps (a reviewer call's timeout and a
margin); past it, the runs are taken over once its heartbeat is silent."""
FINISHED_WAITING = {RunStatus.QUEUED, RunStatus.RUNNING}


def in_flight(status: RunStatus, note: str) -> bool:
    """Whether a run is still on its way through the engine (queued, running, or being moved)."""
    return status in FINISHED_WAITING or (status == RunStatus.INTERRUPTED and note.startswith(MOVING))


class QueuedRunner(Runner):
    """A runner whose `submit` puts the run on the task engine's queue; the future it returns resolves when
    the run leaves the engine (finished, waiting for a person, or stopped). `execute` drives a run in this
    process, as the job does."""

    def __init__(
        self,
        task_engine: TaskEngine,
        runs: RunStore,
        reviewer_for: Callable[[str], Reviewer],
        fixer_for: Callable[[str], Fixer],
        workers: int = 4,
        screen_for: Callable[[], Screen | None] = lambda: None,
    ) -> None:
        super().__init__(runs, reviewer_for, fixer_for, workers, screen_for)
        self.task_engine = task_engine
        self.runs = runs
        """The store, as the desk's (`store` is the core's view of it)."""
        self._waiting: dict[int, list[Future]] = {}
        self._waiting_lock = threading.Lock()
        self._watcher: threading.Thread | None = None

    def submit(self, run_id: int) -> Future:
        """Enqueue the run (on `runs`, or `batch` for a batch sample's run)."""
        source = self.runs.run_states([run_id])[run_id][3]
        self.task_engine.enqueue(self.store, run_id, source)
        future: Future = Future()
        with self._waiting_lock:
            self._waiting.setdefault(run_id, []).append(future)
            if self._watcher is None or not self._watcher.is_alive():
                self._watcher = threading.Thread(target=self._watch, name="santa-queue-watch", daemon=True)
                self._watcher.start()
        return future

    def shutdown(self) -> None:
        """Stop waiting on queued runs (their futures are cancelled; the runs stay queued for the workers), then
        stop the pools."""
        with self._waiting_lock:
            waiting, self._waiting = self._waiting, {}
        for futures in waiting.values():
            for future in futures:
                future.cancel()
        super().shutdown()

    def _watch(self) -> None:
        """Resolve the futures of runs that left the engine; ends when none is waited on."""
        while True:
            with self._waiting_lock:
                ids = list(self._waiting)
                if not ids:
                    self._watcher = None
                    return
            try:
                states = self.runs.run_states(ids)
            except Exception as exc:  # noqa: BLE001 - the database may be restarting: look again
                if not database_away(exc):
                    log.exception("could not read the queued runs' states")
                states = {}
            for run_id, (status, note, _worker, _source) in states.items():
                if in_flight(status, note):
                    continue
                with self._waiting_lock:
                    futures = self._waiting.pop(run_id, [])
                for future in futures:
                    if not future.cancelled():
                        future.set_result(RunState(status=status, note=note))
            time.sleep(WAIT_POLL_S)


class QueuedBatchDriver(BatchDriver):
    """The batch driver through the task engine: driving a sample defers a look at it (`BatchDriver.step`, run by
    whichever worker is free); each look defers the next. Nothing of a sample is held by this process."""

    def __init__(
        self,
        task_engine: TaskEngine,
        runs: RunStore,
        store: BatchStore,
        runner: Runner,
        fixer_for: Callable[[str], Fixer],
        client_for: Callable[[], anthropic.Anthropic] | None = None,
        poll_s: float = 30.0,
        retry_s: float = 2.0,
        screen_answers: Callable[[], str | None] | None = None,
    ) -> None:
        super().__init__(runs, store, runner, fixer_for, client_for, poll_s, retry_s, screen_answers)
        self.task_engine = task_engine
        self.runs = runs
        """The run store, as the desk's (`repo` is the core's view of it)."""

    def drive(self, sample_id: int) -> Future:
        """Defer a look at the sample now (a look already waiting is enough). The future is done at once with the
        sample's progress: the work is the task engine's from here; `wait` and `driving` follow it."""
        self.task_engine.defer_drive(sample_id, asdict(Look()), now=True)
        future: Future = Future()
        future.set_result(self.store.progress(sample_id))
        return future

    def _starting(self) -> AbstractContextManager:
        """Looks at different samples count and start their reviews one at a time, across all workers, so the
        limit per provider holds (`_may_start`)."""
        return self.task_engine.batch_start_lock()

    def _may_start(self, batch: Batch, active: int) -> int:
        """Also within the limit per provider: at most SANTA_BATCH_LANES batch runs queued or running per provider,
        across all batches and workers, so a batch never takes the rate limit the editors need."""
        return min(
            super()._may_start(batch, active),
            batch_room(self.runs.active_batch_reviewers(), batch.config.reviewer_b, batch.config.reviewer_c),
        )

    def driving(self, sample_id: int) -> bool:
        """Whether a look at the sample is waiting or under way (on any worker)."""
        return self.task_engine.driving(sample_id)

    def wait(self, sample_id: int, timeout: float | None = None) -> SampleProgress:
        """Block until no look at the sample waits any more (finished, paused or stopped); its progress."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.driving(sample_id):
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"sample {sample_id} is still being reviewed")
            time.sleep(WAIT_POLL_S)
        return self.store.progress(sample_id)


class JobHost:
    """This process's side of the jobs: drives the run a job names with the desk's runner, and looks at the
    batch sample a drive job names with the desk's batch driver."""

    def __init__(self, runs: RunStore, runner: QueuedRunner, batches: BatchDriver | None = None) -> None:
        self.runs = runs
        self.runner = runner
        self.batches = batches
        self.stop: Callable[[], None] = runner.stop
        """Stops the worker loop working for this host (set by `work_jobs` once it runs)."""
        self.thread: threading.Thread | None = None
        """The thread of the app's own worker loop (`start_in_app`), if any."""
        self.handed_over: list[int] = []
        """Runs handed over as this worker stopped (their jobs due again at once, first in the queue)."""
        self.idle_jobs: set[int] = set()
        """Jobs of this worker that no thread worked on at the last reconciliation (`_reconcile`)."""
        self.left: list[int] = []
        """Runs this worker could not hand over as it stopped (the database did not answer within the grace): the
        next worker takes them over."""

    def stop_and_wait(self, timeout: float = STOP_GRACE_S) -> None:
        """Stop the worker loop and wait (at most `timeout`) for its jobs to store their steps and hand over."""
        self.stop()
        if self.thread is not None:
            self.thread.join(timeout)

    def work_run(self, run_id: int, retried: bool) -> None:
        """Take over a dead claim if this job was retried, drive the run, hand it over if this worker stops. Every
        read and write of the run waits for a database that went away (`desk.outage`)."""
        with patient():
            self._work_run(run_id, retried)

    def _work_run(self, run_id: int, retried: bool) -> None:
        status, note, worker, source = self.runs.run_states([run_id])[run_id]
        if retried and status == RunStatus.RUNNING and not self._dead_claim(run_id, worker):
            # e.g. a worker told to stop, finishing its step, or one paused: wait here for it to let go
            status, note, worker = self._wait_for_claim(run_id, worker)
            if status == RunStatus.RUNNING and not self._dead_claim(run_id, worker):
                raise ClaimHeld(f"run {run_id} is still driven by {worker}; its job is tried again shortly")
        if retried and status == RunStatus.RUNNING:
            status = self._move(run_id, taken_over(worker))
            if status == RunStatus.INTERRUPTED:  # an app starting meanwhile marked the dead claim interrupted
                status = self._resume(run_id)
        elif status == RunStatus.INTERRUPTED and (retried or note.startswith(MOVING)):
            status = self._resume(run_id)
        if status != RunStatus.QUEUED:
            return  # finished, waiting for a person, or another process's to drive
        try:
            state = self.runner.execute(run_id)
        except Exception as exc:
            if not (self.runner.stopping and database_away(exc)):
                raise
            state = RunState(status=RunStatus.RUNNING)  # its step could not be stored in the grace: left below
        if not self.runner.stopping and state.status in (RunStatus.RUNNING, RunStatus.INTERRUPTED):
            self._cut_short(run_id)
        if self.runner.stopping:
            self._hand_over(run_id, state.status)
        if source == "batch":
            self.runner.task_engine.look_after_run(run_id)

    def _hand_over(self, run_id: int, status: RunStatus) -> None:
        """As this worker stops: a run it drove is handed over (queued again, its job due at once: the same job, so
        it keeps its place at the front), or, when the database does not answer within the grace, left to be
        taken over."""
        try:
            _, _, worker, _ = self.runs.run_states([run_id])[run_id]
            mine = worker == this_worker()  # never hand over another's run
            handed = status == RunStatus.RUNNING and mine and self._move(run_id, HANDED_OVER_NOTE) == RunStatus.QUEUED
        except Exception as exc:
            if database_away(exc) and status == RunStatus.RUNNING:
                self.left.append(run_id)
            raise
        if handed or status == RunStatus.QUEUED:  # (queued: stopped before it was claimed)
            self.handed_over.append(run_id)
            raise HandedOver(f"run {run_id} was handed over")

    def release_orphans(self) -> list[int]:
        """After an outage: runs still claimed by this worker that none of its threads drives (a thread gave up
        waiting for the database) are given back to the queue; their ids. Reads the store itself (no wait)."""
        store = getattr(self.runs, "inner", self.runs)
        released = []
        for run_id in store.running_under(this_worker()):
            if not self.runner.working_on(run_id) and self._move(run_id, given_back()) == RunStatus.QUEUED:
                released.append(run_id)
        if released:
            outage_log.warning(
                "santa: runs %s were given back to the queue: this worker gave up waiting for the database", released
            )
        return released

    def _wait_for_claim(self, run_id: int, worker: str | None) -> tuple[RunStatus, str, str | None]:
        """Wait (at most CLAIM_WAIT_S) while the run stays claimed by the live `worker`; its state then."""
        deadline = time.monotonic() + CLAIM_WAIT_S
        status, note = RunStatus.RUNNING, ""
        while time.monotonic() < deadline and not self.runner.stopping:
            time.sleep(2 * WAIT_POLL_S)
            status, note, now_worker, _ = self.runs.run_states([run_id])[run_id]
            if status != RunStatus.RUNNING or now_worker != worker or self._dead_claim(run_id, worker):
                return status, note, now_worker
        return status, note, worker

    def drive_sample(self, sample_id: int, look: dict) -> None:
        """Look at a batch sample once and defer the next look for when it is due (none: nothing to do until a
        person acts). A look another worker cut short is simply looked again: each look reads everything."""
        if self.batches is None:
            raise RuntimeError("this process drives no batch samples")
        try:
            after = self.batches.step(sample_id, Look(**look))
        except tuple(RETRIED_ERRORS):
            raise  # the database went away: the engine tries this look again
        except Exception as exc:
            self.batches.stopped_by(sample_id, exc)  # the chain ends: the Batch page says why
            raise
        if after is not None:
            self.runner.task_engine.defer_drive(sample_id, asdict(after))

    def _cut_short(self, run_id: int) -> None:
        """Raise `DatabaseUnavailable` when the database went away mid-step (a restart, a failover): the run is
        left `running` under this process's claim with nobody driving it (its interruption could not be
        written), or interrupted by a database error. The engine tries the job again shortly and the retried
        job takes the run over from its last committed step. (Reading the state may raise too: the same.)"""
        status, note, worker, _ = self.runs.run_states([run_id])[run_id]
        orphaned = status == RunStatus.RUNNING and worker == this_worker() and not self.runner.working_on(run_id)
        if orphaned or (status == RunStatus.INTERRUPTED and any(e in note for e in DATABASE_ERRORS)):
            raise DatabaseUnavailable(f"run {run_id} was cut short by the database: {note}")

    def _dead_claim(self, run_id: int, worker: str | None) -> bool:
        """Whether nobody drives the run under its claim any more: a claim of this process that none of its
        threads works on (its worker loop lost the database), or another process's that is not a live
        process on this host (a worker elsewhere is judged by its heartbeat: this job was retried for it)."""
        if worker == this_worker():
            return not self.runner.working_on(run_id)
        return not alive_on_this_host(worker)

    def _move(self, run_id: int, note: str) -> RunStatus:
        """running → interrupted (with `note`) → queued, each with the run's compare-and-set."""
        state = self.runs.load_run(run_id).state
        if state.status != RunStatus.RUNNING:
            return state.status
        try:
            advance_run(self.runs, run_id, state, engine.Interrupt(note=note), "system")
        except Conflict:
            return self.runs.load_run(run_id).state.status
        return self._resume(run_id)

    def _resume(self, run_id: int) -> RunStatus:
        state = self.runs.load_run(run_id).state
        if state.status != RunStatus.INTERRUPTED:
            return state.status
        try:
            return advance_run(self.runs, run_id, state, engine.Resume(), "system").status
        except Conflict:
            return self.runs.load_run(run_id).state.status


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
