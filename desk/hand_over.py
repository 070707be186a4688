"""How a run passes from one worker to another, and the notes that say so: taken over from a dead claim (its worker
stopped heartbeating, or its process is gone), handed over by a worker that stops, given back by a worker that gave
up waiting for the database. A run being moved is still on its way through the task engine (`in_flight`)."""

from __future__ import annotations

from desk.engine_timing import stalled_s
from desk.outage import OUTAGE
from santa_core.models import RunStatus
from storage.workers import host_name, this_worker

TAKEN_OVER = "taken over:"
HANDED_OVER = "handed over:"
MOVING = (TAKEN_OVER, HANDED_OVER)
"""How the notes of an interrupted run that the task engine is moving to another worker begin (not a stop to wait
on); the rest says what happened (`taken_over`, `HANDED_OVER_NOTE`, `given_back`)."""
HANDED_OVER_NOTE = f"{HANDED_OVER} the worker working on this run was stopped; the next free worker takes it first"


def taken_over(worker: str | None) -> str:
    """The note of a run taken over from `worker`'s claim, saying why the claim counted as dead."""
    if worker == this_worker():
        why = "no thread of it drives the run any more (it gave up waiting for the database)"
    elif worker and worker.partition(":")[0] == host_name():
        why = "its process is gone"
    else:
        why = f"it sent no heartbeat for over {stalled_s():g} s while the database answered"
    return f"{TAKEN_OVER} the worker working on this run ({worker or 'unknown'}) stopped: {why}"


def given_back() -> str:
    """The note of a run a worker gives back after waiting for the database longer than it holds answers."""
    return (
        f"{HANDED_OVER} the database was unreachable for {OUTAGE.last_away_s:.0f} s, longer than a worker waits "
        f"for it ({OUTAGE.hold_s:g} s); the next free worker carries on from the last stored step"
    )


FINISHED_WAITING = {RunStatus.QUEUED, RunStatus.RUNNING}


def in_flight(status: RunStatus, note: str) -> bool:
    """Whether a run is still on its way through the engine (queued, running, or being moved)."""
    return status in FINISHED_WAITING or (status == RunStatus.INTERRUPTED and note.startswith(MOVING))
