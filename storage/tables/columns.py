"""Column types and helpers every table uses: UTC timestamps, text, foreign keys, token usage."""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy import JSON, DateTime, Text
from sqlmodel import Field, SQLModel

from storage.times import utcnow

# Named constraints, so later SQLite batch migrations can find and alter them by name.
SQLModel.metadata.naming_convention = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

UTC_TS = DateTime(timezone=True)
JSON_OR_NULL = JSON(none_as_null=True)
"""JSON column type that stores Python None as SQL NULL (not the JSON literal null)."""


class Stored(Protocol):
    """A table row: its id is None until the database gives it one."""

    @property
    def id(self) -> int | None: ...


def stored_id(row: Stored) -> int:
    """The id of a row the database holds (read, or added and flushed); a row it never saw has none."""
    if row.id is None:
        raise ValueError(f"{type(row).__name__} has no id: it was never flushed")
    return row.id


def ts_column(**kw: Any) -> Any:
    """A UTC timestamp column that defaults to now."""
    return Field(default_factory=utcnow, sa_type=UTC_TS, **kw)


def text_column(default: str = "") -> Any:
    """An unbounded text column."""
    return Field(default=default, sa_type=Text)


def run_fk() -> Any:
    """An indexed foreign key to run.id."""
    return Field(foreign_key="run.id", index=True)


def batch_fk() -> Any:
    """An indexed foreign key to batch.id."""
    return Field(foreign_key="batch.id", index=True)


class UsageColumns(SQLModel):
    """Token usage of the calls behind a row, as `santa_core.models.Usage` counts it (one column per field)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
