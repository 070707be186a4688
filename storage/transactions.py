"""The two kinds of transaction every store uses, and the hook they all share.

A `Database` is one engine with a write transaction (BEGIN IMMEDIATE on SQLite) and a read
snapshot. Before a write transaction commits, the metric facts of every run it touched are
rewritten (`storage.metric_facts`), whichever store wrote: the facts are never behind the history;
then every row of a sealed table it wrote is sealed in the audit chain (`storage.seals.SEALED`).
Every store (`StoreBase`) reads and writes through one shared `Database`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from sqlalchemy import Engine
from sqlmodel import Session

from storage.db import reader
from storage.metric_facts import refresh_touched
from storage.seals import anchor_head, seal_touched

LOCAL_USER_ACTS = "santa.local_user_acts"
"""Key of a session's `info`: whether the local user may act in it (`storage.people.require` reads it)."""


class Database:
    """One engine and its transactions; each has committed (or rolled back) when it returns."""

    def __init__(self, engine: Engine, local_user: bool = True) -> None:
        """`local_user`: whether the local user may act (a desk without sign-in, the default); False where people
        sign in, so that nobody signed in cannot pass for the local admin whatever a caller hands down."""
        self.engine = engine
        self._reader = reader(engine)
        self.local_user = local_user

    def _session(self, bind: Engine) -> Session:
        # Every session says whether the local user acts: the role check inside the transaction reads it there.
        return Session(bind, expire_on_commit=False, info={LOCAL_USER_ACTS: self.local_user})

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction that refreshes the touched runs' metric facts, then commits."""
        with self._session(self.engine) as s:
            with s.begin():
                yield s
                refresh_touched(s)
                seal_touched(s)  # last: the seals hash the rows as they will be committed
            anchor_head(s)

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only snapshot transaction."""
        with self._session(self._reader) as s, s.begin():
            yield s


class StoreBase:
    """Base of the stores: the database they share, and its two kinds of transaction."""

    def __init__(self, db: Database | Engine | StoreBase) -> None:
        """Over `db`; an engine gets a database of its own, a store shares its database."""
        self.db: Database = db.db if isinstance(db, StoreBase) else db if isinstance(db, Database) else Database(db)
        self.engine = self.db.engine

    def _tx(self) -> AbstractContextManager[Session]:
        """A write transaction (see `Database.write`)."""
        return self.db.write()

    def _read(self) -> AbstractContextManager[Session]:
        """A read-only snapshot (see `Database.read`)."""
        return self.db.read()
