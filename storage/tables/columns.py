"""Column types and helpers every table uses: UTC timestamps, text, foreign keys, token usage, the table a model maps."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, DateTime, Table, Text, inspect
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


def table_of(model: type[SQLModel]) -> Table:
    """The table a `table=True` model maps (its `__table__`, which SQLModel sets but does not declare)."""
    table = inspect(model).local_table
    if not isinstance(table, Table):
        raise TypeError(f"{model.__name__} maps no table of its own")
    return table


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
