"""The method's metrics, defined once: from aggregate counts to the figures every view shows.

Pure: storage aggregates the history in SQL (sums and counts per day, per criterion, per
reviewer) and hands the rows here; this module turns them into rates, means, Cohen's kappa and
time series. The Metrics page and `python -m santa_core metrics` both print `build_report`'s
answer, so they cannot disagree.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import date, datetime

from pydantic import BaseModel, Field

from santa_core.reports.metrics_cache import cache_figures
from santa_core.reports.metrics_totals import CriterionTotals, DayTotals, ReviewerTotals, RoundsCount
from santa_core.reports.metrics_units import (
    Grain,
    agreement,
    auto_grain,
    bucket_of,
    cohens_kappa,
    escape_rate,
    first_pass_rate,
    mean_iterations,
    ratio,
)
from santa_core.reports.metrics_words import HEADLINE, format_figure
from santa_core.reviewers.base import PERSON

FIRST_PASS_TARGET = 0.70
"""The method works when more than 70 % of finished runs are NICE in round 1."""
ITERATIONS_TARGET = 1.5
"""...and runs that reach NICE need fewer than 1.5 rounds on average."""
ESCAPE_TARGET = 0.0
"""No defect should be found after a NICE output shipped."""
LOW_KAPPA = 0.40
"""Below this kappa the two reviewers agree little beyond chance (Landis & Koch: "fair" or
worse): the criterion's wording leaves room for judgement and needs tightening."""
MIN_PAIRS = 10
"""A low-agreement warning needs at least this many compared PASS/FAIL pairs."""


class MetricsFilter(BaseModel):
    """Which runs a view covers: dates are the runs' creation days (UTC), both ends included."""

    since: date | None = None
    until: date | None = None
    rubrics: list[str] = Field(default_factory=list)
    versions: list[str] = Field(default_factory=list)
    """`name@N`: a run matches when its rubric is one of these exact versions."""
    domains: list[str] = Field(default_factory=list)
    reviewers: list[str] = Field(default_factory=list)
    """A run matches when reviewer B or reviewer C is one of these."""
    people: list[str] = Field(default_factory=list)
    """A run matches when one of these people started it, reviewed it or decided on it."""

    def is_empty(self) -> bool:
        """True when the view covers the whole history."""
        return self == MetricsFilter()


# --- the definitions ------------------------------------------------------------------------


VERSION = re.compile(r"(.+)@([0-9]+)", re.ASCII)
"""A rubric version as the filters write it: NAME@N (ASCII digits)."""


def parse_version(text: str) -> tuple[str, int] | None:
    """(name, number) of a NAME@N version filter, or None when it is not written so."""
    match = VERSION.fullmatch(text)
    return (match[1], int(match[2])) if match else None


# --- the report -----------------------------------------------------------------------------


class Headline(BaseModel):
    """The view's top-line figures."""

    runs: int = 0
    finished: int = 0
    first_pass: int = 0
    first_pass_rate: float | None = None
    nice_runs: int = 0
    mean_iterations: float | None = None
    shipped: int = 0
    escapes: int = 0
    escaped_runs: int = 0
    escape_rate: float | None = None
    compared_pairs: int = 0
    flagged_both: int = 0
    flagged_b_only: int = 0
    flagged_c_only: int = 0
    agreement: float | None = None
    kappa: float | None = None
    unscored: int = 0
    failed_checks: int = 0
    rounds: int = 0
    total_cost_usd: float = 0.0
    review_cost_usd: float = 0.0
    fix_cost_usd: float = 0.0
    cost_per_run_usd: float | None = None
    cost_per_round_usd: float | None = None
    tokens: int = 0
    tokens_per_run: float | None = None
    tokens_per_round: float | None = None
    generation_runs: int = 0
    review_to_generation: float | None = None
    cache_read_tokens: int = 0
    cache_savings_usd: float = 0.0
    review_prompt_tokens: int = 0
    """Input tokens of the review calls: uncached + written to the cache + read from it."""
    review_cache_write_tokens: int = 0
    review_cache_read_tokens: int = 0
    cache_hit_rate: float | None = None
    cache_unknown_runs: int = 0
    reviews: int = 0
    reviewer_errors: int = 0
    reviewer_error_rate: float | None = None
    mean_round_latency_s: float | None = None


class SeriesPoint(BaseModel):
    """One time bucket of the over-time charts."""

    bucket: datetime | date
    """The bucket's first day; for hour buckets its first moment (naive, UTC)."""
    runs: int
    finished: int
    first_pass: int
    first_pass_rate: float | None
    nice_runs: int
    mean_iterations: float | None
    shipped: int
    escapes: int
    escape_rate: float | None
    cost_usd: float
    tokens: int
    review_prompt_tokens: int = 0
    review_cache_read_tokens: int = 0
    cache_hit_rate: float | None = None
    cache_savings_usd: float = 0.0


class CriterionFigures(BaseModel):
    """One criterion's failures and agreement."""

    criterion: str
    name: str = ""
    """What the rubric calls it (its newest version in the view); "" when no rubric of the view names it."""
    category: str
    severity: str
    b_fail: int
    c_fail: int
    check_fail: int
    failed: int
    pairs: int
    both: int
    b_only: int
    c_only: int
    pass_both: int
    agreement: float | None
    kappa: float | None
    unscored: int
    low_agreement: bool


class CategoryFigures(BaseModel):
    """Failed checks of one category."""

    category: str
    b_fail: int
    c_fail: int
    check_fail: int
    failed: int


class ReviewerFigures(BaseModel):
    """One reviewer model's answers over both slots."""

    reviewer: str
    reviews: int
    errors: int
    error_rate: float | None
    mean_latency_s: float | None
    max_latency_s: float | None
    """None for a person: their review time is not measured."""
    cost_usd: float


class MetricsReport(BaseModel):
    """Everything the Metrics page and `metrics --json` show, for one filter and grain."""

    filters: MetricsFilter
    grain: Grain
    targets: dict[str, float] = Field(
        default_factory=lambda: {
            "first_pass_rate": FIRST_PASS_TARGET,
            "mean_iterations": ITERATIONS_TARGET,
            "escape_rate": ESCAPE_TARGET,
            "low_kappa": LOW_KAPPA,
        }
    )
    headline: Headline
    series: list[SeriesPoint]
    rounds: list[RoundsCount]
    criteria: list[CriterionFigures]
    categories: list[CategoryFigures]
    reviewers: list[ReviewerFigures]
    warnings: list[str]

    @property
    def empty(self) -> bool:
        """True when no run matches the view."""
        return self.headline.runs == 0


def _sum_days(days: Iterable[DayTotals]) -> DayTotals:
    """Field-wise sum of day rows (the day of the result is meaningless)."""
    total = DayTotals(day=date.min)
    for row in days:
        for name in DayTotals.model_fields:
            if name != "day":
                setattr(total, name, getattr(total, name) + getattr(row, name))
    return total


def _point(bucket: date, t: DayTotals) -> SeriesPoint:
    return SeriesPoint(
        bucket=bucket,
        runs=t.runs,
        finished=t.finished,
        first_pass=t.first_pass,
        first_pass_rate=first_pass_rate(t.first_pass, t.finished),
        nice_runs=t.nice_runs,
        mean_iterations=mean_iterations(t.nice_rounds, t.nice_runs),
        shipped=t.shipped,
        escapes=t.escapes,
        escape_rate=escape_rate(t.escapes, t.shipped),
        cost_usd=t.review_cost_usd + t.fix_cost_usd,
        tokens=t.input_tokens + t.output_tokens + t.cache_write_tokens + t.cache_read_tokens,
        **cache_figures(t),
        cache_savings_usd=t.cache_savings_usd,
    )


def build_series(days: Iterable[DayTotals], grain: Grain) -> list[SeriesPoint]:
    """Day rows (hour rows for the hour grain) rolled up into buckets of `grain`, oldest first (sums first, then
    the rates)."""
    buckets: dict[date, list[DayTotals]] = defaultdict(list)
    for row in days:
        buckets[bucket_of(row.day, grain)].append(row)
    return [_point(b, _sum_days(rows)) for b, rows in sorted(buckets.items())]


def criterion_figures(row: CriterionTotals, name: str = "") -> CriterionFigures:
    """Failures, agreement and kappa of one criterion."""
    pairs = row.pp + row.pf + row.fp + row.ff
    kappa = cohens_kappa(row.pp, row.pf, row.fp, row.ff)
    return CriterionFigures(
        criterion=row.criterion,
        name=name,
        category=row.category,
        severity=row.severity,
        b_fail=row.b_fail,
        c_fail=row.c_fail,
        check_fail=row.check_fail,
        failed=row.b_fail + row.c_fail + row.check_fail,
        pairs=pairs,
        both=row.ff,
        b_only=row.fp,
        c_only=row.pf,
        pass_both=row.pp,
        agreement=agreement(row.ff, row.fp, row.pf),
        kappa=kappa,
        unscored=row.unscored,
        low_agreement=kappa is not None and kappa < LOW_KAPPA and pairs >= MIN_PAIRS,
    )


def _merge_criteria(rows: Iterable[CriterionTotals]) -> list[CriterionTotals]:
    """One row per criterion id, summed over rubric versions.

    Why by id alone: a criterion whose severity or category changed between versions is still
    one criterion, and its agreement and kappa need all of its pairs. Its category and severity
    then read "a / b".
    """
    merged: dict[str, CriterionTotals] = {}
    kinds: dict[str, tuple[set[str], set[str]]] = defaultdict(lambda: (set(), set()))
    for row in rows:
        into = merged.setdefault(row.criterion, CriterionTotals(criterion=row.criterion, category="", severity=""))
        kinds[row.criterion][0].add(row.category)
        kinds[row.criterion][1].add(row.severity)
        for name in ("pp", "pf", "fp", "ff", "b_fail", "c_fail", "check_fail", "unscored"):
            setattr(into, name, getattr(into, name) + getattr(row, name))
    for cid, (categories, severities) in kinds.items():
        merged[cid].category, merged[cid].severity = " / ".join(sorted(categories)), " / ".join(sorted(severities))
    return list(merged.values())


def category_figures(criteria: Iterable[CriterionFigures | CriterionTotals]) -> list[CategoryFigures]:
    """Failed checks summed per category, most failures first (from rows with one category each)."""
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for c in criteria:
        s = sums[c.category]
        s[0], s[1], s[2] = s[0] + c.b_fail, s[1] + c.c_fail, s[2] + c.check_fail
    rows = [
        CategoryFigures(category=k, b_fail=b, c_fail=c, check_fail=x, failed=b + c + x) for k, (b, c, x) in sums.items()
    ]
    return sorted(rows, key=lambda r: (-r.failed, r.category))


def reviewer_figures(rows: Iterable[ReviewerTotals]) -> list[ReviewerFigures]:
    """B and C rows of the same reviewer model combined; most answers first."""
    sums: dict[str, ReviewerTotals] = {}
    for row in rows:
        into = sums.setdefault(row.reviewer, ReviewerTotals(reviewer=row.reviewer))
        into.reviews += row.reviews
        into.errors += row.errors
        into.latency_s += row.latency_s
        into.max_latency_s = max(into.max_latency_s, row.max_latency_s)
        into.cost_usd += row.cost_usd
    out = [
        ReviewerFigures(
            reviewer=r.reviewer,
            reviews=r.reviews,
            errors=r.errors,
            error_rate=ratio(r.errors, r.reviews),
            mean_latency_s=None if r.reviewer == PERSON else ratio(r.latency_s, r.reviews),
            max_latency_s=None if r.reviewer == PERSON else r.max_latency_s,
            cost_usd=r.cost_usd,
        )
        for r in sums.values()
        if r.reviews
    ]
    return sorted(out, key=lambda r: (-r.reviews, r.reviewer))


def _headline(t: DayTotals, criteria: list[CriterionFigures], reviewers: list[ReviewerFigures]) -> Headline:
    pp, pf, fp, ff = (sum(getattr(c, k) for c in criteria) for k in ("pass_both", "c_only", "b_only", "both"))
    total = t.review_cost_usd + t.fix_cost_usd
    tokens = t.input_tokens + t.output_tokens + t.cache_write_tokens + t.cache_read_tokens
    reviews, errors = sum(r.reviews for r in reviewers), sum(r.errors for r in reviewers)
    return Headline(
        runs=t.runs,
        finished=t.finished,
        first_pass=t.first_pass,
        first_pass_rate=first_pass_rate(t.first_pass, t.finished),
        nice_runs=t.nice_runs,
        mean_iterations=mean_iterations(t.nice_rounds, t.nice_runs),
        shipped=t.shipped,
        escapes=t.escapes,
        escaped_runs=t.escaped_runs,
        escape_rate=escape_rate(t.escapes, t.shipped),
        compared_pairs=pp + pf + fp + ff,
        flagged_both=ff,
        flagged_b_only=fp,
        flagged_c_only=pf,
        agreement=agreement(ff, fp, pf),
        kappa=cohens_kappa(pp, pf, fp, ff),
        unscored=sum(c.unscored for c in criteria),
        failed_checks=sum(c.failed for c in criteria),
        rounds=t.rounds,
        total_cost_usd=total,
        review_cost_usd=t.review_cost_usd,
        fix_cost_usd=t.fix_cost_usd,
        cost_per_run_usd=ratio(total, t.runs),
        cost_per_round_usd=ratio(total, t.rounds),
        tokens=tokens,
        tokens_per_run=ratio(tokens, t.runs),
        tokens_per_round=ratio(tokens, t.rounds),
        generation_runs=t.generation_runs,
        review_to_generation=ratio(t.review_cost_with_generation_usd, t.generation_cost_usd),
        cache_read_tokens=t.cache_read_tokens,
        cache_savings_usd=t.cache_savings_usd,
        **cache_figures(t),
        review_cache_write_tokens=t.review_cache_write_tokens,
        cache_unknown_runs=t.cache_unknown_runs,
        reviews=reviews,
        reviewer_errors=errors,
        reviewer_error_rate=ratio(errors, reviews),
        mean_round_latency_s=ratio(t.round_latency_s, t.rounds_reviewed),
    )


def _warnings(h: Headline, criteria: list[CriterionFigures]) -> list[str]:
    """Plain sentences about figures that miss their target or need attention."""
    out = [
        f"Low reviewer agreement on {c.name or c.criterion} (κ = {format_figure(c.kappa, 'kappa')} over {c.pairs:,} pairs): "
        "the two reviewers read this criterion differently; tighten its pass condition and fail signal."
        for c in criteria
        if c.low_agreement and c.kappa is not None
    ]
    if h.first_pass_rate is not None and h.first_pass_rate <= FIRST_PASS_TARGET:
        out.append(
            f"First-pass rate {format_figure(h.first_pass_rate, 'rate')} is not above the "
            f"{FIRST_PASS_TARGET * 100:g} % target."
        )
    if h.mean_iterations is not None and h.mean_iterations >= ITERATIONS_TARGET:
        out.append(
            f"Mean iterations to converge {format_figure(h.mean_iterations, 'mean')} is not below the "
            f"{ITERATIONS_TARGET:g} target."
        )
    if h.escapes > ESCAPE_TARGET:
        out.append(f"{h.escapes} escape(s) reported on shipped runs; the target is 0.")
    return out


def view_grain(filters: MetricsFilter, days: Iterable[DayTotals], grain: Grain | None = None) -> Grain:
    """The buckets of a view: `grain` when asked for, else chosen from the span of the filters' dates, or of the
    days that hold runs where the filters leave an end open."""
    if grain:
        return grain
    found = sorted(d.day for d in days)
    return auto_grain(filters.since or (found[0] if found else None), filters.until or (found[-1] if found else None))


def build_report(
    filters: MetricsFilter,
    days: Iterable[DayTotals],
    rounds: Iterable[RoundsCount],
    criteria: Iterable[CriterionTotals],
    reviewers: Iterable[ReviewerTotals],
    grain: Grain | None = None,
    hours: Iterable[DayTotals] | None = None,
    names: Mapping[str, str] | None = None,
) -> MetricsReport:
    """Every figure of the view from the SQL aggregates (grain None: chosen from the date span, `view_grain`).
    Hour buckets are built from `hours`, the same sums per hour (a day row cannot be split); `names`: criterion
    id → name."""
    days = sorted(days, key=lambda d: d.day)
    if hours is None and grain == "hour":
        raise ValueError("hour buckets need the sums per hour")
    grain = view_grain(filters, days, grain)
    if hours is None and grain == "hour":  # auto, without the hours' sums: the buckets a day row can give
        grain = "day"
    criteria = list(criteria)
    figures = sorted(
        (criterion_figures(c, (names or {}).get(c.criterion, "")) for c in _merge_criteria(criteria)),
        key=lambda c: (-c.failed, c.criterion),
    )
    people = reviewer_figures(reviewers)
    headline = _headline(_sum_days(days), figures, people)
    series = build_series(hours if grain == "hour" and hours is not None else days, grain)
    return MetricsReport(
        filters=filters,
        grain=grain,
        headline=headline,
        series=series,
        rounds=sorted(rounds, key=lambda r: (r.rounds, r.status)),
        criteria=figures,
        categories=category_figures(criteria),
        reviewers=people,
        warnings=_warnings(headline, figures),
    )


def headline_rows(report: MetricsReport) -> list[tuple[str, str]]:
    """(label, formatted value) of every headline figure."""
    return [(label, format_figure(getattr(report.headline, field), kind)) for field, label, kind, _ in HEADLINE]
