"""Tables of rubrics: immutable versions and trials."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from storage.tables.columns import JSON_OR_NULL, UsageColumns, text_column, ts_column


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
    change_note: str = text_column()
    source: str = "studio"
    created_at: datetime = ts_column()


class TrialRow(UsageColumns, table=True):
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
    output_text: str = text_column()
    output_hash: str
    check_outcomes_json: list = Field(default_factory=list, sa_type=JSON)
    reviewer: str | None = None
    review_status: str | None = None
    verdict: str | None = None
    review_json: dict | None = Field(default=None, sa_type=JSON_OR_NULL)
    error: str | None = Field(default=None, sa_type=Text)
    request_json: dict | None = Field(default=None, sa_type=JSON_OR_NULL)
    response_text: str = text_column()
    content_hash: str | None = None
    cost_usd: float = 0.0
    latency_s: float = 0.0
    actor: str = "local"
    created_at: datetime = ts_column()
    trial_key: str | None = Field(default=None, index=True)
    """Names the trial's model calls (`llm_call.trial_key`), which are on record before the trial row is."""


class SuggestionDecisionRow(SQLModel, table=True):
    """A rubric author's decision on a rubric suggestion (`santa_core.rubrics.learning`): accepted (with the version it
    saved) or dismissed, so the suggestion is not offered again. Append-only."""

    __tablename__ = "rubric_suggestion"

    id: int | None = Field(default=None, primary_key=True)
    rubric_name: str = Field(index=True)
    suggestion_key: str = Field(index=True)
    action: str
    """"accepted" or "dismissed"."""
    criterion: str
    kind: str
    phrase: str = text_column()
    runs_json: list = Field(default_factory=list, sa_type=JSON)
    """The runs that argued for the suggestion when it was decided."""
    version: int | None = None
    """The rubric version accepting saved (None: dismissed)."""
    note: str = text_column()
    actor: str
    created_at: datetime = ts_column()
