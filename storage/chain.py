"""Appending to the audit chain: one event linked to the one before it, inside the caller's transaction.

Kept apart from `storage.audit` (reading and verifying the chain) so that the write hook of every
store (`storage.transactions` → `storage.seals`) can append without an import circle.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from santa_core.text import canonical_json, sha256_text
from storage.tables import AuditEventRow, AuditHeadRow
from storage.tables.columns import table_of
from storage.times import utc, utcnow

HEAD_KEY = "santa_audit_head"
"""Session info key: the (seq, hash) of the newest event this transaction appended."""
GENESIS = "0" * 64
"""The previous hash of the first event."""

_EVENTS = table_of(AuditEventRow)
_HEAD = table_of(AuditHeadRow)
# The three statements, built once: their values are bound at each call (building them per event, values and all,
# took about a third of an event's CPU time; the SQL sent is the same).
_LOCK_HEAD = select(_HEAD.c.seq, _HEAD.c.hash).where(_HEAD.c.id == 1).with_for_update()
_ADD_EVENT = _EVENTS.insert()
_MOVE_HEAD = _HEAD.update().where(_HEAD.c.id == 1)

HASHED = (
    "seq",
    "created_at",
    "actor",
    "action",
    "entity_type",
    "entity_id",
    "run_id",
    "before_hash",
    "after_hash",
    "detail",
    "prev_hash",
)
"""The fields an event's hash covers, in this order."""


def canonical_time(value: datetime) -> str:
    """A timestamp as hashed: UTC, ISO 8601, microseconds (what both databases keep)."""
    return utc(value).astimezone(UTC).isoformat(timespec="microseconds")


def event_hash(fields: dict[str, Any]) -> str:
    """sha256 over the canonical JSON of an event's hashed fields."""
    body = {k: fields[k] for k in HASHED}
    body["created_at"] = (
        canonical_time(fields["created_at"]) if isinstance(fields["created_at"], datetime) else fields["created_at"]
    )
    return sha256_text(canonical_json(body, default=str))


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
    """Append one event to the chain inside the caller's transaction.

    Plain Core statements on the session's connection (no ORM flush): three short statements, so
    the trail adds about a millisecond per event. The event's id is its seq, so a row's id is
    covered by the chain too (verify checks that they agree).
    """
    conn = s.connection()
    last_seq, last_hash = conn.execute(_LOCK_HEAD).one()
    fields: dict[str, Any] = {
        "seq": last_seq + 1,
        "created_at": utcnow(),
        "actor": actor,
        "action": action,
        "entity_type": entity_type,
        "entity_id": str(entity_id),
        "run_id": run_id,
        "before_hash": before,
        "after_hash": after,
        "detail": _plain(detail),
        "prev_hash": last_hash,
    }
    digest = event_hash(fields)
    conn.execute(_ADD_EVENT, {"id": fields["seq"], **fields, "hash": digest})
    conn.execute(_MOVE_HEAD, {"seq": fields["seq"], "hash": digest})
    s.info[HEAD_KEY] = (fields["seq"], digest)  # for the anchor file, once committed (storage.seals.anchor_head)
    return AuditEventRow(id=fields["seq"], **fields, hash=digest)
