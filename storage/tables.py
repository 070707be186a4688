"""SQLModel tables: what a run, its rounds, reviews, proposals and decisions look like on disk.

Rows are plain records; `storage.repo` turns them into the `santa_core` models and back.
Datetimes are stored as UTC (SQLite hands them back naive, so `repo` re-attaches UTC).
`decision`, `state_change`, `llm_call` and `settings` are append-only: no code path updates or
deletes them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from storage.times import utcnow

# Named constraints, so later SQLite batch migrations can find and alter them by name.
SQLModel.metadata.naming_convention = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

UTC_TS = DateTime(timezone=True)
JSON_OR_NULL = JSON(none_as_null=True)
"""JSON column type that stores Python None as SQL NULL (not the JSON literal null)."""




def _ts(**kw: object) -> Any:
    """A UTC timestamp column that defaults to now."""
    return Field(default_factory=utcnow, sa_type=UTC_TS, **kw)


def _text(default: str = "") -> Any:
    """An unbounded text column."""
    return Field(default=default, sa_type=Text)


def _run_fk() -> Any:
    """An indexed foreign key to run.id."""
    return Field(foreign_key="run.id", index=True)


def _batch_fk() -> Any:
    """An indexed foreign key to batch.id."""
    return Field(foreign_key="batch.id", index=True)


class BatchRow(SQLModel, table=True):
    """Many outputs verified by sampling: the file they came from and how they are checked."""

    __tablename__ = "batch"

    id: int | None = Field(default=None, primary_key=True)
    created_at: datetime = _ts(index=True)
    updated_at: datetime = _ts()
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
    spec: str = _text()
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
    note: str = _text()


class BatchItemRow(SQLModel, table=True):
    """One output of a batch: where it came from, its current text and how it was verified."""

    __tablename__ = "batch_item"
    __table_args__ = (UniqueConstraint("batch_id", "item_key"),)

    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = _batch_fk()
    position: int
    """Its place in the file (0-based), the export keeps it."""
    item_key: str
    spec: str | None = Field(default=None, sa_type=Text)
    strata: dict = Field(sa_type=JSON)
    record: dict = Field(sa_type=JSON)
    """Every field of the file's row, as read."""
    original_output: str = _text()
    output: str = _text()
    """The current text: the original until a pattern's fix changes it."""


class BatchSampleRow(SQLModel, table=True):
    """One sample of a batch: which items both reviewers judge, and how (direct or Message Batches)."""

    __tablename__ = "batch_sample"
    __table_args__ = (UniqueConstraint("batch_id", "number"),)

    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = _batch_fk()
    number: int
    created_at: datetime = _ts()
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
    batch_id: int = _batch_fk()
    sample_id: int = Field(foreign_key="batch_sample.id", index=True)
    key: str
    criterion: str
    title: str = _text()
    pattern: dict = Field(sa_type=JSON)
    """The pattern as santa_core.batch.patterns describes it (evidence, items, strata, examples)."""
    status: str = "open"
    """open → proposed → applied, or dismissed."""
    proposal: dict | None = Field(default=None, sa_type=JSON_OR_NULL)
    """The fix agent's proposal on the representative item."""
    approved_edits: list | None = Field(default=None, sa_type=JSON_OR_NULL)
    decided_by: str | None = None
    decided_at: datetime | None = Field(default=None, sa_type=UTC_TS)
    reason: str = _text()


class BatchChangeRow(SQLModel, table=True):
    """One item changed by one pattern's fix (append-only): before, after and who approved it."""

    __tablename__ = "batch_change"

    id: int | None = Field(default=None, primary_key=True)
    batch_id: int = _batch_fk()
    item_id: int = Field(foreign_key="batch_item.id", index=True)
    pattern_id: int = Field(foreign_key="batch_pattern.id", index=True)
    created_at: datetime = _ts()
    actor: str
    before_text: str = _text()
    after_text: str = _text()
    before_hash: str
    after_hash: str
    applied: list = Field(sa_type=JSON)
    skipped: list = Field(sa_type=JSON)


class RunRow(SQLModel, table=True):
    """One review of one output: its inputs, configuration and current state."""

    __tablename__ = "run"

    id: int | None = Field(default=None, primary_key=True)
    created_at: datetime = _ts(index=True)
    updated_at: datetime = _ts()
    status: str = Field(index=True)
    round: int = 1
    max_rounds: int = 3
    round_cap: int = 3
    escalation_reason: str | None = None
    note: str = _text()
    spec: str = _text()
    original_output: str = _text()
    rubric_name: str
    rubric_version: int
    rubric_json: dict = Field(sa_type=JSON)
    reviewer_b: str
    reviewer_c: str
    fixer: str
    auto_approve: bool = False
    budget_usd: float | None = None
    created_by: str = "local"
    source: str = "app"
    worker: str | None = None
    """host:pid:start of the process that claimed the run while it is `running`."""
    person_b: str | None = None
    """The person a `person` reviewer slot B is assigned to (None: anyone who may review)."""
    person_c: str | None = None
    """The person a `person` reviewer slot C is assigned to (None: anyone who may review)."""
    generation_cost_usd: float | None = None
    """What generating the output cost, when the person who started the run knows it."""
    batch_id: int | None = Field(default=None, foreign_key="batch.id", index=True)
    """The batch whose sample this run reviews (one round, no fix: the batch fixes by pattern)."""


class RoundRow(SQLModel, table=True):
    """One round: the output text under review and, once decided, the gate."""

    __tablename__ = "round"
    __table_args__ = (UniqueConstraint("run_id", "round_no"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = _run_fk()
    round_no: int
    output_text: str = _text()
    output_hash: str
    gate_decision: str | None = None
    gate_reasons: list | None = Field(default=None, sa_type=JSON_OR_NULL)
    gate_reviewer_error: bool | None = None
    gate_injection: bool | None = None
    gate_checks: list | None = Field(default=None, sa_type=JSON_OR_NULL)
    """The deterministic check outcomes the gate saw (NULL for rounds stored before migration 0005)."""
    gate_disagreement: bool | None = None
    """One reviewer PASSed a critical criterion the other FAILed (NULL before migration 0006)."""
    started_at: datetime = _ts()


class ReviewRow(SQLModel, table=True):
    """A reviewer slot's outcome for a round (upserted: a person may replace a pending one)."""

    __tablename__ = "review"
    __table_args__ = (UniqueConstraint("run_id", "round_no", "slot"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = _run_fk()
    round_no: int
    slot: str
    reviewer: str = Field(index=True)
    status: str
    verdict: str
    review_json: dict | None = Field(default=None, sa_type=JSON_OR_NULL)
    error: str | None = Field(default=None, sa_type=Text)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    raw_response: str = _text()
    call_ids: list = Field(default_factory=list, sa_type=JSON)
    created_at: datetime = _ts()


class MergedIssueRow(SQLModel, table=True):
    """One de-duplicated critical issue of a round's gate, with attribution."""

    __tablename__ = "merged_issue"
    __table_args__ = (UniqueConstraint("run_id", "round_no", "idx"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = _run_fk()
    round_no: int
    idx: int
    criterion: str
    description: str = _text()
    evidence: str = _text()
    flagged_by: str


class ProposalRow(SQLModel, table=True):
    """A fix agent proposal (appended; the latest of a round is the round's proposal)."""

    __tablename__ = "proposal"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = _run_fk()
    round_no: int
    issues_json: list = Field(default_factory=list, sa_type=JSON)
    edits_json: list = Field(default_factory=list, sa_type=JSON)
    rejected_json: list = Field(default_factory=list, sa_type=JSON)
    before_text: str = _text()
    proposed_text: str = _text()
    before_hash: str
    proposed_hash: str
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    error: str | None = Field(default=None, sa_type=Text)
    call_ids: list = Field(default_factory=list, sa_type=JSON)
    created_at: datetime = _ts()


class DecisionRow(SQLModel, table=True):
    """A person's (or auto-approve's) decision. Append-only."""

    __tablename__ = "decision"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = _run_fk()
    round_no: int
    action: str
    actor: str = Field(index=True)
    reason: str = _text()
    before_hash: str
    after_hash: str
    after_text: str = _text()
    created_at: datetime = _ts()


class EscalationRow(SQLModel, table=True):
    """A run handed to a person, and how that person resolved it."""

    __tablename__ = "escalation"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = _run_fk()
    reason: str
    created_at: datetime = _ts()
    status: str = Field(default="open", index=True)
    resolution: str | None = None
    resolved_by: str | None = None
    resolved_at: datetime | None = Field(default=None, sa_type=UTC_TS)
    justification: str | None = Field(default=None, sa_type=Text)
    owner: str | None = None
    """The person (id) who is to resolve it; None: unassigned."""
    due_at: datetime | None = Field(default=None, sa_type=UTC_TS)


class LLMCallRow(SQLModel, table=True):
    """One request/response pair with a content hash. Append-only."""

    __tablename__ = "llm_call"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = _run_fk()
    round_no: int
    purpose: str
    slot: str | None = None
    model: str
    request_json: dict = Field(sa_type=JSON)
    response_text: str = _text()
    content_hash: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str | None = Field(default=None, sa_type=Text)
    created_at: datetime = _ts()


class StateChangeRow(SQLModel, table=True):
    """One committed change of a run's status. Append-only."""

    __tablename__ = "state_change"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = _run_fk()
    from_status: str | None = None
    to_status: str
    actor: str
    note: str = _text()
    created_at: datetime = _ts()


class SettingsRow(SQLModel, table=True):
    """One save of the Settings page (appended; the newest row is in effect)."""

    __tablename__ = "settings"

    id: int | None = Field(default=None, primary_key=True)
    values_json: dict = Field(default_factory=dict, sa_type=JSON)
    saved_by: str = "local"
    saved_at: datetime = _ts()


class RubricVersionRow(SQLModel, table=True):
    """One immutable version of a rubric: the authored document and what it resolves to. Append-only."""

    __tablename__ = "rubric_version"
    __table_args__ = (UniqueConstraint("name", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True)
    version: int
    domain: str
    document_json: dict = Field(sa_type=JSON)
    resolved_json: dict = Field(sa_type=JSON)
    content_hash: str
    """sha256 of the document without its version number: equal hashes, same rubric."""
    author: str
    change_note: str = _text()
    source: str = "studio"
    created_at: datetime = _ts()


class TrialRow(SQLModel, table=True):
    """A rubric tried on a text without a run: the Rubrics page's "Try it" and re-checks of past runs.

    Append-only; holds its own LLM call (request, response, hash), as a run's `llm_call` does.
    """

    __tablename__ = "rubric_trial"

    id: int | None = Field(default=None, primary_key=True)
    kind: str
    run_id: int | None = Field(default=None, foreign_key="run.id", index=True)
    rubric_name: str
    rubric_version: int | None = None
    rubric_json: dict = Field(sa_type=JSON)
    output_text: str = _text()
    output_hash: str
    check_outcomes_json: list = Field(default_factory=list, sa_type=JSON)
    reviewer: str | None = None
    review_status: str | None = None
    verdict: str | None = None
    review_json: dict | None = Field(default=None, sa_type=JSON_OR_NULL)
    error: str | None = Field(default=None, sa_type=Text)
    request_json: dict | None = Field(default=None, sa_type=JSON_OR_NULL)
    response_text: str = _text()
    content_hash: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    actor: str = "local"
    created_at: datetime = _ts()


class PersonRow(SQLModel, table=True):
    """A person who can act in the app: `local`, or a signed-in e-mail address, with roles."""

    __tablename__ = "person"

    id: str = Field(primary_key=True)
    name: str = ""
    roles: list = Field(default_factory=list, sa_type=JSON)
    created_at: datetime = _ts()
    updated_at: datetime = _ts()
    updated_by: str = "system"


class EscapeRow(SQLModel, table=True):
    """A defect found after a run shipped. Append-only."""

    __tablename__ = "escape"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = _run_fk()
    criterion: str
    description: str = _text()
    severity: str
    reported_by: str
    created_at: datetime = _ts()


class AuditEventRow(SQLModel, table=True):
    """One link of the hash-chained audit trail. Append-only: `storage.audit` verifies the chain."""

    __tablename__ = "audit_event"

    id: int | None = Field(default=None, primary_key=True)
    seq: int = Field(unique=True)
    created_at: datetime = _ts(index=True)
    actor: str = Field(index=True)
    action: str = Field(index=True)
    entity_type: str
    entity_id: str
    run_id: int | None = Field(default=None, index=True)
    before_hash: str | None = None
    after_hash: str | None = None
    detail: dict = Field(default_factory=dict, sa_type=JSON)
    prev_hash: str
    hash: str


class AuditHeadRow(SQLModel, table=True):
    """The chain's newest link (one row, id 1). Locked while appending, so links never fork."""

    __tablename__ = "audit_head"

    id: int = Field(default=1, primary_key=True)
    seq: int = 0
    hash: str


# --- the Metrics page's facts: derived, rewritten in the same transaction as their sources ------


class _RunDims(SQLModel):
    """What a metrics view filters on, copied from the run (none of it changes after creation)."""

    day: str = Field(index=True)
    """The run's creation day, UTC, as YYYY-MM-DD (text sorts and compares the same everywhere)."""
    rubric_name: str
    rubric_version: int
    domain: str
    reviewer_b: str
    reviewer_c: str


class RunMetricRow(_RunDims, table=True):
    """One run's figures for the dashboard; `storage.metrics.refresh` rewrites it from the run's rows."""

    __tablename__ = "run_metric"

    run_id: int = Field(foreign_key="run.id", primary_key=True)
    created_by: str
    status: str
    rounds: int
    """Rounds started (the run's current round)."""
    nice_round: int | None = None
    """The first round whose gate said NICE (None: never)."""
    generation_cost_usd: float | None = None
    review_cost_usd: float = 0.0
    fix_cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    cache_savings_usd: float = 0.0
    escapes: int = 0
    b_reviews: int = 0
    b_errors: int = 0
    b_latency_s: float = 0.0
    b_latency_max_s: float = 0.0
    b_cost_usd: float = 0.0
    c_reviews: int = 0
    c_errors: int = 0
    c_latency_s: float = 0.0
    c_latency_max_s: float = 0.0
    c_cost_usd: float = 0.0
    rounds_reviewed: int = 0
    """Rounds with at least one answered review."""
    round_latency_s: float = 0.0
    """Sum over those rounds of the slower reviewer's latency."""


class CriterionResultRow(_RunDims, table=True):
    """One criterion in one round: reviewer B's and C's PASS/FAIL and the deterministic check's."""

    __tablename__ = "criterion_result"
    __table_args__ = (UniqueConstraint("run_id", "round_no", "criterion"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = _run_fk()
    round_no: int
    criterion: str = Field(index=True)
    category: str
    severity: str
    b: str | None = None
    c: str | None = None
    check_result: str | None = None


class CriterionDayRow(_RunDims, table=True):
    """Criterion results summed per day and view dimensions, so the page never scans every round."""

    __tablename__ = "criterion_day"
    __table_args__ = (UniqueConstraint("day", "rubric_name", "rubric_version", "domain", "reviewer_b",
                                       "reviewer_c", "criterion", "category", "severity", name="uq_criterion_day_key"),)

    id: int | None = Field(default=None, primary_key=True)
    criterion: str
    category: str
    severity: str
    pp: int = 0
    pf: int = 0
    fp: int = 0
    ff: int = 0
    b_fail: int = 0
    c_fail: int = 0
    check_fail: int = 0
    unscored: int = 0


TABLES: tuple[type[SQLModel], ...] = (
    BatchRow,
    BatchItemRow,
    BatchSampleRow,
    RunRow,
    RoundRow,
    ReviewRow,
    MergedIssueRow,
    ProposalRow,
    DecisionRow,
    EscalationRow,
    LLMCallRow,
    StateChangeRow,
    SettingsRow,
    RubricVersionRow,
    TrialRow,
    PersonRow,
    EscapeRow,
    AuditEventRow,
    AuditHeadRow,
    RunMetricRow,
    CriterionResultRow,
    CriterionDayRow,
    BatchSampleItemRow,
    BatchPatternRow,
    BatchChangeRow,
)
"""Every table of the schema, parents first."""

APPEND_ONLY = frozenset(
    {"decision", "state_change", "llm_call", "settings", "rubric_version", "rubric_trial", "escape", "audit_event",
     "batch_change"}
)
"""Tables whose rows are never updated or deleted."""
