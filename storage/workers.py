"""Which process works on a run, and whether that process is still alive.

A run in `running` records the worker that claimed it. At start the app marks as interrupted
only runs whose worker is gone, so a command-line run working next to the app, or another app
process, is left alone.
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime, timedelta

STALE_AFTER = timedelta(hours=1)
"""A run claimed on another host with no state change for this long counts as orphaned."""


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), or None if unknown or if the process has
    ended and only waits to be reaped (a zombie runs nothing any more)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


def host_name() -> str:
    """This host's name in claims: SANTA_HOST_NAME, else the machine's host name (set it where containers
    that are not one machine share a host name)."""
    return os.environ.get("SANTA_HOST_NAME", "").strip() or socket.gethostname()


_OWN_START: dict[int, str] = {}
"""This process's start time by its pid, read once (a forked child has a pid, and a start, of its own)."""


def this_worker() -> str:
    """host:pid:start — the start time tells a live process from a later one that reused its pid."""
    pid = os.getpid()
    if pid not in _OWN_START:
        _OWN_START[pid] = _start_time(pid) or "?"
    return f"{host_name()}:{pid}:{_OWN_START[pid]}"


def _alive(pid: int, start: str) -> bool:
    if start != "?":
        return _start_time(pid) == start
    if os.name != "posix":  # os.kill(pid, 0) is not a probe on Windows: assume alive, stay safe
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists but not ours, or cannot tell: never interrupt a maybe-live run
        return True
    return True


def is_orphaned(worker: str | None, updated_at: datetime, now: datetime | None = None) -> bool:
    """True when the run's worker process is gone (or unknown, or silent for too long elsewhere)."""
    if not worker:
        return True
    if worker.partition(":")[0] != host_name():
        now = now or datetime.now(UTC)
        updated = updated_at if updated_at.tzinfo else updated_at.replace(tzinfo=UTC)
        return now - updated > STALE_AFTER
    return not alive_on_this_host(worker)


def alive_on_this_host(worker: str | None) -> bool:
    """True only when `worker` names a process on this host that is still running (a live command line,
    another worker here). The task engine's take-over asks this before treating a claim as dead: a claim
    made on another host is judged by its worker's heartbeat, not here."""
    if not worker:
        return False
    host, _, rest = worker.partition(":")
    pid, _, start = rest.partition(":")
    return host == host_name() and pid.isdigit() and _alive(int(pid), start)
