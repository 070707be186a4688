"""The task engine's figures: each queue's depth and the age of its oldest waiting and working jobs, the live and
silent workers and the stalled jobs (`santa worker --status` and the Operations panel)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg

from desk.engine_timing import heartbeat_s, recovery_bound_s, stalled_s


@dataclass
class QueueFigures:
    """One queue's depth and the age of its oldest waiting and working jobs."""

    queue: str
    waiting: int = 0
    """Jobs due and not started (a job scheduled for later is not counted until it is due)."""
    working: int = 0
    oldest_waiting_s: float | None = None
    """Seconds since the longest-waiting job became due: deferred, put back for a retry, or its scheduled time."""
    oldest_working_s: float | None = None
    """Seconds since the longest-working job started (its latest start: a retried job counts from its newest)."""


@dataclass
class EngineStatus:
    """What `santa worker --status` and the Operations panel show."""

    queues: list[QueueFigures] = field(default_factory=list)
    live_workers: int = 0
    silent_workers: int = 0
    stalled_jobs: int = 0
    heartbeat_s: float = 0.0
    stalled_after_s: float = 0.0
    recovery_bound_s: float = 0.0

    def as_json(self) -> dict:
        """A JSON-ready dict (the command line's --json)."""
        return asdict(self)


STATUS_SQL = """
SELECT j.queue_name, j.status::text, count(*),
       extract(epoch FROM now() - min(CASE j.status WHEN 'todo' THEN greatest(j.scheduled_at, e.put_back)
                                                   ELSE e.started END))
  FROM procrastinate_jobs j
 CROSS JOIN LATERAL (SELECT max(at) FILTER (WHERE type IN ('deferred', 'deferred_for_retry', 'retried')) AS put_back,
                            max(at) FILTER (WHERE type = 'started') AS started
                       FROM procrastinate_events WHERE job_id = j.id) e
 WHERE (j.status = 'doing' OR (j.status = 'todo' AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())))
   AND j.task_name <> 'santa.alerts'
 GROUP BY 1, 2
"""
"""Per queue, the due jobs waiting and the jobs working, and the age of the oldest of each. A waiting job is due
since the later of its scheduled time and the last time it was put in `todo` (procrastinate's events: `deferred`
when made, `deferred_for_retry` when a retry or a stalled-job recovery puts it back, `retried` for a failed job
tried again); a working job since its latest `started` (a job retried and started again counts from its newest
start). Counting both from `deferred` made a healthy backlog look stuck (a job started 18 s ago showed 132 s).
Cheap: the jobs table stays small (a job that succeeds is deleted) and only the waiting and working jobs' events
are read, each job's through the job_id index. The periodic alert pass (`santa.alerts`, a few milliseconds every
few seconds) is left out: the figures are the runs' queue."""
WORKERS_SQL = """
SELECT count(*) FILTER (WHERE last_heartbeat >= now() - make_interval(secs => %(s)s)),
       count(*) FILTER (WHERE last_heartbeat < now() - make_interval(secs => %(s)s))
  FROM procrastinate_workers
"""
STALLED_SQL = """
SELECT count(*) FROM procrastinate_jobs j LEFT JOIN procrastinate_workers w ON w.id = j.worker_id
 WHERE j.status = 'doing' AND (w.id IS NULL OR w.last_heartbeat < now() - make_interval(secs => %(s)s))
"""


def read_status(conn: psycopg.Connection[Any], queues: Iterable[str]) -> EngineStatus:
    """Queue depth, job ages and workers, read now over `conn` (every queue of `queues` shown, empty or not)."""
    figures = {q: QueueFigures(q) for q in queues}
    for queue, status, count, age in conn.execute(STATUS_SQL).fetchall():
        fig = figures.setdefault(queue, QueueFigures(queue))
        seconds = None if age is None else float(age)
        if status == "todo":
            fig.waiting, fig.oldest_waiting_s = count, seconds
        else:
            fig.working, fig.oldest_working_s = count, seconds
    live, silent = _one_row(conn, WORKERS_SQL, {"s": stalled_s()})
    (stalled,) = _one_row(conn, STALLED_SQL, {"s": stalled_s()})
    return EngineStatus(
        queues=list(figures.values()),
        live_workers=live,
        silent_workers=silent,
        stalled_jobs=stalled,
        heartbeat_s=heartbeat_s(),
        stalled_after_s=stalled_s(),
        recovery_bound_s=recovery_bound_s(),
    )


def _one_row(conn: psycopg.Connection[Any], query: str, params: dict[str, Any]) -> tuple[Any, ...]:
    """The row of a query of counts (an aggregate gives one row, always)."""
    row = conn.execute(query, params).fetchone()
    if row is None:
        raise RuntimeError("a count gave no row")
    return row


def status_text(status: EngineStatus) -> str:
    """The figures as plain lines (the command line's `worker --status`): ages since a job became due (waiting) and
    since it started (working), as on the Operations panel."""

    def age(s: float | None) -> str:
        return "-" if s is None else f"{s:.0f} s"

    lines = [
        f"workers: {status.live_workers} live, {status.silent_workers} silent "
        f"(heartbeat every {status.heartbeat_s:g} s, dead after {status.stalled_after_s:g} s, its jobs back in the "
        f"queue within {status.recovery_bound_s:g} s); "
        f"stalled jobs: {status.stalled_jobs}"
    ]
    for q in status.queues:
        lines.append(
            f"queue {q.queue}: {q.waiting} waiting (oldest waiting since due: {age(q.oldest_waiting_s)}), "
            f"{q.working} working (oldest working since started: {age(q.oldest_working_s)})"
        )
    return "\n".join(lines)
