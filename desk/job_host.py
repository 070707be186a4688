"""This process's side of the task engine's jobs: the job that drives one run (taking over a dead claim, handing the
run over when this worker stops, giving back the runs an outage left behind) and the job that looks at a batch
sample once (`desk.workers` works them).

- **Take-over.** A job retried because its worker stopped heartbeating finds its run `running` under that
  dead claim: it marks the run interrupted ("taken over"), queues it again and claims it with the run's own
  compare-and-set. A claim held by a live process on this host (a command line) is never taken.
- **Hand-over.** SIGTERM (a rolling deploy) stops the worker taking jobs and stops every run after the step
  in flight (the answers in flight are stored: they were paid for); each run it held is then marked
  "handed over" and queued again for the other workers. Nothing is asked twice and nothing is lost.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict

from desk.hand_over import HANDED_OVER_NOTE, MOVING, given_back, taken_over
from desk.outage import database_away, patient
from desk.outage import log as outage_log
from desk.patient_jobs import HandedOver
from desk.queued import WAIT_POLL_S, QueuedRunner
from desk.task_engine import RETRIED_ERRORS, ClaimHeld, DatabaseUnavailable
from santa_core.batch.driver import BatchDriver, Look
from santa_core.models import RunState, RunStatus
from santa_core.run import engine
from santa_core.run.runner import Conflict, advance_run
from storage.runs import RunStore
from storage.workers import alive_on_this_host, this_worker

CLAIM_WAIT_S = 60.0
"""How long a job waits for a run still claimed by a live worker (finishing its step as it stops, or paused) before
it is tried again: it waits in place, it does not bounce between workers."""
DATABASE_ERRORS = ("OperationalError", "InterfaceError")
"""Worker errors that say the database went away, not that the run is wrong: its job is tried again."""
STOP_GRACE_S = 150.0
"""How long an app that stops waits for its own jobs to store their steps (a reviewer call's timeout and a
margin); past it, the runs are taken over once its heartbeat is silent."""


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
