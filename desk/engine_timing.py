"""How the task engine's workers keep time (`desk.task_engine`): how often they heartbeat and look for stalled jobs,
when a silent worker counts as dead, and the periodic alert job's schedule; each from its environment variable."""

from __future__ import annotations

import os


def env_float(name: str, default: float, low: float, high: float) -> float:
    """The variable `name` as a number within [low, high] (`default` when unset or not a number)."""
    try:
        return min(high, max(low, float(os.environ.get(name, default))))
    except ValueError:
        return default


def alert_cron() -> str:
    """The periodic alert job's schedule: every SANTA_ALERT_EVERY_S seconds (default 10, whole seconds, 1-59) as a
    six-field cron (seconds last, as procrastinate reads it)."""
    every = int(env_float("SANTA_ALERT_EVERY_S", 10.0, 1.0, 59.0))
    return f"* * * * * */{every}"


def heartbeat_s() -> float:
    """How often a worker tells the database it is alive: SANTA_WORKER_HEARTBEAT_S, default 10."""
    return env_float("SANTA_WORKER_HEARTBEAT_S", 10.0, 0.2, 300.0)


def stalled_s() -> float:
    """Silence after which a worker counts as dead and its jobs are retried: SANTA_WORKER_STALLED_S, default 30
    (at least twice the heartbeat)."""
    return max(2 * heartbeat_s(), env_float("SANTA_WORKER_STALLED_S", 30.0, 0.5, 3600.0))


def recover_every_s() -> float:
    """How often every worker looks for stalled jobs: SANTA_WORKER_RECOVER_S, default 5."""
    return env_float("SANTA_WORKER_RECOVER_S", 5.0, 0.2, 60.0)


POOL_WAIT_S = 5.0
"""How long the engine waits for a connection of its pool (the database away: a fetch finds no job then, a stop is
not held up by it, a page is told at once), and how long its pool keeps trying to connect before it starts over:
psycopg's pool doubles its pause between tries without a cap until it gives up, so after a long outage it could
take as long again to notice the database is back, and a live worker's heartbeat would come too late."""


FETCH_POLL_S = 0.5
"""How often an idle worker looks for jobs when no notification woke it: a job deferred for later (a sample's next
look) is found this long after it is due at most."""


def recovery_bound_s() -> float:
    """At most this long after a worker dies, its jobs are back in the queue: silence, then a recovery pass
    (35 s with the defaults); they start at the next free slot."""
    return stalled_s() + recover_every_s()


def silence_counts_after_s() -> float:
    """How long the database must have answered (and been up) before a worker's silence counts as its death again
    after an outage: the stalled period plus one wait of a worker's pool. A live worker's pool may be between two
    tries to connect when the database comes back (POOL_WAIT_S at most), and its heartbeat comes that much later:
    counting its silence sooner took its jobs over while it worked on them (a CI run with 2.5 s of silence in the
    tests' timings, under load)."""
    return stalled_s() + POOL_WAIT_S


def outage_take_over_s() -> float:
    """About this long after the database answers again, the jobs of a worker that died during the outage are back
    in the queue: its silence counts (`silence_counts_after_s`), then a recovery pass (40 s with the defaults)."""
    return silence_counts_after_s() + recover_every_s()
