"""`santa worker` processes on a throwaway PostgreSQL database, and the checks the task engine's acceptance
makes on what they leave behind: one review per slot, no paid call asked again for a stored review.

Worker processes are real (`python -m santa_core worker`, forked from a helper that has the product imported:
tests/support/forked.py), with short heartbeat and recovery periods so a killed worker is noticed in about three
seconds instead of the production forty.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine

from santa_core.models import RunStatus
from tests.support.forked import Forked, santa
from tests.support.messages_api import Reply, as_reply, santa_scenario

REPO = Path(__file__).resolve().parents[2]
FAST_RECOVERY = {
    "SANTA_WORKER_HEARTBEAT_S": "0.5",
    "SANTA_WORKER_STALLED_S": "2",
    "SANTA_WORKER_RECOVER_S": "1",
    "SANTA_DB_IDLE_TX_S": "10",
}
"""Heartbeat every 0.5 s, dead after 2 s of silence, stalled jobs looked for every second; a session idle in a
transaction for 10 s (a paused worker holding a lock) is ended by the server."""
PRODUCTION_RECOVERY = {"SANTA_WORKER_HEARTBEAT_S": "10", "SANTA_WORKER_STALLED_S": "30", "SANTA_WORKER_RECOVER_S": "5"}
"""The defaults of a deployment: heartbeat every 10 s, dead after 30 s of silence, stalled jobs looked for every 5 s."""
SETTLED = {
    RunStatus.SHIPPED,
    RunStatus.ESCALATED,
    RunStatus.AWAITING_APPROVAL,
    RunStatus.AWAITING_HUMAN_REVIEW,
    RunStatus.RESOLVED_SHIPPED,
    RunStatus.RESOLVED_REJECTED,
}
"""Final or waiting for a person."""


def answer_after(latency_s: float) -> Callable[[dict], Reply]:
    """The stand-in model (`santa_scenario`) answering every reviewer and fix call after a fixed latency, as a
    real API would (the known-answer screen still answers at once)."""

    def handler(body: dict) -> Reply:
        reply = as_reply(santa_scenario(body), body)
        reply.delay_s = latency_s
        return reply

    return handler


def worker_env(db_url: str, stub_url: str, **extra: str) -> dict[str, str]:
    """The environment of a worker process: the database, the loopback Messages API, fast recovery."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SANTA_", "ANTHROPIC_", "OPENAI_"))}
    env.update(
        DATABASE_URL=db_url,
        ANTHROPIC_BASE_URL=stub_url,
        ANTHROPIC_API_KEY="test",
        PYTHONPATH=str(REPO),
        **{**FAST_RECOVERY, **extra},
    )
    return env


def start_worker(
    env: dict[str, str], concurrency: int = 4, queues: str = "runs,batch", log: Path | None = None, fresh: bool = False
) -> subprocess.Popen | Forked:
    """`python -m santa_core worker` in its own process group, its stderr to `log` (or discarded).

    Forked from the helper that has the product imported (tests/support/forked.py: a real process, about 3 s of
    CPU cheaper to start); `fresh` starts a new interpreter instead, as a deployment does."""
    err = open(log, "wb") if log is not None else subprocess.DEVNULL  # noqa: SIM115 - closed with the process
    args = ["worker", "--concurrency", str(concurrency), "--queues", queues]
    if not fresh:
        try:
            return santa(args, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        finally:
            if log is not None:
                err.close()  # the child has its own copy
    return subprocess.Popen(
        [sys.executable, "-m", "santa_core", *args],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=err,
        start_new_session=True,
    )


def stop_worker(proc: subprocess.Popen | Forked, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
    """Signal the worker and wait for it (SIGKILL when it overstays); its exit code."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return proc.returncode


def wait_until(what: str, check: Callable[[], bool], timeout: float = 120, every: float = 0.2) -> None:
    """Poll `check` until it holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def statuses(engine: Engine, run_ids: list[int]) -> dict[int, RunStatus]:
    """Each run's status now."""
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, status FROM run WHERE id = ANY(:ids)"), {"ids": run_ids}).all()
    return {i: RunStatus(s) for i, s in rows}


def claimed_by(engine: Engine, pid: int) -> list[int]:
    """Runs `running` under a claim of the process `pid` (the run's worker is host:pid:start)."""
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, worker FROM run WHERE status = 'running'")).all()
    return [i for i, w in rows if w and w.split(":")[1] == str(pid)]


def reviews_per_slot(engine: Engine) -> dict[tuple[int, int, str], int]:
    """How many reviews each (run, round, slot) holds."""
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT run_id, round_no, slot, count(*) FROM review GROUP BY 1, 2, 3")).all()
    return {(r, n, s): c for r, n, s, c in rows}


def calls_after_stored_review(engine: Engine) -> list[tuple]:
    """Reviewer calls sent for a slot after that slot's review was stored (each would be a duplicate paid call)."""
    sql = """SELECT c.run_id, c.round_no, c.slot, c.sent_at, r.created_at FROM llm_call_sent c
               JOIN review r ON r.run_id = c.run_id AND r.round_no = c.round_no AND r.slot = c.slot
              WHERE c.sent_at > r.created_at"""
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(text(sql)).all()]


def answered_calls_per_slot(engine: Engine) -> dict[tuple[int, int, str], int]:
    """Answered (paid) reviewer calls in the LLM-call log per (run, round, slot)."""
    sql = "SELECT run_id, round_no, slot, count(*) FROM llm_call WHERE slot IS NOT NULL GROUP BY 1, 2, 3"
    with engine.connect() as conn:
        return {(r, n, s): c for r, n, s, c in conn.execute(text(sql)).all()}


def state_notes(engine: Engine, run_ids: list[int]) -> list[str]:
    """Every state change note of the runs (the take-overs and hand-overs show here)."""
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT note FROM state_change WHERE run_id = ANY(:ids)"), {"ids": run_ids}).all()
    return [n or "" for (n,) in rows]
