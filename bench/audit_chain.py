"""What the audit trail costs: appending an event, and verifying a long chain.

Appends events on a fresh SQLite file (each in its own write transaction, as the app does, and
then in batches to build a long chain fast), then times 200 runs written through the desk (each
write transaction sealing its rows), then `AuditStore.verify()` over the whole chain and every sealed row,
intact and with one event changed near the end.

    python bench/audit_chain.py [--events 20000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa
from sqlmodel import Session

from storage import audit
from storage.runs import RunStore
from storage.startup import init_db


def append_one_per_transaction(repo: RunStore, count: int) -> float:
    """Seconds for `count` events, each in its own write transaction."""
    start = time.perf_counter()
    for i in range(count):
        with Session(repo.engine) as s, s.begin():
            audit.append(s, "bench", "bench.event", "bench", i, detail={"i": i})
    return time.perf_counter() - start


def append_batches(repo: RunStore, count: int, batch: int = 1000) -> None:
    """Grow the chain quickly: many events per transaction."""
    for first in range(0, count, batch):
        with Session(repo.engine) as s, s.begin():
            for i in range(first, min(count, first + batch)):
                audit.append(
                    s,
                    "bench",
                    "bench.event",
                    "bench",
                    i,
                    before="a" * 64,
                    after="b" * 64,
                    detail={"i": i, "note": "a typical short note"},
                )


def desk_writes(repo: RunStore, count: int) -> float:
    """Seconds per run for `count` runs created and settled through the desk (each write sealed)."""
    from santa_core.models import GateDecision, GateResult, ReviewOutcome, ReviewStatus, RunState, RunStatus
    from santa_core.rubrics.library import load_builtin

    rubric = load_builtin("general")
    start = time.perf_counter()
    for i in range(count):
        run_id = repo.create_run(
            spec="Write a note.", output=f"Note {i}.", rubric=rubric, reviewer_b="b", reviewer_c="c", fixer="f"
        )
        repo.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
        for slot in ("B", "C"):
            repo.save_review(
                run_id,
                1,
                ReviewOutcome(slot=slot, reviewer=slot.lower(), status=ReviewStatus.ERROR, error="rate limited"),
            )
        repo.save_gate(run_id, 1, GateResult(decision=GateDecision.NAUGHTY, issues=[], reviewer_error=True))
        repo.save_settings({"max_rounds": 3 + i % 2}, actor="local")
    return (time.perf_counter() - start) / count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        engine = init_db(f"sqlite:///{Path(tmp) / 'bench.db'}")
        repo = RunStore(engine)
        single = append_one_per_transaction(repo, 500)
        print(f"append, one event per transaction: {single / 500 * 1000:.2f} ms per event")
        per_run = desk_writes(repo, 200)
        print(
            f"desk writes (a run created, moved, two reviews, a gate, a settings save; sealed): "
            f"{per_run * 1000:.1f} ms per run"
        )
        append_batches(repo, args.events)
        total = repo.audit.verify().checked
        start = time.perf_counter()
        report = repo.audit.verify()
        elapsed = time.perf_counter() - start
        print(f"verify {total:,} events: {elapsed:.2f} s ({total / elapsed:,.0f} events/s) -> {report.ok}")
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE audit_event SET actor = 'mallory' WHERE seq = :s"), {"s": total - 10})
        start = time.perf_counter()
        report = repo.audit.verify()
        print(f"verify with row seq {total - 10} changed: {time.perf_counter() - start:.2f} s -> {report.describe()}")


if __name__ == "__main__":
    main()
