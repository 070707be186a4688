"""The task engine on PostgreSQL: runs, batch sample reviews and the driving of batch samples (their Message
Batch polling included) are jobs of procrastinate, kept in the same database, worked by `santa worker`
processes (and by the app itself unless SANTA_WORKERS_IN_APP=0).

Why procrastinate: a durable queue on the database the team already runs (no new server), with
`SELECT … FOR UPDATE SKIP LOCKED` fetching, LISTEN/NOTIFY wake-ups, locks, priorities and heartbeats.
SQLite has no such engine; there runs stay on the in-process pool (`santa_core.run.runner`).

How a run travels:
- **Queues.** `runs` holds interactive work (the Review page, the command line, approvals, re-reviews) at
  priority 10; `batch` holds batch sample reviews at priority 0, so a worker of both queues takes an
  editor's run first.
- **One job of a run at a time.** An interactive run's jobs hold the lock `run-N`; a batch run's jobs hold
  one of SANTA_BATCH_LANES (default 4) lane locks of its reviewers' providers (`batch:anthropic+openai:2`).
- **A limit per provider for batches.** The looks that start batch reviews start at most SANTA_BATCH_LANES
  batch runs per provider queued or running across all workers (`batch_room`, under BATCH_START_LOCK): a large
  batch cannot take the rate limit the editors need.
- **Batch samples.** A sample is driven by a chain of short jobs (`santa.drive_sample`, queue `batch`, priority
  5, lock `sample-N`): each looks once (`BatchDriver.step`: start the reviews that may start,
  send, poll or collect the Message Batch, finish the sample) and defers the next look for when it is due. No
  job waits for a sample's reviews or for the API, so a worker's slots are never held by a 24-hour batch.
- **A dead worker.** Workers heartbeat every SANTA_WORKER_HEARTBEAT_S (10 s). Every SANTA_WORKER_RECOVER_S
  (5 s) every worker, beside its jobs, retries the jobs of workers silent for SANTA_WORKER_STALLED_S (30 s)
  (`TaskEngine.maintain`; it also puts back runs left queued with no job). The retried job
  finds its run `running` under the dead claim, marks it interrupted ("taken over"), puts it back in the
  queue and claims it with the run's own compare-and-set; stored reviews are not asked for again (the
  runner asks only for slots with no stored review). Bound: a killed worker's jobs are back in the queue
  within STALLED_S + RECOVER_S (35 s with the defaults) and start at the next free slot, ahead of later work.
  A worker taken for dead that comes back (a pause, a cut network) is fenced: the store refuses its writes and
  its requests for a run another process claimed since (`storage.rounds.fence`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import procrastinate
import procrastinate.exceptions
import psycopg
import sqlalchemy.exc
from procrastinate import PsycopgConnector, SyncPsycopgConnector
from psycopg import sql
from psycopg_pool import ConnectionPool
from sqlalchemy.engine import make_url

from desk.batch_lanes import batch_lanes, provider_pair
from desk.engine_status import EngineStatus, read_status
from desk.engine_timing import POOL_WAIT_S, alert_cron, recover_every_s, silence_counts_after_s, stalled_s
from desk.outage import connector_away
from desk.patient_jobs import PatientJobManager, Retry
from santa_core.run.store import Store

log = logging.getLogger(__name__)

RUNS, BATCH = "runs", "batch"
RETRY_S = 5
"""Seconds before a job that could not drive its run yet is tried again."""


class JobRetry(RuntimeError):
    """Raised by a job that should be tried again shortly (the engine retries it every RETRY_S)."""


class DatabaseUnavailable(JobRetry):
    """The job's run was cut short by the database going away (a restart, a failover)."""


class ClaimHeld(JobRetry):
    """The job's run is still driven by a live process (one told to stop, finishing its step)."""


RETRIED_ERRORS: set[type[BaseException]] = {
    JobRetry,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    procrastinate.exceptions.ConnectorException,
}
"""The database went away (procrastinate wraps the errors of its own connections, e.g. deferring a sample's next
look, as ConnectorException): the job is tried again."""
QUEUES = (RUNS, BATCH)
"""The queues a worker works unless told otherwise."""
INTERACTIVE_PRIORITY = 10
DRIVE_PRIORITY = 5
"""A sample's next look goes before the batch's reviews waiting (it is short, and it starts them)."""
WORK_RUN = "santa.work_run"
DRIVE_SAMPLE = "santa.drive_sample"
ALERTS = "santa.alerts"
"""The periodic alert pass (`desk.alerts.alert_pass`): one at a time across all workers."""
ALERTS_PRIORITY = 20
"""Before the runs waiting: a pass is short (each call bounded by its timeout) and a reminder should not wait."""
SWEEP_EVERY_S = 10
QUEUED_WITHOUT_JOB_S = 5
"""A run queued this long with no job was left by a process that died between committing it and enqueuing it."""
SCHEMA_LOCK = 0x5A17A
"""The advisory lock that keeps two processes from installing the engine's tables at once."""
BATCH_START_LOCK = 0x5A17B
"""The advisory lock a look holds while it counts the batch runs in flight and starts its sample's reviews."""


def uses_task_engine(url: str) -> bool:
    """True for a PostgreSQL database: runs go through the task engine there."""
    return make_url(url).get_backend_name() == "postgresql"


def conninfo(url: str) -> str:
    """The libpq address of a SQLAlchemy PostgreSQL URL (`postgresql+psycopg://…` → `postgresql://…`)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


QUEUED_WITHOUT_JOB_SQL = """
SELECT r.id, r.source FROM run r
 WHERE r.status = 'queued' AND r.updated_at < now() - make_interval(secs => %(age_s)s)
   AND NOT EXISTS (SELECT 1 FROM procrastinate_jobs j
                    WHERE j.task_name = %(task)s AND j.status IN ('todo', 'doing')
                      AND (j.args->>'run_id')::bigint = r.id)
   AND NOT EXISTS (SELECT 1 FROM batch b WHERE b.id = r.batch_id AND b.paused)
 ORDER BY r.id
"""
"""Runs left queued with no job; a paused batch's are left for its driver, which starts them when it is resumed."""
DRIVING_SQL = """
SELECT 1 FROM procrastinate_jobs
 WHERE task_name = %(task)s AND status::text = ANY(%(statuses)s) AND (args->>'sample_id')::bigint = %(sample_id)s LIMIT 1
"""
LOOK_NOW_SQL = sql.SQL("""
UPDATE procrastinate_jobs SET scheduled_at = CASE WHEN scheduled_at > now() THEN now() ELSE scheduled_at END,
                              args = CASE WHEN %(look)s::jsonb IS NULL THEN args
                                          ELSE jsonb_set(args, '{{look}}', %(look)s::jsonb) END
 WHERE task_name = %(task)s AND status = 'todo' AND (args->>'sample_id')::bigint = {sample}
""")
"""Make a sample's waiting look due at once; `{sample}` is the sample's id, or how to find it. Due now rather than
unscheduled, so `worker --status` counts its wait from now (no event records an unscheduling); a look already due
keeps its time."""
SAMPLE_OF_RUN = sql.SQL("(SELECT sample_id FROM batch_sample_item WHERE run_id = {run_id})").format(
    run_id=sql.Placeholder("run_id")
)
WAITING_JOB_SQL = """
SELECT 1 FROM procrastinate_jobs
 WHERE task_name = %(task)s AND status = 'todo' AND (args->>'run_id')::bigint = %(run_id)s LIMIT 1
"""


class TaskEngine:
    """procrastinate on one PostgreSQL database: the jobs' tasks, deferring, the engine's own tables and
    its figures. `work_run` is set by whoever works jobs in this process (`desk.workers`)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.conninfo = conninfo(url)
        app = procrastinate.App(
            connector=PsycopgConnector(
                conninfo=self.conninfo, min_size=1, max_size=4, timeout=POOL_WAIT_S, reconnect_timeout=POOL_WAIT_S
            )
        )
        self.jobs = PatientJobManager(app.connector)
        """The worker's job manager: it rides out an outage (`desk.patient_jobs`)."""
        app.job_manager = self.jobs
        self.app = self._register(app)
        self.work_run: Callable[[int, bool], None] | None = None
        """Called with (run_id, retried) by the job; set by `desk.workers.work_jobs`."""
        self.drive_sample: Callable[[int, dict], None] | None = None
        """Called with (sample_id, look) by a sample's drive job; set by `desk.workers.work_jobs`."""
        self.enqueue_left: Callable[[int, str | None], bool] | None = None
        """Called with (run_id, source) for a run the sweep found queued with no job; set by `work_jobs`."""
        self.alert_pass: Callable[[], int] | None = None
        """Called by the periodic alert job; set by `desk.workers.work_jobs`."""
        self._sync: procrastinate.App | None = None
        self._sync_connector: SyncPsycopgConnector | None = None
        self._sync_lock = threading.Lock()

    def _register(self, app: procrastinate.App) -> procrastinate.App:
        """The jobs' tasks on `app` (the worker's, and the deferring one: procrastinate ties a task to one app)."""

        # A job the database cut short, or one that found its run still driven by a process told to stop, is
        # tried again every RETRY_S until it can drive the run; the run's own compare-and-set keeps a second try
        # from doing anything twice. Any other error fails the job (the sweep puts a queued run back).
        @app.task(name=WORK_RUN, pass_context=True, retry=Retry(RETRIED_ERRORS, RETRY_S))
        def work_run(context: procrastinate.JobContext, run_id: int) -> None:
            if self.work_run is None:
                raise RuntimeError("this process works no runs")
            self.work_run(run_id, (context.job.attempts or 0) > 0)

        # One look at a batch sample; it defers the next one itself. A look cut short is tried again the same way.
        @app.task(name=DRIVE_SAMPLE, retry=Retry(RETRIED_ERRORS, RETRY_S))
        def drive_sample(sample_id: int, look: dict) -> None:
            if self.drive_sample is None:
                raise RuntimeError("this process drives no batch samples")
            self.drive_sample(sample_id, look)

        # The alert pass: deferred by every worker's periodic deferrer at each tick, once per tick across them all
        # (procrastinate records the tick), and never two waiting or running at once (its locks).
        @app.periodic(cron=alert_cron(), periodic_id="alerts")
        @app.task(name=ALERTS, queue=RUNS, priority=ALERTS_PRIORITY, lock="santa-alerts", queueing_lock="santa-alerts")
        def alerts(timestamp: int) -> None:
            if self.alert_pass is not None:
                self.alert_pass()

        return app

    async def recover_stalled(self) -> int:
        """Retry the jobs of workers that stopped heartbeating (their runs are taken over); how many."""
        retried = 0
        for job in await self.jobs.get_stalled_jobs(seconds_since_heartbeat=stalled_s()):
            try:
                await self.jobs.retry_job(job)
                retried += 1
            except Exception:  # noqa: BLE001 - another worker's recovery retried it first
                continue
        return retried

    async def sweep_queued(self) -> int:
        """Put back on the queue the runs left `queued` with no job (a process died between the two); how many."""
        rows = await self.app.connector.execute_query_all_async(
            QUEUED_WITHOUT_JOB_SQL, task=WORK_RUN, age_s=QUEUED_WITHOUT_JOB_S
        )
        for row in rows:
            if self.enqueue_left is not None:
                await asyncio.to_thread(self.enqueue_left, row["id"], row["source"])
        return len(rows)

    async def maintain(self, reconcile: Callable[[], Awaitable[None]] | None = None) -> None:
        """Every worker, beside its jobs and whatever its slots are busy with, every recover_every_s(): first
        `reconcile` its own jobs and runs after an outage (`desk.workers`); then, when a worker's silence counts
        (`PatientJobManager.silence_counts`), recover stalled jobs and prune silent workers; every SWEEP_EVERY_S,
        sweep queued runs without a job (several workers doing it at once is harmless). Not a job itself, so a
        backlog of work never delays a take-over."""
        tick, every = 0.0, recover_every_s()
        jobs = self.jobs

        async def take_overs() -> None:
            if await jobs.silence_counts(silence_counts_after_s()):
                await self.recover_stalled()
                await jobs.prune_silent(stalled_s())

        while True:
            await asyncio.sleep(every)
            tick += every
            sweep = tick >= SWEEP_EVERY_S
            tick = 0 if sweep else tick
            for step in (reconcile, take_overs, self.sweep_queued if sweep else None):
                if step is None:
                    continue
                try:  # each on its own: one that fails never keeps the others from running
                    await step()
                except Exception as exc:  # noqa: BLE001 - the database away: the next pass tries again
                    if not connector_away(exc):
                        log.exception("a maintenance pass of the task engine failed")

    def sync_app(self) -> procrastinate.App:
        """The engine opened for deferring from ordinary threads (the app's pages, the command line)."""
        with self._sync_lock:
            if self._sync is None:
                connector = SyncPsycopgConnector(
                    conninfo=self.conninfo, min_size=1, max_size=4, timeout=POOL_WAIT_S, reconnect_timeout=POOL_WAIT_S
                )
                app = self._register(procrastinate.App(connector=connector))
                app.open()
                self._sync, self._sync_connector = app, connector
            return self._sync

    def sync_pool(self) -> ConnectionPool:
        """The deferring app's connections (opened on first use), for the engine's own queries."""
        self.sync_app()
        assert self._sync_connector is not None  # set with the app, under the same lock
        return self._sync_connector.pool

    def ensure_schema(self) -> None:
        """Install the engine's tables once per database (an advisory lock serialises concurrent starts)."""
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
            try:
                row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
                if row is None or row[0] is None:
                    conn.execute(self.app.schema_manager.get_schema())
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))

    def enqueue(self, store: Store, run_id: int, source: str | None = None) -> bool:
        """Put the run on its queue; False when a job of the run is already waiting (one is enough)."""
        with self.sync_pool().connection() as conn:
            if conn.execute(WAITING_JOB_SQL, {"task": WORK_RUN, "run_id": run_id}).fetchone():
                return False
        if source == "batch":
            run = store.load_run(run_id)
            lane = f"batch:{provider_pair(run.reviewer_b, run.reviewer_c)}:{run_id % batch_lanes()}"
            queue, lock, priority = BATCH, lane, 0
        else:
            queue, lock, priority = RUNS, f"run-{run_id}", INTERACTIVE_PRIORITY
        self.sync_app().configure_task(WORK_RUN, queue=queue, lock=lock, priority=priority).defer(run_id=run_id)
        return True

    def defer_drive(self, sample_id: int, look: dict, now: bool = False) -> bool:
        """Put a look at a batch sample on the `batch` queue, due in `look["after_s"]` seconds; False when a look
        at it is already waiting (one is enough: each looks at everything). `now` (a person's Resume or Try again,
        a start): a waiting look is made due at once and carries `look` instead (its backoff starts over)."""
        if now and self.look_now(sample_id, look):
            return False
        # Why no queueing lock: a look that was under way on a worker that died is set back to waiting when it is
        # retried, and a queueing lock would refuse that while another look waits, leaving the dead one holding
        # the sample's lock for ever. Two looks waiting at once (a race here) are harmless: the lock runs them one
        # after the other, each reads everything, and a look defers its next only when none waits.
        if self._looks(sample_id, ("todo",)):
            return False
        self.sync_app().configure_task(
            DRIVE_SAMPLE,
            queue=BATCH,
            priority=DRIVE_PRIORITY,
            lock=f"sample-{sample_id}",
            schedule_in={"seconds": max(0.0, float(look.get("after_s", 0)))},
        ).defer(sample_id=sample_id, look=look)
        return True

    def look_now(self, sample_id: int, look: dict | None = None) -> bool:
        """Make the sample's waiting look due at once (with `look` instead of its own, if given); False when none
        waits."""
        look_json = None if look is None else json.dumps(look)
        return self._look_now(sql.Placeholder("sample_id"), sample_id=sample_id, look=look_json)

    def look_after_run(self, run_id: int) -> None:
        """A batch run settled: its sample's waiting look is made due at once (its next review starts now, not at
        the next scheduled look)."""
        self._look_now(SAMPLE_OF_RUN, run_id=run_id, look=None)

    def _look_now(self, sample: sql.Composable, **params: object) -> bool:
        with self.sync_pool().connection() as conn:
            return conn.execute(LOOK_NOW_SQL.format(sample=sample), {"task": DRIVE_SAMPLE, **params}).rowcount > 0

    @contextmanager
    def batch_start_lock(self) -> Iterator[None]:
        """Hold the lock under which looks count the batch runs in flight and start reviews (one look at a time,
        across all processes; a process that dies holding it releases it with its connection)."""
        with self.sync_pool().connection() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (BATCH_START_LOCK,))
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (BATCH_START_LOCK,))

    def driving(self, sample_id: int) -> bool:
        """Whether a look at the sample is waiting or under way (its drive chain goes on)."""
        return self._looks(sample_id, ("todo", "doing"))

    def _looks(self, sample_id: int, statuses: tuple[str, ...]) -> bool:
        with self.sync_pool().connection() as conn:
            return (
                conn.execute(
                    DRIVING_SQL, {"task": DRIVE_SAMPLE, "sample_id": sample_id, "statuses": list(statuses)}
                ).fetchone()
                is not None
            )

    def status(self) -> EngineStatus:
        """Queue depth, job ages and workers, read now."""
        with self.sync_pool().connection() as conn:
            return read_status(conn, QUEUES)

    def close(self) -> None:
        """Close the deferring pool."""
        with self._sync_lock:
            if self._sync is not None:
                self._sync.close()
                self._sync, self._sync_connector = None, None


_ENGINES: dict[str, TaskEngine] = {}
_ENGINES_LOCK = threading.Lock()


def task_engine(url: str) -> TaskEngine:
    """The process's engine for a PostgreSQL URL (its tables installed on first use)."""
    with _ENGINES_LOCK:
        engine = _ENGINES.get(url)
        if engine is None:
            engine = TaskEngine(url)
            engine.ensure_schema()
            _ENGINES[url] = engine
        return engine
