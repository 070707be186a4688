"""A database made once (e.g. a batch with its first sample driven, the costly part) and copied for each test that
starts from it, so none sees another's changes: SQLite through the backup API, PostgreSQL as CREATE DATABASE …
TEMPLATE. Shared by the batch driver tests."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import make_url

from tests.conftest import PG_URL, _pg_database, migrated_sqlite


def made_database(kind: str, request: pytest.FixtureRequest, folder: Path) -> Iterator[str]:
    """A new database of `kind` ("sqlite" or "postgres") as `init_db` leaves it: its URL (dropped afterwards)."""
    if kind == "sqlite":
        yield migrated_sqlite(folder / "santa.db")
    else:
        yield from _pg_database(PG_URL, request.getfixturevalue("pg_template"))


def copy_of(url: str, folder: Path) -> Iterator[str]:
    """A copy of the database at `url` (its engines disposed: a template takes no connection while it is copied),
    its URL; a PostgreSQL copy is dropped afterwards."""
    if url.startswith("sqlite"):
        source, target = sqlite3.connect(make_url(url).database or ""), sqlite3.connect(folder / "santa.db")
        try:
            source.backup(target)  # whatever a write-ahead log still holds is copied too
        finally:
            source.close()
            target.close()
        yield f"sqlite:///{folder / 'santa.db'}"
    else:
        yield from _pg_database(PG_URL, make_url(url).database)
