"""Riding out a database outage (PostgreSQL restarting, failing over, or stopped for a while) in a worker.

While the database is away, a worker keeps what it holds: the jobs it works stay its own, the runs it drives stay
claimed by it, and an answer a model returned stays in memory until it is stored. Every write and read of a run a
job drives goes through `PatientStore`, which waits for the database (retrying with backoff) instead of failing,
so a run simply pauses and carries on from where it was when the database answers again: no answer is bought
twice, and no other worker takes the run over. Because the write-ahead call log is written before every request,
no new request leaves while the database is away.

Bounds: the wait lasts at most SANTA_OUTAGE_HOLD_S (default 300 s) of outage; past it, calls fail as before (the
answers held are dropped, the worker says how many, and the runs are taken over once the database is back). A
worker told to stop waits for the database at most its stop grace (`Outage.stop`).

The process logs one line of its own when it finds the database away and one when it is back, with how many runs
waited (`Outage.away`, `Outage.back`).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import procrastinate.exceptions
import psycopg
import sqlalchemy.exc
from tenacity import RetryCallState, Retrying, retry_if_exception, wait_exponential_jitter

from santa_core.models import RunState, RunStatus

log = logging.getLogger("santa.database")
T = TypeVar("T")

HOLD_S = 300.0
"""The longest outage a worker rides out holding its answers (SANTA_OUTAGE_HOLD_S)."""
QUIET_S = 1.0
"""How long the database must stay away before the process says so (a dropped connection replaced at once is not
an outage)."""
WAIT_S = (0.2, 5.0)
"""The first and the longest pause between two tries while the database is away (doubling, with jitter)."""
ANSWER_WRITES = frozenset({"save_review", "save_screen", "save_proposal"})
"""Writes that carry an answer a model returned (paid for): while one waits, the worker holds that answer."""
MOVES = frozenset({"transition", "commit_decision"})
"""Compare-and-set writes of a run's state: True when they (or an earlier try of theirs) moved it."""
AWAY_STATES = ("08", "57P")
"""SQLSTATE classes of a connection lost and of a server shutting down or starting up."""


def hold_s() -> float:
    """SANTA_OUTAGE_HOLD_S: how long an outage may last before waiting calls give up (default 300 s)."""
    try:
        return min(3600.0, max(0.0, float(os.environ.get("SANTA_OUTAGE_HOLD_S", HOLD_S))))
    except ValueError:
        return HOLD_S


def database_away(exc: BaseException | None) -> bool:
    """Whether an error says the database cannot be reached (a connection refused or cut, a server shutting down or
    starting up), anywhere in its chain — not that a statement was wrong or a row conflicted."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, sqlalchemy.exc.DBAPIError):
            if exc.connection_invalidated:
                return True
            if exc.orig is not None and exc.orig is not exc.__cause__:
                return database_away(exc.orig)
        if isinstance(exc, psycopg.Error):
            state = getattr(exc, "sqlstate", None)
            if state is None:
                return isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))
            return state.startswith(AWAY_STATES)
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def connector_away(exc: BaseException) -> bool:
    """`database_away` for the task engine's own errors (procrastinate wraps its connections' errors)."""
    return (
        isinstance(exc, procrastinate.exceptions.ConnectorException)
        and (exc.__cause__ is None or database_away(exc.__cause__))
        or database_away(exc)
    )


def error_line(exc: BaseException) -> str:
    """The first line of what failed, from the innermost error of the chain that says something (the driver's own
    words, not a wrapper's "Database error.")."""
    said, seen = exc, 0
    current: BaseException | None = exc
    while current is not None and seen < 10:
        if str(current).strip():
            said = current
        current, seen = current.__cause__ or current.__context__, seen + 1
    text = str(said).strip().splitlines()
    return f"{type(said).__name__}: {text[0][:200] if text else 'no message'}"


@dataclass
class Waiter:
    """One call waiting for the database: for which run, and whether it holds an answer."""

    run_id: int | None
    holds_answer: bool


@dataclass
class Outage:
    """What this process knows of the database's reachability, shared by every thread: since when it is away,
    when it came back, who waits for it, and the answers dropped because it stayed away too long."""

    hold_s: float = field(default_factory=hold_s)
    away_since: float | None = None
    """Monotonic time the database was first found away (None: reachable)."""
    back_at: float = float("-inf")
    """Monotonic time it was last found back (minus infinity: never seen away)."""
    last_away_s: float = 0.0
    """How long the last outage lasted."""
    dropped_answers: int = 0
    _waiters: dict[int, Waiter] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop_by: float | None = None
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _said_away: bool = False

    def _failed_try(self, state: RetryCallState) -> None:
        """A try failed because the database is away (tenacity calls this before it waits to try again)."""
        failure = None if state.outcome is None else state.outcome.exception()
        self.away(failure if failure is not None else "the database did not answer")

    def away(self, reason: BaseException | str) -> None:
        """The database did not answer: once it has been away QUIET_S, say so (once per outage: a connection the
        database dropped before a restart, replaced at once, is no outage to announce)."""
        with self._lock:
            now = time.monotonic()
            if self.away_since is None:
                self.away_since, self._said_away = now, False
            if self._said_away or now - self.away_since < QUIET_S:
                return
            self._said_away = True
        why = reason if isinstance(reason, str) else error_line(reason)
        log.warning(
            "santa: the database is unreachable (%s); runs in flight wait for it and answers already "
            "received are held (up to %g s)",
            why,
            self.hold_s,
        )

    def back(self) -> None:
        """The database answered: if it was away, say for how long and how many runs waited."""
        with self._lock:
            if self.away_since is None:
                return
            now = time.monotonic()
            self.last_away_s, self.away_since, self.back_at = now - self.away_since, None, now
            runs = {w.run_id for w in self._waiters.values() if w.run_id is not None}
            held = sum(w.holds_answer for w in self._waiters.values())
            said, self._said_away = self._said_away, False
        with self._changed:
            self._changed.notify_all()  # the others waiting try again now, not at the end of their pause
        if not said:
            return
        log.warning(
            "santa: the database is back after %.0f s; %d run(s) that waited carry on (%d answer(s) held "
            "are being stored)",
            self.last_away_s,
            len(runs),
            held,
        )

    def reachable_for(self) -> float:
        """Seconds since the database was last found back (0 while away; infinity if never seen away)."""
        with self._lock:
            return 0.0 if self.away_since is not None else time.monotonic() - self.back_at

    def away_for(self) -> float:
        """Seconds the current outage has lasted (0 when reachable)."""
        with self._lock:
            return 0.0 if self.away_since is None else time.monotonic() - self.away_since

    def stop(self, grace_s: float) -> None:
        """This process is stopping: calls waiting for the database wait at most `grace_s` more."""
        with self._lock:
            by = time.monotonic() + grace_s
            self._stop_by = by if self._stop_by is None else min(self._stop_by, by)
        with self._changed:
            self._changed.notify_all()

    def started(self) -> None:
        """A worker loop starts in this process: a stop grace said before no longer applies."""
        with self._lock:
            self._stop_by = None

    def waiting(self) -> tuple[set[int], int]:
        """The runs whose calls wait for the database now, and the answers they hold."""
        with self._lock:
            return (
                {w.run_id for w in self._waiters.values() if w.run_id is not None},
                sum(w.holds_answer for w in self._waiters.values()),
            )

    def giving_up(self, first_failure: float | None = None) -> bool:
        """Whether calls stop waiting for the database: the outage (or this call's own failures, since
        `first_failure`) outlasted the bound, or the stop grace is over."""
        now = time.monotonic()
        with self._lock:
            past_stop = self._stop_by is not None and now >= self._stop_by
        own = first_failure is not None and now - first_failure >= self.hold_s
        return past_stop or own or self.away_for() >= self.hold_s

    def _give_up(self, state: RetryCallState) -> bool:
        return self.giving_up(time.monotonic() - state.seconds_since_start if state.seconds_since_start else None)

    def _sleep(self, seconds: float) -> None:
        """Pause between two tries; the database found back, or a stop, ends it at once."""
        with self._lock:
            if self._stop_by is not None:
                seconds = max(0.0, min(seconds, self._stop_by - time.monotonic()))
            if self.away_since is None:
                return  # found back meanwhile: try now
        with self._changed:
            self._changed.wait(seconds)

    def call(
        self,
        fn: Callable[[], T],
        what: str,
        run_id: int | None = None,
        holds_answer: bool = False,
        landed: Callable[[], bool] | None = None,
        landed_result: Any = None,
    ) -> T:
        """`fn()`, tried again while the database is away (within the bounds). `landed`, asked before each try after
        a failed one, says whether an earlier try committed although its answer was lost with the connection: then
        `landed_result` is what the write returned."""
        me = threading.get_ident()
        tried = False
        retrying = Retrying(
            retry=retry_if_exception(database_away),
            stop=self._give_up,
            sleep=self._sleep,
            wait=wait_exponential_jitter(multiplier=WAIT_S[0], max=WAIT_S[1]),
            reraise=True,
            before_sleep=self._failed_try,
        )
        try:
            for attempt in retrying:
                with attempt:
                    if tried:
                        with self._lock:
                            self._waiters[me] = Waiter(run_id, holds_answer)
                        if landed is not None and landed():
                            self.back()
                            return landed_result  # the write already holds
                    tried = True
                    result = fn()
                    if attempt.retry_state.attempt_number > 1:
                        self.back()
                    return result
        except BaseException as exc:
            if holds_answer and database_away(exc):
                with self._lock:
                    self.dropped_answers += 1
                log.error(
                    "santa: dropping an answer that could not be stored (%s of run %s): the database stayed "
                    "away; it is asked for again when the run is taken over or handed over",
                    what,
                    run_id,
                )
            raise
        finally:
            with self._lock:
                self._waiters.pop(me, None)
        raise AssertionError("unreachable")  # pragma: no cover - Retrying either returns or raises


OUTAGE = Outage()
"""This process's view of the database."""
PATIENT: ContextVar[bool] = ContextVar("santa_patient", default=False)
"""Whether the current work waits for the database (a job's run, and the reviewer calls it starts), or is told at
once that it is away (a page's read, the same store used by the app's pages)."""


@contextmanager
def patient() -> Iterator[None]:
    """Inside, `PatientStore` calls wait for the database (`JobHost.work_run` drives its run in here)."""
    token = PATIENT.set(True)
    try:
        yield
    finally:
        PATIENT.reset(token)


def _run_of(args: tuple) -> int | None:
    return args[0] if args and isinstance(args[0], int) and not isinstance(args[0], bool) else None


def same_state(state: RunState, new: RunState) -> bool:
    """Whether the run is already in `new` (the earlier try of a move committed)."""
    return state.model_dump() == new.model_dump()


class PatientStore:
    """A run store whose every call waits for the database while it is away (`OUTAGE.call`): the store a worker's
    runner drives runs through. Writes that are not idempotent by themselves say how to tell that an earlier try
    committed before its connection was cut (a state move, an auto-approval, a write-ahead note, a screen), so a
    try again never writes twice."""

    def __init__(self, inner: Any, outage: Outage = OUTAGE) -> None:
        self.inner = inner
        """The store itself (for callers that must fail at once instead of waiting: a page)."""
        self.outage = outage

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name.startswith("_") or not callable(attr) or not PATIENT.get():
            return attr  # a page (or anything but a job's run) is told at once that the database is away

        @functools.wraps(attr)
        def patient(*args: Any, **kwargs: Any) -> Any:
            landed = self._landed(name, args, kwargs)
            return self.outage.call(
                functools.partial(attr, *args, **kwargs),
                name,
                _run_of(args),
                name in ANSWER_WRITES,
                landed,
                name in MOVES or None,
            )

        return patient

    def _landed(self, name: str, args: tuple, kwargs: dict) -> Callable[[], bool] | None:
        """How to tell that an earlier try of a write that is not idempotent committed (None: trying again is
        safe by itself: the store compares what it holds with what it is given)."""
        inner = self.inner
        if name in MOVES:
            run_id, new = args[0], (kwargs.get("new") or args[2])
            return lambda: _moved(inner, run_id, new)
        if name == "note_sent":
            since = datetime.now(UTC)
            return lambda: inner.noted_since(*args[:6], since=since)
        if name == "save_screen":
            run_id, round_no, result = args[:3]
            return lambda: _screen_stored(inner, run_id, round_no, result)
        return None


def _moved(store: Any, run_id: int, new: RunState) -> bool:
    """A move committed: the run is in `new` (and, when running, under this process's claim)."""
    from storage.workers import this_worker  # noqa: PLC0415 - storage is below desk; imported where used

    state = store.load_run(run_id).state
    if not same_state(state, new):
        return False
    return new.status != RunStatus.RUNNING or store.claims([run_id])[run_id].worker == this_worker()


def _screen_stored(store: Any, run_id: int, round_no: int, result: Any) -> bool:
    """The round holds this screen (a round keeps a screen's last call only: its earlier tries are in the call log)."""
    rnd = store.load_round(run_id, round_no)
    return rnd is not None and rnd.screens.get(result.entry) == result.model_copy(update={"calls": result.calls[-1:]})
