"""Column types and helpers every table uses: UTC timestamps, text, foreign keys, token usage."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, TypeVar, cast

from sqlalchemy import JSON, DateTime, Row, RowMapping, Table, Text, inspect
from sqlmodel import Field, Session, SQLModel
from sqlmodel.sql.expression import Select

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


T = TypeVar("T")


def not_null(values: Iterable[T | None]) -> list[T]:
    """The values of a column a query reads where it is never NULL (a primary key, a key the query keeps
    only where it is set): as a list of the column's type."""
    out = []
    for value in values:
        if value is None:
            raise ValueError("a NULL where the query reads none")
        out.append(value)
    return out


def select_columns(*columns: Any) -> Select[*tuple[Any, ...]]:
    """`select(...)` of five columns or more, or of columns spread from a list (what SQLModel's `select` builds
    for them): its typing stops at four columns, so the rows' types are left open."""
    return Select(*columns)


def named_rows(s: Session, stmt: Select[*tuple[Any, ...]]) -> list[RowMapping]:
    """The rows of `stmt`, each by column name. SQLModel types the rows `Session.exec` gives as plain tuples;
    they are SQLAlchemy `Row`s, whose `_mapping` names their columns."""
    return [cast(Row[Any], row)._mapping for row in s.exec(stmt)]


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
