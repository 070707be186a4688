"""The alert outbox's one door: an event written in the transaction of what it reports, so it exists exactly when
its cause committed (`storage.alerts` sweeps and delivers).
"""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from santa_core import alerts as core
from storage.tables import AlertRow


def emit(
    s: Session, kind: str, subject: str, payload: dict[str, Any], *, key: str | None = None, run_id: int | None = None
) -> AlertRow | None:
    """Add an event to the outbox in the caller's transaction; with `key`, once only (None when that key is there:
    a sweep emits an overdue reminder once per due time)."""
    if kind not in core.KINDS:
        raise ValueError(f"unknown alert kind {kind!r}")
    if key is not None and s.exec(select(AlertRow.id).where(AlertRow.key == key)).first() is not None:
        return None
    row = AlertRow(key=key or f"{kind}:{uuid4().hex}", kind=kind, subject=subject, run_id=run_id, payload=payload)
    try:
        with s.begin_nested():  # another sweep may have emitted the same key a moment ago
            s.add(row)
            s.flush()
    except IntegrityError:
        return None
    return row
