"""Row seals: the audit chain covers the data, not only the events.

Every write transaction that inserts, changes or deletes a row of a sealed table (`SEALED`: a run and
everything its record shows, its model calls and their costs, batches with their items and changes, rubric
versions and trials, people's roles and the settings) ends with a `rows.sealed` audit event holding the hash
of each such row as the database returned it after the last flush (a row the desk deleted is sealed as
gone). The event is chained like every other, so a seal cannot be changed without breaking the chain.
`unsealed_rows` recomputes every sealed row from the tables and names any whose content differs from its
newest seal, that no seal covers (written outside the desk), or that is gone while its seal says it exists.

What the rows hold is hashed as the database gives it back (a Core SELECT on the transaction's own
connection), so the hash at sealing and at verifying is taken over the same values. A column that holds
NULL is left out of the hash: a later migration that adds a nullable column (NULL in every old row) leaves
every old seal valid. A migration that adds a column with a value for old rows, drops one or changes how a
value comes back re-seals with `seals_at_upgrade(..., rehash=..., earlier=...)`: only rows that still match
their seal under the old rule are re-sealed, so a row changed outside the desk before the upgrade stays named.
"""

from __future__ import annotations

import functools
import logging
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, event, inspect
from sqlalchemy import select as core_select
from sqlmodel import Session, SQLModel, col, select

from santa_core.text import canonical_json, sha256_text
from storage.chain import HEAD_KEY, append
from storage.tables import (
    AlertDeliveryRow,
    AlertRow,
    AuditEventRow,
    BatchChangeRow,
    BatchItemRow,
    BatchPatternRow,
    BatchRow,
    BatchSampleItemRow,
    BatchSampleRow,
    CallSentRow,
    DecisionRow,
    EscalationRow,
    EscapeRow,
    LLMCallRow,
    MergedIssueRow,
    PersonRow,
    ProposalRow,
    ReviewRow,
    RoundRow,
    RubricVersionRow,
    RunRow,
    ScreenRow,
    SettingsRow,
    SpotCheckRow,
    SpotRuleRow,
    StateChangeRow,
    SuggestionDecisionRow,
    TrialRow,
)
from storage.tables.columns import table_of
from storage.times import utc

FIRST_SEALED = ("run", "round", "review", "proposal", "decision", "escalation")
"""The tables sealed since migration 0011."""
SEALED: dict[str, type[SQLModel]] = {
    "run": RunRow,
    "round": RoundRow,
    "review": ReviewRow,
    "proposal": ProposalRow,
    "decision": DecisionRow,
    "escalation": EscalationRow,
    # since 0016: the rest of what a run's record shows, the call log and its costs, a batch and the text
    # its export calls verified, rubric versions and trials, who may do what, and the settings in effect
    "merged_issue": MergedIssueRow,
    "screen": ScreenRow,
    "state_change": StateChangeRow,
    "escape": EscapeRow,
    "llm_call": LLMCallRow,
    "llm_call_sent": CallSentRow,
    "batch": BatchRow,
    "batch_item": BatchItemRow,
    "batch_change": BatchChangeRow,
    "batch_pattern": BatchPatternRow,
    "batch_sample": BatchSampleRow,
    "batch_sample_item": BatchSampleItemRow,
    "rubric_version": RubricVersionRow,
    "rubric_trial": TrialRow,
    "person": PersonRow,
    "settings": SettingsRow,
    # since 0018: spot-check rules (whose seed decides the draw) and the spot-checks with their blind verdicts
    "spot_rule": SpotRuleRow,
    "spot_check": SpotCheckRow,
    "rubric_suggestion": SuggestionDecisionRow,  # since 0020: a rubric author's accepted or dismissed suggestions
    # since 0021: the alert outbox, whose events say what happened and whose log says who was told
    "alert": AlertRow,
    "alert_delivery": AlertDeliveryRow,
}
"""The tables whose rows are sealed, by the name a seal key starts with ("review:12"): each table's own name.
Not sealed: the audit chain itself (audit_event, audit_head: the chain verifies them) and the metric facts
(run_metric, criterion_result, criterion_day: derived from sealed rows, recomputed, never the source)."""
_KIND = {model: kind for kind, model in SEALED.items()}
_TOUCHED = "santa_sealed_rows"
SEAL_ACTION = "rows.sealed"
log = logging.getLogger(__name__)
Hash = Callable[[dict[str, Any]], str]


@event.listens_for(Session, "after_flush")
def _note_written(session: Session, _context: Any) -> None:
    """Remember every sealed row this flush inserted, changed or deleted (their ids are known now)."""
    for obj in (*session.new, *session.dirty, *session.deleted):
        kind = _KIND.get(type(obj))
        if kind is not None and obj.id is not None:
            session.info.setdefault(_TOUCHED, set()).add((kind, obj.id))


def _as_hashed(value: Any) -> str:
    """A value JSON cannot hold, as hashed: a time in UTC (PostgreSQL hands times back in the session's time
    zone, SQLite naive), anything else as its `str`."""
    return utc(value).isoformat() if isinstance(value, datetime) else str(value)


def row_hash(values: dict[str, Any]) -> str:
    """The hash of a row's columns as the database returns them, NULL columns left out (a nullable column
    added later leaves old seals valid)."""
    return sha256_text(canonical_json({k: v for k, v in values.items() if v is not None}, default=_as_hashed))


def full_row_hash(values: dict[str, Any]) -> str:
    """The hash seals held before migration 0016: every column, NULLs included."""
    return sha256_text(canonical_json(values, default=_as_hashed))


def _run_of(kind: str, row: dict[str, Any]) -> int | None:
    """The run a row belongs to (None: a batch's, a person's, the settings', a call of no run)."""
    return row["id"] if kind == "run" else row.get("run_id")


def _rows(
    conn: Connection,
    kind: str,
    ids: list[Any] | None = None,
    *,
    columns: set[str] | None = None,
    hashes: Iterable[Hash] = (row_hash,),
) -> Iterator[tuple[Any, list[str], int | None]]:
    """(id, [hash per rule], run id) of each row with one of `ids` (None: every row, in id order). `columns`:
    only these (a migration reads the columns its database has so far)."""
    table = table_of(SEALED[kind])
    picked = [c for c in table.c if columns is None or c.name in columns]
    hashes = tuple(hashes)

    def chunk(stmt: Any, params: dict[str, Any] | None = None) -> Iterator[tuple[Any, list[str], int | None]]:
        for row in conn.execute(stmt, params).mappings():
            values = dict(row)
            yield values["id"], [h(values) for h in hashes], _run_of(kind, values)

    if ids is None:
        yield from chunk(core_select(*picked).order_by(table.c.id))
        return
    by_ids = _by_ids(kind) if columns is None else _where_ids(core_select(*picked), table)
    for part in (ids[i : i + 500] for i in range(0, len(ids), 500)):
        yield from chunk(by_ids, {"ids": part})


def _where_ids(stmt: Any, table: Any) -> Any:
    """`stmt` over the rows whose id is one of the bound list `ids`."""
    return stmt.where(table.c.id.in_(bindparam("ids", expanding=True)))


@functools.cache
def _by_ids(kind: str) -> Any:
    """SELECT every column of a sealed table's rows with the ids bound as `ids`: built once per table (every write
    transaction seals what it wrote, so a statement built and keyed per call was a cost)."""
    table = table_of(SEALED[kind])
    return _where_ids(core_select(*table.c), table)


def seal_touched(s: Session) -> None:
    """Before commit: `rows.sealed` events with the hash of every sealed row this transaction wrote (a deleted
    row's hash is None), one event per run the rows belong to (nearly always one for the transaction)."""
    s.flush()  # first: rows added but not yet flushed are noted by the flush
    if not s.info.get(_TOUCHED):
        return
    touched = sorted(s.info.pop(_TOUCHED), key=lambda t: (t[0], str(t[1])))
    conn = s.connection()
    by_run: dict[int | None, dict[str, str | None]] = defaultdict(dict)
    for kind in SEALED:
        wanted = [i for k, i in touched if k == kind]
        if not wanted:
            continue
        found = set()
        for row_id, (digest,), run_id in _rows(conn, kind, wanted):
            by_run[run_id][f"{kind}:{row_id}"] = digest
            found.add(row_id)
        for row_id in set(wanted) - found:  # deleted by the desk (a re-run gate's merged issues)
            by_run[None][f"{kind}:{row_id}"] = None
    # A run's rows are sealed in an event with the run's id: part of that run's story, in its verification
    # record, and hidden with the run's other events while a person reviews it blind. Rows of no run (a batch,
    # a person, the settings, a trial) are sealed in an event of no run.
    for run_id in sorted(by_run, key=lambda r: (r is None, r or 0)):
        seals = by_run[run_id]
        append(s, "system", SEAL_ACTION, "rows", f"{len(seals)} rows", run_id=run_id, detail={"rows": seals})


def _newest_seals(s: Session) -> dict[str, tuple[str | None, int]]:
    """Each sealed key's newest hash (None: deleted by the desk) and the seq of its seal, in chain order."""
    newest: dict[str, tuple[str | None, int]] = {}
    stmt = select(col(AuditEventRow.seq), col(AuditEventRow.detail)).where(col(AuditEventRow.action) == SEAL_ACTION)
    for seq, detail in s.exec(stmt.order_by(col(AuditEventRow.seq))).all():
        for key, digest in (detail or {}).get("rows", {}).items():
            newest[key] = (digest, seq)
    return newest


def seals_at_upgrade(
    conn: Connection, new: Iterable[str] = (), rehash: Iterable[str] = (), earlier: Hash = full_row_hash
) -> dict[str, str]:
    """What a migration seals: every row of the newly sealed tables `new` that no seal covers yet, and each row
    of `rehash` (sealed under the `earlier` rule) that still matches its newest seal under that rule, hashed
    by today's rule. A row of `rehash` that differs from its seal, or that no seal covers, is left as it is:
    verify goes on naming it. Reads only the columns the database has at that revision."""
    with Session(bind=conn) as s:
        newest = _newest_seals(s)
    out: dict[str, str] = {}
    for kind, sealed_before in [*((k, False) for k in new), *((k, True) for k in rehash)]:
        name = table_of(SEALED[kind]).name
        if not inspect(conn).has_table(name):
            continue  # a table a later revision creates (an upgrade from an older desk passes through here first)
        columns = {c["name"] for c in inspect(conn).get_columns(name)}
        for row_id, (digest, old), _ in _rows(conn, kind, columns=columns, hashes=(row_hash, earlier)):
            seal = newest.get(f"{kind}:{row_id}", (None, 0))[0]
            if seal != digest and (seal == old if sealed_before else seal is None):
                out[f"{kind}:{row_id}"] = digest
    return out


def seal_at_upgrade(conn: Connection, seals: dict[str, str]) -> None:
    """Append the migration's seals as one event (nothing when there are none, as on a new database)."""
    if seals:
        with Session(bind=conn) as s:
            append(s, "system", SEAL_ACTION, "rows", f"{len(seals)} rows sealed at upgrade", detail={"rows": seals})


def unsealed_rows(s: Session) -> tuple[int, list[str]]:
    """(rows checked, problems): each sealed row whose content differs from its newest seal, or that no seal
    covers. Reads the seals in chain order (the newest seal of a row wins), then every row."""
    newest = _newest_seals(s)
    conn, checked, problems = s.connection(), 0, []
    for kind in SEALED:
        for row_id, (digest,), _ in _rows(conn, kind):
            checked += 1
            sealed = newest.pop(f"{kind}:{row_id}", None)
            if sealed is None or sealed[0] is None:
                problems.append(f"{kind} {row_id} is not covered by any seal: it was written outside the desk")
            elif sealed[0] != digest:
                problems.append(
                    f"{kind} {row_id} differs from its last sealed state (audit seq {sealed[1]}): "
                    "it was changed outside the desk"
                )
    # Only merged issues are ever deleted by the desk (sealed as None): any other sealed row that is gone was
    # deleted outside it.
    for key, (last_seal, seq) in sorted(newest.items(), key=lambda item: item[1][1]):
        if last_seal is not None:
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
