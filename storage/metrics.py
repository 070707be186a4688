"""The SQL behind the Metrics page: sums and counts over the metric facts (`storage.metric_facts`).

The definitions of the figures live in `santa_core.reports.metrics`; this module only sums and counts.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import and_, case, false, func, or_, text, union
from sqlmodel import Session, col, select

from santa_core.reports import metrics as m
from santa_core.reports import metrics_totals
from santa_core.reports.metrics import MetricsFilter, MetricsReport
from santa_core.reports.metrics_families import FamilyPairFigures, PanelTotals, family_pair_figures
from storage.metric_derivation import COUNTERS
from storage.metric_facts import FAILED_SQL
from storage.queries import named_rows, select_columns
from storage.tables import (
    CriterionDayRow,
    CriterionResultRow,
    DecisionRow,
    PersonRow,
    ReviewRow,
    RoundRow,
    RunMetricRow,
    RunRow,
)
from storage.times import utc
from storage.transactions import StoreBase


def _people_runs(people: list[str]) -> Any:
    """Ids of runs one of `people` started, reviewed (a person slot) or decided on."""
    # A review counts once its round's gate is in: before that, a run showing up under one person
    # reviewer would tell the other that they have answered.
    gated = and_(
        col(RoundRow.run_id) == col(ReviewRow.run_id),
        col(RoundRow.round_no) == col(ReviewRow.round_no),
        col(RoundRow.gate_decision).is_not(None),
    )
    return union(
        select(RunMetricRow.run_id).where(col(RunMetricRow.created_by).in_(people)),
        select(ReviewRow.run_id)
        .join(RoundRow, gated)
        .where(col(ReviewRow.reviewer).in_([f"person:{p}" for p in people])),
        select(DecisionRow.run_id).where(col(DecisionRow.actor).in_(people)),
    )


def where(table: Any, f: MetricsFilter) -> list[Any]:
    """SQL conditions of a filter over a fact table (people need a table with run_id)."""
    conds: list[Any] = []
    if f.since:
        conds.append(table.day >= f.since.isoformat())
    if f.until:
        conds.append(table.day <= f.until.isoformat())
    if f.rubrics:
        conds.append(col(table.rubric_name).in_(f.rubrics))
    if f.versions:
        pairs = [p for p in map(m.parse_version, f.versions) if p]
        conds.append(or_(false(), *(and_(table.rubric_name == n, table.rubric_version == v) for n, v in pairs)))
    if f.domains:
        conds.append(col(table.domain).in_(f.domains))
    if f.reviewers:
        conds.append(or_(col(table.reviewer_b).in_(f.reviewers), col(table.reviewer_c).in_(f.reviewers)))
    if f.people:
        conds.append(col(table.run_id).in_(_people_runs(f.people)))
    return conds


FAILED = text(f"({FAILED_SQL})")
"""A criterion_result row that failed, written as its partial index's condition (`metric_facts.INDEXES`)."""


def _flag(cond: Any) -> Any:
    return func.sum(case((cond, 1), else_=0))


SLOT_SUMS = ("reviews", "errors", "latency_s", "cost_usd")
"""A reviewer slot's run_metric columns (`b_reviews`, `c_reviews`, ...) summed per reviewer; its max latency apart."""


def _sums() -> dict[str, Any]:
    """The DayTotals fields as SQL sums over run_metric rows (one group: one day, one hour or one run)."""
    r = RunMetricRow
    finished, shipped = col(r.status).in_(metrics_totals.FINISHED), col(r.status).in_(metrics_totals.SHIPPED)
    known = col(r.generation_cost_usd).is_not(None)
    return {
        "runs": func.count(),
        "finished": _flag(finished),
        "first_pass": _flag(and_(finished, col(r.nice_round) == 1)),
        "nice_runs": func.count(col(r.nice_round)),
        "nice_rounds": func.coalesce(func.sum(r.nice_round), 0),
        "shipped": _flag(shipped),
        "escapes": func.sum(case((shipped, r.escapes), else_=0)),
        "escaped_runs": _flag(and_(shipped, col(r.escapes) > 0)),
        "rounds": func.sum(r.rounds),
        "review_cost_usd": func.sum(r.review_cost_usd),
        "fix_cost_usd": func.sum(r.fix_cost_usd),
        "generation_cost_usd": func.coalesce(func.sum(r.generation_cost_usd), 0.0),
        "generation_runs": func.count(col(r.generation_cost_usd)),
        "review_cost_with_generation_usd": func.sum(case((known, r.review_cost_usd), else_=0.0)),
        **{
            k: func.sum(getattr(r, k))
            for k in (
                "input_tokens",
                "output_tokens",
                "cache_write_tokens",
                "cache_read_tokens",
                "cache_savings_usd",
                "rounds_reviewed",
                "round_latency_s",
            )
        },
        # NULL on a fact row from before migration 0012 (start-up recomputes it): counted apart, never as 0
        **{
            k: func.coalesce(func.sum(getattr(r, k)), 0)
            for k in ("review_input_tokens", "review_cache_write_tokens", "review_cache_read_tokens")
        },
        "cache_unknown_runs": _flag(col(r.review_cache_read_tokens).is_(None)),
    }


def _hour_totals(s: Session, f: MetricsFilter) -> list[metrics_totals.DayTotals]:
    """run_metric summed per creation hour (UTC, naive): the buckets of a view of a day or two.

    The facts keep the creation day only, so each run's sums are read with its run's creation time and added up
    per hour here; a view this short holds few runs (auto picks hours only for at most two days).
    """
    cols = _sums()
    stmt = (
        select(RunRow.created_at, *(c.label(k) for k, c in cols.items()))
        .join(RunRow, col(RunRow.id) == RunMetricRow.run_id)
        .where(*where(RunMetricRow, f))
        .group_by(RunMetricRow.run_id, RunRow.created_at)
    )
    hours: dict[datetime, dict[str, Any]] = {}
    for row in s.exec(stmt):
        hour = utc(row.created_at).replace(minute=0, second=0, microsecond=0, tzinfo=None)
        into = hours.setdefault(hour, dict.fromkeys(cols, 0))
        for k in cols:
            into[k] += row._mapping[k]
    return [metrics_totals.DayTotals(**sums, day=hour) for hour, sums in hours.items()]


def _names(s: Session, f: MetricsFilter) -> dict[str, str]:
    """Criterion id → name as the view's rubric versions write it (a newer version's name wins), read from one run
    of each version (a run keeps the rubric it was judged by)."""
    r = RunMetricRow
    one_run = (
        select(r.rubric_version, func.min(r.run_id).label("run_id"))
        .where(*where(r, f))
        .group_by(col(r.rubric_name), col(r.rubric_version))
        .subquery()
    )
    rubrics = s.exec(
        select(one_run.c.rubric_version, RunRow.rubric_json).join(RunRow, col(RunRow.id) == one_run.c.run_id)
    ).all()
    return {
        c["id"]: c.get("name") or c["id"]
        for _, rubric in sorted(rubrics, key=lambda row: row[0])
        for c in rubric.get("criteria") or []
        if isinstance(c, dict) and c.get("id")
    }


def _run_sums(
    s: Session, f: MetricsFilter
) -> tuple[list[metrics_totals.DayTotals], list[metrics_totals.ReviewerTotals]]:
    """run_metric summed per creation day, and each reviewer slot's answers, errors, latency and cost per model.

    One pass over the view's runs, grouped by day and panel (B, C): the day totals are its rows summed per
    day, each slot's figures its rows summed per model. (Three passes, one per day and one per slot, cost
    twice as much on a large history: reading the rows is the cost, not adding them up.)
    """
    r, cols = RunMetricRow, _sums()
    slots: dict[str, Any] = {
        f"{slot}_{k}": func.sum(getattr(r, f"{slot}_{k}")) for slot in ("b", "c") for k in SLOT_SUMS
    }
    slots |= {f"{slot}_max_latency_s": func.max(getattr(r, f"{slot}_latency_max_s")) for slot in ("b", "c")}
    stmt = (
        select_columns(r.day, r.reviewer_b, r.reviewer_c, *(c.label(k) for k, c in {**cols, **slots}.items()))
        .where(*where(r, f))
        .group_by(r.day, r.reviewer_b, r.reviewer_c)
    )
    days: dict[str, dict[str, Any]] = {}
    reviewers: dict[tuple[str, str], metrics_totals.ReviewerTotals] = {}
    for values in named_rows(s, stmt):
        into = days.get(values["day"])
        if into is None:
            days[values["day"]] = {k: values[k] for k in cols}
        else:
            for k in cols:
                into[k] += values[k]
        for slot in ("b", "c"):
            name = values[f"reviewer_{slot}"]
            t = reviewers.setdefault((slot, name), metrics_totals.ReviewerTotals(reviewer=name))
            t.reviews += values[f"{slot}_reviews"]
            t.errors += values[f"{slot}_errors"]
            t.latency_s += values[f"{slot}_latency_s"]
            t.cost_usd += values[f"{slot}_cost_usd"]
            t.max_latency_s = max(t.max_latency_s, values[f"{slot}_max_latency_s"])
    return (
        [metrics_totals.DayTotals(**sums, day=date.fromisoformat(day)) for day, sums in days.items()],
        list(reviewers.values()),
    )


def _day_totals(s: Session, f: MetricsFilter) -> list[metrics_totals.DayTotals]:
    """run_metric summed per creation day."""
    return _run_sums(s, f)[0]


def _rounds(s: Session, f: MetricsFilter) -> list[metrics_totals.RoundsCount]:
    """Finished runs per (rounds used, final status)."""
    r = RunMetricRow
    stmt = (
        select(r.rounds, r.status, func.count().label("runs"))
        .where(col(r.status).in_(metrics_totals.FINISHED), *where(r, f))
        .group_by(col(r.rounds), col(r.status))
    )
    return [metrics_totals.RoundsCount(**row) for row in named_rows(s, stmt)]


def _reviewers(s: Session, f: MetricsFilter) -> list[metrics_totals.ReviewerTotals]:
    """Answers, errors, latency and cost per reviewer, slot B and slot C apart."""
    return _run_sums(s, f)[1]


def _criteria(s: Session, f: MetricsFilter) -> list[metrics_totals.CriterionTotals]:
    """Criterion counts from the daily rollup, or from every round when filtering by person."""
    if f.people:
        return _criteria_from_rounds(s, f)
    d = CriterionDayRow
    stmt = (
        select_columns(d.criterion, d.category, d.severity, *(func.sum(getattr(d, k)).label(k) for k in COUNTERS))
        .where(*where(d, f))
        .group_by(d.criterion, d.category, d.severity)
    )
    return [metrics_totals.CriterionTotals(**row) for row in named_rows(s, stmt)]


def _result_counts() -> dict[str, Any]:
    """criterion_day's counters as conditions over criterion_result rows (one row: one criterion and round)."""
    r = CriterionResultRow
    pair = and_(col(r.b).is_not(None), col(r.c).is_not(None))
    return {
        "pp": and_(pair, col(r.b) == "PASS", col(r.c) == "PASS"),
        "pf": and_(pair, col(r.b) == "PASS", col(r.c) == "FAIL"),
        "fp": and_(pair, col(r.b) == "FAIL", col(r.c) == "PASS"),
        "ff": and_(pair, col(r.b) == "FAIL", col(r.c) == "FAIL"),
        "b_fail": r.b == "FAIL",
        "c_fail": r.c == "FAIL",
        "check_fail": r.check_result == "FAIL",
        "unscored": ~pair,
    }


def _criteria_from_rounds(s: Session, f: MetricsFilter) -> list[metrics_totals.CriterionTotals]:
    """The same counts as `_criteria`, summed over criterion_result (slower; any filter)."""
    r = CriterionResultRow
    stmt = (
        select_columns(r.criterion, r.category, r.severity, *(_flag(c).label(k) for k, c in _result_counts().items()))
        .where(*where(r, f))
        .group_by(r.criterion, r.category, r.severity)
    )
    return [metrics_totals.CriterionTotals(**row) for row in named_rows(s, stmt)]


PANEL_COUNTS = ("pp", "pf", "fp", "ff", "unscored")
"""The criterion counters the family-pair split needs."""


def _panels(s: Session, f: MetricsFilter) -> list[PanelTotals]:
    """Per stored panel (reviewer B, reviewer C): runs, shipped runs and their escapes (as `_day_totals` counts
    them), and the B-against-C pairs (as `_criteria` counts them); two rows per panel, summed by the core."""
    r = RunMetricRow
    shipped = col(r.status).in_(metrics_totals.SHIPPED)
    runs = (
        select_columns(
            r.reviewer_b,
            r.reviewer_c,
            func.count().label("runs"),
            _flag(shipped).label("shipped"),
            func.sum(case((shipped, r.escapes), else_=0)).label("escapes"),
            _flag(and_(shipped, col(r.escapes) > 0)).label("escaped_runs"),
        )
        .where(*where(r, f))
        .group_by(r.reviewer_b, r.reviewer_c)
    )
    if f.people:  # as in `_criteria`: the daily sums cannot tell people apart
        c: Any = CriterionResultRow
        counts = [_flag(cond).label(k) for k, cond in _result_counts().items() if k in PANEL_COUNTS]
    else:
        c = CriterionDayRow
        counts = [func.sum(getattr(c, k)).label(k) for k in PANEL_COUNTS]
    pairs = select_columns(c.reviewer_b, c.reviewer_c, *counts).where(*where(c, f)).group_by(c.reviewer_b, c.reviewer_c)
    return [PanelTotals(**row) for stmt in (runs, pairs) for row in named_rows(s, stmt)]


class MetricsOptions(BaseModel):
    """What the filters can choose from, found in the history."""

    rubrics: list[str]
    versions: list[str]
    domains: list[str]
    reviewers: list[str]
    people: list[str]
    first_day: date | None
    last_day: date | None


class FailedRun(BaseModel):
    """A run behind a bar of the failure taxonomy."""

    run_id: int
    day: date
    rubric: str
    status: str
    rounds_failed: int
    b_fail: int
    c_fail: int
    check_fail: int


class MetricsStore(StoreBase):
    """The Metrics page's reads: one snapshot per report, every sum done by the database."""

    def report(self, f: MetricsFilter, grain: m.Grain | None = None) -> MetricsReport:
        """Every figure of the view (see `santa_core.reports.metrics.build_report`)."""
        with self._read() as s:
            days, reviewers = _run_sums(s, f)
            hours = _hour_totals(s, f) if m.view_grain(f, days, grain) == "hour" else None
            return m.build_report(f, days, _rounds(s, f), _criteria(s, f), reviewers, grain, hours, _names(s, f))

    def family_pairs(self, f: MetricsFilter) -> list[FamilyPairFigures]:
        """Agreement, Cohen's κ and escape rate per family pair of the panel (see
        `santa_core.reports.metrics_families`), for the same view as `report`."""
        with self._read() as s:
            return family_pair_figures(_panels(s, f))

    def options(self) -> MetricsOptions:
        """Rubrics, versions, domains, reviewers, people and the first and last day in the history (each from
        an index alone: `ix_run_metric_view` grouped in its order, the days from the two ends of the day index)."""
        r = RunMetricRow
        view = [col(c) for c in (r.rubric_name, r.rubric_version, r.domain, r.reviewer_b, r.reviewer_c)]
        with self._read() as s:
            rows = s.exec(select_columns(*view).group_by(*view)).all()
            # Two scalar subqueries: the database reads each end of the day index (min and max in one
            # aggregate would read all of it).
            first, last = s.exec(
                select(select(func.min(r.day)).scalar_subquery(), select(func.max(r.day)).scalar_subquery())
            ).one()
            people = set(s.exec(select(r.created_by).distinct()).all()) | set(s.exec(select(PersonRow.id)).all())
        return MetricsOptions(
            rubrics=sorted({row[0] for row in rows}),
            versions=sorted({f"{row[0]}@{row[1]}" for row in rows}, key=_version_key),
            domains=sorted({row[2] for row in rows}),
            reviewers=sorted({x for row in rows for x in row[3:5]}),
            people=sorted(people),
            first_day=date.fromisoformat(first) if first else None,
            last_day=date.fromisoformat(last) if last else None,
        )

    def failed_runs(
        self, f: MetricsFilter, criterion: str | None = None, category: str | None = None, limit: int = 200
    ) -> tuple[int, list[FailedRun]]:
        """(how many runs, the newest `limit` of them) that failed a criterion or a category in the view.

        The failed rows come from their partial indexes (`metric_facts.INDEXES`), newest run first, so the
        database stops after `limit` runs; each run's status is joined in the same statement. The runs are
        counted apart only when there are more than `limit`.
        """
        r = CriterionResultRow
        conds = [FAILED, *where(r, f)]
        if criterion is not None:
            conds.append(r.criterion == criterion)
        if category is not None:
            conds.append(r.category == category)
        runs = (
            select_columns(
                r.run_id,
                func.min(r.day).label("day"),
                func.min(r.rubric_name).label("name"),
                func.min(r.rubric_version).label("version"),
                func.count(func.distinct(r.round_no)).label("rounds_failed"),
                _flag(r.b == "FAIL").label("b"),
                _flag(r.c == "FAIL").label("c"),
                _flag(r.check_result == "FAIL").label("check"),
            )
            .where(*conds)
            .group_by(col(r.run_id))
            .order_by(col(r.run_id).desc())
            .limit(limit)
            .subquery()
        )
        stmt = (
            select_columns(runs, RunMetricRow.status)
            .join_from(runs, RunMetricRow, col(RunMetricRow.run_id) == runs.c.run_id, isouter=True)
            .order_by(runs.c.run_id.desc())
        )
        with self._read() as s:
            rows = named_rows(s, stmt)
            total = (
                len(rows)
                if len(rows) < limit
                else s.exec(
                    select(func.count()).select_from(
                        select(col(r.run_id)).where(*conds).group_by(col(r.run_id)).subquery()
                    )
                ).one()
            )
        return total, [
            FailedRun(
                run_id=row["run_id"],
                day=date.fromisoformat(row["day"]),
                rubric=f"{row['name']}@{row['version']}",
                status=row["status"] or "",
                rounds_failed=row["rounds_failed"],
                b_fail=row["b"],
                c_fail=row["c"],
                check_fail=row["check"],
            )
            for row in rows
        ]


def _version_key(version: str) -> tuple[str, int]:
    name, _, number = version.rpartition("@")
    return name, int(number) if number.isdigit() else 0


def today() -> date:
    """Today in UTC (the days of the facts are UTC days)."""
    return datetime.now(UTC).date()
