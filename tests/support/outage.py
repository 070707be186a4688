"""Pieces for measuring a database outage under `santa worker` processes (bench/db_outage.py, and a fault campaign
in the tests): a PostgreSQL cluster of one's own that can be halted and resumed, a loopback model that records
when each call arrived and was answered, worker processes with kept logs, and the checks made afterwards.

Which calls are "the same call": every request carries a fresh fence nonce (and a screen a fresh key), so two
tries of one call never have the same bytes. `call_key` hashes the body with those blanked out (and the cache
breakpoints dropped): what the call asks, of which model. Reviewer slots B and C send the same system prompt and
the same user turn (the prefix depends only on the rubric, the data only on the run's round), so their keys
differ only by the model: with two different reviewer models they are told apart; with one model in both slots
they are identical, and `bought_twice` pairs each answer with a distinct later request (count by key and
occurrence), so the twin slot's own first request is never taken for a repeat of its sibling's.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Self

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from tests.support import forked
from tests.support.forked import Forked
from tests.support.messages_api import (
    MessagesStub,
    Reply,
    as_reply,
    fenced_output,
    is_screen,
    santa_scenario,
    schema_properties,
    screen_answer,
    screen_key,
    uncached,
    user_text,
)
from tests.support.workers import PRODUCTION_RECOVERY, REPO, SETTLED, start_worker, stop_worker, worker_env

SERVER = REPO / "scripts" / "pg_test_server.sh"
SCREEN, REVIEW, FIX = "screen", "review", "fix"
PURPOSES = (SCREEN, REVIEW, FIX)


# --- a cluster of one's own ------------------------------------------------------------------------------------


class OwnCluster:
    """A throwaway PostgreSQL cluster (scripts/pg_test_server.sh) in a temporary folder, for a test or bench that
    stops or restarts the database (the shared one must not go away under other tests). A context manager:
    entering starts it, leaving deletes it."""

    def __init__(self, prefix: str = "santa-pg-own-") -> None:
        self.work = Path(tempfile.mkdtemp(prefix=prefix))
        self.work.chmod(0o755)  # the cluster runs as a non-root account when the caller is root
        self.env = {**os.environ, "SANTA_PG_DIR": str(self.work / "pg")}
        self.url = ""

    def _server(self, command: str) -> str:
        done = subprocess.run([str(SERVER), command], env=self.env, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"pg_test_server.sh {command} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def __enter__(self) -> Self:
        try:
            self.url = self._server("start")
        except BaseException:
            shutil.rmtree(self.work, ignore_errors=True)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        subprocess.run([str(SERVER), "stop"], env=self.env, capture_output=True, timeout=120)
        shutil.rmtree(self.work, ignore_errors=True)

    def halt(self) -> None:
        """Stop the server (every connection cut, connecting refused); the data stays."""
        self._server("halt")

    def resume(self) -> None:
        """Start the halted server again on its port; returns once it accepts connections."""
        self._server("resume")

    def restart(self) -> None:
        """A fast restart: every connection cut, the server back at once."""
        self._server("restart")


# --- a loopback model that records every call ------------------------------------------------------------------

_NONCE = re.compile(r"(untrusted_[a-z*]+_)[0-9a-f]{16}")


def purpose_of(body: dict) -> str:
    """Which call a Messages request is: the injection screen, a reviewer, or the fix agent."""
    if is_screen(body):
        return SCREEN
    return FIX if "edits" in schema_properties(body) else REVIEW


def call_key(body: dict) -> str:
    """A hash naming what a request asks of which model, the same for every try of one call: the fence nonce and
    the screen's key blanked out, cache breakpoints dropped."""
    user = _NONCE.sub(r"\1NONCE", user_text(body))
    key = screen_key(body)
    if key is not None:
        user = user.replace(key, "KEY")
    what = {
        "model": body.get("model"),
        "system": uncached(body.get("system") or []),
        "user": user,
        "max_tokens": body.get("max_tokens"),
        "output_config": body.get("output_config"),
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Call:
    """One request the model server received, and its answer."""

    purpose: str
    model: str
    key: str
    arrived: float
    """time.monotonic() when it arrived."""
    answered: float
    """time.monotonic() when its answer was sent (arrived + the latency)."""
    status: int
    output: str
    """The fenced OUTPUT the call is about ('' for a screen, whose fence holds spec and output)."""


class RecordingModel:
    """The stand-in model (`santa_scenario`, and a screen that answers its key) for a MessagesStub, answering
    every call, screens included, after a seeded-random latency in `latency` seconds, and recording each call.
    `install(stub)` sets it as the stub's handler and screen."""

    def __init__(
        self,
        latency: tuple[float, float] = (2.0, 4.0),
        seed: int = 33,
        scenario: Callable[[dict], object] = santa_scenario,
    ) -> None:
        self.latency, self.scenario = latency, scenario
        self.rng = random.Random(seed)
        self._lock = threading.Lock()
        self._calls: list[Call] = []

    def install(self, stub: MessagesStub) -> Self:
        """Answer the stub's reviewer, fix and screen calls."""
        stub.handler, stub.screen, stub.extract = self.answer, self.answer, self.answer
        return self

    def answer(self, body: dict) -> Reply:
        """The reply to one request, recorded (the stub sleeps its delay before writing it)."""
        arrived = time.monotonic()
        purpose = purpose_of(body)
        reply = as_reply(screen_answer(body) if purpose == SCREEN else self.scenario(body), body)
        with self._lock:
            reply.delay_s = self.rng.uniform(*self.latency)
            self._calls.append(
                Call(
                    purpose,
                    str(body.get("model", "")),
                    call_key(body),
                    arrived,
                    arrived + reply.delay_s,
                    reply.status,
                    fenced_output(body),
                )
            )
        return reply

    @property
    def calls(self) -> list[Call]:
        """Every call so far, in the order they arrived."""
        with self._lock:
            return list(self._calls)

    def reset(self) -> None:
        """Forget the calls (a new trial)."""
        with self._lock:
            self._calls.clear()


def in_flight(calls: Iterable[Call], at: float) -> Counter[str]:
    """Calls arrived but not yet answered at `at`, per purpose."""
    return Counter(c.purpose for c in calls if c.arrived <= at < c.answered)


def bought_twice(calls: list[Call], outage_start: float, outage_end: float) -> list[Call]:
    """Answers sent with 200 during the outage (answered inside the window) whose same call (same key) was
    requested again later: each such answer is paired with a distinct later request of its key, so two slots
    with identical bodies count once each, not twice each."""
    later: dict[str, list[float]] = {}
    for c in calls:
        later.setdefault(c.key, []).append(c.arrived)
    lost = sorted(
        (c for c in calls if c.status == 200 and outage_start <= c.answered <= outage_end), key=lambda c: c.answered
    )
    found = []
    for c in lost:
        pending = later[c.key]
        again = next((t for t in sorted(pending) if t > c.answered), None)
        if again is not None:
            pending.remove(again)
            found.append(c)
    return found


def repeated(calls: Iterable[Call]) -> dict[str, int]:
    """Every call key requested more than once over the whole trial, with how many times."""
    counts = Counter(c.key for c in calls)
    return {k: n for k, n in counts.items() if n > 1}


def by_purpose(calls: Iterable[Call]) -> dict[str, int]:
    """How many of `calls` each purpose has (every purpose named, 0 included)."""
    counts = Counter(c.purpose for c in calls)
    return {p: counts[p] for p in PURPOSES}


# --- two workers on one host -----------------------------------------------------------------------------------


@dataclass
class WorkerProcess:
    """A `python -m santa_core worker` process and the file its stderr goes to."""

    proc: subprocess.Popen | Forked
    log: Path
    stopped_at: float | None = None
    """time.monotonic() when a signal to stop was sent (`signal_stop`)."""
    exited_at: float | None = None

    @property
    def pid(self) -> int:
        """Its process id."""
        return self.proc.pid

    def lines(self) -> list[str]:
        """Its stderr so far."""
        return self.log.read_text(errors="replace").splitlines() if self.log.exists() else []

    def signal_stop(self, sig: int) -> None:
        """Send `sig` now and note, on a watching thread, when the process exits."""
        self.stopped_at = time.monotonic()
        self.proc.send_signal(sig)

        def watch() -> None:
            self.proc.wait()
            self.exited_at = time.monotonic()

        threading.Thread(target=watch, daemon=True, name=f"watch-{self.pid}").start()


def start_workers(
    db_url: str,
    stub_url: str,
    log_dir: Path,
    count: int = 2,
    concurrency: int = 16,
    production: bool = True,
    **extra: str,
) -> list[WorkerProcess]:
    """`count` worker processes on this host (one host name), with the production recovery timings or the tests'
    fast ones, each one's stderr to `log_dir`/worker-N.log."""
    timings = PRODUCTION_RECOVERY if production else {}
    env = worker_env(db_url, stub_url, **{**timings, **extra})
    log_dir.mkdir(parents=True, exist_ok=True)
    return [
        WorkerProcess(start_worker(env, concurrency, log=log_dir / f"worker-{n}.log"), log_dir / f"worker-{n}.log")
        for n in range(1, count + 1)
    ]


def stop_workers(workers: Iterable[WorkerProcess], timeout: float = 60) -> None:
    """SIGTERM each worker still running and wait for it (SIGKILL when it overstays)."""
    for w in workers:
        stop_worker(w.proc, timeout=timeout)


# --- what a trial leaves behind -------------------------------------------------------------------------------


@dataclass
class Settle:
    """How the runs of a trial settled after the database came back."""

    seconds: float | None
    """From the return until every run was settled (None: not within the timeout)."""
    left: dict[int, str] = field(default_factory=dict)
    """The runs not settled when the wait ended, with their status."""
    claims: dict[int, tuple[float, str]] = field(default_factory=dict)
    """For each run seen `running` after the return: when it was first seen so (seconds after the return) and the
    worker claiming it (host:pid:start)."""


def run_rows(engine: Engine, run_ids: list[int]) -> list[tuple[int, str, str | None]]:
    """(id, status, worker) of each run now."""
    with engine.connect() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                text("SELECT id, status, worker FROM run WHERE id = ANY(:ids)"), {"ids": run_ids}
            ).all()
        ]


def settle(engine: Engine, run_ids: list[int], back_at: float, timeout: float = 600, every: float = 0.5) -> Settle:
    """Poll the runs' statuses every `every` seconds from `back_at` (time.monotonic() when the database came back)
    until every run is settled (`tests.support.workers.SETTLED`); a read that fails (the database still starting)
    is simply tried again. `engine` should ping its connections (pool_pre_ping)."""
    settled = {s.value for s in SETTLED}
    claims: dict[int, tuple[float, str]] = {}
    left: dict[int, str] = {}
    while time.monotonic() - back_at < timeout:
        try:
            rows = run_rows(engine, run_ids)
        except DBAPIError:
            time.sleep(every)
            continue
        now = time.monotonic() - back_at
        for run_id, status, worker in rows:
            if status == "running" and run_id not in claims:
                claims[run_id] = (now, worker or "")
        left = {run_id: status for run_id, status, _ in rows if status not in settled}
        if not left:
            return Settle(now, {}, claims)
        time.sleep(every)
    return Settle(None, left, claims)


def audit_verify(db_url: str) -> tuple[bool, str]:
    """`python -m santa_core audit verify` on the database, as an operator runs it: whether it passed, its output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SANTA_", "ANTHROPIC_", "OPENAI_"))}
    env.update(DATABASE_URL=db_url, PYTHONPATH=str(REPO))
    done = forked.run(forked.santa(["audit", "verify"], env=env, cwd=REPO, **forked.capture(text=True)), timeout=300)
    return done.returncode == 0, (done.stdout + done.stderr).strip()


def first_calls_after(engine: Engine, run_ids: list[int], since: datetime) -> list[tuple[int, str, float]]:
    """Each run's first model call put on record at or after `since`, in order: (run id, the worker that sent it,
    seconds after `since`). Who worked a run first after a return (the task engine's job rows are deleted once
    done, and their events with them; the write-ahead call log keeps the sender)."""
    sql = """SELECT DISTINCT ON (run_id) run_id, worker, extract(epoch FROM sent_at - :since)
               FROM llm_call_sent WHERE run_id = ANY(:ids) AND sent_at >= :since ORDER BY run_id, sent_at"""
    with engine.connect() as conn:
        rows = conn.execute(text(sql), {"ids": run_ids, "since": since}).all()
    return sorted(((r, w, float(s)) for r, w, s in rows), key=lambda row: row[2])


def claims_after(engine: Engine, run_ids: list[int], since: datetime) -> list[tuple[int, float, str]]:
    """The runs' changes to `running` (a claim) at or after `since`, in order: (run id, seconds after `since`, the
    change's note)."""
    sql = """SELECT run_id, extract(epoch FROM created_at - :since), note FROM state_change
              WHERE run_id = ANY(:ids) AND to_status = 'running' AND created_at >= :since ORDER BY created_at"""
    with engine.connect() as conn:
        return [(r, float(s), n or "") for r, s, n in conn.execute(text(sql), {"ids": run_ids, "since": since}).all()]


def database_lines(lines: Iterable[str]) -> Counter[str]:
    """A worker log's lines that mention the database, each with how often it came (numbers kept)."""
    words = re.compile(r"database|postgres|psycopg|OperationalError|InterfaceError|connection|pool", re.I)
    return Counter(line.strip()[:200] for line in lines if words.search(line))
