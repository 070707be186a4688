"""Opening the desk's database: migrations, the built-in rubrics, metric facts for old runs, and
runs a dead process left `running` marked interrupted (once per process and database).

Kept apart from `storage.db` (engines only) so that no store imports the start-up and no import
circle remains.
"""

from __future__ import annotations

import threading

from sqlalchemy import Engine

from storage.db import engine_key, get_engine, migrate, on_dispose
from storage.metric_facts import backfill
from storage.runs import RunStore

_READY: set[str] = set()
"""Database keys this process has migrated, seeded and backfilled."""
_MARKED: set[str] = set()
"""Database keys whose orphaned `running` runs this process has already marked interrupted."""
_LOCK = threading.Lock()


def _forget() -> None:
    _READY.clear()
    _MARKED.clear()


on_dispose(_forget)


def init_db(url: str | None = None, mark_interrupted: bool = True) -> Engine:
    """Engine + migrations + mark runs left `running` by a dead process (once per process).

    Pass mark_interrupted=False from a second process that shares the database (the CLI next
    to a running app): its runs are alive, not orphaned.
    """
    key = engine_key(url)
    engine = get_engine(key)
    with _LOCK:
        if key not in _READY:
            migrate(engine)
            RunStore(engine).rubrics.seed_builtins()
            backfill(engine)  # metric facts for runs stored before migration 0007
            _READY.add(key)
        # Tracked apart from migration: a process that first opened the database without
        # marking (e.g. as a CLI-style client) must still mark when the app opens it.
        if mark_interrupted and key not in _MARKED:
            RunStore(engine).mark_interrupted()
            _MARKED.add(key)
    return engine
