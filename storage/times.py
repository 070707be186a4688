"""Times as the database stores them: aware UTC."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """The current time in UTC (aware)."""
    return datetime.now(UTC)


def utc(value: datetime) -> datetime:
    """Aware UTC (SQLite hands back naive datetimes that were stored as UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def utc_or_none(value: datetime | None) -> datetime | None:
    """`utc` that passes None through."""
    return None if value is None else utc(value)
