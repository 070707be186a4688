"""The history's aggregates as storage hands them to the metrics: sums and counts per day (or hour), per
criterion, per reviewer, and the run statuses the sums count as finished and as shipped. Storage computes them in
SQL; `santa_core.reports.metrics` turns them into the report."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel

FINISHED = ("shipped", "escalated", "resolved_shipped", "resolved_rejected", "sampled")
"""Runs the loop is done with: NICE, handed to a person (waiting or decided), or a batch sample's
NAUGHTY review (the batch fixes it by pattern)."""
SHIPPED = ("shipped", "resolved_shipped")
"""Runs whose output went out: NICE, or shipped as is by a person."""


class DayTotals(BaseModel):
    """Sums over the runs created on one day (one row of the SQL aggregate), or in one hour (`day` then the hour's
    start, a naive UTC datetime)."""

    day: datetime | date
    runs: int = 0
    finished: int = 0
    first_pass: int = 0
    nice_runs: int = 0
    nice_rounds: int = 0
    shipped: int = 0
    escapes: int = 0
    escaped_runs: int = 0
    rounds: int = 0
    review_cost_usd: float = 0.0
    fix_cost_usd: float = 0.0
    generation_cost_usd: float = 0.0
    generation_runs: int = 0
    review_cost_with_generation_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    cache_savings_usd: float = 0.0
    rounds_reviewed: int = 0
    round_latency_s: float = 0.0
    review_input_tokens: int = 0
    review_cache_write_tokens: int = 0
    review_cache_read_tokens: int = 0
    cache_unknown_runs: int = 0
    """Runs whose facts predate the review_* tokens (recomputed at start-up): left out of the hit rate."""


class RoundsCount(BaseModel):
    """Finished runs that used `rounds` rounds and ended in `status`."""

    rounds: int
    status: str
    runs: int


class CriterionTotals(BaseModel):
    """Per-criterion counts over rounds: B/C pairs, failures by source, unscored results."""

    criterion: str
    category: str
    severity: str = "critical"
    pp: int = 0
    """Both reviewers PASS."""
    pf: int = 0
    """B PASS, C FAIL (C only)."""
    fp: int = 0
    """B FAIL, C PASS (B only)."""
    ff: int = 0
    """Both FAIL."""
    b_fail: int = 0
    c_fail: int = 0
    check_fail: int = 0
    unscored: int = 0


class ReviewerTotals(BaseModel):
    """One reviewer model's answers in one slot (storage sends B and C rows apart)."""

    reviewer: str
    reviews: int = 0
    errors: int = 0
    latency_s: float = 0.0
    max_latency_s: float = 0.0
    cost_usd: float = 0.0
