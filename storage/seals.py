"""Row seals: the audit chain covers the data, not only the events.

Every write transaction that inserts or changes a row of a sealed table (run, round, review, proposal,
decision, escalation) ends with one `rows.sealed` audit event holding the hash of each such row as the
database returned it after the last flush. The event is chained like every other, so a seal cannot be
changed without breaking the chain. `unsealed_rows` recomputes every sealed row from the tables and names
any whose content differs from its newest seal, or that no seal covers (written outside the desk).

What the rows hold is hashed as the database gives it back (a Core SELECT on the transaction's own
connection), so the hash at sealing and at verifying is taken over the same values.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, event, select
from sqlmodel import Session, SQLModel, col

from santa_core.text import canonical_json, sha256_text
from storage.chain import HEAD_KEY, append
from storage.tables import AuditEventRow, DecisionRow, EscalationRow, ProposalRow, ReviewRow, RoundRow, RunRow
from storage.times import utc

SEALED: dict[str, type[SQLModel]] = {"run": RunRow, "round": RoundRow, "review": ReviewRow, "proposal": ProposalRow,
                                     "decision": DecisionRow, "escalation": EscalationRow}
"""The tables whose rows are sealed, by the name a seal key starts with ("review:12")."""
_KIND = {model: kind for kind, model in SEALED.items()}
_TOUCHED = "santa_sealed_rows"
SEAL_ACTION = "rows.sealed"
log = logging.getLogger(__name__)


@event.listens_for(Session, "after_flush")
def _note_written(session: Session, _context: Any) -> None:
    """Remember every sealed row this flush inserted or changed (their ids are known now)."""
    for obj in (*session.new, *session.dirty):
        kind = _KIND.get(type(obj))
        if kind is not None and obj.id is not None:
            session.info.setdefault(_TOUCHED, set()).add((kind, obj.id))


def _as_hashed(value: Any) -> str:
    """A value JSON cannot hold, as hashed: a time in UTC (PostgreSQL hands times back in the session's time
    zone, SQLite naive), anything else as its `str`."""
    return utc(value).isoformat() if isinstance(value, datetime) else str(value)


def row_hash(values: dict[str, Any]) -> str:
    """The hash of a row's columns as the database returns them."""
    return sha256_text(canonical_json(values, default=_as_hashed))


def _rows(conn: Connection, kind: str, ids: list[int]) -> Iterator[tuple[int, str, int]]:
    """(id, hash, run id) of each row."""
    table: Table = SEALED[kind].__table__
    for chunk in (ids[i:i + 500] for i in range(0, len(ids), 500)):
        for row in conn.execute(select(table).where(table.c.id.in_(chunk))).mappings():
            yield row["id"], row_hash(dict(row)), row["id"] if kind == "run" else row["run_id"]


def seal_touched(s: Session) -> None:
    """Before commit: one `rows.sealed` event with the hash of every sealed row this transaction wrote."""
    s.flush()  # first: rows added but not yet flushed are noted by the flush
    if not s.info.get(_TOUCHED):
        return
    touched = sorted(s.info.pop(_TOUCHED))
    conn = s.connection()
    seals: dict[str, str] = {}
    runs: set[int] = set()
    for kind in SEALED:
        for row_id, digest, run_id in _rows(conn, kind, [i for k, i in touched if k == kind]):
            seals[f"{kind}:{row_id}"] = digest
            runs.add(run_id)
    # The run's id when every row is one run's (nearly always): the seal is then part of that run's story, in
    # its verification record, and hidden with the run's other events while a person reviews it blind.
    append(s, "system", SEAL_ACTION, "rows", f"{len(seals)} rows", run_id=next(iter(runs)) if len(runs) == 1 else None,
           detail={"rows": seals})


def seal_all(conn: Connection) -> dict[str, str]:
    """The current hash of every row of the sealed tables (a migration seals what exists at upgrade)."""
    return {f"{kind}:{i}": digest for kind, model in SEALED.items()
            for i, digest, _ in _rows(conn, kind, list(conn.execute(select(model.__table__.c.id)).scalars()))}


def unsealed_rows(s: Session) -> tuple[int, list[str]]:
    """(rows checked, problems): each sealed row whose content differs from its newest seal, or that no seal
    covers. Reads the seals in chain order (the newest seal of a row wins), then every row."""
    newest: dict[str, tuple[str, int]] = {}
    stmt = select(AuditEventRow.seq, AuditEventRow.detail).where(AuditEventRow.action == SEAL_ACTION)
    for seq, detail in s.exec(stmt.order_by(col(AuditEventRow.seq))).all():
        for key, digest in (detail or {}).get("rows", {}).items():
            newest[key] = (digest, seq)
    conn, checked, problems = s.connection(), 0, []
    for kind, model in SEALED.items():
        ids = list(conn.execute(select(model.__table__.c.id).order_by(model.__table__.c.id)).scalars())
        for row_id, digest, _ in _rows(conn, kind, ids):
            checked += 1
            sealed = newest.pop(f"{kind}:{row_id}", None)
            if sealed is None:
                problems.append(f"{kind} {row_id} is not covered by any seal: it was written outside the desk")
            elif sealed[0] != digest:
                problems.append(f"{kind} {row_id} differs from its last sealed state (audit seq {sealed[1]}): "
                                "it was changed outside the desk")
    # The desk never deletes a row of these tables: a sealed row that is gone was deleted outside it.
    for key, (_, seq) in sorted(newest.items(), key=lambda item: item[1][1]):
        kind, _, row_id = key.partition(":")
        problems.append(f"{kind} {row_id} is gone (sealed at audit seq {seq}): it was deleted outside the desk")
    return checked, problems


ANCHOR_FILE_ENV = "SANTA_AUDIT_ANCHOR_FILE"
"""A file the desk appends each new audit head to ("seq hash"), e.g. on another disk or a mounted share."""


def anchor_head(s: Session) -> None:
    """After a commit that appended audit events: append the new head to SANTA_AUDIT_ANCHOR_FILE, when set.
    A file that cannot be written is logged, never an error of the change already committed."""
    head = s.info.pop(HEAD_KEY, None)
    path = os.environ.get(ANCHOR_FILE_ENV)
    if head is None or not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{head[0]} {head[1]}\n")
    except OSError:
        log.exception("could not append the audit head to %s", path)
