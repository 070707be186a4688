"""Batch verification, driven: sample, review the sample, find patterns, fix them, sample again.

`BatchDriver` drives a batch over its store (`santa_core.batch.store.Store`, implemented by
`storage.batches`), the run store, the runner and the fix agent. The page and the command line
call it; every step it takes is committed before the next, so a restart picks up where the work
stopped (`resume_unfinished`).

The driver closes a sample (`close`) once every review is in, and groups its failures into patterns then, on every
path that closes one (the background driver, a Message Batch's collection, a look of the task engine): the Batch
page only reads them. A sample closed before its patterns were stored (one finished before the driver grouped, or a
process that died between the two) is grouped by `group_finished`, at the desk's start and by its sweep.

A sample's reviews start as runs only when the driver starts them, at most `concurrency` at a
time, and none while the batch is paused. With Message Batches on, the whole sample goes to the
API in one request, and each review becomes a run when its result is collected (`sample_batch`).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from santa_core.batch import patterns, report, stopping
from santa_core.batch import store as batch_store
from santa_core.batch.file import BatchFile
from santa_core.batch.fixing import PatternFixing
from santa_core.batch.generalise import generalise, named
from santa_core.batch.sample_batch import SampleBatchSending, cut_short
from santa_core.batch.store import Batch, BatchConfig, BatchProblem, ItemIn, PatternRecord, SampleProgress
from santa_core.models import RunStatus
from santa_core.reviewers import message_batches as mb
from santa_core.reviewers.base import Fixer
from santa_core.reviewers.batch_api import Client
from santa_core.run import engine
from santa_core.run import store as run_store
from santa_core.run.runner import Conflict, Runner, advance_run

log = logging.getLogger(__name__)

ACTIVE = (RunStatus.QUEUED, RunStatus.RUNNING)
WORKER_RETRIES = 3
"""Times a driver picks up reviews a worker error interrupted (waiting 2, 4, 8 s by default) before it
stops and the page offers to try again."""
STEP_S = 1.0
"""How often a sample driven look by look (`BatchDriver.step`) looks at its reviews in flight."""


@dataclass(frozen=True)
class Look:
    """When a sample driven look by look (the task engine's drive job) is looked at next, and what it carries
    from one look to the next: the same decisions the background driver keeps in its thread."""

    after_s: float = 0.0
    resume: bool = True
    """A pass begins: interrupted reviews are picked up again (unless the batch is paused)."""
    retries: int = 0
    """Passes started again after a worker error interrupted reviews (at most WORKER_RETRIES)."""
    failures: int = 0
    """Message Batch polls that failed in a row."""


class BatchDriver(SampleBatchSending, PatternFixing):
    """Runs a batch's samples in the background and applies approved fixes."""

    def __init__(
        self,
        repo: run_store.Store,
        store: batch_store.Store,
        runner: Runner,
        fixer_for: Callable[[str], Fixer],
        client_for: Callable[[], Client] | None = None,
        poll_s: float = 30.0,
        retry_s: float = 2.0,
        screen_answers: Callable[[], str | None] | None = None,
    ) -> None:
        self.store = store
        self.screen_answers = screen_answers
        """Why the injection screen's provider would not answer now (asked for free), else None; None: not asked."""
        self.repo = repo
        self.runner = runner
        self.fixer_for = fixer_for
        self.client_for = client_for
        """The Anthropic client for the Message Batches API (None: that path is unavailable)."""
        self.poll_s = poll_s
        self.retry_s = retry_s
        """The first wait before interrupted reviews are picked up again (doubling each time)."""
        self.pool = ThreadPoolExecutor(4, thread_name_prefix="santa-batch")
        # Why a pool of its own: a Message Batch is polled for up to 24 h, and must not hold the
        # threads that drive direct samples.
        self.api_pool = ThreadPoolExecutor(8, thread_name_prefix="santa-batch-api")
        self._lock = threading.Lock()
        self._driving: dict[int, Future] = {}
        self._again: set[int] = set()
        self._stopping = threading.Event()

    # --- creating and sampling ------------------------------------------------------------

    def create(self, file: BatchFile, config: BatchConfig, actor: str) -> int:
        """Store a read batch file as a batch (nothing is reviewed yet)."""
        items = [
            ItemIn(key=it.key, output=it.output, spec=it.spec, strata=it.strata, record=it.record) for it in file.items
        ]
        layout = {"delimiter": file.delimiter, "newline": file.newline, "bom": file.bom}
        return self.store.create(config.model_copy(update={"layout": layout}), items, actor)

    def sample(self, batch_id: int, actor: str) -> int:
        """Draw the next sample and start reviewing it in the background; the sample's id."""
        sample_id = self.draw(batch_id, actor)
        self.drive(sample_id)
        return sample_id

    def draw(self, batch_id: int, actor: str) -> int:
        """Draw the next sample without reviewing it yet (`drive` does); its id."""
        return self.store.draw_sample(batch_id, actor)

    def drive(self, sample_id: int) -> Future:
        """Review a sample in the background (once: a sample already being driven is left alone)."""
        api = self.store.get(self.store.progress(sample_id).batch_id).config.message_batches
        with self._lock:
            running = self._driving.get(sample_id)
            if running is not None and not running.done():
                self._again.add(sample_id)  # it may be stopping for a pause that was just lifted
                return running
            future = (self.api_pool if api else self.pool).submit(self._drive, sample_id)
            self._driving[sample_id] = future
            return future

    def pause(self, batch_id: int, actor: str) -> None:
        """No new review starts; reviews already started finish and are kept."""
        self.store.set_paused(batch_id, True, actor)

    def resume(self, batch_id: int, actor: str) -> None:
        """Start reviewing again where the batch stopped."""
        self.store.set_paused(batch_id, False, actor)
        self._drive_latest(batch_id)

    def retry(self, batch_id: int, actor: str) -> None:
        """Pick a stopped sample up again: interrupted reviews resume, a Message Batch is sent or polled again."""
        self.store.record_retry(batch_id, actor)
        latest = self.store.get(batch_id).latest
        if latest is None or latest.finished_at is not None:
            return
        if latest.api_batch_id is None and cut_short(latest.api_status):
            self.store.set_api(latest.id, None, None)  # a person looked: send again
        self.drive(latest.id)

    def _drive_latest(self, batch_id: int) -> None:
        """Drive the batch's latest sample if it is not finished."""
        latest = self.store.get(batch_id).latest
        if latest is not None and latest.finished_at is None:
            self.drive(latest.id)

    def resume_unfinished(self, leave: Callable[[int], bool] = lambda sample_id: False) -> list[int]:
        """After a restart: drive every unfinished sample of a batch that is not paused, except those `leave` names
        (a live process drives them); their ids."""
        started = []
        for sample_id in self.store.unfinished_samples():
            progress = self.store.progress(sample_id)
            if not self.store.is_paused(progress.batch_id) and not leave(sample_id):
                self.drive(sample_id)
                started.append(sample_id)
        return started

    def wait(self, sample_id: int, timeout: float | None = None) -> SampleProgress:
        """Block until the sample's driver stops (finished or paused); its progress."""
        with self._lock:
            future = self._driving.get(sample_id)
        if future is not None:
            future.result(timeout=timeout)
        return self.store.progress(sample_id)

    def driving(self, sample_id: int) -> bool:
        """Whether this process is reviewing the sample right now."""
        with self._lock:
            running = self._driving.get(sample_id)
            return running is not None and not running.done()

    def _drive(self, sample_id: int) -> SampleProgress:
        retries = 0
        try:
            while True:
                progress = self._review_sample(sample_id)
                if (
                    progress.interrupted
                    and not progress.finished
                    and retries < WORKER_RETRIES
                    and not self.store.is_paused(progress.batch_id)
                ):
                    retries += 1  # a worker error (e.g. the database blinked): pick those reviews up again
                    if not self._stopping.wait(self.retry_s * 2 ** (retries - 1)):
                        continue  # (a pause meanwhile holds them: the pass resumes nothing while paused)
                with self._lock:
                    if sample_id not in self._again or progress.finished or self._stopping.is_set():
                        self._again.discard(sample_id)
                        # Gone before the future is done: a drive() from now on starts a new driver.
                        self._driving.pop(sample_id, None)
                        return progress
                    self._again.discard(sample_id)  # drive() was called meanwhile: look again
        except Exception:  # noqa: BLE001 - a background thread: log, the page shows the progress
            log.exception("batch sample %s stopped", sample_id)
            raise

    def _review_sample(self, sample_id: int) -> SampleProgress:
        progress = self.store.progress(sample_id)
        batch = self.store.get(progress.batch_id)
        if batch.config.message_batches:
            return self._review_via_api(sample_id, batch)
        in_flight: dict[Future, int] = {}
        held = self.store.is_paused(batch.id)  # a pause holds interrupted reviews back too
        for run_id in self.store.run_ids(sample_id):  # started before a pause or a restart
            future = self._restart(run_id, resume=not held)
            if future is not None:
                in_flight[future] = run_id
        pending = self.store.pending_items(sample_id)
        while pending or in_flight:
            paused = self.store.is_paused(batch.id) or self._stopping.is_set()
            while pending and not paused and len(in_flight) < batch.config.concurrency:
                run_id = self.store.start_review(sample_id, pending.pop(0))
                in_flight[self.runner.submit(run_id)] = run_id
            if not in_flight:
                break  # paused, nothing running: the driver stops until the batch is resumed
            done, _ = wait(in_flight, timeout=1.0, return_when=FIRST_COMPLETED)
            for future in done:
                in_flight.pop(future)
        return self.close(sample_id)

    def _review_via_api(self, sample_id: int, batch: Batch) -> SampleProgress:
        """The whole sample as one Message Batch: submit once, poll until it ends, then gate each item."""
        progress = self.store.progress(sample_id)
        api_id = progress.api_batch_id or self._submit(sample_id, batch)
        if api_id is None:
            return self.store.progress(sample_id)  # not sent: the page says why (or a pause holds it back)
        jobs = mb.load_jobs(json.dumps(self.store.api_jobs(sample_id)))
        outcomes = self._await_batch(self._api(), sample_id, api_id, jobs)
        if outcomes is None:  # shutting down, or the API kept failing: a restart or a Resume collects it
            return self.store.progress(sample_id)
        for future in self._take_outcomes(sample_id, batch, outcomes):
            future.result()
        return self.close(sample_id)

    # --- driven look by look (the task engine's drive job) -------------------------------------

    def step(self, sample_id: int, look: Look | None = None) -> Look | None:
        """One look at a sample that waits for nothing: start the reviews that may start, send, poll or collect
        its Message Batch, finish it once every review is in. When to look again (None: nothing to do until a
        person acts: finished, paused, or stopped with the reason on the sample).

        The same decisions as the background driver (`drive`), spread over looks instead of held in a thread,
        so a worker of the task engine never holds a slot while a sample's reviews or its Message Batch run."""
        look = look or Look()
        progress = self.store.progress(sample_id)
        if progress.finished_at is not None:
            self._group(progress)  # (a look cut short between closing and grouping: this look groups)
            return None
        batch = self.store.get(progress.batch_id)
        if batch.config.message_batches and self.store.pending_items(sample_id):
            return self._api_look(sample_id, batch, progress, look)
        return self._direct_look(sample_id, batch, look)  # (a collected Message Batch: its runs gate)

    def _direct_look(self, sample_id: int, batch: Batch, look: Look) -> Look | None:
        held = self.store.is_paused(batch.id)
        if look.resume:  # a pass begins: requeue the sample's runs (interrupted ones resume unless paused)
            for run_id in self.store.run_ids(sample_id):
                self._restart(run_id, resume=not held)
        active, started, left = self.store.progress(sample_id).active, 0, False
        if not held and not self._stopping.is_set():
            with self._starting():
                pending = self.store.pending_items(sample_id)
                for item_id in pending[: self._may_start(batch, active)]:
                    self.runner.submit(self.store.start_review(sample_id, item_id))
                    started += 1
            left = len(pending) > started  # (with none active: other samples took the room, see `_may_start`)
        if active or started or left:
            return Look(after_s=STEP_S, resume=False, retries=look.retries)
        progress = self.close(sample_id)  # the pass ended: every started review settled
        if (
            progress.interrupted
            and not progress.finished
            and look.retries < WORKER_RETRIES
            and not self.store.is_paused(batch.id)
        ):
            return Look(after_s=self.retry_s * 2**look.retries, retries=look.retries + 1)
        return None  # finished, paused, or out of retries: a resume or Try again drives it again

    def _starting(self) -> AbstractContextManager:
        """Held while a look counts what may start and starts it (nothing to hold in one process)."""
        return nullcontext()

    def _may_start(self, batch: Batch, active: int) -> int:
        """How many more of a sample's reviews may start at this look: the batch's concurrency less those active."""
        return max(0, batch.config.concurrency - active)

    def _api_look(self, sample_id: int, batch: Batch, progress: SampleProgress, look: Look) -> Look | None:
        if progress.api_batch_id is None:
            return None if self._submit(sample_id, batch) is None else Look(after_s=self.poll_s, resume=False)
        jobs = mb.load_jobs(json.dumps(self.store.api_jobs(sample_id)))
        try:
            outcomes = self._poll_once(self._api(), sample_id, progress.api_batch_id, jobs)
        except mb.BatchError as exc:
            failures = look.failures + 1
            if self._failed_poll(sample_id, progress.api_batch_id, exc, failures):
                return None
            return Look(after_s=self._poll_wait(failures), resume=False, failures=failures)
        if outcomes is None:
            return Look(after_s=self.poll_s, resume=False)
        self._take_outcomes(sample_id, batch, outcomes)
        return Look(after_s=STEP_S, resume=False)

    def _restart(self, run_id: int, resume: bool = True) -> Future | None:
        """A run of the sample that is not done: queue it again (an interrupted one resumes, if `resume`)."""
        state = self.repo.load_run(run_id).state
        if state.status == RunStatus.INTERRUPTED and resume:
            try:
                state = advance_run(self.repo, run_id, state, engine.Resume(), "system")
            except Conflict:  # another driver (e.g. the command line's) resumed it first
                state = self.repo.load_run(run_id).state
        if state.status in ACTIVE:
            return self.runner.submit(run_id)
        return None

    # --- patterns and fixes ------------------------------------------------------------------

    def close(self, sample_id: int) -> SampleProgress:
        """Mark a sample finished once every review is in, and group its failures into patterns (each once, so
        two processes closing one sample agree); its progress."""
        progress = self.store.finish_sample(sample_id)
        self._group(progress)
        return progress

    def _group(self, progress: SampleProgress) -> None:
        """Group a closed sample's failures into patterns unless they are stored (a clean sample has none); in a
        batch created with auto-approve, fix the complete ones (`auto_fix`: here, in the driver, never on a page)."""
        if progress.finished_at is not None and progress.naughty:
            self.find_patterns(progress.id)
            self.auto_fix(progress.id)

    def group_finished(self) -> list[int]:
        """Group every closed sample whose failures have no patterns yet (closed before the driver grouped, or by a
        process that died between the two); their ids. The desk's start and its sweep do, never a page view."""
        grouped = self.store.ungrouped_samples()
        for sample_id in grouped:
            self.find_patterns(sample_id)
            self.auto_fix(sample_id)
        return grouped

    def find_patterns(self, sample_id: int) -> list[PatternRecord]:
        """A finished sample's failures grouped into patterns (stored once: stored ones are returned as they are)."""
        progress = self.store.progress(sample_id)
        if not progress.finished:
            raise BatchProblem(
                f"sample {progress.number} is not fully reviewed yet ({progress.done} of {progress.size})"
            )
        stored = self.store.patterns(progress.batch_id, sample_id)
        if stored:
            return stored
        failures = [
            patterns.SampledFailure(
                item_key=r.key,
                strata=r.strata,
                output=r.output,
                issues=r.issues,
                error=engine.REVIEWER_FAILED if r.reviewer_error else None,
            )
            for r in self.store.reviews(sample_id)
            if r.done and not r.nice
        ]
        reviewed = {r.key: r.output for r in self.store.reviews(sample_id) if r.done}
        found = generalise(patterns.group_patterns(failures), reviewed, {f.item_key: f.strata for f in failures})
        found = named(found, self.store.get(progress.batch_id).config.rubric.criteria)
        return self.store.save_patterns(sample_id, [p.model_dump(mode="json") for p in found])

    def dismiss(self, pattern_id: int, actor: str, reason: str) -> None:
        """Leave a pattern unfixed, with why."""
        self.store.dismiss(pattern_id, actor, reason)

    # --- reading -----------------------------------------------------------------------------

    def overview(self, limit: int = 200) -> list[tuple[Batch, int]]:
        """Every batch, newest first, with how many of its patterns wait for a decision."""
        return [(b, sum(p.waiting for p in self.store.patterns(b.id))) for b in self.store.batches(limit)]

    def progress(self, sample_id: int) -> SampleProgress:
        """A sample and how far its reviews are."""
        return self.store.progress(sample_id)

    def view(self, batch_id: int) -> report.BatchView:
        """Everything the Batch page shows of one batch, read once (BatchProblem when there is none)."""
        return report.batch_view(self.store, batch_id, driving=self.driving)

    def estimate(self, batch_id: int) -> report.CostEstimate:
        """The next sample's review cost against reviewing every item with both reviewers."""
        return self.view(batch_id).estimate

    def stopping_rule(self, batch_id: int) -> stopping.StoppingRule | None:
        """What the latest finished sample says about the batch (None before any sample is in)."""
        return self.view(batch_id).stopping_rule

    def needs_fix(self, batch_id: int) -> list[str]:
        """Items that showed a fixed pattern but could not take its edit: they still need a fix by hand."""
        return self.view(batch_id).needs_fix

    def export(self, batch_id: int, fmt: str | None = None) -> bytes:
        """The verified batch as CSV or JSONL: every item with its status, pattern and fix."""
        return report.export(self.view(batch_id), fmt)

    def shutdown(self) -> None:
        """Stop taking work; drivers stop after their in-flight reviews (a Message Batch is left to end)."""
        self._stopping.set()
        self.pool.shutdown(wait=True)
        self.api_pool.shutdown(wait=True)
