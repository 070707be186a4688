"""The batch tables' side of fixes that reach every item: the per-item fixes prepared for a pattern,
the fix agent's calls on record, the fixes' Message Batch, a person's signature for a pattern and a
person's own edit of an item (`BatchStore` inherits these)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlmodel import Session, col, func, select

from santa_core.batch.fix_batch import ANY_STATUS, AUTO_FIX, FIX_BATCH, IN_PROGRESS, RETRY, STOPPED
from santa_core.batch.store import BatchProblem, PatternRecord
from santa_core.models import MAX_TEXT_CHARS, LLMCall
from santa_core.reviewers.base import Served
from santa_core.roles import Permission
from santa_core.text import sha256_text, text_problem
from storage import audit
from storage.call_log import sent_row
from storage.people import require
from storage.queries import stored_id
from storage.rows import call_row
from storage.tables import BatchChangeRow, BatchItemRow, BatchPatternRow, BatchSampleRow
from storage.times import utcnow
from storage.transactions import StoreBase
from storage.workers import this_worker

WAITING = ("open", "proposed")


def _row(s: Session, pattern_id: int, lock: bool = False) -> BatchPatternRow:
    """The pattern (locked with `lock`), whatever its status."""
    stmt = select(BatchPatternRow).where(BatchPatternRow.id == pattern_id)
    row = s.exec(stmt.with_for_update() if lock else stmt).first()
    if row is None:
        raise BatchProblem(f"pattern {pattern_id} does not exist")
    return row


def waiting_row(s: Session, pattern_id: int) -> BatchPatternRow:
    """The pattern, locked, if it still waits for a decision."""
    row = s.exec(select(BatchPatternRow).where(BatchPatternRow.id == pattern_id).with_for_update()).first()
    if row is None:
        raise BatchProblem(f"pattern {pattern_id} does not exist")
    if row.status not in WAITING:
        raise BatchProblem(f"pattern {pattern_id} was already {row.status} by {row.decided_by}")
    return row


def pattern_record(row: BatchPatternRow) -> PatternRecord:
    return PatternRecord(
        id=stored_id(row),
        sample_id=row.sample_id,
        key=row.key,
        criterion=row.criterion,
        title=row.title,
        pattern=row.pattern,
        status=row.status,
        proposal=row.proposal,
        approved_edits=row.approved_edits,
        decided_by=row.decided_by,
        reason=row.reason,
        item_fixes=row.item_fixes,
    )


class BatchFixes(StoreBase):
    """Per-item fixes, signatures and edits by hand."""

    def save_item_fixes(self, pattern_id: int, fixes: dict[str, dict[str, Any]], actor: str) -> None:
        """Keep the fixes prepared for every item a waiting pattern reaches (the newest count)."""
        with self._tx() as s:
            require(s, actor, Permission.DECIDE_FIX)
            row = waiting_row(s, pattern_id)
            row.item_fixes = fixes
            # The fixes' Message Batch is collected into these plans: a later prepare sends a new one.
            row.pattern = {k: v for k, v in row.pattern.items() if k != FIX_BATCH}
            s.add(row)

    def note_fix_sent(self, pattern_id: int, purpose: str, model: str, request: dict, estimate_usd: float) -> None:
        """Put one of the fix agent's calls for a pattern on record before its request leaves (committed)."""
        with self._tx() as s:
            s.add(sent_row(Served(batch_id=_row(s, pattern_id).batch_id), purpose, model, request, estimate_usd))

    def save_fix_calls(self, pattern_id: int, calls: Sequence[LLMCall]) -> None:
        """Store the answers of the fix agent's calls for a pattern, whatever its status now (the calls were
        made); the pattern's `fix_spent_usd` grows by their cost in the same transaction, so it is the sum of
        its call rows."""
        if not calls:
            return
        with self._tx() as s:
            row = _row(s, pattern_id, lock=True)
            s.add_all([call_row(None, 0, call, None, batch_id=row.batch_id) for call in calls])
            row.fix_spent_usd = (row.fix_spent_usd or 0.0) + sum(c.cost_usd for c in calls)
            s.add(row)

    def set_fix_batch(self, pattern_id: int, state: dict[str, Any] | None, expect: Any = ANY_STATUS) -> bool:
        """Remember (None: forget) where the fixes' Message Batch of a pattern stands: sending, its API id and
        jobs, or why it stopped. Committed before the create, so no restart sends it twice. With `expect`, only
        when its status is that (None: no batch) — False, and nothing written, when another process moved it."""
        with self._tx() as s:
            row = _row(s, pattern_id, lock=True)
            if expect is not ANY_STATUS and (row.pattern.get(FIX_BATCH) or {}).get("status") != expect:
                return False
            rest = {k: v for k, v in row.pattern.items() if k != FIX_BATCH}
            row.pattern = rest if state is None else {**rest, FIX_BATCH: state}
            s.add(row)
            return True

    def note_auto_fix(self, pattern_id: int, note: str, claim: bool = False) -> bool:
        """Keep what auto-approve did with a pattern (in its JSON); with `claim`, only if auto-approve never took it
        up and it still waits with no proposal (False then: another process, or a person, has it)."""
        with self._tx() as s:
            row = _row(s, pattern_id, lock=True)
            if claim and (AUTO_FIX in row.pattern or row.status not in WAITING or row.proposal is not None):
                return False
            row.pattern = {**row.pattern, AUTO_FIX: {"note": note, "worker": this_worker()}}
            s.add(row)
            return True

    def record_fix_retry(self, pattern_id: int, actor: str) -> None:
        """A person's Try again of a pattern's fixes whose Message Batch stopped, on record (refused without the
        right to decide fixes, or once the pattern is decided)."""
        with self._tx() as s:
            require(s, actor, Permission.DECIDE_FIX)
            row = waiting_row(s, pattern_id)
            state = dict(row.pattern.get(FIX_BATCH) or {})
            was = state.get("status") or ""
            if not was.startswith(STOPPED):  # one Try again per stop: a second click (or a second person) pays nothing
                raise BatchProblem(
                    f"the fixes of pattern {pattern_id} are not stopped (someone tried them again "
                    "already, or they are running): nothing is sent again"
                )
            # Claimed in this transaction: a made batch is polled again, one never made is for the next prepare to send.
            claimed = {**state, "status": IN_PROGRESS} if state.get("api_id") else {"status": RETRY}
            row.pattern = {**{k: v for k, v in row.pattern.items() if k != FIX_BATCH}, FIX_BATCH: claimed}
            s.add(row)
            audit.append(
                s, actor, "batch.fixes_retried", "batch", row.batch_id, detail={"pattern": row.key, "was": was}
            )

    def set_signature(self, pattern_id: int, signature: list[str], check: dict[str, Any], actor: str) -> PatternRecord:
        """A person's signature for a waiting pattern: stored with its check; the prepared fixes are dropped."""
        with self._tx() as s:
            require(s, actor, Permission.DECIDE_FIX)
            row = waiting_row(s, pattern_id)
            before = list(row.pattern.get("signature", []))
            row.pattern = {**row.pattern, "signature": signature, "signature_check": check}
            row.item_fixes = None  # they were prepared for the items the old signature reached
            s.add(row)
            audit.append(
                s,
                actor,
                "batch.signature_set",
                "batch",
                row.batch_id,
                detail={"pattern": row.key, "before": before, "after": signature},
            )
            s.flush()
            return pattern_record(row)

    def edit_by_hand(
        self, pattern_id: int, item_id: int, before_text: str, after_text: str, actor: str, reason: str
    ) -> None:
        """A person's own edit of one item, recorded as theirs (append-only) against the pattern it belongs to.

        Refused when the item changed since the person opened it, when the text is empty, too long
        or unchanged, or when the pattern is another batch's.
        """
        if problem := text_problem(after_text, "the item's text", MAX_TEXT_CHARS):
            raise BatchProblem(problem)
        with self._tx() as s:
            require(s, actor, Permission.DECIDE_FIX)
            pattern = s.get(BatchPatternRow, pattern_id)
            item = s.exec(select(BatchItemRow).where(BatchItemRow.id == item_id).with_for_update()).first()
            if pattern is None or item is None or item.batch_id != pattern.batch_id:
                raise BatchProblem(f"item {item_id} is not in the batch of pattern {pattern_id}")
            if item.output != before_text:
                raise BatchProblem(f"item {item.item_key} changed since you opened it; open it again")
            if " ".join(after_text.split()) == " ".join(before_text.split()):
                raise BatchProblem("only spacing changed: edit the text itself, or leave the item as it is")
            unfinished = s.exec(
                select(func.count())
                .select_from(BatchSampleRow)
                .where(BatchSampleRow.batch_id == item.batch_id, col(BatchSampleRow.finished_at).is_(None))
            ).one()
            if unfinished:
                raise BatchProblem(
                    "a sample of this batch is being reviewed: edit once it is in, so its reviews "
                    "judge the text they were given"
                )
            s.add(
                BatchChangeRow(
                    batch_id=item.batch_id,
                    item_id=item_id,
                    pattern_id=pattern_id,
                    actor=actor,
                    before_text=before_text,
                    after_text=after_text,
                    before_hash=sha256_text(before_text),
                    after_hash=sha256_text(after_text),
                    applied=[],
                    skipped=[],
                    by_hand=True,
                    created_at=utcnow(),
                )
            )
            item.output = after_text
            s.add(item)
            audit.append(
                s,
                actor,
                "batch.item_edited_by_hand",
                "batch",
                item.batch_id,
                detail={
                    "item": item.item_key,
                    "pattern": pattern.key,
                    "reason": reason,
                    "before_hash": sha256_text(before_text),
                    "after_hash": sha256_text(after_text),
                },
            )
