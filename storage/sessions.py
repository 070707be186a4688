"""The two kinds of transaction every store uses: a write (BEGIN IMMEDIATE on SQLite) and a read snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from sqlalchemy import Engine
from sqlmodel import Session

from storage.db import reader


class Transactions:
    """Base of the stores: one engine, short transactions that have committed when they return."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._reader = reader(engine)

    @contextmanager
    def _tx(self) -> Iterator[Session]:
        """A write transaction (BEGIN IMMEDIATE on SQLite) that commits on exit."""
        with Session(self.engine, expire_on_commit=False) as s, s.begin():
            yield s

    @contextmanager
    def _read(self) -> Iterator[Session]:
        """A read-only snapshot transaction."""
        with Session(self._reader, expire_on_commit=False) as s, s.begin():
            yield s


def utc(value: datetime) -> datetime:
    """Aware UTC (SQLite hands back naive datetimes that were stored as UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)
