"""The Metrics page: filters kept in the URL, the headline figures, the charts with their definitions,
the drill-down from a failure bar to the runs behind it, and CSV / JSON exports.

The filters live in the URL so a view can be shared as a link. While the page is open its widgets
hold the filters and the URL is rewritten after every change; the URL is read only when the page
opens (its widgets have no state yet). Streamlit's `bind="query-params"` would do much the same,
but it drops values that match nothing without a word, and AppTest cannot see the URL updates it
makes in the browser; so the page syncs by hand, through pure functions (`ui.metrics_url`:
`filters_from_query` and `filters_to_query`, and the same for the open tab and the drill-down).
Several values of one filter are repeated parameters:
`?rubric=general&rubric=content&since=2025-01-01&grain=week&tab=failures&criterion=brand_voice`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import pandas as pd
import streamlit as st

from santa_core.reports.metrics import Grain, MetricsFilter, MetricsReport, headline_rows
from santa_core.reports.metrics_cache import NoteKind
from santa_core.reports.metrics_cache import cache_note as _cache_note
from santa_core.reports.metrics_families import FamilyPairFigures
from santa_core.reports.metrics_words import DEFINITIONS, HEADLINE, format_figure
from santa_core.reports.spot_figures import ConfidenceFigures, document
from storage.metrics import MetricsOptions
from ui import app_desk, identity, metrics_confidence
from ui import metric_figures as figs
from ui import metrics_url as url_state
from ui.metrics_tables import (
    FAILED_RUNS_COLUMNS,
    KAPPA_COLUMNS,
    REVIEWER_COLUMNS,
    SOURCE_COLUMNS,
    failed_runs_frame,
    family_table,
    kappa_table,
    reviewers_table,
    status_help,
    table,
)
from ui.metrics_url import (
    DRILL_CATEGORY,
    DRILL_CRITERION,
    EARLIEST,
    FROM_URL,
    GRAINS,
    LATEST,
    LISTS,
    PARAMS,
    TAB_KEY,
    filters_from_query,
    filters_to_query,
)
from ui.run_list import RUN_LINK
from ui.safe import escape_markdown

GRAIN_LABEL = {"auto": "auto", "hour": "hour", "day": "day", "week": "week", "month": "month"}
"""Short enough for the box at 1,024 px; the help says what auto picks and that weeks start on Monday."""
KEY = {p: f"metrics_{p}" for p in PARAMS}
"""Session-state key of each filter widget."""
PRIMARY = 6
"""Headline figures shown at once; the others sit in an expander below."""
PER_ROW = 3
"""Figure cards to a row: a card is then 177 px wide in a 1,024 px window, room for "$1,234.56" and its label."""
SHORT_LABEL = {
    "mean_iterations": "Mean iterations",
    "unscored": "One reviewer only",
    "review_to_generation": "Review ÷ generation",
    "mean_round_latency_s": "Round latency",
    "reviewer_error_rate": "Reviewer errors",
    "cost_per_round_usd": "Cost per round",
}
"""Card labels shorter than the figure's name (the command line's), which opens the card's help."""
DRILL_LIMIT = 200
"""At most this many runs are listed behind a bar (the newest)."""

# --- the filter widgets -------------------------------------------------------------------------


@dataclass
class View:
    """What the person asked to see."""

    filters: MetricsFilter
    grain: Grain | None


def _set_state(f: MetricsFilter, grain: Grain | None) -> None:
    """Put a view into the filter widgets (before they are drawn in this run)."""
    st.session_state[KEY["since"]] = f.since
    st.session_state[KEY["until"]] = f.until
    for name, field in LISTS.items():
        st.session_state[KEY[name]] = list(getattr(f, field))
    st.session_state[KEY["grain"]] = grain or "auto"


def reset() -> None:
    """Every filter back to the whole history (a button callback, so it runs before the widgets)."""
    _set_state(MetricsFilter(), None)
    st.session_state[DRILL_CRITERION] = st.session_state[DRILL_CATEGORY] = None


def _url() -> dict[str, list[str]]:
    """The page's own parameters in the URL, each with all its values."""
    return {p: st.query_params.get_all(p) for p in PARAMS if p in st.query_params}


def _open_from_url(options: MetricsOptions) -> list[str]:
    """When the page opens (its widgets have no state yet), take the view from the URL; the problems."""
    if KEY["grain"] in st.session_state:
        return []
    f, grain, problems = filters_from_query(_url(), options)
    _set_state(f, grain)
    return problems + url_state.restore(st.session_state, st.query_params)


def _write_url(f: MetricsFilter, grain: Grain | None) -> None:
    """Make the URL say what the widgets say (only the parameters that differ are sent)."""
    wanted, current = filters_to_query(f, grain), _url()
    for name in PARAMS:
        want = wanted.get(name)
        if want is None:
            if name in st.query_params:
                del st.query_params[name]
        elif current.get(name) != ([want] if isinstance(want, str) else want):
            st.query_params[name] = want


def _choices(options: MetricsOptions, name: str) -> list[str]:
    """A filter's choices: what the history holds, then values from the link that match no run."""
    known = list(getattr(options, LISTS[name]))
    return known + [v for v in st.session_state.get(KEY[name]) or [] if v not in known]


def filters(options: MetricsOptions) -> View:
    """The filter controls, seeded from the URL when the page opens; the URL follows every change."""
    problems = _open_from_url(options)
    with st.container(border=True):
        d1, d2, d3 = st.columns(3, vertical_alignment="bottom")  # a date box shows "yyyy / mm / dd" at 1,024 px
        since = d1.date_input(
            "From (UTC)",
            value=None,
            min_value=EARLIEST,
            max_value=LATEST,
            key=KEY["since"],
            help="First creation day of the runs in the view (UTC).",
        )
        until = d2.date_input(
            "Until (UTC, inclusive)",
            value=None,
            min_value=EARLIEST,
            max_value=LATEST,
            key=KEY["until"],
            help="Last creation day of the runs in the view (UTC), included.",
        )
        grain = d3.selectbox(
            "Time buckets",
            GRAINS,
            key=KEY["grain"],
            format_func=GRAIN_LABEL.get,
            help="How the over-time charts group runs. Auto (from the date span): hours for up to "
            "two days, days up to two months, weeks (from Monday) up to a year, months beyond.",
        )
        r1, r2, r3 = st.columns(3)
        lists = {
            "rubrics": r1.multiselect(
                "Rubric", _choices(options, "rubric"), key=KEY["rubric"], placeholder="all rubrics"
            ),
            "versions": r2.multiselect(
                "Rubric version", _choices(options, "version"), key=KEY["version"], placeholder="all versions"
            ),
            "domains": r3.multiselect(
                "Domain", _choices(options, "domain"), key=KEY["domain"], placeholder="all domains"
            ),
        }
        p1, p2 = st.columns(2)
        lists["reviewers"] = p1.multiselect(
            "Reviewer model (B or C)", _choices(options, "reviewer"), key=KEY["reviewer"], placeholder="all reviewers"
        )
        lists["people"] = p2.multiselect(
            "Person",
            _choices(options, "person"),
            key=KEY["person"],
            format_func=identity.display,
            placeholder="everyone",
            help="Runs this person started, reviewed or decided on.",
        )
        note, reset_box = st.columns([4, 1], vertical_alignment="center")
        note.caption(
            f"History: runs created {options.first_day} to {options.last_day} (UTC). Several values of one "
            "filter match any of them; different filters must all match. The URL keeps the view: share it."
        )
        reset_box.button("Reset filters", on_click=reset, key="metrics_reset", help="Back to the whole history.")
    if problems:
        st.info("About the filters in the link:\n" + "\n".join(f"- {escape_markdown(p)}" for p in problems))
    if since and until and since > until:
        st.warning("**From** is after **Until**: no run can match.")
    view = View(MetricsFilter(since=since, until=until, **lists), None if grain == "auto" else grain)
    _write_url(view.filters, view.grain)
    return view


# --- empty states ---------------------------------------------------------------------------------


def empty_history() -> None:
    """No run at all yet: what the page will show, and where to start."""
    st.info(
        "No runs yet, so there is nothing to measure. Once reviews have run, this page shows the first-pass "
        "rate, the mean iterations to converge, the failure taxonomy with the runs behind each bar, reviewer "
        "agreement (Cohen's κ), the escape rate, cost and latency, each over time and with its definition."
    )
    st.page_link("pages/review.py", label="Start a review on the Review page", icon=":material/rate_review:")


def nothing_matches() -> None:
    """Runs exist, but none in this view."""
    st.info("No run matches these filters. Widen the date range or remove a filter.")
    st.button("Reset filters", on_click=reset, key="metrics_reset_empty", type="primary")


# --- headline -------------------------------------------------------------------------------------


def generation_note(report: MetricsReport) -> str:
    """What the review ÷ generation figure is over, or why there is none."""
    runs = report.headline.generation_runs
    if not runs:
        return (
            "No run in this view has a generation cost, so review cost cannot be compared with it. Enter what "
            "generating the output cost when starting a run (Review page → Run options, or "
            "`review --generation-cost`)."
        )
    plural = "s" if runs != 1 else ""
    if report.headline.review_to_generation is None:
        return f"The {runs} run{plural} with a generation cost all cost $0 to generate: nothing to divide by."
    return f"Review ÷ generation cost over {runs} run{plural} with a generation cost."


def cache_note(report: MetricsReport) -> tuple[NoteKind, str]:
    """What the view's cache figures mean, or why there are none (`santa_core.reports.metrics_cache.cache_note`)."""
    h = report.headline
    return _cache_note(
        h.review_prompt_tokens,
        h.review_cache_read_tokens,
        h.review_cache_write_tokens,
        h.cache_savings_usd,
        lambda usd: format_figure(usd, "usd"),
    )


def _help(report: MetricsReport, field: str, definition: str, label: str = "") -> str:
    text = f"**{label}.** {DEFINITIONS[definition]}" if label else DEFINITIONS[definition]
    if field == "review_to_generation":
        return f"{text}\n\n{generation_note(report)}"
    return f"{text}\n\n{cache_note(report)[1]}" if field in CACHE_CARDS else text


def _metric_rows(items: list[tuple[str, str, str]]) -> None:
    """Figure cards, PER_ROW to a row (every row as wide: a card's width does not depend on how many follow)."""
    for start in range(0, len(items), PER_ROW):
        for column, (label, value, help_text) in zip(st.columns(PER_ROW), items[start : start + PER_ROW], strict=False):
            column.metric(label, value, help=help_text)


def _cards(report: MetricsReport) -> dict[str, tuple[str, str, str]]:
    """field → (label, value, help) of every headline figure, written as `format_figure` writes it; a long
    label shortened (SHORT_LABEL), its full name then leading the help."""
    return {
        field: (
            SHORT_LABEL.get(field, label),
            value,
            _help(report, field, definition, label if field in SHORT_LABEL else ""),
        )
        for (field, _, _, definition), (label, value) in zip(HEADLINE, headline_rows(report), strict=True)
    }


def headline(report: MetricsReport) -> None:
    """Every headline figure, written exactly as `format_figure` writes it (as the command line does)."""
    items = list(_cards(report).values())
    _metric_rows(items[:PRIMARY])
    with st.expander("More figures: counts, spend, tokens, latency, errors"):
        _metric_rows(items[PRIMARY:])


def warnings(report: MetricsReport) -> None:
    """Figures that miss their target, and criteria the reviewers read differently (tighten the rubric)."""
    for warning in report.warnings:
        st.warning(escape_markdown(warning), icon=":material/warning:")


def report_json(report: MetricsReport, confidence: ConfidenceFigures | None = None) -> str:
    """The whole report as the command line's `metrics --json` prints it (with the spot-check and calibration keys)."""
    return report.model_dump_json(indent=2) if confidence is None else document(report, confidence)


def export(report: MetricsReport, confidence: ConfidenceFigures | None = None) -> None:
    """One download with every figure of the view."""
    st.download_button(
        "All figures (JSON)",
        report_json(report, confidence),
        file_name="santa-metrics.json",
        mime="application/json",
        key="metrics_json",
        on_click="ignore",
        icon=":material/download:",
        help="The same document as `python -m santa_core metrics --json` with these filters.",
    )


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
    series = figs.series_frame(report)
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
        "Distribution of rounds", "rounds_distribution", "rounds", figs.rounds_figure(report), figs.rounds_frame(report)
    )


def picked_bar(state: Mapping[str, Any] | None) -> str | None:
    """What the bar a person clicked in a horizontal bar chart stands for (its customdata: a criterion's id, a
    category), or None."""
    points = ((state or {}).get("selection") or {}).get("points") or []
    for point in points:
        value = point.get("customdata", point.get("y"))
        if isinstance(value, list):
            value = value[0] if value else None
        if value is not None:
            return str(value)
    return None


def take_click(state: Mapping[str, Any] | None, key: str, other: str, choices: list[str], source: str = "bar") -> None:
    """A new click on a bar (or a row of the `source` table) picks it in the drill-down and clears the other pick.
    Each source remembers its own last click: the chart's empty selection must not hide a new row picked."""
    pick, seen = picked_bar(state), f"{key}_click" + ("" if source == "bar" else f"_{source}")
    if pick == st.session_state.get(seen):
        return  # the same selection as last run: the person may have changed the picks since
    st.session_state[seen] = pick
    chosen = pick if pick in choices else None
    if chosen is not None:
        st.session_state[key], st.session_state[other] = chosen, None


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
            figs.criteria_frame(report),
            select=True,
        )
    with right:
        by_category = _chart(
            "Failed checks by category",
            "failure_taxonomy",
            "categories",
            figs.categories_figure(report),
            figs.categories_frame(report),
            select=True,
        )
    take_click(by_criterion, DRILL_CRITERION, DRILL_CATEGORY, criteria)
    take_click(by_category, DRILL_CATEGORY, DRILL_CRITERION, categories)
    st.markdown("**Runs behind a bar**")
    take_click(criteria_table(report), DRILL_CRITERION, DRILL_CATEGORY, criteria, source="table")
    drill_down(f, criteria, categories, figs.criterion_names(report))


CRITERIA_TABLE = "metrics_criteria_table"
"""The failed criteria's table: a row picked is a criterion picked in the drill-down, as a click on its bar."""


def criteria_table(report: MetricsReport) -> dict[str, Any]:
    """The failed criteria as a table whose rows can be picked (a bigger target than a bar's segment); the pick
    as a bar click reads (`picked_bar`: the criterion's id as the point's customdata)."""
    frame = figs.criteria_frame(report)
    shown = frame.rename(columns={"b_fail": "B", "c_fail": "C", "check_fail": "check"})[
        ["name", "category", "B", "C", "check", "failed"]
    ]
    event = table(
        shown,
        key=CRITERIA_TABLE,
        on_select="rerun",
        selection_mode="single-row",
        wide=("name",),
        config={
            "name": st.column_config.TextColumn("criterion"),
            **SOURCE_COLUMNS,
            "failed": st.column_config.NumberColumn("all", help="Failed checks in all."),
        },
    )
    rows = [r for r in event.selection.rows if r < len(frame)]
    return {"selection": {"points": [{"customdata": frame["criterion"].iloc[rows[0]]}] if rows else []}}


def _what(criterion: str | None, category: str | None, names: Mapping[str, str] | None = None) -> str:
    """What was picked, in words: the criterion by its name."""
    named = (names or {}).get(criterion or "", criterion)
    parts = ([f"criterion {escape_markdown(named)}"] if criterion else []) + (
        [f"category {escape_markdown(category)}"] if category else []
    )
    return " in ".join(parts)


def drill_down(f: MetricsFilter, criteria: list[str], categories: list[str], names: Mapping[str, str]) -> None:
    """Pick a criterion and/or a category (or click a bar or a row): the runs that failed it, newest first."""
    asked = zip(
        ("criterion", "category"),
        st.session_state.pop(FROM_URL, None) or (None, None),
        (criteria, categories),
        strict=True,
    )
    if missing := [
        f"{what} {names.get(value, value) if what == 'criterion' else value}"
        for what, value, choices in asked
        if value is not None and value not in choices
    ]:
        st.info(
            f"The link picks {escape_markdown(' and '.join(missing))}, but no check of it failed in this view: "
            "nothing is picked."
        )
    for key, choices in ((DRILL_CRITERION, criteria), (DRILL_CATEGORY, categories)):
        if st.session_state.get(key) not in (None, *choices):
            st.session_state[key] = None  # the filters changed and the old pick is not in the view any more
    c1, c2 = st.columns(2)
    criterion = c1.selectbox(
        "Criterion",
        criteria,
        index=None,
        key=DRILL_CRITERION,
        placeholder="any criterion",
        format_func=lambda c: names.get(c, c),
    )
    category = c2.selectbox("Category", categories, index=None, key=DRILL_CATEGORY, placeholder="any category")
    if criterion is None and category is None:
        st.caption(
            "Click a bar above or a row of the table, or pick a criterion or a category, to list the runs "
            "that failed it."
        )
        return
    runs_behind(f, criterion, category, names)


def runs_behind(
    f: MetricsFilter, criterion: str | None, category: str | None, names: Mapping[str, str] | None = None
) -> None:
    """The runs in the view that failed the criterion and/or category, newest first, each opened by its link."""
    # No run waiting for a person reviewer can appear: its facts stay empty until the gate is in.
    total, shown = app_desk.desk().metrics.failed_runs(f, criterion=criterion, category=category, limit=DRILL_LIMIT)
    what = _what(criterion, category, names)
    if not shown:
        st.info(f"No run in this view failed {what}.")
        return
    lead = f"Showing the newest {len(shown)} of {total}" if total > len(shown) else f"{total}"
    st.caption(
        f"{lead} run{'s' if total != 1 else ''} that failed {what}, newest first. Click a run's number to open it."
    )
    table(
        failed_runs_frame(shown),
        wide=("status",),
        config={
            **FAILED_RUNS_COLUMNS,
            "status": st.column_config.TextColumn("status", help=status_help(shown)),
            "run": st.column_config.LinkColumn("run", display_text=RUN_LINK, help="Click a run's number to open it."),
        },
    )


def agreement(report: MetricsReport, f: MetricsFilter | None = None) -> None:
    """Flagged by both / B only / C only per criterion, Cohen's kappa per criterion, and the split by family pair."""
    frame = figs.agreement_frame(report)
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
    frame = figs.families_frame(pairs)
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
        figs.series_frame(report),
    )
    metrics_confidence.escapes(report)  # the unbiased estimate, from spot-checks, apart from the reported series


CACHE_CARDS = ("cache_hit_rate", "cache_savings_usd")
COST_CARDS = ("total_cost_usd", "cost_per_run_usd", "review_to_generation", *CACHE_CARDS)
"""The Cost tab's figure cards, written as the headline writes them."""


def cost(report: MetricsReport, f: MetricsFilter | None = None) -> None:
    """Cost cards (the cache's hit rate and net savings among them), spend over time, where it went, the prompt
    cache over time, per-reviewer cost."""
    cards = _cards(report)
    _metric_rows([cards[field] for field in COST_CARDS])
    st.caption(generation_note(report))
    left, right = st.columns(2)
    with left:
        _chart("Spend over time", "cost", "spend", figs.spend_figure(report), figs.series_frame(report))
    with right:
        _chart("Reviews and fixes", "cost", "cost", figs.cost_split_figure(report), figs.cost_frame(report))
    cache(report)
    _chart(
        "Cost per reviewer", "cost", "reviewer_cost", figs.reviewer_cost_figure(report), figs.reviewers_frame(report)
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
        "Prompt cache: hit rate and net savings", "cache", "cache", figs.cache_figure(report), figs.series_frame(report)
    )
    if kind == "saved":
        st.caption(note)


def reviewers(report: MetricsReport, f: MetricsFilter | None = None) -> None:
    """Latency (mean and max) and error rate per reviewer model."""
    frame = figs.reviewers_frame(report)
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
