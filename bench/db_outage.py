"""A PostgreSQL outage under two `santa worker` processes on one host: how long the runs take to settle once the
database is back, and which model answers were paid twice (issue 33).

Each repeat, on a fresh cluster of the bench's own (scripts/pg_test_server.sh in a temporary folder; the shared
test server is never stopped): two workers (concurrency 16, the production recovery timings unless --fast) and a
loopback Messages API answering every call, screens included, after a seeded-random 2-4 s. --runs runs (every third
with a defect: a fix call, then a person's approval) are enqueued; --halt-delay (3 s) after they are all `running`
(some screens answered and their reviewers asked, other screens still out) the server is halted (pg_ctl stop -m
fast: connecting is refused) for --outage seconds, then started again on its port. From that moment the runs'
statuses are read every 0.5 s until every run is final or waits for a person: the settle time.

Per repeat it prints the settle time; the answers the model server sent with 200 during the outage whose same call
(same body, nonce and screen key aside: tests.support.outage.call_key) was asked again later, per purpose; every
call asked more than once; the most reviews any slot holds; `audit verify`; the take-over and hand-over notes (and
any other note of an interruption); and the lines of the workers' logs that mention the database. With --sigterm,
worker 1 gets SIGTERM 10 s into the outage: how long it took to exit, its last lines, the runs it names as handed
over, and which runs worker 2 started first after the return.

    python bench/db_outage.py [--outage 60] [--repeats 5] [--sigterm] [--fast]

It needs PostgreSQL's server programs (initdb, pg_ctl: found as scripts/pg_test_server.sh finds them), not a
running server. A repeat takes 1.5-5 minutes.
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import create_engine, text  # noqa: E402

from desk.task_engine import task_engine  # noqa: E402
from santa_core.rubrics.library import load_builtin  # noqa: E402
from storage.db import normalise_url  # noqa: E402
from storage.runs import RunStore  # noqa: E402
from storage.startup import init_db  # noqa: E402
from tests.support.messages_api import MessagesStub  # noqa: E402
from tests.support.outage import (  # noqa: E402
    PURPOSES,
    OwnCluster,
    RecordingModel,
    WorkerProcess,
    audit_verify,
    bought_twice,
    by_purpose,
    claims_after,
    database_lines,
    first_calls_after,
    in_flight,
    repeated,
    run_rows,
    settle,
    start_workers,
    stop_workers,
)
from tests.support.workers import reviews_per_slot, state_notes, wait_until  # noqa: E402

SPEC = "Announce the Acme rocket in two sentences. Mention the 2018 launch."
REVIEWER_B, REVIEWER_C, FIXER = "claude-haiku-4-5", "claude-sonnet-4-5", "claude-haiku-4-5"
"""Two different reviewer models: slot B's and slot C's calls have different bodies (see call_key)."""
SIGTERM_AFTER_S = 10.0
MOVED = ("taken over", "handed over")


def new_runs(runs: RunStore, engine, count: int, repeat: int, defect_every: int) -> list[int]:
    """`count` runs with outputs of their own, enqueued as the command line does."""
    rubric, ids = load_builtin("general"), []
    for n in range(count):
        defect = defect_every and n % defect_every == 0
        output = f"Acme's rocket launched in {'DEFECT' if defect else 2018}. Repeat {repeat}, run #{n}."
        run_id = runs.create_run(
            spec=SPEC,
            output=output,
            rubric=rubric,
            reviewer_b=REVIEWER_B,
            reviewer_c=REVIEWER_C,
            fixer=FIXER,
            created_by="cli",
            source="cli",
        )
        engine.enqueue(runs, run_id, "cli")
        ids.append(run_id)
    return ids


def running(db, ids: list[int]) -> int:
    """How many of the runs are `running` now."""
    with db.connect() as conn:
        return conn.execute(
            text("SELECT count(*) FROM run WHERE id = ANY(:ids) AND status = 'running'"), {"ids": ids}
        ).scalar_one()


def pid_of(worker: str | None) -> str:
    """The pid in a claim (host:pid:start)."""
    return (worker or "::").split(":")[1]


def show_counts(title: str, counts: Counter, top: int = 8) -> None:
    """A title and the commonest lines with their counts."""
    print(f"    {title}: {'none' if not counts else ''}")
    for line, n in counts.most_common(top):
        print(f"      {n:>4} x {line}")
    if len(counts) > top:
        print(f"      ... and {len(counts) - top} other lines")


def trial(
    cluster: OwnCluster, stub: MessagesStub, model: RecordingModel, args: argparse.Namespace, repeat: int
) -> dict:
    """One repeat on a fresh cluster; its figures (printed as they come)."""
    print(f"\n== repeat {repeat + 1}/{args.repeats}", flush=True)
    url = normalise_url(cluster.url)  # the cluster is the trial's alone: its default database will do
    runs = RunStore(init_db(url, mark_interrupted=False))
    engine = task_engine(url)
    logs = Path(args.logs) / f"repeat-{repeat + 1}"
    workers = start_workers(url, stub.url, logs, count=2, concurrency=args.concurrency, production=not args.fast)
    db = create_engine(normalise_url(url), pool_pre_ping=True)
    try:
        wait_until("both workers to heartbeat", lambda: engine.status().live_workers == 2, timeout=120)
        model.reset()
        ids = new_runs(runs, engine, args.runs, repeat, args.defect_every)
        try:
            wait_until(f"{len(ids)} runs running", lambda: running(db, ids) >= len(ids), timeout=60, every=0.05)
        except AssertionError as exc:
            print(f"  ({exc}: halting with {running(db, ids)} running)")
        time.sleep(args.halt_delay)
        held: dict[str, list[int]] = {}
        for run_id, status, worker in run_rows(db, ids):
            if status == "running":
                held.setdefault(pid_of(worker), []).append(run_id)
        start = time.monotonic()
        print(
            f"  halt: runs running per worker {[len(held.get(str(w.pid), [])) for w in workers]}; calls in flight "
            f"{dict(in_flight(model.calls, start))}",
            flush=True,
        )
        cluster.halt()
        print(f"  halted in {time.monotonic() - start:.1f} s", flush=True)
        if args.sigterm:
            time.sleep(max(0.0, start + SIGTERM_AFTER_S - time.monotonic()))
            workers[0].signal_stop(signal.SIGTERM)
            print(
                f"  SIGTERM to worker 1 (pid {workers[0].pid}) {time.monotonic() - start:.1f} s into the outage",
                flush=True,
            )
        time.sleep(max(0.0, start + args.outage - time.monotonic()))
        cluster.resume()
        back, back_wall = time.monotonic(), datetime.now(UTC)
        print(f"  resumed: the database was away {back - start:.1f} s", flush=True)
        settled = settle(db, ids, back, timeout=args.settle_timeout)
        if settled.seconds is None:
            print(f"  NOT SETTLED after {args.settle_timeout:g} s: {settled.left}")
        else:
            print(f"  settled {settled.seconds:.1f} s after the return", flush=True)
        if args.sigterm:
            report_sigterm(workers, db, ids, back_wall, held.get(str(workers[0].pid), []))
    finally:
        stop_workers(workers)
        engine.close()
        runs.engine.dispose()
    figures = checks(db, url, ids, model, workers, start, back, settled.seconds)
    db.dispose()
    print(f"  (worker logs in {logs})")
    return figures


def report_sigterm(workers: list[WorkerProcess], db, ids: list[int], back_wall: datetime, held: list[int]) -> None:
    """How worker 1 stopped during the outage, what became of the runs it held, and what worker 2 started first
    after the return."""
    w1, w2 = workers
    deadline = time.monotonic() + 120
    while w1.exited_at is None and time.monotonic() < deadline:
        time.sleep(0.2)
    if w1.exited_at is None:
        print(f"  worker 1 has NOT exited {time.monotonic() - w1.stopped_at:.0f} s after SIGTERM (it is killed)")
    else:
        print(f"  worker 1 exited {w1.exited_at - w1.stopped_at:.1f} s after SIGTERM (exit code {w1.proc.returncode})")
    print("  its last lines:")
    for line in w1.lines()[-6:]:
        print(f"    | {line[:220]}")

    def named(after: str) -> list[int]:
        """The run ids (#N) its lines name after `after`, up to the next ';'."""
        return sorted(
            {
                int(n)
                for line in w1.lines()
                if after in line
                for n in re.findall(r"#(\d+)", line.split(after, 1)[1].split(";", 1)[0])
            }
        )

    print(f"  runs it names as handed over: {named('first in line:') or 'none'}")
    print(f"  runs it names as left for a take-over: {named('could not hand over') or 'none'}")
    firsts = [(r, s) for r, w, s in first_calls_after(db, ids, back_wall) if pid_of(w) == str(w2.pid)]
    print(f"  worker 2's first calls after the return (run, seconds): {[(r, round(s, 1)) for r, s in firsts[:16]]}")
    claims = claims_after(db, ids, back_wall)
    print(f"  runs claimed after the return, in order (run, seconds): {[(r, round(s, 1)) for r, s, _ in claims[:16]]}")
    sql = "SELECT note FROM state_change WHERE run_id = ANY(:ids) AND to_status = 'interrupted'"
    with db.connect() as conn:
        moves = conn.execute(text(sql), {"ids": held}).scalars().all()
    print(
        f"  the {len(held)} runs worker 1 held at the halt were: "
        f"{dict(Counter(next((m for m in MOVED if n.startswith(m)), n[:80]) for n in moves))}"
    )
    if named:
        print(
            f"  named runs among worker 2's first {len(named)} starts: "
            f"{len(set(named) & {r for r, _ in firsts[: len(named)]})} of {len(named)}"
        )


def checks(
    db,
    url: str,
    ids: list[int],
    model: RecordingModel,
    workers: list[WorkerProcess],
    start: float,
    back: float,
    settle_s: float | None,
) -> dict:
    """The figures of a finished trial, printed."""
    calls = model.calls
    twice = bought_twice(calls, start, back)
    ever = bought_twice(calls, float("-inf"), float("inf"))
    again = repeated(calls)
    extra = dict.fromkeys(PURPOSES, 0)
    keys_purpose = {c.key: c.purpose for c in calls}
    for key, n in again.items():
        extra[keys_purpose[key]] += n - 1
    slots = reviews_per_slot(db)
    ok, verified = audit_verify(url)
    notes = state_notes(db, ids)
    moved = Counter(next((m for m in MOVED if n.startswith(m)), "") for n in notes)
    interruptions = Counter(n[:160] for n in notes if n and ("Error" in n or n.startswith(MOVED)))
    print(f"  model calls: {len(calls)} ({dict(by_purpose(calls))})")
    print(f"  answered with 200 during the outage and asked again: {len(twice)} {by_purpose(twice)}")
    print(f"  answered with 200 at any time and asked again: {len(ever)} {by_purpose(ever)}")
    print(f"  calls asked more than once: {len(again)} ({sum(again.values()) - len(again)} extra requests: {extra})")
    print(f"  most reviews in one slot: {max(slots.values(), default=0)}")
    print(f"  audit verify: {'ok' if ok else 'FAILED'}: {verified.splitlines()[0] if verified else ''}")
    print(f"  notes: {moved['taken over']} taken over, {moved['handed over']} handed over")
    show_counts("interruption notes", interruptions)
    for n, w in enumerate(workers, 1):
        show_counts(f"worker {n} (pid {w.pid}) log lines that mention the database", database_lines(w.lines()))
    return {
        "settle_s": settle_s,
        "twice": by_purpose(twice),
        "ever": len(ever),
        "repeated": len(again),
        "max_reviews": max(slots.values(), default=0),
        "audit_ok": ok,
        "taken_over": moved["taken over"],
        "handed_over": moved["handed over"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outage", type=float, default=60, help="seconds the database is away (default 60)")
    parser.add_argument("--repeats", type=int, default=5, help="outages, each with fresh runs (default 5)")
    parser.add_argument("--runs", type=int, default=30, help="runs in flight when the database goes (default 30)")
    parser.add_argument("--concurrency", type=int, default=16, help="runs each worker works at once (default 16)")
    parser.add_argument("--defect-every", type=int, default=3, help="every Nth run has a defect to fix (0: none)")
    parser.add_argument("--latency", default="2,4", help="each answer takes a seeded-random time in this range")
    parser.add_argument(
        "--halt-delay", type=float, default=3.0, help="seconds between all runs running and the halt (default 3)"
    )
    parser.add_argument("--settle-timeout", type=float, default=600, help="give up waiting after this long")
    parser.add_argument(
        "--sigterm", action="store_true", help=f"SIGTERM worker 1 {SIGTERM_AFTER_S:g} s into the outage"
    )
    parser.add_argument("--logs", help="keep the workers' logs here (default: a new temporary folder)")
    parser.add_argument("--fast", action="store_true", help="the tests' fast recovery timings, not production's")
    args = parser.parse_args()
    low, high = (float(x) for x in args.latency.split(","))
    args.logs = args.logs or tempfile.mkdtemp(prefix="santa-outage-")
    stub = MessagesStub().start()
    model = RecordingModel((low, high)).install(stub)
    print(
        f"{args.repeats} outages of {args.outage:g} s; 2 workers x concurrency {args.concurrency} on one host; "
        f"{args.runs} runs; answers in {low:g}-{high:g} s; {'fast' if args.fast else 'production'} recovery timings"
        + ("; SIGTERM to worker 1 during the outage" if args.sigterm else ""),
        flush=True,
    )
    results = []
    try:
        for repeat in range(args.repeats):
            with OwnCluster(prefix="santa-outage-") as cluster:
                results.append(trial(cluster, stub, model, args, repeat))
    finally:
        stub.stop()
    print(
        "\nrepeat  settle s  bought twice in the outage (screen/review/fix)  asked again  max reviews  audit"
        "  taken over  handed over"
    )
    for n, r in enumerate(results, 1):
        settle_s = "stuck" if r["settle_s"] is None else f"{r['settle_s']:.1f}"
        twice = "/".join(str(r["twice"][p]) for p in PURPOSES)
        print(
            f"{n:>6}{settle_s:>10}{twice:>47}{r['repeated']:>13}{r['max_reviews']:>13}"
            f"{'ok' if r['audit_ok'] else 'FAIL':>7}{r['taken_over']:>12}{r['handed_over']:>13}"
        )


if __name__ == "__main__":
    main()
