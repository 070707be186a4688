"""Batches on disk: the items of an uploaded file, their samples, failure patterns and fixes.

A sample's reviews are ordinary runs (one per sampled item, `run.batch_id` set, one round, no fix),
so they appear in the history and in the metrics like any other review. What belongs to the batch
itself lives here: the items and their current text, which items each sample drew, the patterns
found in a sample and the changes each approved fix made to each item (append-only).

Every write is one short transaction, so a restart loses nothing that was shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from sqlmodel import Session, col, func, select

from santa_core.batch import sampling
from santa_core.batch.exclusions import EXCLUDED, INCLUDED, held
from santa_core.batch.fix_batch import FIX_BATCH
from santa_core.batch.store import (
    DONE,
    Batch,
    BatchChange,
    BatchConfig,
    BatchProblem,
    Item,
    ItemChange,
    ItemIn,
    PatternRecord,
    SampledReview,
    SampleProgress,
    busy_seconds,
)
from santa_core.models import MAX_TEXT_CHARS, Attribution, MergedIssue, Rubric, RunStatus
from santa_core.roles import Permission
from santa_core.text import sha256_text, text_problem
from storage import audit, spend
from storage.batch_fixes import BatchFixes, pattern_record
from storage.people import RoleCheck, require
from storage.runs import insert_run
from storage.tables import (
    BatchChangeRow,
    BatchItemRow,
    BatchPatternRow,
    BatchRow,
    BatchSampleItemRow,
    BatchSampleRow,
    MergedIssueRow,
    RoundRow,
    RunRow,
    StateChangeRow,
)
from storage.tables.columns import not_null, select_columns, stored_id
from storage.times import utc, utcnow

SEED_STEP = 7919
"""Sample n of a batch draws with seed + (n − 1) × SEED_STEP: reproducible, and not the same draw twice."""
MAX_SEED = 2**31 - 1
"""Seeds are stored as 32-bit integers (PostgreSQL INTEGER); a sample's seed wraps below this."""


class BatchStore(BatchFixes, RoleCheck):
    """The batch tables; a sample's review runs are made with `storage.runs.insert_run`, in the same
    transaction, and their metric facts follow through the shared write hook."""

    # --- creating --------------------------------------------------------------------------

    def create(self, config: BatchConfig, items: Sequence[ItemIn], actor: str) -> int:
        """Store a batch and its items in one transaction; returns its id."""
        _check_config(config, items)
        with self._tx() as s:
            require(s, actor, Permission.START_RUN)
            row = BatchRow(
                created_by=actor,
                source=config.source,
                name=config.name,
                file_format=config.file_format,
                columns=config.columns,
                layout=config.layout,
                id_column=config.id_column,
                output_column=config.output_column,
                spec_column=config.spec_column,
                spec=config.spec,
                strata=config.strata,
                rubric_name=config.rubric.name,
                rubric_version=config.rubric.version,
                rubric_json=config.rubric.model_dump(mode="json"),
                reviewer_b=config.reviewer_b,
                reviewer_c=config.reviewer_c,
                fixer=config.fixer,
                sample_rate=config.sample_rate,
                min_sample=config.min_sample,
                seed=config.seed,
                concurrency=config.concurrency,
                message_batches=config.message_batches,
                auto_approve=config.auto_approve,
                confidence=config.confidence,
            )
            s.add(row)
            s.flush()
            batch_id = stored_id(row)
            s.add_all(
                BatchItemRow(
                    batch_id=batch_id,
                    position=i,
                    item_key=it.key,
                    spec=it.spec,
                    strata=it.strata,
                    record=it.record,
                    original_output=it.output,
                    output=it.output,
                )
                for i, it in enumerate(items)
            )
            audit.append(
                s,
                actor,
                "batch.created",
                "batch",
                batch_id,
                detail={
                    "name": config.name,
                    "items": len(items),
                    "rubric": f"{config.rubric.name}@{config.rubric.version}",
                    "reviewer_b": config.reviewer_b,
                    "reviewer_c": config.reviewer_c,
                    "sample_rate": config.sample_rate,
                    "strata": config.strata,
                },
            )
            return batch_id

    # --- reading ---------------------------------------------------------------------------

    def batches(self, limit: int = 200) -> list[Batch]:
        """Every batch, newest first."""
        with self._read() as s:
            ids = s.exec(select(BatchRow.id).order_by(col(BatchRow.id).desc()).limit(limit)).all()
            return [self._batch(s, i) for i in not_null(ids)]

    def get(self, batch_id: int) -> Batch:
        """One batch with its samples' progress."""
        with self._read() as s:
            return self._batch(s, batch_id)

    def items(self, batch_id: int) -> list[Item]:
        """The batch's items in file order."""
        with self._read() as s:
            batch = _batch_row(s, batch_id)
            rows = s.exec(
                select(BatchItemRow).where(col(BatchItemRow.batch_id) == batch_id).order_by(col(BatchItemRow.position))
            ).all()
            return [_item(r, batch) for r in rows]

    def progress(self, sample_id: int) -> SampleProgress:
        """How far a sample's reviews are."""
        with self._read() as s:
            return _progress(s, _sample_row(s, sample_id))

    def reviews(self, sample_id: int) -> list[SampledReview]:
        """Every sampled item of a sample with its review's status and, when NAUGHTY, its issues."""
        with self._read() as s:
            rows = s.exec(
                select_columns(
                    BatchSampleItemRow.item_id,
                    BatchItemRow.item_key,
                    BatchItemRow.strata,
                    BatchItemRow.output,
                    RunRow.id,
                    RunRow.status,
                    RoundRow.output_text,
                    RoundRow.gate_reviewer_error,
                )
                .join(BatchItemRow, col(BatchItemRow.id) == col(BatchSampleItemRow.item_id))
                .outerjoin(RunRow, col(RunRow.id) == col(BatchSampleItemRow.run_id))
                .outerjoin(RoundRow, (col(RoundRow.run_id) == col(RunRow.id)) & (col(RoundRow.round_no) == 1))
                .where(BatchSampleItemRow.sample_id == sample_id)
                .order_by(col(BatchItemRow.position))
            ).all()
            issues = _issues(s, [r[4] for r in rows if r[5] == RunStatus.SAMPLED.value])
            return [
                SampledReview(
                    item_id=i,
                    key=k,
                    strata=st,
                    run_id=run,
                    status=RunStatus(status) if status else None,
                    output=text if text is not None else current,
                    reviewer_error=bool(err),
                    issues=issues.get(run, []),
                )
                for i, k, st, current, run, status, text, err in rows
            ]

    def run_ids(self, sample_id: int) -> list[int]:
        """The runs reviewing a sample so far, in item order."""
        with self._read() as s:
            return not_null(
                s.exec(
                    select(BatchSampleItemRow.run_id)
                    .join(BatchItemRow, col(BatchItemRow.id) == col(BatchSampleItemRow.item_id))
                    .where(BatchSampleItemRow.sample_id == sample_id, col(BatchSampleItemRow.run_id).is_not(None))
                    .order_by(col(BatchItemRow.position))
                ).all()
            )

    def unfinished_samples(self) -> list[int]:
        """Samples whose reviews are not all in (to pick up again after a restart)."""
        with self._read() as s:
            ids = s.exec(select(BatchSampleRow.id).where(col(BatchSampleRow.finished_at).is_(None))).all()
            return not_null(ids)

    def ungrouped_samples(self) -> list[int]:
        """Finished samples with a NAUGHTY review and no stored pattern (to group at start and on each sweep)."""
        failed = (
            select(BatchSampleItemRow.sample_id)
            .join(RunRow, col(RunRow.id) == col(BatchSampleItemRow.run_id))
            .where(RunRow.status == RunStatus.SAMPLED.value)
        )
        with self._read() as s:
            return not_null(
                s.exec(
                    select(BatchSampleRow.id)
                    .where(
                        col(BatchSampleRow.finished_at).is_not(None),
                        col(BatchSampleRow.id).in_(failed),
                        col(BatchSampleRow.id).not_in(select(BatchPatternRow.sample_id)),
                    )
                    .order_by(col(BatchSampleRow.id))
                ).all()
            )

    def patterns(self, batch_id: int, sample_id: int | None = None) -> list[PatternRecord]:
        """The batch's patterns (of one sample, or all), biggest first."""
        with self._read() as s:
            stmt = select(BatchPatternRow).where(BatchPatternRow.batch_id == batch_id)
            if sample_id is not None:
                stmt = stmt.where(BatchPatternRow.sample_id == sample_id)
            rows = s.exec(stmt.order_by(col(BatchPatternRow.sample_id), col(BatchPatternRow.id))).all()
            return [_pattern(r) for r in rows]

    def pattern(self, pattern_id: int) -> PatternRecord:
        """One pattern."""
        with self._read() as s:
            row = s.get(BatchPatternRow, pattern_id)
            if row is None:
                raise BatchProblem(f"pattern {pattern_id} does not exist")
            return _pattern(row)

    def changes(self, batch_id: int, skipped: bool = False) -> list[BatchChange]:
        """Every change a fix made to an item, oldest first (with `skipped`: also the items that showed
        the pattern but could not take the approved edit, recorded with why)."""
        with self._read() as s:
            stmt = select(BatchChangeRow).where(BatchChangeRow.batch_id == batch_id)
            if not skipped:
                stmt = stmt.where(BatchChangeRow.before_hash != BatchChangeRow.after_hash)
            return [
                BatchChange.model_validate({**row.model_dump(), "created_at": utc(row.created_at)})
                for row in s.exec(stmt.order_by(col(BatchChangeRow.id))).all()
            ]

    def sampled_item_ids(self, batch_id: int) -> set[int]:
        """Items any sample of the batch drew."""
        with self._read() as s:
            return set(
                s.exec(
                    select(BatchSampleItemRow.item_id)
                    .join(BatchSampleRow, col(BatchSampleRow.id) == col(BatchSampleItemRow.sample_id))
                    .where(BatchSampleRow.batch_id == batch_id)
                ).all()
            )

    # --- sampling --------------------------------------------------------------------------

    def draw_sample(self, batch_id: int, actor: str) -> int:
        """Draw the next sample and queue one review run per sampled item, in one transaction."""
        with self._tx() as s:
            require(s, actor, Permission.START_RUN)
            batch = s.exec(select(BatchRow).where(BatchRow.id == batch_id).with_for_update()).first()
            if batch is None:
                raise BatchProblem(f"batch {batch_id} does not exist")
            last = _last_sample(s, batch_id)
            if last is not None and not _progress(s, last).finished:
                raise BatchProblem(f"sample {last.number} of this batch is still being reviewed")
            open_patterns = s.exec(
                select(func.count())
                .select_from(BatchPatternRow)
                .where(BatchPatternRow.batch_id == batch_id, col(BatchPatternRow.status).in_(("open", "proposed")))
            ).one()
            if open_patterns:
                raise BatchProblem(
                    f"{open_patterns} pattern(s) still wait for a decision: approve or dismiss "
                    "their fix before the next sample"
                )
            items = [
                _item(r, batch)
                for r in s.exec(
                    select(BatchItemRow)
                    .where(col(BatchItemRow.batch_id) == batch_id)
                    .order_by(col(BatchItemRow.position))
                ).all()
            ]
            number = (last.number if last else 0) + 1
            seed = (batch.seed + (number - 1) * SEED_STEP) % MAX_SEED
            size = sampling.sample_size(len(items), batch.sample_rate, batch.min_sample)
            seen = set(
                s.exec(
                    select(BatchItemRow.item_key)
                    .join(BatchSampleItemRow, col(BatchSampleItemRow.item_id) == col(BatchItemRow.id))
                    .join(BatchSampleRow, col(BatchSampleRow.id) == col(BatchSampleItemRow.sample_id))
                    .where(BatchSampleRow.batch_id == batch_id)
                ).all()
            )
            # By the file's ids, not row ids: the same file and seed draw the same sample in any database.
            picked = set(sampling.stratified_sample([(it.key, it.stratum) for it in items], size, seed, seen))
            chosen = [it for it in items if it.key in picked]
            sample = BatchSampleRow(batch_id=batch_id, number=number, seed=seed, size=len(chosen), created_by=actor)
            s.add(sample)
            s.flush()
            s.add_all(BatchSampleItemRow(sample_id=stored_id(sample), item_id=it.id) for it in chosen)
            audit.append(
                s,
                actor,
                "batch.sampled",
                "batch",
                batch_id,
                detail={"sample": number, "seed": seed, "size": len(chosen), "items": len(items)},
            )
            return stored_id(sample)

    def pending_items(self, sample_id: int) -> list[int]:
        """Sampled items whose review has not started yet, in file order."""
        with self._read() as s:
            return list(
                s.exec(
                    select(BatchSampleItemRow.item_id)
                    .join(BatchItemRow, col(BatchItemRow.id) == col(BatchSampleItemRow.item_id))
                    .where(BatchSampleItemRow.sample_id == sample_id, col(BatchSampleItemRow.run_id).is_(None))
                    .order_by(col(BatchItemRow.position))
                ).all()
            )

    def start_review(self, sample_id: int, item_id: int) -> int:
        """Make the queued run that reviews a sampled item (once; a second call returns the same run)."""
        with self._tx() as s:
            link = s.exec(
                select(BatchSampleItemRow)
                .where(BatchSampleItemRow.sample_id == sample_id, BatchSampleItemRow.item_id == item_id)
                .with_for_update()
            ).first()
            if link is None:
                raise BatchProblem(f"item {item_id} is not in sample {sample_id}")
            if link.run_id is not None:
                return link.run_id
            sample, item = _sample_row(s, sample_id), s.get_one(BatchItemRow, item_id)
            batch = _batch_row(s, sample.batch_id)
            link.run_id = insert_run(
                s,
                RunRow(
                    status=RunStatus.QUEUED.value,
                    max_rounds=1,
                    round_cap=1,
                    spec=item.spec if item.spec is not None else batch.spec,
                    original_output=item.output,
                    rubric_name=batch.rubric_name,
                    rubric_version=batch.rubric_version,
                    rubric_json=batch.rubric_json,
                    reviewer_b=batch.reviewer_b,
                    reviewer_c=batch.reviewer_c,
                    fixer=batch.fixer,
                    created_by=sample.created_by,
                    source="batch",
                    batch_id=batch.id,
                ),
            )
            s.add(link)
            return link.run_id

    def finish_sample(self, sample_id: int) -> SampleProgress:
        """Mark a sample finished once every review is in (idempotent); its progress."""
        with self._tx() as s:
            row = s.exec(select(BatchSampleRow).where(BatchSampleRow.id == sample_id).with_for_update()).first()
            if row is None:
                raise BatchProblem(f"sample {sample_id} does not exist")
            progress = _progress(s, row)
            if progress.finished and row.finished_at is None:
                row.finished_at = utcnow()
                s.add(row)
                progress = progress.model_copy(update={"finished_at": row.finished_at})
            return progress

    def set_api(
        self, sample_id: int, api_batch_id: str | None, api_status: str | None, jobs: list[dict[str, Any]] | None = None
    ) -> None:
        """Remember the Message Batches API's batch for a sample (so it is collected after a restart)."""
        with self._tx() as s:
            row = _sample_row(s, sample_id)
            row.api_batch_id, row.api_status = api_batch_id, api_status
            if jobs is not None:
                row.api_jobs = jobs
            s.add(row)

    def api_jobs(self, sample_id: int) -> list[dict[str, Any]]:
        """What was sent to the Message Batches API for a sample."""
        with self._read() as s:
            return list(_sample_row(s, sample_id).api_jobs or [])

    def set_paused(self, batch_id: int, paused: bool, actor: str) -> None:
        """Pause (no new review starts) or resume a batch."""
        with self._tx() as s:
            require(s, actor, Permission.START_RUN)
            batch = _batch_row(s, batch_id)
            batch.paused, batch.updated_at = paused, utcnow()
            s.add(batch)
            audit.append(s, actor, "batch.paused" if paused else "batch.resumed", "batch", batch_id)

    def record_retry(self, batch_id: int, actor: str) -> None:
        """A person picks a stopped sample up again (the right to resume interrupted runs is checked)."""
        with self._tx() as s:
            require(s, actor, Permission.RESUME_RUN)
            _batch_row(s, batch_id)
            audit.append(s, actor, "batch.retried", "batch", batch_id)

    def is_paused(self, batch_id: int) -> bool:
        """Whether a person paused the batch."""
        with self._read() as s:
            return _batch_row(s, batch_id).paused

    # --- patterns and fixes ------------------------------------------------------------------

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
            return [_pattern(r) for r in sorted(stored, key=stored_id)]

    def save_proposal(self, pattern_id: int, proposal: dict[str, Any], actor: str) -> None:
        """Keep the fix agent's proposal for a pattern (the newest counts)."""
        with self._tx() as s:
            require(s, actor, Permission.DECIDE_FIX)
            row = _pattern_row(s, pattern_id)
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
            row = _pattern_row(s, pattern_id)
            if row.status not in ("open", "proposed"):
                raise BatchProblem(f"pattern {pattern_id} was already {row.status} by {row.decided_by}")
            unfinished = s.exec(
                select(func.count())
                .select_from(BatchSampleRow)
                .where(BatchSampleRow.batch_id == row.batch_id, col(BatchSampleRow.finished_at).is_(None))
            ).one()
            if unfinished:
                raise BatchProblem("a sample of this batch is still being reviewed: fixes wait until it is in")
            elsewhere = _excluded_elsewhere(s, row)
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
            row = _pattern_row(s, pattern_id)
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

    def cost(self, batch_id: int) -> float:
        """USD spent on the batch so far, by the one definition (`storage.spend`): every call of its sample runs
        (reviews, screens) and of its own work (pattern fixes, superseded ones too), failed and cut-off calls
        at their estimate."""
        with self._read() as s:
            runs = not_null(s.exec(select(RunRow.id).where(RunRow.batch_id == batch_id)).all())
            own = spend.spends(s, "batch_id", [batch_id])
            # Fix calls made before they were logged (before migration 0015) are only in the patterns' running
            # totals: what those hold beyond the logged answers is counted too (nothing for a batch since).
            logged = sum(x.usd for x in own if not x.cut_off)
            totals = s.exec(
                select(func.coalesce(func.sum(BatchPatternRow.fix_spent_usd), 0.0)).where(
                    BatchPatternRow.batch_id == batch_id
                )
            ).one()
            return sum(spend.spent(s, "run_id", runs).values()) + spend.usd(own) + max(0.0, float(totals) - logged)

    # --- helpers -----------------------------------------------------------------------------

    def _batch(self, s: Session, batch_id: int) -> Batch:
        row = _batch_row(s, batch_id)
        items = s.exec(select(func.count()).select_from(BatchItemRow).where(BatchItemRow.batch_id == batch_id)).one()
        samples = s.exec(
            select(BatchSampleRow).where(col(BatchSampleRow.batch_id) == batch_id).order_by(col(BatchSampleRow.number))
        ).all()
        return Batch(
            id=stored_id(row),
            name=row.name,
            created_at=utc(row.created_at),
            created_by=row.created_by,
            config=_config(row),
            paused=row.paused,
            items=items,
            samples=[_progress(s, x) for x in samples],
        )


def _check_config(config: BatchConfig, items: Sequence[ItemIn]) -> None:
    if not items:
        raise BatchProblem("the batch has no items")
    keys = Counter(it.key for it in items)
    if dup := [k for k, n in keys.items() if n > 1]:
        raise BatchProblem(f"duplicate item ids: {', '.join(dup[:5])}")
    if not 0 <= config.seed < MAX_SEED:
        raise BatchProblem(f"the seed must be a whole number from 0 to {MAX_SEED:,}")
    if not 0 < config.sample_rate <= 1 or config.min_sample < 1 or not 1 <= config.concurrency <= 64:
        raise BatchProblem("the sample rate must be in (0, 1], the minimum ≥ 1 and the concurrency 1–64")
    if "person" in (config.reviewer_b, config.reviewer_c):
        raise BatchProblem("a batch sample is reviewed by models; a person reviews a single run on the Review page")
    if high_risk := config.rubric.third_reviewer_ids():
        # A batch sample runs two reviewers; its gate would fail every item closed for the missing third.
        raise BatchProblem(
            f"rubric {config.rubric.name} asks for a third reviewer on {', '.join(high_risk)}: "
            "batches review with two; review such outputs one by one on the Review page"
        )
    for it in items:
        spec = it.spec if it.spec is not None else config.spec
        if not spec.strip():
            raise BatchProblem(f"item {it.key} has no spec, and the batch has no spec for all items")
        if problem := text_problem(it.output, f"the output of item {it.key}") or text_problem(
            spec, f"the spec of item {it.key}"
        ):
            raise BatchProblem(problem)


def _excluded_elsewhere(s: Session, row: BatchPatternRow) -> dict[str, str]:
    """Items a person excluded from another approved pattern's fix of the batch: key → where and why."""
    others = s.exec(
        select(BatchPatternRow).where(BatchPatternRow.batch_id == row.batch_id, BatchPatternRow.id != row.id)
    ).all()
    numbers = {
        stored_id(r): r.number for r in s.exec(select(BatchSampleRow).where(BatchSampleRow.batch_id == row.batch_id))
    }
    return {k: h.note() for k, h in held([_pattern(r) for r in others], numbers).items()}


def _batch_row(s: Session, batch_id: int) -> BatchRow:
    row = s.get(BatchRow, batch_id)
    if row is None:
        raise BatchProblem(f"batch {batch_id} does not exist")
    return row


def _sample_row(s: Session, sample_id: int) -> BatchSampleRow:
    row = s.get(BatchSampleRow, sample_id)
    if row is None:
        raise BatchProblem(f"sample {sample_id} does not exist")
    return row


def _pattern_row(s: Session, pattern_id: int) -> BatchPatternRow:
    row = s.exec(select(BatchPatternRow).where(BatchPatternRow.id == pattern_id).with_for_update()).first()
    if row is None:
        raise BatchProblem(f"pattern {pattern_id} does not exist")
    return row


def _last_sample(s: Session, batch_id: int) -> BatchSampleRow | None:
    return s.exec(
        select(BatchSampleRow)
        .where(BatchSampleRow.batch_id == batch_id)
        .order_by(col(BatchSampleRow.number).desc())
        .limit(1)
    ).first()


def _config(row: BatchRow) -> BatchConfig:
    return BatchConfig(
        name=row.name,
        file_format=row.file_format,
        columns=row.columns,
        layout=row.layout,
        id_column=row.id_column,
        output_column=row.output_column,
        spec_column=row.spec_column,
        spec=row.spec,
        strata=row.strata,
        rubric=Rubric.model_validate(row.rubric_json),
        reviewer_b=row.reviewer_b,
        reviewer_c=row.reviewer_c,
        fixer=row.fixer,
        sample_rate=row.sample_rate,
        min_sample=row.min_sample,
        seed=row.seed,
        concurrency=row.concurrency,
        message_batches=row.message_batches,
        auto_approve=row.auto_approve,
        confidence=row.confidence,
        source=row.source,
    )


def _item(row: BatchItemRow, batch: BatchRow) -> Item:
    return Item(
        id=stored_id(row),
        position=row.position,
        key=row.item_key,
        output=row.output,
        original_output=row.original_output,
        spec=row.spec if row.spec is not None else batch.spec,
        strata={c: str(row.strata.get(c, "")) for c in batch.strata},
        record=row.record,
    )


def _progress(s: Session, row: BatchSampleRow) -> SampleProgress:
    runs = select(BatchSampleItemRow.run_id).where(BatchSampleItemRow.sample_id == row.id)
    counts = dict(
        s.exec(select(RunRow.status, func.count()).where(col(RunRow.id).in_(runs)).group_by(RunRow.status)).all()
    )
    errors = s.exec(
        select(func.count())
        .select_from(RoundRow)
        .where(col(RoundRow.run_id).in_(runs), col(RoundRow.gate_reviewer_error).is_(True))
    ).one()
    cost = sum(spend.spent(s, "run_id", not_null(s.exec(runs).all())).values())
    # A review's span starts at its last claim, not its creation: a review the app's restart
    # interrupted and resumed would otherwise count the whole time the app was down.
    claims = (
        select(StateChangeRow.run_id, func.max(StateChangeRow.created_at).label("claimed"))
        .where(col(StateChangeRow.run_id).in_(runs), StateChangeRow.to_status == RunStatus.RUNNING.value)
        .group_by(col(StateChangeRow.run_id))
        .subquery()
    )
    spans = s.exec(
        select(RunRow.created_at, claims.c.claimed, RunRow.updated_at)
        .outerjoin(claims, claims.c.run_id == RunRow.id)
        .where(col(RunRow.id).in_(runs), col(RunRow.status).in_(DONE))
    ).all()
    last = s.exec(select(func.max(RunRow.updated_at)).where(col(RunRow.id).in_(runs))).one()
    nice, naughty = counts.get(RunStatus.SHIPPED.value, 0), counts.get(RunStatus.SAMPLED.value, 0)
    seconds = busy_seconds((utc(claimed or created), utc(end)) for created, claimed, end in spans)
    return SampleProgress(
        id=stored_id(row),
        batch_id=row.batch_id,
        number=row.number,
        seed=row.seed,
        size=row.size,
        created_at=utc(row.created_at),
        finished_at=utc(row.finished_at) if row.finished_at else None,
        api_batch_id=row.api_batch_id,
        api_status=row.api_status,
        done=nice + naughty,
        nice=nice,
        naughty=naughty,
        errors=errors,
        cost_usd=float(cost),
        interrupted=counts.get(RunStatus.INTERRUPTED.value, 0),
        active=counts.get(RunStatus.QUEUED.value, 0) + counts.get(RunStatus.RUNNING.value, 0),
        last_activity=utc(last) if last else None,
        seconds_done=seconds,
    )


def _issues(s: Session, run_ids: list[int]) -> dict[int, list[MergedIssue]]:
    out: dict[int, list[MergedIssue]] = {}
    if not run_ids:
        return out
    rows = s.exec(
        select(MergedIssueRow)
        .where(col(MergedIssueRow.run_id).in_(run_ids), MergedIssueRow.round_no == 1)
        .order_by(col(MergedIssueRow.run_id), col(MergedIssueRow.idx))
    ).all()
    for r in rows:
        out.setdefault(r.run_id, []).append(
            MergedIssue(
                criterion=r.criterion,
                description=r.description,
                evidence=r.evidence,
                flagged_by=cast(Attribution, r.flagged_by),
            )
        )
    return out


_pattern = pattern_record
