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

from collections.abc import Collection, Iterator
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import case, func, or_
from sqlmodel import Session, col, select

from storage.chain import GENESIS, HEAD_KEY, append, canonical_time, event_hash  # noqa: F401 - callers use audit.append
from storage.seals import SEAL_ACTION, unsealed_rows
from storage.tables import AuditEventRow, AuditHeadRow
from storage.times import utc
from storage.transactions import StoreBase


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
    head_hash: str | None = None
    """The newest event's hash when the chain is intact (to anchor it outside the database)."""
    rows_checked: int = 0
    """Rows of the sealed tables recomputed against their newest seal (`storage.seals`)."""
    row_problems: list[str] = []
    """Each sealed row that differs from its seal or that no seal covers."""
    expected: str | None = None
    """A head hash kept outside the database that the chain was checked to reach (`--expect`)."""

    def describe(self) -> str:
        """What a person reads after pressing Verify (or running `audit verify`)."""
        if self.broken is not None:
            return f"The audit chain is BROKEN at {self.broken.describe()}. {self.checked} events before it verified."
        if self.row_problems:
            more = f" (+{len(self.row_problems) - 5} more)" if len(self.row_problems) > 5 else ""
            return (
                f"The audit chain is intact ({self.checked} events), but the DATA DIFFERS from it: "
                f"{'; '.join(self.row_problems[:5])}{more}."
            )
        kept = " It reaches the hash you kept." if self.expected else ""
        anchor = (
            f" Newest hash: {self.head_hash} (keep it outside the database and check it with `audit verify "
            "--expect HASH`: a chain that no longer reaches it was cut or rewritten)."
            if self.head_hash
            else ""
        )
        return f"The audit chain is intact: {self.checked} events and {self.rows_checked} rows verified.{kept}{anchor}"


def _event_of(row: AuditEventRow) -> AuditEvent:
    return AuditEvent(**{**row.model_dump(), "created_at": utc(row.created_at)})


def _first_problem(row: AuditEventRow, expected_seq: int, prev: AuditEventRow | None) -> str | None:
    """Why this row does not link to `prev` (None: it is the first event), or None when it does."""
    if row.seq != expected_seq:
        return f"expected seq {expected_seq} next but found {row.seq}: events are missing or were renumbered"
    if row.id != row.seq:
        return f"its id is {row.id} but every event's id is its seq ({row.seq}): the id was changed"
    if row.prev_hash != (GENESIS if prev is None else prev.hash):
        if prev is None:
            return "its previous-hash is not the chain's start value: this row's previous-hash was changed"
        return (
            f"its previous-hash does not match audit event #{prev.id} (seq {prev.seq}): either #{prev.id} "
            "was changed and its hash recomputed, or this row's previous-hash was changed"
        )
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


def seals_asked(action: str | None) -> bool:
    """Whether an action filter (a prefix) selects the row seals themselves (`rows.`, `rows.sealed`)."""
    return action is not None and action != "" and SEAL_ACTION.startswith(action)


def _matching(
    stmt: Any,
    actor: str | None,
    action: str | None,
    entity_type: str | None,
    run_id: int | None,
    since: datetime | None,
    until: datetime | None,
    upto: int | None,
) -> Any:
    """`stmt` restricted to the events matching every given filter (one rule for listing and counting)."""
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
    if upto is not None:
        stmt = stmt.where(AuditEventRow.seq <= upto)
    return stmt


class AuditStore(StoreBase):
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
        seals: bool = False,
        upto: int | None = None,
    ) -> list[AuditEvent]:
        """Events matching every given filter (action matches as a prefix: `run.` is every run event), up to seq
        `upto` when given.

        The row seals (`rows.sealed`, bookkeeping that `verify` checks) are left out unless `seals` is set or the
        action filter asks for them; a verification record takes them, so its events link without a gap.
        """
        stmt = _matching(select(AuditEventRow), actor, action, entity_type, run_id, since, until, upto)
        if not seals and not seals_asked(action):
            stmt = stmt.where(AuditEventRow.action != SEAL_ACTION)
        order = col(AuditEventRow.seq).desc() if newest_first else col(AuditEventRow.seq)
        with self._read() as s:
            return [_event_of(r) for r in s.exec(stmt.order_by(order).limit(limit)).all()]

    def head_seq(self) -> int:
        """The newest event's seq (0 before the first): counts and a list read up to it describe the same chain."""
        with self._read() as s:
            return s.exec(select(func.max(AuditEventRow.seq))).one() or 0

    def counts(
        self,
        *,
        actor: str | None = None,
        action: str | None = None,
        entity_type: str | None = None,
        run_id: int | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        upto: int | None = None,
        except_runs: Collection[int] = (),
        seals: bool = False,
    ) -> tuple[int, int]:
        """(events `events` would list without a limit, row seals it would leave out), with the same filters and
        `seals`, up to seq `upto`, leaving out the events of `except_runs`."""
        is_seal = case((col(AuditEventRow.action) == SEAL_ACTION, 1), else_=0)
        stmt = _matching(
            select(func.count(), func.coalesce(func.sum(is_seal), 0)).select_from(AuditEventRow),
            actor,
            action,
            entity_type,
            run_id,
            since,
            until,
            upto,
        )
        if except_runs:
            stmt = stmt.where(or_(col(AuditEventRow.run_id).is_(None), col(AuditEventRow.run_id).not_in(except_runs)))
        with self._read() as s:
            every, sealed = s.exec(stmt).one()
        if seals or seals_asked(action):
            return int(every), 0
        return int(every) - int(sealed), int(sealed)

    def facets(self) -> dict[str, list[str]]:
        """The distinct actors, actions and entity types (for the Audit page's filters)."""
        with self._read() as s:
            return {
                name: sorted(v for v in s.exec(select(column).distinct()).all() if v)
                for name, column in (
                    ("actor", AuditEventRow.actor),
                    ("action", AuditEventRow.action),
                    ("entity_type", AuditEventRow.entity_type),
                )
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

    @staticmethod
    def _before_the_chain(s: Session) -> AuditEventRow | None:
        """The first row the walk would never reach: a seq below 1 (the chain starts at 1)."""
        stmt = (
            select(AuditEventRow).where(AuditEventRow.seq < 1).order_by(col(AuditEventRow.seq), col(AuditEventRow.id))
        )
        return s.exec(stmt.limit(1)).first()

    def verify(self, expect: str | None = None) -> VerifyReport:
        """Recompute every link, then every sealed row against its seal; with `expect` (a head hash kept
        outside the database), check that the chain still holds an event with that hash."""
        report = self._verify_chain()
        if not report.ok:
            return report
        with self._read() as s:
            checked, problems = unsealed_rows(s)
            report = report.model_copy(update={"rows_checked": checked, "row_problems": problems, "ok": not problems})
            if expect is None:
                return report
            expect = (expect.split() or [""])[-1]  # a line of the anchor file ("seq hash") works as well
            found = s.exec(select(AuditEventRow.seq).where(AuditEventRow.hash == expect.lower())).first()
        if found is None:
            return report.model_copy(
                update={
                    "ok": False,
                    "broken": BrokenLink(
                        id=None,
                        seq=report.checked,
                        problem=f"the chain does not reach the hash you kept ({expect.strip()}): "
                        "events after it were removed or rewritten",
                    ),
                }
            )
        return report.model_copy(update={"expected": expect.strip().lower()})

    def _verify_chain(self) -> VerifyReport:
        """Recompute every link; report the first one that does not hold.

        Streams the chain in batches (never the whole chain in memory), then checks that the walk
        saw every stored row: a row outside it (inserted before seq 1) is named too.
        """
        with self._read() as s:
            forged = self._before_the_chain(s)
            if forged is not None:
                return VerifyReport(
                    ok=False,
                    checked=0,
                    broken=BrokenLink(
                        id=forged.id, seq=forged.seq, problem="seq must start at 1: a row was inserted before the chain"
                    ),
                )
            prev: AuditEventRow | None = None
            checked, expected = 0, 1
            for row in self._rows(s):
                problem = _first_problem(row, expected, prev)
                if problem:
                    if row.seq != expected:
                        row, problem = _renumbered(s, GENESIS if prev is None else prev.hash, expected) or (
                            row,
                            problem,
                        )
                    return VerifyReport(
                        ok=False, checked=checked, broken=BrokenLink(id=row.id, seq=row.seq, problem=problem)
                    )
                prev, checked, expected = row, checked + 1, row.seq + 1
            last = GENESIS if prev is None else prev.hash
            head = s.get(AuditHeadRow, 1)
            if head is None:  # without it, rows appended after the real end could not be told apart
                return VerifyReport(
                    ok=False,
                    checked=checked,
                    broken=BrokenLink(id=None, seq=checked, problem="the chain's head row (audit_head) is missing"),
                )
            if checked > head.seq:
                extra = s.exec(
                    select(AuditEventRow).where(AuditEventRow.seq > head.seq).order_by(col(AuditEventRow.seq)).limit(1)
                ).one()
                return VerifyReport(
                    ok=False,
                    checked=head.seq,
                    broken=BrokenLink(
                        id=extra.id,
                        seq=extra.seq,
                        problem=f"it was written after the chain's head (seq {head.seq}): the app did not append it",
                    ),
                )
            if (head.seq, head.hash) != (checked, last):
                gone = BrokenLink(
                    id=None,
                    seq=checked + 1,
                    problem=f"the chain ends at seq {checked} but its head says {head.seq}: "
                    "the newest events were removed",
                )
                return VerifyReport(ok=False, checked=checked, broken=gone)
            stored = int(s.exec(select(func.count()).select_from(AuditEventRow)).one())
            if stored != checked:
                seq = col(AuditEventRow.seq)
                stray = s.exec(
                    select(AuditEventRow)
                    .where(or_(seq.is_(None), seq < 1, seq > checked))
                    .order_by(col(AuditEventRow.id))
                    .limit(1)
                ).first()
                where = (None, checked + 1) if stray is None or stray.seq is None else (stray.id, stray.seq)
                outside = BrokenLink(
                    id=where[0],
                    seq=where[1],
                    problem=f"{stored} events are stored but the chain holds {checked}: "
                    f"{stored - checked} row(s) lie outside it",
                )
                return VerifyReport(ok=False, checked=checked, broken=outside)
            return VerifyReport(ok=True, checked=checked, head_hash=None if prev is None else prev.hash)
