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


FETCH_POLL_S = 0.5
"""How often an idle worker looks for jobs when no notification woke it: a job deferred for later (a sample's next
look) is found this long after it is due at most."""


def recovery_bound_s() -> float:
    """At most this long after a worker dies, its jobs are back in the queue: silence, then a recovery pass
    (35 s with the defaults); they start at the next free slot."""
    return stalled_s() + recover_every_s()
