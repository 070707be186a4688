"""The Metrics page's facts: derived, rewritten in the same transaction as their sources."""

from __future__ import annotations

from sqlalchemy import UniqueConstraint
from sqlmodel import Field, SQLModel

from storage.tables.columns import run_fk

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
    """One run's figures for the dashboard; `storage.metric_facts.refresh` rewrites it from the run's rows."""

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
    """Net: what prompt caching saved on every call of the run, less the premium its cache writes cost
    (`santa_core.pricing.cache_savings_usd`); negative when writes were never read back."""
    review_input_tokens: int | None = None
    """Uncached input tokens of the run's review calls (reviewers and injection screen). None on the three
    review_* columns: a row from before migration 0012, which start-up recomputes (`metric_facts.backfill`)."""
    review_cache_write_tokens: int | None = None
    """Input tokens of the review calls written to the prompt cache."""
    review_cache_read_tokens: int | None = None
    """Input tokens of the review calls read from the prompt cache (the cache hits)."""
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
    run_id: int = run_fk()
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
    __table_args__ = (
        UniqueConstraint(
            "day",
            "rubric_name",
            "rubric_version",
            "domain",
            "reviewer_b",
            "reviewer_c",
            "criterion",
            "category",
            "severity",
            name="uq_criterion_day_key",
        ),
    )

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
