"""The batch tables' rows read back: a batch, a sample, a pattern found by id, and each as the core's record (its
configuration, an item, a sample's progress, a review's merged issues)."""

from __future__ import annotations

from typing import cast

from sqlmodel import Session, col, func, select

from santa_core.batch.store import DONE, BatchConfig, BatchProblem, Item, SampleProgress, busy_seconds
from santa_core.models import Attribution, MergedIssue, Rubric, RunStatus
from storage import spend
from storage.queries import stored_id
from storage.tables import (
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
from storage.times import utc


def batch_row(s: Session, batch_id: int) -> BatchRow:
    """The batch's row (BatchProblem when there is none)."""
    row = s.get(BatchRow, batch_id)
    if row is None:
        raise BatchProblem(f"batch {batch_id} does not exist")
    return row


def sample_row(s: Session, sample_id: int) -> BatchSampleRow:
    """The sample's row (BatchProblem when there is none)."""
    row = s.get(BatchSampleRow, sample_id)
    if row is None:
        raise BatchProblem(f"sample {sample_id} does not exist")
    return row


def locked_pattern(s: Session, pattern_id: int) -> BatchPatternRow:
    """The pattern's row, locked for the transaction (BatchProblem when there is none)."""
    row = s.exec(select(BatchPatternRow).where(BatchPatternRow.id == pattern_id).with_for_update()).first()
    if row is None:
        raise BatchProblem(f"pattern {pattern_id} does not exist")
    return row


def last_sample(s: Session, batch_id: int) -> BatchSampleRow | None:
    """The batch's newest sample, if any."""
    return s.exec(
        select(BatchSampleRow)
        .where(BatchSampleRow.batch_id == batch_id)
        .order_by(col(BatchSampleRow.number).desc())
        .limit(1)
    ).first()


def config_of(row: BatchRow) -> BatchConfig:
    """The batch's configuration, as it was created."""
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


def item_of(row: BatchItemRow, batch: BatchRow) -> Item:
    """An item of the batch, its spec the batch's when it has none of its own."""
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


def progress_of(s: Session, row: BatchSampleRow) -> SampleProgress:
    """How far a sample's reviews are: their statuses, errors, cost and the time they took."""
    runs = select(BatchSampleItemRow.run_id).where(BatchSampleItemRow.sample_id == row.id)
    counts = dict(
        s.exec(select(RunRow.status, func.count()).where(col(RunRow.id).in_(runs)).group_by(RunRow.status)).all()
    )
    errors = s.exec(
        select(func.count())
        .select_from(RoundRow)
        .where(col(RoundRow.run_id).in_(runs), col(RoundRow.gate_reviewer_error).is_(True))
    ).one()
    started = [run_id for run_id in s.exec(runs).all() if run_id is not None]  # an item not started yet has no run
    cost = sum(spend.spent(s, "run_id", started).values())
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


def issues_of(s: Session, run_ids: list[int]) -> dict[int, list[MergedIssue]]:
    """The merged issues of each run's first round (a sample's review has one round)."""
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
