"""The audit trail: append-only events, each carrying the hash of the one before it.

Every human action and every state change appends one event inside the same transaction as the
change itself, so an event exists exactly when its change was committed. An event's hash covers
its sequence number, time, actor, action, entity, before/after hashes, detail and the previous
event's hash; changing, removing or reordering any stored event breaks the chain from that
event on, and `AuditStore.verify` names the first broken link.

Appenders lock the single `audit_head` row first (SQLite: the write transaction already holds
the database lock; PostgreSQL: `SELECT ... FOR UPDATE`), so two concurrent transactions can
never both link to the same previous event. The unique `seq` is a second guard.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel
from sqlmodel import Session, col, select

from storage.sessions import Transactions, utc
from storage.tables import AuditEventRow, AuditHeadRow, utcnow

GENESIS = "0" * 64
"""The previous hash of the first event."""

HASHED = ("seq", "created_at", "actor", "action", "entity_type", "entity_id", "run_id", "before_hash",
          "after_hash", "detail", "prev_hash")
"""The fields an event's hash covers, in this order."""


def canonical_time(value: datetime) -> str:
    """A timestamp as hashed: UTC, ISO 8601, microseconds (what both databases keep)."""
    return utc(value).astimezone(UTC).isoformat(timespec="microseconds")


def event_hash(fields: dict[str, Any]) -> str:
    """sha256 over the canonical JSON of an event's hashed fields."""
    body = {k: fields[k] for k in HASHED}
    body["created_at"] = canonical_time(fields["created_at"]) if isinstance(fields["created_at"], datetime) \
        else fields["created_at"]
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plain(detail: dict[str, Any] | None) -> dict[str, Any]:
    """Detail as JSON round-trips it (so the hash recomputed from the stored row is the same)."""
    return json.loads(json.dumps(detail or {}, sort_keys=True, default=str))


def append(
    s: Session,
    actor: str,
    action: str,
    entity_type: str,
    entity_id: object,
    *,
    run_id: int | None = None,
    before: str | None = None,
    after: str | None = None,
    detail: dict[str, Any] | None = None,
) -> AuditEventRow:
    """Append one event to the chain inside the caller's transaction."""
    head = s.exec(select(AuditHeadRow).where(AuditHeadRow.id == 1).with_for_update()).one()
    fields: dict[str, Any] = {
        "seq": head.seq + 1,
        "created_at": utcnow(),
        "actor": actor,
        "action": action,
        "entity_type": entity_type,
        "entity_id": str(entity_id),
        "run_id": run_id,
        "before_hash": before,
        "after_hash": after,
        "detail": _plain(detail),
        "prev_hash": head.hash,
    }
    row = AuditEventRow(**fields, hash=event_hash(fields))
    head.seq, head.hash = row.seq, row.hash
    s.add(row)
    s.add(head)
    return row


class AuditEvent(BaseModel):
    """One stored event, as the Audit page and the verification record show it."""

    id: int
    seq: int
    created_at: datetime
    actor: str
    action: str
    entity_type: str
    entity_id: str
    run_id: int | None
    before_hash: str | None
    after_hash: str | None
    detail: dict[str, Any]
    prev_hash: str
    hash: str


class BrokenLink(BaseModel):
    """Where the chain breaks first, and why."""

    id: int | None
    seq: int
    problem: str

    def describe(self) -> str:
        """One sentence naming the row."""
        where = f"audit event #{self.id} (seq {self.seq})" if self.id is not None else f"seq {self.seq}"
        return f"{where}: {self.problem}"


class VerifyReport(BaseModel):
    """The outcome of recomputing the whole chain."""

    ok: bool
    checked: int
    broken: BrokenLink | None = None

    def describe(self) -> str:
        """What a person reads after pressing Verify (or running `audit verify`)."""
        if self.ok:
            return f"The audit chain is intact: {self.checked} events verified."
        return f"The audit chain is BROKEN at {self.broken.describe()}. {self.checked} events before it verified."


def _event_of(row: AuditEventRow) -> AuditEvent:
    return AuditEvent(**{**row.model_dump(), "created_at": utc(row.created_at)})


def _first_problem(row: AuditEventRow, expected_seq: int, prev_hash: str) -> str | None:
    """Why this row does not link, or None when it does."""
    if row.seq != expected_seq:
        return f"expected seq {expected_seq} next but found {row.seq}: events are missing or were renumbered"
    if row.prev_hash != prev_hash:
        return "its previous-hash does not match the event before it"
    fields = row.model_dump()
    fields["created_at"] = utc(row.created_at)
    if event_hash(fields) != row.hash:
        return "its content does not match its hash (the row was changed after it was written)"
    return None


def _renumbered(s: Session, prev_hash: str, expected: int) -> tuple[AuditEventRow, str] | None:
    """At a gap: the event that links to the last good one under another seq (renumbered), if any."""
    stmt = select(AuditEventRow).where(AuditEventRow.prev_hash == prev_hash, AuditEventRow.seq != expected)
    row = s.exec(stmt.limit(1)).first()
    if row is None:
        return None
    return row, f"it links to seq {expected - 1} but its seq was changed from {expected} to {row.seq}"


class AuditStore(Transactions):
    """Reads and verifies the chain (appending happens inside other stores' transactions)."""

    def events(
        self,
        *,
        actor: str | None = None,
        action: str | None = None,
        entity_type: str | None = None,
        run_id: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 500,
        newest_first: bool = True,
    ) -> list[AuditEvent]:
        """Events matching every given filter (action matches as a prefix: `run.` is every run event)."""
        stmt = select(AuditEventRow)
        if actor:
            stmt = stmt.where(AuditEventRow.actor == actor)
        if action:
            stmt = stmt.where(col(AuditEventRow.action).startswith(action))
        if entity_type:
            stmt = stmt.where(AuditEventRow.entity_type == entity_type)
        if run_id is not None:
            stmt = stmt.where(AuditEventRow.run_id == run_id)
        # In UTC: SQLite compares the stored UTC wall-clock times, so another zone's would be off.
        if since is not None:
            stmt = stmt.where(AuditEventRow.created_at >= utc(since))
        if until is not None:
            stmt = stmt.where(AuditEventRow.created_at < utc(until))
        order = col(AuditEventRow.seq).desc() if newest_first else col(AuditEventRow.seq)
        with self._read() as s:
            return [_event_of(r) for r in s.exec(stmt.order_by(order).limit(limit)).all()]

    def facets(self) -> dict[str, list[str]]:
        """The distinct actors, actions and entity types (for the Audit page's filters)."""
        with self._read() as s:
            return {
                name: sorted(v for v in s.exec(select(column).distinct()).all() if v)
                for name, column in (("actor", AuditEventRow.actor), ("action", AuditEventRow.action),
                                     ("entity_type", AuditEventRow.entity_type))
            }

    def _rows(self, s: Session, batch: int = 1000) -> Iterator[AuditEventRow]:
        """Every event in chain order, a batch at a time (the chain can be long)."""
        last = 0
        while True:
            stmt = select(AuditEventRow).where(AuditEventRow.seq > last).order_by(col(AuditEventRow.seq)).limit(batch)
            rows = list(s.exec(stmt).all())
            if not rows:
                return
            yield from rows
            last = rows[-1].seq

    def verify(self) -> VerifyReport:
        """Recompute every link; report the first one that does not hold."""
        with self._read() as s:
            prev, checked, expected = GENESIS, 0, 1
            for row in self._rows(s):
                problem = _first_problem(row, expected, prev)
                if problem:
                    if row.seq != expected:
                        row, problem = _renumbered(s, prev, expected) or (row, problem)
                    return VerifyReport(ok=False, checked=checked, broken=BrokenLink(id=row.id, seq=row.seq,
                                                                                     problem=problem))
                prev, checked, expected = row.hash, checked + 1, row.seq + 1
            head = s.get(AuditHeadRow, 1)
            if head is not None and (head.seq, head.hash) != (checked, prev):
                gone = BrokenLink(id=None, seq=checked + 1,
                                  problem=f"the chain ends at seq {checked} but its head says {head.seq}: "
                                  "the newest events were removed")
                return VerifyReport(ok=False, checked=checked, broken=gone)
            return VerifyReport(ok=True, checked=checked)
