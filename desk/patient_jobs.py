"""The task engine's side of a database outage (`desk.outage` is the runs' side).

procrastinate's worker ends when the database does not answer a fetch, a heartbeat or its notification listener,
and then its jobs look stalled to the other workers: they were retried and bounced between workers while the worker
that held them was alive and idle. `PatientJobManager` keeps one worker, with its id and its jobs, through an
outage instead: a fetch that fails finds no job, a heartbeat that fails is sent at the next beat, the listener
connects again, and a job's end (done, or tried again) is written once the database answers. A worker's silence
during an outage says nothing of whether it is alive, so no worker takes another's jobs over until the database
has answered for a whole stalled period and one wait of a worker's pool (`silence_counts`,
`engine_timing.silence_counts_after_s`), by which time every live worker has sent a heartbeat.
"""

from __future__ import annotations

import asyncio
import datetime
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import procrastinate
from procrastinate import manager

from desk.outage import OUTAGE, WAIT_S, Outage, connector_away
from desk.outage import log as outage_log

T = TypeVar("T")

UP_SQL = "SELECT extract(epoch FROM now() - pg_postmaster_start_time()) AS up_s"
OWN_DOING_SQL = "SELECT id FROM procrastinate_jobs WHERE status = 'doing' AND worker_id = %(worker_id)s"


class HandedOver(RuntimeError):
    """A job whose run this worker handed over as it stops: the same job is tried again at once by the next free
    worker (its place in the queue kept: procrastinate takes older jobs of a priority first)."""


class Retry(procrastinate.BaseRetryStrategy):
    """A handed-over job is due again at once; a job in `errors` (the database went away, a claim still held) is
    tried again after `wait_s`; any other error fails the job."""

    def __init__(self, errors: set[type[BaseException]], wait_s: float) -> None:
        self.errors = tuple(errors)
        self.wait_s = wait_s

    def get_retry_decision(
        self, *, exception: BaseException, job: procrastinate.jobs.Job
    ) -> procrastinate.RetryDecision | None:
        if isinstance(exception, HandedOver):
            return procrastinate.RetryDecision(retry_at=datetime.datetime.now(datetime.UTC))
        if isinstance(exception, self.errors):
            return procrastinate.RetryDecision(
                retry_at=datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=self.wait_s)
            )
        return None


class PatientJobManager(manager.JobManager):
    """procrastinate's job manager for a worker that rides out a database outage (see the module)."""

    def __init__(self, connector: Any, outage: Outage = OUTAGE) -> None:
        super().__init__(connector)
        self.outage = outage
        self.stopping = threading.Event()
        """Set when the worker stops: no job is fetched any more."""
        self.requeued: set[int] = set()
        """Runs whose job this worker put back on the queue (written): a stopping worker hands over only these."""
        self.unsure = False
        """A call failed with the database away: it may have committed (a fetch), or not (a job's end). The worker
        reconciles its own jobs once the database answers (`desk.workers`)."""

    async def _patient(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call()`, tried again while the database is away, within the outage's bounds."""
        wait, first_failure = WAIT_S[0], None
        while True:
            if self.outage.away_for() > 0 and self.outage.giving_up(first_failure):
                # Stopping past its grace (or away past the hold): not even a try, which would wait for the pool.
                raise procrastinate.exceptions.ConnectorException("the database did not answer in time")
            try:
                result = await call()
            except Exception as exc:
                first_failure = first_failure or time.monotonic()
                if not connector_away(exc) or self.outage.giving_up(first_failure):
                    raise
                self.unsure = True
                self.outage.away(exc)
                await asyncio.sleep(wait)
                wait = min(WAIT_S[1], 2 * wait)
                continue
            self.outage.back()
            return result

    async def fetch_job(self, queues: Any, worker_id: int) -> procrastinate.jobs.Job | None:
        """The next job, or None: when stopping, or when the database is away (the worker looks again shortly)."""
        if self.stopping.is_set():
            return None
        try:
            job = await super().fetch_job(queues=queues, worker_id=worker_id)
        except Exception as exc:
            if not connector_away(exc):
                raise
            self.unsure = True  # the fetch may have committed: a job ours in the table that no thread works on
            self.outage.away(exc)
            return None
        self.outage.back()
        return job

    async def update_heartbeat(self, worker_id: int) -> None:
        """Tell the database this worker is alive; while it is away, the next beat tries again."""
        try:
            await super().update_heartbeat(worker_id)
        except Exception as exc:
            if not connector_away(exc):
                raise
            self.unsure = True
            self.outage.away(exc)
            return
        self.outage.back()

    async def finish_job(self, *args: Any, **kwargs: Any) -> None:
        """A job's end, written once the database answers."""
        await self._patient(lambda: super(PatientJobManager, self).finish_job(*args, **kwargs))

    async def retry_job(self, *args: Any, **kwargs: Any) -> None:
        """A job tried again, written once the database answers (its run, if it drives one, then counts as put back:
        `requeued`)."""
        await self._patient(lambda: super(PatientJobManager, self).retry_job(*args, **kwargs))
        job = kwargs.get("job") or (args[0] if args else None)
        run_id = getattr(job, "task_kwargs", {}).get("run_id")
        if run_id is not None:
            self.requeued.add(run_id)

    async def unregister_worker(self, worker_id: int) -> None:
        """Remove the worker's row; when the database stays away, its row goes silent and is pruned later."""
        try:
            await self._patient(lambda: super(PatientJobManager, self).unregister_worker(worker_id))
        except Exception as exc:
            if not connector_away(exc):
                raise
            outage_log.warning("santa: the database did not answer: this worker's row stays and is pruned later")

    async def list_jobs_to_abort_async(self, queue: str | None = None) -> list[int]:
        """Jobs asked to abort; none while the database is away."""
        try:
            return list(await super().list_jobs_to_abort_async(queue=queue))
        except Exception as exc:
            if not connector_away(exc):
                raise
            self.outage.away(exc)
            return []

    async def listen_for_jobs(self, *, on_notification: Any, queues: Any = None) -> None:
        """Listen for new jobs; when the database goes away, listen again once it answers (the worker polls
        meanwhile)."""
        wait = WAIT_S[0]
        while True:
            try:
                await super().listen_for_jobs(on_notification=on_notification, queues=queues)
                return
            except Exception as exc:
                if not connector_away(exc):
                    raise
                self.outage.away(exc)
                await asyncio.sleep(wait)
                wait = min(WAIT_S[1], 2 * wait)

    async def prune_stalled_workers(self, seconds_since_heartbeat: float) -> list[int]:
        """Nothing when a worker starts (procrastinate prunes then, which would drop the row of a live worker silent
        only because the database was away); `prune_silent` does it when silence counts."""
        return []

    async def prune_silent(self, seconds_since_heartbeat: float) -> list[int]:
        """Delete the rows of workers silent that long (call only when `silence_counts`)."""
        return await super().prune_stalled_workers(seconds_since_heartbeat)

    async def silence_counts(self, stalled_s: float) -> bool:
        """Whether a worker's silence means it is dead: the database has answered this process for `stalled_s`,
        and has been up that long (a restart this process did not notice), so every live worker has had time to
        send a heartbeat since."""
        if self.outage.reachable_for() < stalled_s:
            return False
        row = await self.connector.execute_query_one_async(UP_SQL)
        return float(row["up_s"]) >= stalled_s

    async def own_doing(self, worker_id: int) -> list[int]:
        """The ids of jobs the table says this worker is doing."""
        rows = await self.connector.execute_query_all_async(OWN_DOING_SQL, worker_id=worker_id)
        self.outage.back()
        return [row["id"] for row in rows]
