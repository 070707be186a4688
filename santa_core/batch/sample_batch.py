"""A sample's reviews as one Message Batch: sent once, polled until it ends, each review taken onto its item's run.

Mixed into `BatchDriver` (`santa_core.batch.driver`), which drives a sample this way when its batch reviews through
the Message Batches API, in the background (`_review_via_api`) or look by look (`_api_look`). The sample keeps where
its Message Batch stands (`api_status`): `sending` is stored before the create, then the API id and the jobs, so a
restart polls the same batch and never sends a second one. A create that got no clear answer may have made the batch:
the sample stops as cut short and only a person's Try again sends it again (`BatchDriver.retry`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Protocol

from santa_core.batch import store as batch_store
from santa_core.batch.store import Batch, BatchProblem
from santa_core.checks.echo import compromised
from santa_core.checks.injection import injected
from santa_core.checks.precheck import critical_failures
from santa_core.checks.signals import context_of
from santa_core.providers import message_batches_problem
from santa_core.reviewers import message_batches as mb
from santa_core.reviewers.base import ReviewRequest, Served, journal_to
from santa_core.reviewers.batch_api import BatchApi, Client
from santa_core.run import store as run_store
from santa_core.run.runner import SLOTS, Runner

STOPPED = "stopped: "
"""How a sample's Message Batch status begins once nothing tracks it any more (a person or a restart goes on)."""
MAX_API_FAILURES = mb.MAX_POLL_FAILURES
"""Message Batch polls that may fail in a row (backing off to 10 min) before the desk stops and says so."""
SENDING = "sending"
"""A sample's Message Batch status while it is being sent. A later look that finds it (the sender died between the
API's answer and storing the batch's id) must not send again on its own: the batch may exist and be paid for."""
CUT_SHORT = (
    "sending this sample's Message Batch got no clear answer (the process stopped, the connection failed "
    "or the API had an error); "
    "it may have reached the API: look for it in the Anthropic Console before Try again, which sends the "
    "sample again"
)
LONGEST_WAIT_S = 600.0


def cut_short(api_status: str | None) -> bool:
    """Whether a sample stopped because sending its Message Batch got no answer (a person decides to send again)."""
    return (api_status or "").startswith(f"{STOPPED}{CUT_SHORT}")


class Restarts(Protocol):
    """What taking a Message Batch's reviews needs of the class `SampleBatchSending` is mixed into: its stores, and
    a run of the sample queued again (`BatchDriver._restart`)."""

    @property
    def store(self) -> batch_store.Store: ...

    @property
    def repo(self) -> run_store.Store: ...

    def _restart(self, run_id: int, resume: bool = True) -> Future | None: ...


class SampleBatchSending:
    """Mixed into `BatchDriver`: needs its `store`, `repo`, `runner`, `client_for`, `poll_s`, `screen_answers` and
    `_stopping` (and `_restart`: see `Restarts`)."""

    store: batch_store.Store
    repo: run_store.Store
    runner: Runner
    client_for: Callable[[], Client] | None
    poll_s: float
    screen_answers: Callable[[], str | None] | None
    _stopping: threading.Event

    def stopped_by(self, sample_id: int, exc: Exception) -> None:
        """A look at the sample failed and nothing drives it any more: a sample reviewed through a Message Batch
        says why, for the Batch page to offer Try again (a direct sample's page sees its reviews go quiet). One
        caught sending may have reached the API: it stops as cut short, for a person to send again."""
        progress = self.store.progress(sample_id)
        if self.store.get(progress.batch_id).config.message_batches:
            sending = progress.api_status == SENDING and progress.api_batch_id is None
            self.store.set_api(
                sample_id, progress.api_batch_id, f"{STOPPED}{CUT_SHORT} ({exc})" if sending else f"{STOPPED}{exc}"
            )

    def _api(self) -> BatchApi:
        """The Message Batches API over the client the desk wired (BatchProblem when there is none)."""
        if self.client_for is None:
            raise BatchProblem("the Message Batches API needs an Anthropic API key")
        return BatchApi(self.client_for())

    def _submit(self, sample_id: int, batch: Batch) -> str | None:
        """Submit the sample as one Message Batch and remember it; its id (None: not sent, and why is on the
        sample, or a pause holds it back)."""
        panel = (batch.config.reviewer_b, batch.config.reviewer_c)
        # The screen runs at each item's gate, after the Message Batch's answers come back: one that cannot run would
        # fail every item closed, so the reviewers' batch would be paid for nothing. Not sent, and the page says why.
        api = self._api() if (problem := message_batches_problem(*panel)) is None else None
        if problem := problem or self.runner.screen_problem(panel) or self._screen_silent():
            self.store.set_api(sample_id, None, f"{STOPPED}{problem}")  # nothing sent; the page says why
            return None
        if self.store.is_paused(batch.id):
            return None  # not sent yet: a pause still holds it back
        status = self.store.progress(sample_id).api_status
        if status == SENDING or cut_short(status):  # only a person's Try again sends it again
            self.store.set_api(sample_id, None, status if cut_short(status) else f"{STOPPED}{CUT_SHORT}")
            return None
        assert api is not None  # (the panel may use the API: `api` was made above)
        jobs = self._jobs(sample_id, batch)
        self.store.set_api(sample_id, None, SENDING)
        served = Served(batch_id=batch.id)  # (the items' runs are made when the answers are collected)
        try:
            with journal_to(self.repo, served):
                api_id = api.submit(jobs, lambda calls: self.repo.note_calls_answered(served, calls))
        except mb.BatchError as exc:
            # The API may have made it all the same (no answer, a server error): only a person sends again. Any
            # other failure was an answer that refused it: Try again (or a restart) submits again.
            self.store.set_api(
                sample_id, None, f"{STOPPED}{CUT_SHORT} ({exc})" if mb.may_have_made(exc) else f"{STOPPED}{exc}"
            )
            return None
        # Why stored at once: after a restart the batch is collected from its id and the jobs.
        self.store.set_api(sample_id, api_id, "in_progress", json.loads(mb.dump_jobs(jobs)))
        return api_id

    def _screen_silent(self) -> str | None:
        """Why the screen's provider does not answer (a wrong key, nothing at its address): every item would fail
        closed at its gate, after the reviewers' batch was paid. Asked of its model list, which costs nothing."""
        return self.screen_answers() if self.screen_answers is not None else None

    def _take_outcomes(self: Restarts, sample_id: int, batch: Batch, outcomes: dict) -> list[Future]:
        """Store the ended Message Batch's reviews, each on its item's run, and queue the runs: with both
        reviews in, only the checks and the gate run. The runs' futures."""
        futures = []
        items = {it.id: it for it in self.store.items(batch.id)}  # read once, not per review
        for review in self.store.reviews(sample_id):
            ids = {slot: mb.custom_id_for(f"i{review.item_id}", slot) for slot in SLOTS}
            item = items.get(review.item_id)
            if not all(i in outcomes for i in ids.values()):
                # Never sent (the text addresses its reviewers or fails a critical check, `_jobs`): its run's
                # pre-check decides it before any reviewer is asked, so the item is NAUGHTY without a paid request.
                # Why not ask the detector again here: an answer that changed since the send (another process, a
                # check that could not finish once) would leave the item out for good and the sample unfinished;
                # the run decides it instead.
                futures.append(self._restart(self.store.start_review(sample_id, review.item_id)))
                continue
            run_id = self.store.start_review(sample_id, review.item_id)
            for custom_id in ids.values():
                outcome = outcomes[custom_id] if item is None else compromised(outcomes[custom_id], item.output)
                self.repo.save_review(run_id, 1, outcome, only_if_empty=True)
            futures.append(self._restart(run_id))
        return [f for f in futures if f is not None]

    def _poll_once(self, api: BatchApi, sample_id: int, api_id: str, jobs: list[mb.ReviewJob]) -> dict | None:
        """Ask after the Message Batch once: its outcomes once it ended, else None (`mb.BatchError`: the API
        call failed; the SDK retries nothing, so each failure counts)."""
        try:
            status = api.poll(api_id)
            self.store.set_api(sample_id, api_id, status.processing_status)
            return api.reviews(api_id, jobs) if status.ended else None
        except mb.BatchNotEnded:
            return None

    def _failed_poll(self, sample_id: int, api_id: str, exc: mb.BatchError, failures: int) -> bool:
        """Record a failed poll on the sample for the page; True when it is time to give up (a person looks:
        e.g. an expired batch or a revoked key)."""
        if failures >= MAX_API_FAILURES:
            self.store.set_api(
                sample_id,
                api_id,
                f"{STOPPED}{exc}; gave up after {failures} tries "
                "(Try again on the Batch page, or a restart, polls again)",
            )
            return True
        self.store.set_api(sample_id, api_id, f"error: {exc}; trying again")
        return False

    def _await_batch(self, api: BatchApi, sample_id: int, api_id: str, jobs: list[mb.ReviewJob]) -> dict | None:
        """Poll until the Message Batch ends, then its outcomes (None: the service is shutting down).

        An API failure (the SDK retries nothing) is recorded on the sample for the page and the
        polling goes on, backing off: the batch keeps running at the API whatever happens here.
        """
        failures = 0
        while True:
            try:
                outcomes = self._poll_once(api, sample_id, api_id, jobs)
                if outcomes is not None:
                    return outcomes
                failures = 0
            except mb.BatchError as exc:
                failures += 1
                if self._failed_poll(sample_id, api_id, exc, failures):
                    return None
            if self._stopping.wait(self._poll_wait(failures)):
                return None

    def _poll_wait(self, failures: int) -> float:
        """The wait before the next poll: poll_s, doubling with each failure in a row, at most 10 min."""
        return min(self.poll_s * 2**failures, LONGEST_WAIT_S)

    def _jobs(self, sample_id: int, batch: Batch) -> list[mb.ReviewJob]:
        rubric = batch.config.rubric
        items = {it.id: it for it in self.store.items(batch.id)}
        models = {"B": batch.config.reviewer_b, "C": batch.config.reviewer_c}
        return [
            mb.ReviewJob(
                custom_id=mb.custom_id_for(f"i{item_id}", slot),
                model=models[slot],
                slot=slot,
                request=ReviewRequest(rubric=rubric, spec=items[item_id].spec, output=items[item_id].output),
            )
            for item_id in self.store.pending_items(sample_id)
            for slot in SLOTS
            if not injected(items[item_id].spec, items[item_id].output, context_of(rubric))
            and not critical_failures(rubric, items[item_id].output)
        ]  # its run decides it before the reviewers
