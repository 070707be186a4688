"""The alert outbox: `storage.outbox.emit` writes an event in the transaction of what it reports (so it exists exactly when its
cause committed), the periodic sweep emits the overdue ones once per due time, and deliveries are claimed, logged
and finished here (`desk.alerts` sends them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, col, select

from santa_core import alerts as core
from storage.outbox import emit
from storage.queries import stored_id
from storage.spot_draw import remind_spot_checks, sweep_spot_checks
from storage.tables import AlertDeliveryRow, AlertRow, EscalationRow
from storage.times import utc, utcnow
from storage.transactions import StoreBase

STALE_CLAIM_S = 120.0
"""A try still `sending` this long was cut short (its process died mid-call): it counts as failed."""


def sweep_overdue(s: Session, now: datetime) -> int:
    """Emit `escalation.overdue` for each open escalation past its due time, once per due time; how many."""
    stmt = (
        select(EscalationRow)
        .where(
            EscalationRow.status == "open",
            col(EscalationRow.due_at).is_not(None),
            col(EscalationRow.due_at) <= utc(now),
        )
        .order_by(col(EscalationRow.id))
    )
    emitted = 0
    for esc in s.exec(stmt).all():
        assert esc.due_at is not None  # the query keeps the escalations with a due time
        due = utc(esc.due_at).isoformat()
        data = {"escalation_id": esc.id, "run_id": esc.run_id, "reason": esc.reason, "due_at": due, "owner": esc.owner}
        if emit(
            s,
            core.ESCALATION_OVERDUE,
            f"escalation {esc.id}",
            data,
            key=f"{core.ESCALATION_OVERDUE}:{esc.id}:{due}",
            run_id=esc.run_id,
        ):
            emitted += 1
    return emitted


DUE_SWEEPS: list[Callable[[Session, datetime], int]] = [sweep_overdue, sweep_spot_checks]
"""What the periodic sweep runs, each emitting its events once per due time: overdue escalations, and the
spot-checks' draw (each complete week's floor) and overdue reminders."""
REMINDERS: list[Callable[[Session, datetime], int]] = [sweep_overdue, remind_spot_checks]
"""The sweep without the spot-checks' draw: the reminders, due every pass."""


@dataclass(frozen=True)
class Delivery:
    """One alert due to go to one channel now."""

    alert_id: int
    channel: str
    attempt: int
    event: dict[str, Any]


def event_of(row: AlertRow) -> dict[str, Any]:
    """The alert as the hooks receive it."""
    return core.envelope(row.key, row.kind, row.subject, utc(row.created_at).isoformat(), row.payload or {})


class AlertStore(StoreBase):
    """The outbox: the periodic sweep, what is due for delivery, the claim, log and end of each try."""

    def sweep(self, now: datetime | None = None, draw: bool = True) -> int:
        """Run every due sweep (`DUE_SWEEPS`; without the spot-checks' draw, `REMINDERS`) in one transaction; how
        many events they emitted."""
        now = now or utcnow()
        with self._tx() as s:
            return sum(sweep(s, now) for sweep in (DUE_SWEEPS if draw else REMINDERS))

    def due(self, settings: core.AlertSettings, now: datetime | None = None, limit: int = 200) -> list[Delivery]:
        """The deliveries to try now, oldest events first; events with nothing left to try are marked done."""
        now = now or utcnow()
        with self._read() as s:
            not_done = col(AlertRow.done) == False  # noqa: E712 - SQL's `done = false`, not Python's `not`
            alerts = s.exec(select(AlertRow).where(not_done).order_by(col(AlertRow.id)).limit(limit)).all()
            ids = [a.id for a in alerts]
            tries: dict[tuple[int, str], list[AlertDeliveryRow]] = {}
            if ids:
                for t in s.exec(
                    select(AlertDeliveryRow)
                    .where(col(AlertDeliveryRow.alert_id).in_(ids))
                    .order_by(col(AlertDeliveryRow.id))
                ).all():
                    tries.setdefault((t.alert_id, t.hook), []).append(t)
        out: list[Delivery] = []
        settled: list[int] = []
        for alert in alerts:
            alert_id, open_channels = stored_id(alert), 0
            for channel in settings.channels(alert.kind):
                done = tries.get((alert_id, channel), [])
                if any(t.status == "ok" for t in done):
                    continue
                last = done[-1] if done else None
                if (
                    last is not None
                    and last.status == "sending"
                    and (now - utc(last.at)).total_seconds() < STALE_CLAIM_S
                ):
                    open_channels += 1  # under way elsewhere
                    continue
                ago = None if last is None else (now - utc(last.finished_at or last.at)).total_seconds()
                if len(done) >= settings.attempts:
                    continue  # gave up
                open_channels += 1
                if core.due(len(done), ago, settings):
                    out.append(Delivery(alert_id, channel, len(done) + 1, event_of(alert)))
            if not open_channels:
                settled.append(alert_id)
        if settled:
            self.mark_done(settled)
        return out

    def claim(self, delivery: Delivery) -> int | None:
        """Log the try as `sending`, once: None when another process delivered it or tries it now (the alert row is
        locked while this is decided, so two deliverers never send the same try)."""
        with self._tx() as s:
            alert = s.exec(select(AlertRow).where(AlertRow.id == delivery.alert_id).with_for_update()).one()
            tries = s.exec(
                select(AlertDeliveryRow).where(
                    AlertDeliveryRow.alert_id == alert.id, AlertDeliveryRow.hook == delivery.channel
                )
            ).all()
            fresh = utcnow() - timedelta(seconds=STALE_CLAIM_S)
            if (
                alert.done
                or len(tries) + 1 != delivery.attempt
                or any(t.status == "ok" or (t.status == "sending" and utc(t.at) > fresh) for t in tries)
            ):
                return None
            for t in tries:
                if t.status == "sending":  # cut short: its process died mid-call
                    t.status, t.error, t.finished_at = "failed", "the try was cut short", utcnow()
                    s.add(t)
            row = AlertDeliveryRow(alert_id=stored_id(alert), hook=delivery.channel, attempt=delivery.attempt)
            s.add(row)
            s.flush()
            return row.id

    def finish(self, delivery_id: int, ok: bool, status_code: int | None, error: str | None) -> None:
        """The try's outcome: `ok` (never sent again) or `failed` (tried again after its backoff)."""
        with self._tx() as s:
            row = s.get_one(AlertDeliveryRow, delivery_id)
            row.status, row.status_code, row.error, row.finished_at = (
                ("ok" if ok else "failed"),
                status_code,
                error,
                utcnow(),
            )
            s.add(row)

    def mark_done(self, alert_ids: list[int]) -> None:
        """No delivery pass reads these events again."""
        with self._tx() as s:
            for row in s.exec(select(AlertRow).where(col(AlertRow.id).in_(alert_ids))).all():
                row.done = True
                s.add(row)

    def log(self, limit: int = 50) -> list[core.LoggedTry]:
        """The newest tries, newest first."""
        stmt = (
            select(AlertDeliveryRow, AlertRow)
            .join(AlertRow, col(AlertRow.id) == col(AlertDeliveryRow.alert_id))
            .order_by(col(AlertDeliveryRow.id).desc())
            .limit(limit)
        )
        with self._read() as s:
            return [
                core.LoggedTry(utc(t.at), a.kind, a.subject, t.hook, t.attempt, t.status, t.status_code, t.error)
                for t, a in s.exec(stmt).all()
            ]

    def events(self, kind: str | None = None) -> list[AlertRow]:
        """The outbox's events, oldest first (tests and the command line)."""
        stmt = select(AlertRow).order_by(col(AlertRow.id))
        if kind is not None:
            stmt = stmt.where(AlertRow.kind == kind)
        with self._read() as s:
            return list(s.exec(stmt).all())
