"""What SQLModel's typing leaves open in a read, closed in one place: the id of a row the database holds, a column
read where it is never NULL, a select of many columns, and rows by column name."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, TypeVar, cast

from sqlalchemy import Row, RowMapping
from sqlmodel import Session
from sqlmodel.sql.expression import Select


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
