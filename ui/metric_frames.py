"""The tables behind the Metrics page's charts: pure functions of a MetricsReport.

Every chart (`ui.metric_figures`) is drawn from the same table its CSV download holds, so the chart and the
export cannot disagree.
"""

from __future__ import annotations

import pandas as pd

from santa_core.reports.metrics import MetricsReport, SeriesPoint
from santa_core.reports.metrics_families import FamilyPairFigures


def series_frame(report: MetricsReport) -> pd.DataFrame:
    """One row per time bucket: counts, rates, cost and tokens (rates as fractions, blank when undefined)."""
    return pd.DataFrame([p.model_dump() for p in report.series], columns=list(SeriesPoint.model_fields))


def rounds_frame(report: MetricsReport) -> pd.DataFrame:
    """Finished runs by rounds used and final status."""
    return pd.DataFrame([r.model_dump() for r in report.rounds], columns=["rounds", "status", "runs"])


def criterion_names(report: MetricsReport) -> dict[str, str]:
    """Criterion id → the name people read: the rubric's name, with the id added where two criteria share a name
    (one bar each), the id itself where no rubric names it."""
    names = {c.criterion: c.name or c.criterion for c in report.criteria}
    twice = {n for n in names.values() if list(names.values()).count(n) > 1}
    return {cid: f"{n} ({cid})" if n in twice else n for cid, n in names.items()}


def criteria_frame(report: MetricsReport) -> pd.DataFrame:
    """Failed checks per criterion and source, most failures first (criteria with no failure left out)."""
    names = criterion_names(report)
    rows = [
        {
            "criterion": c.criterion,
            "name": names[c.criterion],
            "category": c.category,
            "severity": c.severity,
            "b_fail": c.b_fail,
            "c_fail": c.c_fail,
            "check_fail": c.check_fail,
            "failed": c.failed,
        }
        for c in report.criteria
        if c.failed
    ]
    return pd.DataFrame(
        rows, columns=["criterion", "name", "category", "severity", "b_fail", "c_fail", "check_fail", "failed"]
    )


def categories_frame(report: MetricsReport) -> pd.DataFrame:
    """Failed checks per category and source, most failures first (categories with no failure left out)."""
    rows = [c.model_dump() for c in report.categories if c.failed]
    return pd.DataFrame(rows, columns=["category", "b_fail", "c_fail", "check_fail", "failed"])


def agreement_frame(report: MetricsReport) -> pd.DataFrame:
    """Per criterion: compared pairs, flags by both / B only / C only, agreement and Cohen's kappa."""
    names = criterion_names(report)
    rows = [
        {
            "criterion": c.criterion,
            "name": names[c.criterion],
            "category": c.category,
            "pairs": c.pairs,
            "both": c.both,
            "b_only": c.b_only,
            "c_only": c.c_only,
            "pass_both": c.pass_both,
            "agreement": c.agreement,
            "kappa": c.kappa,
            "unscored": c.unscored,
            "low_agreement": c.low_agreement,
        }
        for c in report.criteria
    ]
    return pd.DataFrame(
        rows,
        columns=[
            "criterion",
            "name",
            "category",
            "pairs",
            "both",
            "b_only",
            "c_only",
            "pass_both",
            "agreement",
            "kappa",
            "unscored",
            "low_agreement",
        ],
    )


def reviewers_frame(report: MetricsReport) -> pd.DataFrame:
    """Per reviewer model: answers, errors, error rate, mean and max latency, cost."""
    return pd.DataFrame(
        [r.model_dump() for r in report.reviewers],
        columns=["reviewer", "reviews", "errors", "error_rate", "mean_latency_s", "max_latency_s", "cost_usd"],
    )


def families_frame(pairs: list[FamilyPairFigures]) -> pd.DataFrame:
    """Per family pair of the panel: runs, flags, agreement, kappa and escape rate (rates as fractions)."""
    return pd.DataFrame([p.model_dump() for p in pairs], columns=list(FamilyPairFigures.model_fields))


def cost_frame(report: MetricsReport) -> pd.DataFrame:
    """The view's cost figures, one per row (USD and tokens; blank when undefined)."""
    h = report.headline
    rows = [
        ("total_cost_usd", h.total_cost_usd),
        ("review_cost_usd", h.review_cost_usd),
        ("fix_cost_usd", h.fix_cost_usd),
        ("cost_per_run_usd", h.cost_per_run_usd),
        ("cost_per_round_usd", h.cost_per_round_usd),
        ("tokens", h.tokens),
        ("tokens_per_run", h.tokens_per_run),
        ("tokens_per_round", h.tokens_per_round),
        ("generation_runs", h.generation_runs),
        ("review_to_generation", h.review_to_generation),
        ("cache_read_tokens", h.cache_read_tokens),
        ("review_prompt_tokens", h.review_prompt_tokens),
        ("review_cache_write_tokens", h.review_cache_write_tokens),
        ("review_cache_read_tokens", h.review_cache_read_tokens),
        ("cache_hit_rate", h.cache_hit_rate),
        ("cache_savings_usd", h.cache_savings_usd),
        ("runs", h.runs),
        ("rounds", h.rounds),
    ]
    return pd.DataFrame(rows, columns=["figure", "value"])
