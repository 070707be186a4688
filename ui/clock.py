"""The current time, in one place so tests can move the clock (due dates, overdue escalations)."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> datetime:
    """The current time (one place, so tests can move the clock for due dates)."""
    return datetime.now(UTC)
