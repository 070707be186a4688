"""Tables of a batch: its items, samples, the items each sample drew, patterns and the changes fixes made."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from storage.tables.columns import JSON_OR_NULL, UTC_TS, batch_fk, text_column, ts_column


class BatchRow(SQLModel, table=True):
    """Many outputs verified by sampling: the file they came from and how they are checked."""

    __tablename__ = "batch"

    id: int | None = Field(default=None, primary_key=True)
    created_at: datetime = ts_column(index=True)
    updated_at: datetime = ts_column()
    created_by: str = "local"
    source: str = "app"
    name: str
    """The uploaded file's name."""
    file_format: str
    columns: list = Field(sa_type=JSON)
    """The file's columns (JSONL: its keys), in file order."""
    layout: dict = Field(sa_type=JSON)
    """How the file was written (delimiter, line ends, BOM), so the export reads like it."""
    id_column: str
    output_column: str
    spec_column: str | None = None
    spec: str = text_column()
    """The one spec for every item without a spec of its own."""
    strata: list = Field(sa_type=JSON)
    rubric_name: str
    rubric_version: int
    rubric_json: dict = Field(sa_type=JSON)
    reviewer_b: str
    reviewer_c: str
    fixer: str
    sample_rate: float
    min_sample: int
    seed: int
    concurrency: int = 4
    message_batches: bool = False
    """Sample reviews go through the Message Batches API (about half price, slower)."""
    auto_approve: bool = False
    confidence: float = 0.95
    paused: bool = False
    note: str = text_column()


class BatchItemRow(SQLModel, table=True):
    """One output of a batch: where it came from, its current text and how it was verified."""

    __tablename__ = "batch_item"
    __table_args__ = (UniqueConstraint("batch_id", "item_key"),)

    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = batch_fk()
    position: int
    """Its place in the file (0-based), the export keeps it."""
    item_key: str
    spec: str | None = Field(default=None, sa_type=Text)
    strata: dict = Field(sa_type=JSON)
    record: dict = Field(sa_type=JSON)
    """Every field of the file's row, as read."""
    original_output: str = text_column()
    output: str = text_column()
    """The current text: the original until a pattern's fix changes it."""


class BatchSampleRow(SQLModel, table=True):
    """One sample of a batch: which items both reviewers judge, and how (direct or Message Batches)."""

    __tablename__ = "batch_sample"
    __table_args__ = (UniqueConstraint("batch_id", "number"),)

    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = batch_fk()
    number: int
    created_at: datetime = ts_column()
    created_by: str = "local"
    seed: int
    size: int
    finished_at: datetime | None = Field(default=None, sa_type=UTC_TS)
    api_batch_id: str | None = None
    """The Message Batches API's id while (and after) the sample is reviewed there."""
    api_status: str | None = None
    api_jobs: list | None = Field(default=None, sa_type=JSON_OR_NULL)
    """What was sent to the Message Batches API (custom id → run and slot), to collect it after a restart."""


class BatchSampleItemRow(SQLModel, table=True):
    """An item in a sample, and the run that reviews it (made when its review starts)."""

    __tablename__ = "batch_sample_item"
    __table_args__ = (UniqueConstraint("sample_id", "item_id"),)

    id: int | None = Field(default=None, primary_key=True)
    sample_id: int = Field(foreign_key="batch_sample.id", index=True)
    item_id: int = Field(foreign_key="batch_item.id", index=True)
    run_id: int | None = Field(default=None, foreign_key="run.id", index=True)
    """None until the review starts. Why not sooner: a queued run is picked up by any worker
    (and at every app start), which would ignore the batch's pause and concurrency limit."""


class BatchPatternRow(SQLModel, table=True):
    """A failure pattern found in a sample, and the one fix approved for every item that shows it."""

    __tablename__ = "batch_pattern"
    __table_args__ = (UniqueConstraint("sample_id", "key"),)

    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = batch_fk()
    sample_id: int = Field(foreign_key="batch_sample.id", index=True)
    key: str
    criterion: str
    title: str = text_column()
    pattern: dict = Field(sa_type=JSON)
    """The pattern as santa_core.batch.patterns describes it (evidence, items, strata, examples)."""
    status: str = "open"
    """open → proposed → applied, or dismissed."""
    proposal: dict | None = Field(default=None, sa_type=JSON_OR_NULL)
    """The fix agent's proposal on the representative item."""
    item_fixes: dict | None = Field(default=None, sa_type=JSON_OR_NULL)
    """Item key → the fix prepared for it (text rule or fix agent) while the pattern waits for approval."""
    fix_spent_usd: float = Field(default=0.0, sa_column_kwargs={"server_default": "0"})
    """What every fix agent call for this pattern cost, proposals asked again included (never decreases)."""
    approved_edits: list | None = Field(default=None, sa_type=JSON_OR_NULL)
    decided_by: str | None = None
    decided_at: datetime | None = Field(default=None, sa_type=UTC_TS)
    reason: str = text_column()


class BatchChangeRow(SQLModel, table=True):
    """One item changed by one pattern's fix (append-only): before, after and who approved it."""

    __tablename__ = "batch_change"

    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = batch_fk()
    item_id: int = Field(foreign_key="batch_item.id", index=True)
    pattern_id: int = Field(foreign_key="batch_pattern.id", index=True)
    created_at: datetime = ts_column()
    actor: str
    before_text: str = text_column()
    after_text: str = text_column()
    before_hash: str
    after_hash: str
    applied: list = Field(sa_type=JSON)
    skipped: list = Field(sa_type=JSON)
    by_hand: bool = Field(default=False, sa_column_kwargs={"server_default": "0"})
    """A person's own edit in the app's editor (not a pattern's fix)."""
