"""A sample's failure patterns: stored once as found, the fix agent's proposal for each, and a person's decision on
it: approved (its fix applied to every item it reaches, each change recorded) or dismissed, with why (`BatchStore`
inherits these)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlmodel import Session, col, func, select

from santa_core.batch.exclusions import EXCLUDED, INCLUDED, held
from santa_core.batch.fix_batch import FIX_BATCH
from santa_core.batch.store import (
    BatchProblem,
    ItemChange,
    PatternRecord,
)
from santa_core.models import MAX_TEXT_CHARS
from santa_core.roles import Permission
from santa_core.text import sha256_text
from storage import audit
from storage.batch_fixes import pattern_record
from storage.batch_rows import locked_pattern
from storage.people import require
from storage.queries import stored_id
from storage.tables import (
    BatchChangeRow,
    BatchItemRow,
    BatchPatternRow,
    BatchSampleRow,
)
from storage.times import utcnow
from storage.transactions import StoreBase


class BatchPatterns(StoreBase):
    """The batch tables' side of a sample's patterns and the decisions on them."""

    def save_patterns(self, sample_id: int, patterns: Iterable[dict[str, Any]]) -> list[PatternRecord]:
        """Store a finished sample's patterns once (a second call returns the stored ones)."""
        with self._tx() as s:
            sample = s.exec(select(BatchSampleRow).where(BatchSampleRow.id == sample_id).with_for_update()).first()
            if sample is None:
                raise BatchProblem(f"sample {sample_id} does not exist")
            stored = s.exec(select(BatchPatternRow).where(BatchPatternRow.sample_id == sample_id)).all()
            if not stored:
                stored = [
                    BatchPatternRow(
                        batch_id=sample.batch_id,
                        sample_id=sample_id,
                        key=p["key"],
                        criterion=p["criterion"],
                        title=p.get("title", ""),
                        pattern=p,
                    )
                    for p in patterns
                ]
                s.add_all(stored)
                s.flush()
            return [pattern_record(r) for r in sorted(stored, key=stored_id)]

    def save_proposal(self, pattern_id: int, proposal: dict[str, Any], actor: str) -> None:
        """Keep the fix agent's proposal for a pattern (the newest counts)."""
        with self._tx() as s:
            require(s, actor, Permission.DECIDE_FIX)
            row = locked_pattern(s, pattern_id)
            if row.status not in ("open", "proposed"):
                raise BatchProblem(f"pattern {pattern_id} was already {row.status}")
            # A new proposal's example changes what each item's fix would be: they are prepared again, and a fixes'
            # Message Batch already made (its id known) answered the old example: the new one is asked anew. (One that
            # may exist unseen stays, for a person's Try again: nothing is sent twice on its own.)
            row.proposal, row.status, row.item_fixes = proposal, "proposed", None
            if (row.pattern.get(FIX_BATCH) or {}).get("api_id"):
                row.pattern = {k: v for k, v in row.pattern.items() if k != FIX_BATCH}
            s.add(row)  # (its calls' cost is counted as they are stored: `save_fix_calls`)

    def apply_fix(
        self,
        pattern_id: int,
        edits: list[dict[str, Any]],
        changes: Sequence[ItemChange],
        actor: str,
        reason: str = "",
        excluded: Mapping[str, str] | None = None,
        included: Mapping[str, str] | None = None,
    ) -> int:
        """Approve a pattern's fix and apply it: each change recorded per item, in one transaction.

        A change is refused (nothing written) if the item's text is no longer the text it was
        computed from, or if a person excluded the item from another pattern's fix and this approval
        does not include it by name (`santa_core.batch.exclusions`). `excluded` and `included`
        (item key → why) are kept with the decision. Returns how many items changed.
        """
        with self._tx() as s:
            require(s, actor, Permission.DECIDE_FIX)
            row = locked_pattern(s, pattern_id)
            if row.status not in ("open", "proposed"):
                raise BatchProblem(f"pattern {pattern_id} was already {row.status} by {row.decided_by}")
            unfinished = s.exec(
                select(func.count())
                .select_from(BatchSampleRow)
                .where(BatchSampleRow.batch_id == row.batch_id, col(BatchSampleRow.finished_at).is_(None))
            ).one()
            if unfinished:
                raise BatchProblem("a sample of this batch is still being reviewed: fixes wait until it is in")
            elsewhere = excluded_elsewhere(s, row)
            changed = 0
            for change in changes:
                # Locked: two fixes approved at once on PostgreSQL must not both start from the same text.
                item = s.exec(select(BatchItemRow).where(BatchItemRow.id == change.item_id).with_for_update()).first()
                if item is None or item.batch_id != row.batch_id:
                    raise BatchProblem(f"item {change.item_id} is not in this batch")
                if item.output != change.before_text:
                    raise BatchProblem(f"item {item.item_key} changed since the fix was computed; try again")
                if item.item_key in elsewhere and item.item_key not in (included or {}):
                    raise BatchProblem(
                        f"item {item.item_key} was {elsewhere[item.item_key]}: include it by name "
                        "(with a reason) for this fix to rewrite it"
                    )
                if change.after_text == change.before_text:
                    if change.skipped and all("already applied" in str(r.get("reason", "")) for r in change.skipped):
                        continue  # fixed before: nothing to do by hand
                    # Shows the pattern but could not take the edit: kept, so the export says it needs a fix.
                    s.add(
                        BatchChangeRow(
                            batch_id=row.batch_id,
                            item_id=stored_id(item),
                            pattern_id=stored_id(row),
                            actor=actor,
                            before_text=change.before_text,
                            after_text=change.after_text,
                            before_hash=sha256_text(change.before_text),
                            after_hash=sha256_text(change.after_text),
                            applied=[],
                            skipped=change.skipped,
                        )
                    )
                    continue
                if len(change.after_text) > MAX_TEXT_CHARS:
                    raise BatchProblem(f"the fix makes item {item.item_key} longer than {MAX_TEXT_CHARS:,} characters")
                s.add(
                    BatchChangeRow(
                        batch_id=row.batch_id,
                        item_id=stored_id(item),
                        pattern_id=stored_id(row),
                        actor=actor,
                        before_text=change.before_text,
                        after_text=change.after_text,
                        before_hash=sha256_text(change.before_text),
                        after_hash=sha256_text(change.after_text),
                        applied=change.applied,
                        skipped=change.skipped,
                    )
                )
                item.output = change.after_text
                s.add(item)
                changed += 1
            row.status, row.approved_edits, row.decided_by, row.decided_at, row.reason = (
                "applied",
                edits,
                actor,
                utcnow(),
                reason,
            )
            row.pattern = {**row.pattern, EXCLUDED: dict(excluded or {}), INCLUDED: dict(included or {})}
            s.add(row)
            audit.append(
                s,
                actor,
                "batch.fix_applied",
                "batch",
                row.batch_id,
                detail={
                    "pattern": row.key,
                    "criterion": row.criterion,
                    "items_changed": changed,
                    "items_matched": len(changes),
                    "reason": reason,
                },
            )
            return changed

    def dismiss(self, pattern_id: int, actor: str, reason: str) -> None:
        """Leave a pattern unfixed, with why (e.g. a false alarm, or fixed by hand elsewhere)."""
        if not reason.strip():
            raise BatchProblem("say why the pattern is dismissed")
        with self._tx() as s:
            require(s, actor, Permission.DECIDE_FIX)
            row = locked_pattern(s, pattern_id)
            if row.status not in ("open", "proposed"):
                raise BatchProblem(f"pattern {pattern_id} was already {row.status} by {row.decided_by}")
            row.status, row.decided_by, row.decided_at, row.reason = "dismissed", actor, utcnow(), reason
            s.add(row)
            audit.append(
                s,
                actor,
                "batch.pattern_dismissed",
                "batch",
                row.batch_id,
                detail={"pattern": row.key, "reason": reason},
            )


def excluded_elsewhere(s: Session, row: BatchPatternRow) -> dict[str, str]:
    """Items a person excluded from another approved pattern's fix of the batch: key → where and why."""
    others = s.exec(
        select(BatchPatternRow).where(BatchPatternRow.batch_id == row.batch_id, BatchPatternRow.id != row.id)
    ).all()
    numbers = {
        stored_id(r): r.number for r in s.exec(select(BatchSampleRow).where(BatchSampleRow.batch_id == row.batch_id))
    }
    return {k: h.note() for k, h in held([pattern_record(r) for r in others], numbers).items()}
