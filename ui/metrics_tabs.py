"""The Metrics page's tabs: the charts with their definitions and CSV data, over time and per criterion,
reviewer, family pair and cost; only the open tab is built, and the URL follows it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any

import pandas as pd
import streamlit as st

from santa_core.reports.metrics import MetricsFilter, MetricsReport
from santa_core.reports.metrics_families import FamilyPairFigures
from santa_core.reports.metrics_words import DEFINITIONS
from ui import app_desk, metrics_confidence
from ui import metric_figures as figs
from ui import metric_frames as frames
from ui import metrics_url as url_state
from ui.metrics_drill import criteria_table, drill_down, take_click
from ui.metrics_headline import CACHE_CARDS, cache_note, figure_cards, generation_note, metric_rows
from ui.metrics_tables import KAPPA_COLUMNS, REVIEWER_COLUMNS, family_table, kappa_table, reviewers_table, table
from ui.metrics_url import DRILL_CATEGORY, DRILL_CRITERION, TAB_KEY
from ui.safe import escape_markdown

# --- charts ---------------------------------------------------------------------------------------


def _header(title: str, definition: str, name: str, frame: pd.DataFrame) -> None:
    """A chart's title, its definition one click away, and the data behind it as CSV."""
    with st.container(horizontal=True, vertical_alignment="center"):
        st.markdown(f"**{title}**", width="content")
        with st.popover("Definition", icon=":material/info:", type="tertiary", key=f"metrics_def_{name}"):
            st.markdown(DEFINITIONS[definition])
        st.download_button(
            "CSV",
            frame.to_csv(index=False),
            file_name=f"santa-metrics-{name}.csv",
            mime="text/csv",
            key=f"metrics_csv_{name}",
            on_click="ignore",
            icon=":material/download:",
            type="tertiary",
            help="The data behind this chart.",
        )


def _chart(title: str, definition: str, name: str, fig: Any, frame: pd.DataFrame, select: bool = False) -> Any:
    """A chart under its header, or what to do when it has nothing to draw; with `select`, a click on a bar
    reruns the page (its selection is returned)."""
    _header(title, definition, name, frame)
    if (empty := figs.empty_message(name, fig)) is not None:
        st.info(empty, icon=":material/hourglass_empty:")
        return None
    if select:
        return st.plotly_chart(
            fig, width="stretch", key=f"metrics_chart_{name}", on_select="rerun", selection_mode="points"
        )
    st.plotly_chart(fig, width="stretch", key=f"metrics_chart_{name}")
    return None


def _bucket_words(bucket: date) -> str:
    """A bucket's start as the caption writes it: the day, or the day and hour."""
    return f"{bucket:%Y-%m-%d %H:00}" if isinstance(bucket, datetime) else bucket.isoformat()


def buckets_caption(report: MetricsReport) -> str:
    """How the over-time charts group runs."""
    n = len(report.series)
    span = f", {_bucket_words(report.series[0].bucket)} to {_bucket_words(report.series[-1].bucket)}" if n else ""
    week = " (weeks start on Monday)" if report.grain == "week" else ""
    times = "UTC creation hours" if report.grain == "hour" else "UTC creation days"
    return f"Grouped by {report.grain}{week}: {n} bucket{'s' if n != 1 else ''}{span} ({times})."


def quality(report: MetricsReport, f: MetricsFilter | None = None) -> None:
    """First-pass rate and mean iterations over time, with their targets; the distribution of rounds."""
    series = frames.series_frame(report)
    st.caption(buckets_caption(report))
    left, right = st.columns(2)
    with left:
        _chart("First-pass rate over time", "first_pass_rate", "first_pass", figs.first_pass_figure(report), series)
    with right:
        _chart(
            "Mean iterations to converge over time",
            "mean_iterations",
            "iterations",
            figs.iterations_figure(report),
            series,
        )
    _chart(
        "Distribution of rounds",
        "rounds_distribution",
        "rounds",
        figs.rounds_figure(report),
        frames.rounds_frame(report),
    )


def failures(report: MetricsReport, f: MetricsFilter) -> None:
    """Failed checks by criterion and by category, stacked by source, and the runs behind a bar."""
    if not report.headline.failed_checks:
        st.info("No check failed in this view: the reviewers and the deterministic checks passed every criterion.")
        return
    criteria = [c.criterion for c in report.criteria if c.failed]
    categories = [c.category for c in report.categories if c.failed]
    left, right = st.columns(2)
    with left:
        by_criterion = _chart(
            "Failed checks by criterion",
            "failure_taxonomy",
            "criteria",
            figs.criteria_figure(report),
            frames.criteria_frame(report),
            select=True,
        )
    with right:
        by_category = _chart(
            "Failed checks by category",
            "failure_taxonomy",
            "categories",
            figs.categories_figure(report),
            frames.categories_frame(report),
            select=True,
        )
    take_click(by_criterion, DRILL_CRITERION, DRILL_CATEGORY, criteria)
    take_click(by_category, DRILL_CATEGORY, DRILL_CRITERION, categories)
    st.markdown("**Runs behind a bar**")
    take_click(criteria_table(report), DRILL_CRITERION, DRILL_CATEGORY, criteria, source="table")
    drill_down(f, criteria, categories, frames.criterion_names(report))


def agreement(report: MetricsReport, f: MetricsFilter | None = None) -> None:
    """Flagged by both / B only / C only per criterion, Cohen's kappa per criterion, and the split by family pair."""
    frame = frames.agreement_frame(report)
    _chart("Flagged by both, B only, C only", "agreement", "agreement", figs.agreement_figure(report), frame)
    _header("Cohen's κ per criterion", "kappa", "kappa", frame)
    if report.criteria:
        table(kappa_table(report), KAPPA_COLUMNS, wide=("criterion",))
    else:
        st.info(figs.NO_CRITERIA, icon=":material/hourglass_empty:")
    families(app_desk.desk().metrics.family_pairs(report.filters if f is None else f))


FAMILIES_CAPTION = (
    "Models of one family share blind spots: two families whose misses are independent should show a "
    "lower escape rate than one family. Reviewer B and C in either order are one pair."
)


def families(pairs: list[FamilyPairFigures]) -> None:
    """Agreement, kappa and escape rate per family pair of the panel; with fewer than two pairs, why there is none."""
    if len(pairs) < 2:
        what = (
            f"every run in this view used one family pair ({escape_markdown(pairs[0].pair)}), so there is "
            "nothing to compare"
            if pairs
            else "no run in this view"
        )
        st.info(
            f"**By reviewer family pair:** no data yet: {what}. Once runs use panels of two family pairs (say "
            "Claude + GPT next to Claude + Claude), this compares their agreement, κ and escape rate."
        )
        return
    frame = frames.families_frame(pairs)
    _header("Agreement, κ and escape rate by family pair", "family_pairs", "families", frame)
    st.caption(FAMILIES_CAPTION)
    table(
        family_table(pairs),
        {"pairs": st.column_config.NumberColumn("pairs", help="Compared PASS/FAIL pairs.")},
        wide=("family pair",),
    )
    if any(p.escape_rate is not None for p in pairs):
        st.plotly_chart(figs.families_figure(pairs), width="stretch", key="metrics_chart_families")


def escapes(report: MetricsReport, f: MetricsFilter | None = None) -> None:
    """Escape rate over time, with the target 0."""
    h = report.headline
    st.caption(
        f"{h.escapes} escape{'s' if h.escapes != 1 else ''} on {h.escaped_runs} of {h.shipped} shipped "
        "runs. An escape is a defect found after the output shipped; report one on the run's page (Review)."
    )
    _chart(
        "Reported escape rate over time",
        "escape_rate",
        "escapes",
        figs.escape_figure(report),
        frames.series_frame(report),
    )
    metrics_confidence.escapes(report)  # the unbiased estimate, from spot-checks, apart from the reported series


COST_CARDS = ("total_cost_usd", "cost_per_run_usd", "review_to_generation", *CACHE_CARDS)
"""The Cost tab's figure cards, written as the headline writes them."""


def cost(report: MetricsReport, f: MetricsFilter | None = None) -> None:
    """Cost cards (the cache's hit rate and net savings among them), spend over time, where it went, the prompt
    cache over time, per-reviewer cost."""
    cards = figure_cards(report)
    metric_rows([cards[field] for field in COST_CARDS])
    st.caption(generation_note(report))
    left, right = st.columns(2)
    with left:
        _chart("Spend over time", "cost", "spend", figs.spend_figure(report), frames.series_frame(report))
    with right:
        _chart("Reviews and fixes", "cost", "cost", figs.cost_split_figure(report), frames.cost_frame(report))
    cache(report)
    _chart(
        "Cost per reviewer", "cost", "reviewer_cost", figs.reviewer_cost_figure(report), frames.reviewers_frame(report)
    )


def cache(report: MetricsReport) -> None:
    """The prompt cache: hit rate and net savings per bucket, or what to do when no review call used it."""
    kind, note = cache_note(report)
    if stale := report.headline.cache_unknown_runs:
        st.warning(
            f"{stale:,} run{'s' if stale != 1 else ''} in this view still hold facts from before the cache "
            "figures: left out of the hit rate, and counted at gross savings. Reopening the desk recomputes "
            "them.",
            icon=":material/warning:",
        )
    if kind in ("empty", "unused"):
        st.info(f"**Prompt cache:** {note}", icon=":material/cached:")
        return
    if kind == "loss":
        st.warning(note, icon=":material/warning:")
    _chart(
        "Prompt cache: hit rate and net savings",
        "cache",
        "cache",
        figs.cache_figure(report),
        frames.series_frame(report),
    )
    if kind == "saved":
        st.caption(note)


def reviewers(report: MetricsReport, f: MetricsFilter | None = None) -> None:
    """Latency (mean and max) and error rate per reviewer model."""
    frame = frames.reviewers_frame(report)
    left, right = st.columns(2)
    with left:
        _chart("Latency per reviewer", "latency", "latency", figs.latency_figure(report), frame)
    with right:
        _chart("Reviewer error rate", "error_rate", "errors", figs.error_rate_figure(report), frame)
    table(reviewers_table(report), REVIEWER_COLUMNS, wide=("reviewer",))
    metrics_confidence.reviewer_calibration(report)


TABS: dict[str, Callable[[MetricsReport, MetricsFilter], None]] = {
    "Quality": quality,
    "Failure taxonomy": failures,
    "Reviewer agreement": agreement,
    "Escapes": escapes,
    "Cost": cost,
    "Reviewers": reviewers,
}
"""The page's tabs and what each one shows."""


def tabs(report: MetricsReport, f: MetricsFilter) -> None:
    """The tabs, only the open one built (a click on a chart keeps its tab open); the URL follows the open tab
    and the drill-down."""
    for tab, show in zip(st.tabs(list(TABS), key=TAB_KEY, on_change="rerun"), TABS.values(), strict=True):
        if tab.open:
            with tab:
                show(report, f)
    url_state.write(st.session_state, st.query_params)
