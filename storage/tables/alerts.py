"""The alert outbox: an event written in the transaction of what it reports, and each try at delivering it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Column, Text
from sqlmodel import Field, SQLModel

from storage.tables.columns import JSON_OR_NULL, UTC_TS, ts_column


class AlertRow(SQLModel, table=True):
    """One event for the hooks: it exists exactly when what it reports committed."""

    __tablename__ = "alert"

    id: int | None = Field(default=None, primary_key=True)
    key: str = Field(unique=True)
    """The event's id for receivers (the idempotency key); for a swept event, what makes it once per due time."""
    kind: str = Field(index=True)
    subject: str
    run_id: int | None = Field(default=None, foreign_key="run.id", index=True)
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON_OR_NULL))
    created_at: datetime = ts_column()
    done: bool = Field(default=False, index=True)
    """Every channel it was for delivered it or gave up: no delivery pass reads it again."""


class AlertDeliveryRow(SQLModel, table=True):
    """One try at delivering an alert to one hook: `sending` while under way, then `ok` or `failed`."""

    __tablename__ = "alert_delivery"

    id: int | None = Field(default=None, primary_key=True)
    alert_id: int = Field(foreign_key="alert.id", index=True)
    hook: str
    attempt: int
    status: str = "sending"
    status_code: int | None = None
    error: str | None = Field(default=None, sa_type=Text)
    at: datetime = ts_column()
    finished_at: datetime | None = Field(default=None, sa_type=UTC_TS)
