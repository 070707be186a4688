"""The runner and the batch driver through the task engine (`desk.task_engine`): the runner enqueues a run instead of
running it, and follows it until it leaves the engine; the batch driver defers looks at a sample instead of holding a
thread for it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import asdict

import anthropic

from desk.batch_lanes import batch_room
from desk.hand_over import in_flight
from desk.outage import database_away
from desk.task_engine import TaskEngine
from santa_core.batch.driver import BatchDriver, Look
from santa_core.batch.store import Batch, SampleProgress
from santa_core.models import RunState
from santa_core.reviewers.base import Fixer, Reviewer, Screen
from santa_core.run.runner import Runner
from storage.batches import BatchStore
from storage.runs import RunStore

log = logging.getLogger(__name__)

WAIT_POLL_S = 0.5


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
