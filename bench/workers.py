"""Throughput of `santa worker` processes on PostgreSQL, as a share of the ideal.

A loopback Messages API answers every reviewer call after a fixed latency (2 s and 8 s by default; the
known-answer screen answers at once). A clean run is one round: the two reviewers in parallel, so a run takes one latency
at best, and W workers of concurrency C can finish at most W × C runs per latency: the ideal. For 1, 2 and
4 worker processes (concurrency 8 each) the bench enqueues W × C × --waves runs on a fresh database once
every worker is heartbeating, and times them from the first enqueue to the last shipped run.

    SANTA_TEST_POSTGRES_URL=$(scripts/pg_test_server.sh start) python bench/workers.py [--latency 2,8] [--waves 4]

The desk's own work per run (about ten write transactions: the claim, the call log, both reviews, the gate,
the audit seals and metric facts; and the idle slots looking for due jobs) costs a worker about 0.2 CPU second,
and the database about as much again. The
database server, the loopback API and the workers share this machine's cores, so at a short latency the
machine's cores, not the workers, bound the throughput; the bench prints the workers' CPU per run to show it.
Workers on machines of their own do better.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import create_engine  # noqa: E402

from desk.task_engine import task_engine  # noqa: E402
from santa_core.models import RunStatus  # noqa: E402
from santa_core.rubrics.library import load_builtin  # noqa: E402
from storage.db import normalise_url  # noqa: E402
from storage.runs import RunStore  # noqa: E402
from storage.startup import init_db  # noqa: E402
from tests.conftest import _pg_database  # noqa: E402
from tests.support.messages_api import MessagesStub  # noqa: E402
from tests.support.workers import (  # noqa: E402
    PRODUCTION_RECOVERY,
    answer_after,
    start_worker,
    statuses,
    stop_worker,
    wait_until,
    worker_env,
)

CONCURRENCY = 8


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(pg: str, stub: MessagesStub, workers: int, latency: float, waves: int) -> tuple[int, float]:
    """Runs finished and seconds taken by `workers` worker processes."""
    gen = _pg_database(pg)
    url = next(gen)
    try:
        runs = RunStore(init_db(url, mark_interrupted=False))
        engine = task_engine(url)
        env = worker_env(url, stub.url, **PRODUCTION_RECOVERY)
        procs = [start_worker(env, CONCURRENCY) for _ in range(workers)]
        try:
            wait_until("the workers to heartbeat", lambda: engine.status().live_workers == workers, timeout=120)
            rubric = load_builtin("general")
            total = workers * CONCURRENCY * waves
            start = time.perf_counter()
            ids = []
            for n in range(total):
                run_id = runs.create_run(
                    spec="Announce the Acme rocket.",
                    output=f"Acme's rocket launched. #{n}",
                    rubric=rubric,
                    reviewer_b="claude-haiku-4-5",
                    reviewer_c="claude-sonnet-4-5",
                    fixer="claude-haiku-4-5",
                    created_by="cli",
                    source="cli",
                )
                engine.enqueue(runs, run_id, "cli")
                ids.append(run_id)
            enqueued = time.perf_counter() - start
            print(f"  ({workers} workers: {total} runs created and enqueued in {enqueued:.2f} s)", flush=True)
            db = create_engine(normalise_url(url))
            wait_until(
                "every run to ship",
                lambda: all(s == RunStatus.SHIPPED for s in statuses(db, ids).values()),
                timeout=60 + 20 * total * latency / (workers * CONCURRENCY),
                every=0.05,
            )
            elapsed = time.perf_counter() - start
            db.dispose()
            cpu = sum(cpu_seconds(p.pid) for p in procs)
            print(
                f"  ({workers} workers: {cpu:.1f} CPU s in the workers, {1000 * cpu / total:.0f} ms a run)", flush=True
            )
            return total, elapsed
        finally:
            for proc in procs:
                stop_worker(proc)
            engine.close()
            runs.engine.dispose()
    finally:
        gen.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", default="2,8", help="seconds each reviewer call takes (comma-separated)")
    parser.add_argument("--waves", type=int, default=4, help="runs per worker slot")
    parser.add_argument("--workers", default="1,2,4", help="worker process counts to measure")
    args = parser.parse_args()
    pg = os.environ.get("SANTA_TEST_POSTGRES_URL")
    if not pg:
        sys.exit("set SANTA_TEST_POSTGRES_URL (scripts/pg_test_server.sh start prints one)")
    stub = MessagesStub().start()
    print(f"concurrency {CONCURRENCY} per worker, {args.waves} waves; {os.cpu_count()} cores")
    rows = []
    try:
        for latency in (float(x) for x in args.latency.split(",")):
            stub.handler = answer_after(latency)
            for workers in (int(w) for w in args.workers.split(",")):
                total, elapsed = measure(pg, stub, workers, latency, args.waves)
                rows.append((latency, workers, total, elapsed, workers * CONCURRENCY / latency))
    finally:
        stub.stop()
    print(f"{'latency':>8}{'workers':>8}{'runs':>6}{'seconds':>9}{'runs/s':>8}{'ideal/s':>9}{'of ideal':>10}")
    for latency, workers, total, elapsed, ideal in rows:
        print(
            f"{latency:>7g}s{workers:>8}{total:>6}{elapsed:>9.1f}{total / elapsed:>8.2f}{ideal:>9.2f}"
            f"{total / elapsed / ideal:>10.2f}"
        )


if __name__ == "__main__":
    main()
