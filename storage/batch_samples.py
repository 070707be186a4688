"""A batch's samples: drawing the next one (reproducibly, from the batch's seed), making the review run of each
sampled item, finishing the sample once its reviews are in, and the batch's pause (`BatchStore` inherits these)."""

from __future__ import annotations

from typing import Any

from sqlmodel import col, func, select

from santa_core.batch import sampling
from santa_core.batch.store import BatchProblem, SampleProgress
from santa_core.models import RunStatus
from santa_core.roles import Permission
from storage import audit
from storage.batch_rows import batch_row, item_of, last_sample, progress_of, sample_row
from storage.people import require
from storage.queries import stored_id
from storage.runs import insert_run
from storage.tables import BatchItemRow, BatchPatternRow, BatchRow, BatchSampleItemRow, BatchSampleRow, RunRow
from storage.times import utcnow
from storage.transactions import StoreBase

SEED_STEP = 7919
"""Sample n of a batch draws with seed + (n − 1) × SEED_STEP: reproducible, and not the same draw twice."""
MAX_SEED = 2**31 - 1
"""Seeds are stored as 32-bit integers (PostgreSQL INTEGER); a sample's seed wraps below this."""


class BatchSamples(StoreBase):
    """The batch tables' side of a batch's samples."""

    def draw_sample(self, batch_id: int, actor: str) -> int:
        """Draw the next sample and queue one review run per sampled item, in one transaction."""
        with self._tx() as s:
            require(s, actor, Permission.START_RUN)
            batch = s.exec(select(BatchRow).where(BatchRow.id == batch_id).with_for_update()).first()
            if batch is None:
                raise BatchProblem(f"batch {batch_id} does not exist")
            last = last_sample(s, batch_id)
            if last is not None and not progress_of(s, last).finished:
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
                item_of(r, batch)
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
            sample, item = sample_row(s, sample_id), s.get_one(BatchItemRow, item_id)
            batch = batch_row(s, sample.batch_id)
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
            progress = progress_of(s, row)
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
            row = sample_row(s, sample_id)
            row.api_batch_id, row.api_status = api_batch_id, api_status
            if jobs is not None:
                row.api_jobs = jobs
            s.add(row)

    def api_jobs(self, sample_id: int) -> list[dict[str, Any]]:
        """What was sent to the Message Batches API for a sample."""
        with self._read() as s:
            return list(sample_row(s, sample_id).api_jobs or [])

    def set_paused(self, batch_id: int, paused: bool, actor: str) -> None:
        """Pause (no new review starts) or resume a batch."""
        with self._tx() as s:
            require(s, actor, Permission.START_RUN)
            batch = batch_row(s, batch_id)
            batch.paused, batch.updated_at = paused, utcnow()
            s.add(batch)
            audit.append(s, actor, "batch.paused" if paused else "batch.resumed", "batch", batch_id)

    def record_retry(self, batch_id: int, actor: str) -> None:
        """A person picks a stopped sample up again (the right to resume interrupted runs is checked)."""
        with self._tx() as s:
            require(s, actor, Permission.RESUME_RUN)
            batch_row(s, batch_id)
            audit.append(s, actor, "batch.retried", "batch", batch_id)

    def is_paused(self, batch_id: int) -> bool:
        """Whether a person paused the batch."""
        with self._read() as s:
            return batch_row(s, batch_id).paused
