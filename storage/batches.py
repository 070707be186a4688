"""Batches on disk: the items of an uploaded file, their samples, failure patterns and fixes.

A sample's reviews are ordinary runs (one per sampled item, `run.batch_id` set, one round, no fix),
so they appear in the history and in the metrics like any other review. What belongs to the batch
itself lives here: the items and their current text, which items each sample drew, the patterns
found in a sample and the changes each approved fix made to each item (append-only).

Every write is one short transaction, so a restart loses nothing that was shown. `BatchStore` creates and reads
batches; it inherits their samples (`storage.batch_samples`), their patterns and the decisions on them
(`storage.batch_patterns`) and the fixes that reach every item (`storage.batch_fixes`); `storage.batch_rows`
reads the rows back as the core's records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sqlmodel import Session, col, func, select

from santa_core.batch.store import (
    Batch,
    BatchChange,
    BatchConfig,
    BatchProblem,
    Item,
    ItemIn,
    PatternRecord,
    SampledReview,
    SampleProgress,
)
from santa_core.models import RunStatus
from santa_core.roles import Permission
from santa_core.text import text_problem
from storage import audit, spend
from storage.batch_fixes import BatchFixes, pattern_record
from storage.batch_patterns import BatchPatterns
from storage.batch_rows import batch_row, config_of, issues_of, item_of, progress_of, sample_row
from storage.batch_samples import MAX_SEED, BatchSamples
from storage.people import RoleCheck, require
from storage.queries import not_null, select_columns, stored_id
from storage.tables import (
    BatchChangeRow,
    BatchItemRow,
    BatchPatternRow,
    BatchRow,
    BatchSampleItemRow,
    BatchSampleRow,
    RoundRow,
    RunRow,
)
from storage.times import utc


class BatchStore(BatchSamples, BatchPatterns, BatchFixes, RoleCheck):
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
            batch = batch_row(s, batch_id)
            rows = s.exec(
                select(BatchItemRow).where(col(BatchItemRow.batch_id) == batch_id).order_by(col(BatchItemRow.position))
            ).all()
            return [item_of(r, batch) for r in rows]

    def progress(self, sample_id: int) -> SampleProgress:
        """How far a sample's reviews are."""
        with self._read() as s:
            return progress_of(s, sample_row(s, sample_id))

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
            issues = issues_of(s, [r[4] for r in rows if r[5] == RunStatus.SAMPLED.value])
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
            return [pattern_record(r) for r in rows]

    def pattern(self, pattern_id: int) -> PatternRecord:
        """One pattern."""
        with self._read() as s:
            row = s.get(BatchPatternRow, pattern_id)
            if row is None:
                raise BatchProblem(f"pattern {pattern_id} does not exist")
            return pattern_record(row)

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
        row = batch_row(s, batch_id)
        items = s.exec(select(func.count()).select_from(BatchItemRow).where(BatchItemRow.batch_id == batch_id)).one()
        samples = s.exec(
            select(BatchSampleRow).where(col(BatchSampleRow.batch_id) == batch_id).order_by(col(BatchSampleRow.number))
        ).all()
        return Batch(
            id=stored_id(row),
            name=row.name,
            created_at=utc(row.created_at),
            created_by=row.created_by,
            config=config_of(row),
            paused=row.paused,
            items=items,
            samples=[progress_of(s, x) for x in samples],
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
