"""A pattern's fixes as one Message Batch, sent at most once (the review path's rule, `driver._send`).

The pattern's JSON keeps where its fixes' Message Batch stands (`FIX_BATCH`): `sending` is committed
before the create, then the API id and the jobs; every job is on record as sent (`llm_call_sent`,
batch_id set) before the create. A create that got no answer (a timeout, a dropped connection, a
server error) may have made the batch: nothing sends it again on its own and no synchronous call
replaces it; the pattern says so and a person's Try again (`retry_fixes`, audited) sends it again.
A stop while polling cancels the batch; a failed poll stops with the reason, and Try again polls the
same batch. Only a create the API answered with a refusal (nothing made, nothing paid) lets the caller
ask the fix agent one item at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from santa_core.batch import store as batch_store
from santa_core.batch.store import Batch, BatchProblem, PatternRecord
from santa_core.pricing import estimate_call_usd
from santa_core.reviewers import fix_batches
from santa_core.reviewers import message_batches as mb
from santa_core.reviewers.base import FixAnswer, FixRequest, OnSend, journaled
from santa_core.reviewers.batch_api import BatchApi, Client

FIX_BATCH = "fix_batch"
"""The key of a pattern's JSON that says where its fixes' Message Batch stands."""
AUTO_FIX = "auto_fix"
"""The key of a pattern's JSON that says what auto-approve did with it (claimed, approved, or why it waits)."""
SENDING = "sending"
IN_PROGRESS = "in_progress"
RETRY = "retry"
"""A person's Try again of fixes whose batch was never made: the next prepare sends it (once: see `_send_fixes`)."""
ANY_STATUS = object()
STOPPED = "stopped: "
CUT_SHORT = (
    "sending the fixes' Message Batch got no clear answer (the process stopped, the connection failed or the "
    "API had an error); it may have reached the API: look for it in the Anthropic Console before Try again, "
    "which sends the fixes again"
)
CANCELED = "canceled as the desk stopped; Try again collects what it answered"

Progress = Callable[[int, int], None]


class FixesStopped(BatchProblem):
    """The fixes' Message Batch stopped (the pattern says why): nothing more is sent until a person tries again."""


def fix_batch_state(record: PatternRecord) -> dict:
    """Where the pattern's fixes' Message Batch stands ({} when there is none)."""
    return dict(record.pattern.get(FIX_BATCH) or {})


def auto_fix_note(record: PatternRecord) -> str | None:
    """What auto-approve did with the pattern (None: it never took it up)."""
    return (record.pattern.get(AUTO_FIX) or {}).get("note")


def stopped_fixes(record: PatternRecord) -> str | None:
    """Why the pattern's fixes' Message Batch stopped (a person may Try again), else None."""
    status = fix_batch_state(record).get("status") or ""
    return status.removeprefix(STOPPED) if status.startswith(STOPPED) else None


class Prepares(Protocol):
    """What a Try again needs of the class `FixBatchSending` is mixed into: its store, and each reached item's fix
    prepared again (`PatternFixing.prepare`)."""

    @property
    def store(self) -> batch_store.Store: ...

    def prepare(self, pattern_id: int, actor: str, progress: Progress | None = None) -> dict: ...


class FixBatchSending:
    """Mixed into `PatternFixing`: needs its `store`, `client_for`, `poll_s` and `_stopping` (and `prepare`: see
    `Prepares`)."""

    store: batch_store.Store
    client_for: Callable[[], Client] | None
    poll_s: float
    _stopping: threading.Event

    def _fix_note(self, pattern_id: int) -> OnSend:
        """The call log of the pattern's fix calls: each committed as sent (with its batch) before it leaves."""

        def note(purpose: str, model: str, body: dict) -> None:
            if self._stopping.is_set():
                raise RuntimeError("the desk is stopping")
            self.store.note_fix_sent(pattern_id, purpose, model, body, estimate_call_usd(model, body))

        return note

    def retry_fixes(self: Prepares, pattern_id: int, actor: str) -> dict:
        """A person's Try again of fixes whose Message Batch stopped (role-checked, on record): one whose create got
        no answer is sent again, one already made is polled again; each item's fix is prepared from it."""
        self.store.record_fix_retry(pattern_id, actor)  # claims the stopped batch: a second Try again is refused
        return self.prepare(pattern_id, actor)

    def _fix_batch(
        self, pattern_id: int, batch: Batch, asks: dict[str, FixRequest], progress: Progress | None
    ) -> dict[str, FixAnswer] | None:
        """Item key → the fix agent's answer, from the pattern's fixes' Message Batch (sent now unless one was),
        every answer's call stored. None: the API refused the create (nothing made): ask one at a time.
        Raises FixesStopped when it stopped or may exist unseen: the pattern says why."""
        assert self.client_for is not None
        api = BatchApi(self.client_for())
        state = fix_batch_state(self.store.pattern(pattern_id))
        if state.get("status") == SENDING or (not state.get("api_id") and state.get("status", "").startswith(STOPPED)):
            # Left sending (the sender died) or cut short: it may exist and be paid for; only a person sends again.
            status = state["status"] if state["status"] != SENDING else f"{STOPPED}{CUT_SHORT}"
            # Only from the status read: a live sender that stored its batch's id meanwhile keeps it (else the made
            # batch would be forgotten, never collected, and a Try again would pay for another).
            self.store.set_fix_batch(pattern_id, {"status": status}, expect=state["status"])
            raise FixesStopped(f"the fixes' Message Batch {status}")
        if not state.get("api_id"):
            sent = self._send_fixes(api, pattern_id, batch, asks, state.get("status"))
            if sent is None:
                return None
            state = sent
        jobs = {key: fix_batches.FixJob.model_validate(job) for key, job in state["jobs"].items()}
        found = self._await_fixes(api, pattern_id, state, jobs, progress)
        for answer in found.values():
            self.store.save_fix_calls(pattern_id, answer.calls)
        return {key: found[job.custom_id] for key, job in jobs.items()}

    def _send_fixes(
        self,
        api: BatchApi,
        pattern_id: int,
        batch: Batch,
        asks: dict[str, FixRequest],
        status: str | None,
    ) -> dict | None:
        """Mark sending, put every job on record, create the batch; its state (None: refused, nothing made). The mark
        is set only from the `status` read (none, or a person's Try again): two processes never both send."""
        jobs = {
            key: fix_batches.FixJob(custom_id=f"fix-{n}", model=batch.config.fixer, request=request)
            for n, (key, request) in enumerate(asks.items())
        }
        if not self.store.set_fix_batch(pattern_id, {"status": SENDING}, expect=status):
            raise FixesStopped("another process is sending the fixes' Message Batch (or just did): nothing sent twice")
        try:
            with journaled(self._fix_note(pattern_id)):  # every job on record as sent before the batch exists
                api_id = api.submit(list(jobs.values()), lambda calls: self.store.save_fix_calls(pattern_id, calls))
        except mb.BatchError as exc:
            if mb.may_have_made(exc):
                status = f"{STOPPED}{CUT_SHORT} ({exc})"
                self.store.set_fix_batch(pattern_id, {"status": status}, expect=SENDING)
                raise FixesStopped(f"the fixes' Message Batch {status}") from exc
            # An answer that refused it: no batch was made, nothing is paid; each note got its (free) answer.
            self.store.set_fix_batch(pattern_id, None, expect=SENDING)
            return None
        state = {
            "status": IN_PROGRESS,
            "api_id": api_id,
            "jobs": {key: job.model_dump(mode="json") for key, job in jobs.items()},
        }
        self.store.set_fix_batch(pattern_id, state)  # stored at once: a restart polls this batch, never a new one
        return state

    def _await_fixes(
        self,
        api: BatchApi,
        pattern_id: int,
        state: dict,
        jobs: dict[str, fix_batches.FixJob],
        progress: Progress | None,
    ) -> dict[str, FixAnswer]:
        """Poll the batch until it ends, then every job's answer by custom_id. `MAX_POLL_FAILURES` failed polls in a
        row stop it with the reason; a stop of the desk cancels the batch (what it answered is collected by a Try
        again)."""
        api_id, failures = state["api_id"], 0
        while True:
            try:
                status = api.poll(api_id)
                if status.ended:
                    return api.fixes(api_id, list(jobs.values()))
                failures = 0
            except mb.BatchError as exc:
                # Polling is free: a passing failure (an overloaded API, a dropped connection) is polled again, as a
                # sample's batch is; only failures in a row stop it for a person.
                failures += 1
                if failures >= mb.MAX_POLL_FAILURES:
                    self.store.set_fix_batch(pattern_id, {**state, "status": f"{STOPPED}{exc}"})
                    raise FixesStopped(
                        f"the fixes' Message Batch {api_id} stopped: {exc} (Try again polls it again)"
                    ) from exc
            else:
                if progress is not None:
                    progress(len(jobs) - status.request_counts.processing, len(jobs))
            if self._stopping.wait(self.poll_s):
                try:
                    api.cancel(api_id)
                    why = CANCELED
                except mb.BatchError as exc:
                    why = f"the desk stopped; cancelling it failed ({exc}): Try again collects it"
                self.store.set_fix_batch(pattern_id, {**state, "status": f"{STOPPED}{why}"})
                raise FixesStopped(f"the fixes' Message Batch {api_id} was {why}")
