"""The batch tables' side of fixes that reach every item: the per-item fixes prepared for a pattern,
a person's signature for it, and a person's own edit of an item (`BatchStore` inherits these)."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, func, select

from santa_core.batch.store import BatchProblem, PatternRecord
from santa_core.models import MAX_TEXT_CHARS
from santa_core.roles import Permission
from santa_core.text import text_problem
from storage import audit
from storage.hashing import sha256_text
from storage.people import require
from storage.tables import BatchChangeRow, BatchItemRow, BatchPatternRow, BatchSampleRow
from storage.times import utcnow
from storage.transactions import StoreBase

WAITING = ("open", "proposed")


def waiting_row(s: Session, pattern_id: int) -> BatchPatternRow:
    """The pattern, locked, if it still waits for a decision."""
    row = s.exec(select(BatchPatternRow).where(BatchPatternRow.id == pattern_id).with_for_update()).first()
    if row is None:
        raise BatchProblem(f"pattern {pattern_id} does not exist")
    if row.status not in WAITING:
        raise BatchProblem(f"pattern {pattern_id} was already {row.status} by {row.decided_by}")
    return row


def pattern_record(row: BatchPatternRow) -> PatternRecord:
    return PatternRecord(id=row.id, sample_id=row.sample_id, key=row.key, criterion=row.criterion, title=row.title,
                         pattern=row.pattern, status=row.status, proposal=row.proposal,
                         approved_edits=row.approved_edits, decided_by=row.decided_by, reason=row.reason,
                         item_fixes=row.item_fixes)


class BatchFixes(StoreBase):
    """Per-item fixes, signatures and edits by hand."""

    def save_item_fixes(self, pattern_id: int, fixes: dict[str, dict[str, Any]], actor: str) -> None:
        """Keep the fixes prepared for every item a waiting pattern reaches (the newest count)."""
        with self._tx() as s:
            require(s, actor, Permission.DECIDE_FIX)
            row = waiting_row(s, pattern_id)
            row.item_fixes = fixes
            row.fix_spent_usd = (row.fix_spent_usd or 0.0) + sum(
                float(f.get("cost_usd") or 0.0) for k, f in fixes.items() if f.get("via") == "fix agent")
            s.add(row)

    def set_signature(self, pattern_id: int, signature: list[str], check: dict[str, Any], actor: str) -> PatternRecord:
        """A person's signature for a waiting pattern: stored with its check; the prepared fixes are dropped."""
        with self._tx() as s:
            require(s, actor, Permission.DECIDE_FIX)
            row = waiting_row(s, pattern_id)
            before = list(row.pattern.get("signature", []))
            row.pattern = {**row.pattern, "signature": signature, "signature_check": check}
            row.item_fixes = None  # they were prepared for the items the old signature reached
            s.add(row)
            audit.append(s, actor, "batch.signature_set", "batch", row.batch_id,
                         detail={"pattern": row.key, "before": before, "after": signature})
            s.flush()
            return pattern_record(row)

    def edit_by_hand(self, pattern_id: int, item_id: int, before_text: str, after_text: str, actor: str,
                     reason: str) -> None:
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
            unfinished = s.exec(select(func.count()).select_from(BatchSampleRow).where(
                BatchSampleRow.batch_id == item.batch_id, col(BatchSampleRow.finished_at).is_(None))).one()
            if unfinished:
                raise BatchProblem("a sample of this batch is being reviewed: edit once it is in, so its reviews "
                                   "judge the text they were given")
            s.add(BatchChangeRow(batch_id=item.batch_id, item_id=item.id, pattern_id=pattern.id, actor=actor,
                                 before_text=before_text, after_text=after_text, before_hash=sha256_text(before_text),
                                 after_hash=sha256_text(after_text), applied=[], skipped=[], by_hand=True,
                                 created_at=utcnow()))
            item.output = after_text
            s.add(item)
            audit.append(s, actor, "batch.item_edited_by_hand", "batch", item.batch_id,
                         detail={"item": item.item_key, "pattern": pattern.key, "reason": reason,
                                 "before_hash": sha256_text(before_text), "after_hash": sha256_text(after_text)})
