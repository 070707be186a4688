"""What the audit trail costs: appending an event, and verifying a long chain.

Appends events on a fresh SQLite file (each in its own write transaction, as the app does, and
then in batches to build a long chain fast), then times `AuditStore.verify()` over the whole
chain, intact and with one row changed near the end.

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
                audit.append(s, "bench", "bench.event", "bench", i, before="a" * 64, after="b" * 64,
                             detail={"i": i, "note": "a typical short note"})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        engine = init_db(f"sqlite:///{Path(tmp) / 'bench.db'}")
        repo = RunStore(engine)
        single = append_one_per_transaction(repo, 500)
        print(f"append, one event per transaction: {single / 500 * 1000:.2f} ms per event")
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
        print(f"verify with row seq {total - 10} changed: {time.perf_counter() - start:.2f} s -> "
              f"{report.describe()}")


if __name__ == "__main__":
    main()
