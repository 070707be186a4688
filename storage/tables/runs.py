"""Tables of a run: the run, its rounds, reviews, merged issues, proposals, decisions, escalations,
LLM calls, state changes and escapes, and the saved settings.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from storage.tables.columns import JSON_OR_NULL, UTC_TS, UsageColumns, run_fk, text_column, ts_column


class RunRow(SQLModel, table=True):
    """One review of one output: its inputs, configuration and current state."""

    __tablename__ = "run"

    id: int | None = Field(default=None, primary_key=True)
    created_at: datetime = ts_column(index=True)
    updated_at: datetime = ts_column()
    status: str = Field(index=True)
    round: int = 1
    max_rounds: int = 3
    round_cap: int = 3
    escalation_reason: str | None = None
    note: str = text_column()
    spec: str = text_column()
    original_output: str = text_column()
    rubric_name: str
    rubric_version: int
    rubric_json: dict = Field(sa_type=JSON)
    reviewer_b: str
    reviewer_c: str
    reviewer_d: str | None = None
    """The third reviewer's model (slot D) when the run's rubric has high-risk criteria (None: two reviewers)."""
    fixer: str
    auto_approve: bool = False
    budget_usd: float | None = None
    created_by: str = "local"
    source: str = "app"
    worker: str | None = None
    """host:pid:start of the process that claimed the run while it is `running`, or that queued it while it is
    `queued` (None otherwise, and for runs queued before this was recorded)."""
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
    run_id: int = run_fk()
    round_no: int
    output_text: str = text_column()
    output_hash: str
    gate_decision: str | None = None
    gate_reasons: list | None = Field(default=None, sa_type=JSON_OR_NULL)
    gate_reviewer_error: bool | None = None
    gate_injection: bool | None = None
    gate_checks: list | None = Field(default=None, sa_type=JSON_OR_NULL)
    """The deterministic check outcomes the gate saw (NULL for rounds stored before migration 0005)."""
    gate_disagreement: bool | None = None
    """One reviewer PASSed a critical criterion the other FAILed (NULL before migration 0006)."""
    started_at: datetime = ts_column()


class ReviewRow(UsageColumns, table=True):
    """A reviewer slot's outcome for a round (upserted: a person may replace a pending one)."""

    __tablename__ = "review"
    __table_args__ = (UniqueConstraint("run_id", "round_no", "slot"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = run_fk()
    round_no: int
    slot: str
    reviewer: str = Field(index=True)
    status: str
    verdict: str
    review_json: dict | None = Field(default=None, sa_type=JSON_OR_NULL)
    error: str | None = Field(default=None, sa_type=Text)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    raw_response: str = text_column()
    call_ids: list = Field(default_factory=list, sa_type=JSON)
    created_at: datetime = ts_column()


class MergedIssueRow(SQLModel, table=True):
    """One de-duplicated critical issue of a round's gate, with attribution."""

    __tablename__ = "merged_issue"
    __table_args__ = (UniqueConstraint("run_id", "round_no", "idx"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = run_fk()
    round_no: int
    idx: int
    criterion: str
    description: str = text_column()
    evidence: str = text_column()
    flagged_by: str


class ProposalRow(UsageColumns, table=True):
    """A fix agent proposal (appended; the latest of a round is the round's proposal)."""

    __tablename__ = "proposal"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = run_fk()
    round_no: int
    issues_json: list = Field(default_factory=list, sa_type=JSON)
    edits_json: list = Field(default_factory=list, sa_type=JSON)
    rejected_json: list = Field(default_factory=list, sa_type=JSON)
    before_text: str = text_column()
    proposed_text: str = text_column()
    before_hash: str
    proposed_hash: str
    cost_usd: float = 0.0
    error: str | None = Field(default=None, sa_type=Text)
    call_ids: list = Field(default_factory=list, sa_type=JSON)
    created_at: datetime = ts_column()


class ScreenRow(SQLModel, table=True):
    """One known-answer screen of a round's spec or output (appended; the latest per role counts)."""

    __tablename__ = "screen"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = run_fk()
    round_no: int
    role: str
    text_hash: str = Field(index=True)
    model: str
    verdict: str
    secret: str = ""
    answer: str = text_column()
    error: str | None = Field(default=None, sa_type=Text)
    cost_usd: float = 0.0
    cached: bool = False
    call_id: int | None = None
    created_at: datetime = ts_column()
    kind: str | None = None
    """None: the known-answer (key) check, as every row before migration 0022; "extraction": the extraction check."""
    quotes: list | None = Field(default=None, sa_type=JSON_OR_NULL)
    """The extraction check's quotes found in the text (None for the key check)."""


class DecisionRow(SQLModel, table=True):
    """A person's (or auto-approve's) decision. Append-only."""

    __tablename__ = "decision"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = run_fk()
    round_no: int
    action: str
    actor: str = Field(index=True)
    reason: str = text_column()
    before_hash: str
    after_hash: str
    after_text: str = text_column()
    created_at: datetime = ts_column()


class EscalationRow(SQLModel, table=True):
    """A run handed to a person, and how that person resolved it."""

    __tablename__ = "escalation"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = run_fk()
    reason: str
    created_at: datetime = ts_column()
    status: str = Field(default="open", index=True)
    resolution: str | None = None
    resolved_by: str | None = None
    resolved_at: datetime | None = Field(default=None, sa_type=UTC_TS)
    justification: str | None = Field(default=None, sa_type=Text)
    owner: str | None = None
    """The person (id) who is to resolve it; None: unassigned."""
    due_at: datetime | None = Field(default=None, sa_type=UTC_TS)


class LLMCallRow(UsageColumns, table=True):
    """One request/response pair with a content hash. Append-only."""

    __tablename__ = "llm_call"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int | None = Field(default=None, foreign_key="run.id", index=True)
    """The run the call served; None for a batch's or a trial's own calls (`batch_id`, `trial_key`)."""
    round_no: int
    purpose: str
    slot: str | None = None
    model: str
    request_json: dict = Field(sa_type=JSON)
    response_text: str = text_column()
    content_hash: str
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str | None = Field(default=None, sa_type=Text)
    created_at: datetime = ts_column()
    request_hash: str | None = Field(default=None, index=True)
    """The hash of the request body; links the call to its *sent* note (llm_call_sent)."""
    batch_id: int | None = Field(default=None, foreign_key="batch.id", index=True)
    """The batch whose own work the call served (a pattern's fix); None for a run's or a trial's."""
    trial_key: str | None = Field(default=None, index=True)
    """The rubric trial the call served (`rubric_trial.trial_key`), put on record before the trial is."""


class CallSentRow(SQLModel, table=True):
    """A model call put on record before its request left: the write-ahead call log. Append-only.

    Its answer, when one came back and was stored, is the llm_call row with the same request hash;
    a note without one is a call cut off (by a crash, a kill, a lost connection), counted in the
    run's cost at its estimate (the most it may have cost)."""

    __tablename__ = "llm_call_sent"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int | None = Field(default=None, foreign_key="run.id", index=True)
    """As `llm_call`: exactly one of run_id, batch_id and trial_key names what the call served."""
    round_no: int
    purpose: str
    slot: str | None = None
    model: str
    request_hash: str = Field(index=True)
    estimate_usd: float = 0.0
    worker: str = ""
    sent_at: datetime = ts_column()
    batch_id: int | None = Field(default=None, foreign_key="batch.id", index=True)
    trial_key: str | None = Field(default=None, index=True)


class StateChangeRow(SQLModel, table=True):
    """One committed change of a run's status. Append-only."""

    __tablename__ = "state_change"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = run_fk()
    from_status: str | None = None
    to_status: str
    actor: str
    note: str = text_column()
    created_at: datetime = ts_column()


class SettingsRow(SQLModel, table=True):
    """One save of the Settings page (appended; the newest row is in effect)."""

    __tablename__ = "settings"

    id: int | None = Field(default=None, primary_key=True)
    values_json: dict = Field(default_factory=dict, sa_type=JSON)
    saved_by: str = "local"
    saved_at: datetime = ts_column()


class EscapeRow(SQLModel, table=True):
    """A defect found after a run shipped. Append-only."""

    __tablename__ = "escape"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = run_fk()
    criterion: str
    description: str = text_column()
    severity: str
    reported_by: str
    created_at: datetime = ts_column()
    source: str | None = None
    """"reported" (someone found it) or "spot_check" (a blind spot-check failed the criterion); NULL in rows
    written before migration 0018, which were all reported."""
    spot_check_id: int | None = Field(default=None, index=True)
    evidence: str | None = Field(default=None, sa_type=Text)
    """The spot-checker's evidence for the FAIL."""
    passed_by: list | None = Field(default=None, sa_type=JSON_OR_NULL)
    """The reviewers (model ids) of the shipped round that PASSed the criterion: whom the escape is traced to."""
