"""The Metrics page's charts: pure functions of a MetricsReport, each drawn from its table (`ui.metric_frames`).

No streamlit here, so each chart is tested as a plain Plotly figure (AppTest cannot look inside
a Plotly chart). Every figure is drawn from the same table its CSV download holds, so the chart
and the export cannot disagree.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from santa_core.reports.metrics import ESCAPE_TARGET, FIRST_PASS_TARGET, ITERATIONS_TARGET, MetricsReport
from santa_core.reports.metrics_families import FamilyPairFigures
from santa_core.words import usd
from ui.metric_frames import (
    agreement_frame,
    categories_frame,
    criteria_frame,
    families_frame,
    reviewers_frame,
    rounds_frame,
    series_frame,
)
from ui.metrics_axis import axis_settings, bar_width_ms

SOURCES = (("b_fail", "Reviewer B"), ("c_fail", "Reviewer C"), ("check_fail", "Deterministic check"))
"""Who failed a check: the failure taxonomy stacks one bar segment per source."""
FLAGS = (("both", "Both B and C"), ("b_only", "B only"), ("c_only", "C only"))
"""Reviewer agreement per criterion: one bar segment per kind of flag."""
COLOURS = {
    "Reviewer B": "#4C78A8",
    "Reviewer C": "#F58518",
    "Deterministic check": "#9D755D",
    "Both B and C": "#54A24B",
    "B only": "#4C78A8",
    "C only": "#F58518",
}
PANEL_COLOURS = {True: "#54A24B", False: "#F58518"}
"""Family pairs: two families green, one family orange."""
STATUS_COLOURS = {
    "shipped": "#54A24B",
    "resolved_shipped": "#88D27A",
    "escalated": "#F58518",
    "resolved_rejected": "#E45756",
    "sampled": "#B279A2",
}
STATUS_NAMES = {
    "shipped": "shipped (NICE)",
    "resolved_shipped": "shipped by a person",
    "escalated": "escalated",
    "resolved_rejected": "rejected by a person",
    "sampled": "batch sample, NAUGHTY",
}
TARGET_LINE = {"line_dash": "dash", "line_color": "#E45756", "line_width": 2}
GRAIN_TITLE = {"hour": "Hour (UTC)", "day": "Day (UTC)", "week": "Week (from Monday, UTC)", "month": "Month (UTC)"}


def label(text: object) -> str:
    """Text for a chart label with Plotly's markup disarmed.

    Why: Plotly renders a subset of HTML in labels, hover text and legends (`<a href>`, `<b>`), and
    categories and reviewer names are typed by people; look-alike angle brackets keep them text.
    """
    return str(text).replace("<", "‹").replace(">", "›")


# --- the charts ---------------------------------------------------------------------------------


def _usd_hover(amounts: object, after: str = "") -> dict:
    """A bar's hover with each amount written by `usd` (plotly's own number formats cannot say 4 significant
    figures under $1 and 2 decimals from $1: the hover would disagree with the page's figures)."""
    return {
        "customdata": [usd(float(a)) for a in amounts],  # type: ignore[attr-defined]
        "hovertemplate": "%{x}: %{customdata}" + after + "<extra></extra>",
    }


def _layout(fig: go.Figure, x_title: str, y_title: str, **extra: object) -> go.Figure:
    settings: dict[str, object] = {
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "height": 320,
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0, "traceorder": "normal"},
        **extra,
    }
    fig.update_layout(xaxis_title=x_title, yaxis_title=y_title, **settings)
    return fig


def _target(fig: go.Figure, value: float, text: str) -> None:
    """A dashed horizontal line at the method's target."""
    fig.add_hline(y=value, annotation_text=text, annotation_position="top left", **TARGET_LINE)


def _time_layout(fig: go.Figure, report: MetricsReport, y_title: str, **extra: object) -> go.Figure:
    """An over-time chart's layout: the x-axis ticks no finer than the buckets (`ui.metrics_axis`), bars a
    bucket wide."""
    _layout(fig, GRAIN_TITLE[report.grain], y_title, **extra)
    if report.series:
        fig.update_xaxes(**axis_settings(report.grain, report.series[0].bucket, report.series[-1].bucket))
        fig.update_traces(width=bar_width_ms(report.grain), selector={"type": "bar"})
    return fig


def _over_time(report: MetricsReport, column: str, name: str, y_title: str, hover: str) -> go.Figure:
    frame = series_frame(report)
    fig = go.Figure(
        go.Scatter(
            x=frame["bucket"], y=frame[column], name=name, mode="lines+markers", connectgaps=False, hovertemplate=hover
        )
    )
    return _time_layout(fig, report, y_title)


def first_pass_figure(report: MetricsReport) -> go.Figure:
    """First-pass rate per time bucket, with the 70 % target."""
    fig = _over_time(report, "first_pass_rate", "first-pass rate", "first-pass rate", "%{x}: %{y:.1%}<extra></extra>")
    fig.update_yaxes(tickformat=".0%", range=[0, 1.05])
    _target(fig, FIRST_PASS_TARGET, f"target > {FIRST_PASS_TARGET:.0%}")
    return fig


def iterations_figure(report: MetricsReport) -> go.Figure:
    """Mean iterations to converge per time bucket, with the 1.5 target."""
    fig = _over_time(
        report, "mean_iterations", "mean iterations", "mean round of NICE", "%{x}: %{y:.2f}<extra></extra>"
    )
    top = max([p.mean_iterations or 0 for p in report.series] + [ITERATIONS_TARGET])
    fig.update_yaxes(range=[0, top + 0.5])
    _target(fig, ITERATIONS_TARGET, f"target < {ITERATIONS_TARGET}")
    return fig


def rounds_figure(report: MetricsReport) -> go.Figure:
    """Finished runs by rounds used, one stacked bar segment per final status."""
    frame = rounds_frame(report)
    fig = go.Figure(
        [
            go.Bar(
                x=rows["rounds"],
                y=rows["runs"],
                name=label(STATUS_NAMES.get(status, status)),
                marker_color=STATUS_COLOURS.get(status),
            )
            for status, rows in frame.groupby("status", sort=True)
        ]
    )
    fig.update_xaxes(dtick=1)
    return _layout(fig, "rounds used", "finished runs", barmode="stack")


def _stacked_bars(
    frame: pd.DataFrame, axis: str, parts: tuple[tuple[str, str], ...], x_title: str, shown: str | None = None
) -> go.Figure:
    """Horizontal bars per `axis` value (the first row on top), one stacked segment per part; labelled by the
    `shown` column when given (a criterion's name), the `axis` value (its id) then in the hover and in each
    point's customdata (what a click picks)."""
    names = [label(v) for v in frame[shown or axis]]
    ids = [str(v) for v in frame[axis]]
    hover = "%{y} (" + axis + " %{customdata})" if shown else "%{y}"
    fig = go.Figure(
        [
            go.Bar(
                y=names,
                x=frame[column],
                name=name,
                orientation="h",
                marker_color=COLOURS[name],
                customdata=ids,
                hovertemplate=hover + ": %{x}<extra>" + name + "</extra>",
            )
            for column, name in parts
        ]
    )
    fig.update_yaxes(autorange="reversed", type="category")
    return _layout(fig, x_title, "", barmode="stack", height=max(240, 60 + 32 * len(frame)))


def criteria_figure(report: MetricsReport) -> go.Figure:
    """Failed checks per criterion, stacked by source (B, C, deterministic check); click a bar to drill down."""
    return _stacked_bars(criteria_frame(report), "criterion", SOURCES, "failed checks", shown="name")


def categories_figure(report: MetricsReport) -> go.Figure:
    """Failed checks per category, stacked by source."""
    return _stacked_bars(categories_frame(report), "category", SOURCES, "failed checks")


def agreement_figure(report: MetricsReport) -> go.Figure:
    """Per criterion flagged at least once: flagged by both, B only, C only (stacked)."""
    frame = agreement_frame(report)
    flagged = frame[(frame["both"] + frame["b_only"] + frame["c_only"]) > 0]
    return _stacked_bars(flagged, "criterion", FLAGS, "criterion results flagged (FAIL)", shown="name")


def escape_figure(report: MetricsReport) -> go.Figure:
    """Escape rate per time bucket, with the target 0."""
    fig = _over_time(report, "escape_rate", "escape rate", "escapes ÷ shipped runs", "%{x}: %{y:.1%}<extra></extra>")
    top = max([p.escape_rate or 0 for p in report.series] + [0.1])
    fig.update_yaxes(tickformat=".0%", range=[-0.02, top * 1.1])
    _target(fig, ESCAPE_TARGET, "target 0")
    return fig


def spend_figure(report: MetricsReport) -> go.Figure:
    """USD spent per time bucket (bars) and tokens (line, right axis)."""
    frame = series_frame(report)
    fig = go.Figure(
        [
            go.Bar(x=frame["bucket"], y=frame["cost_usd"], name="USD", **_usd_hover(frame["cost_usd"])),
            go.Scatter(
                x=frame["bucket"],
                y=frame["tokens"],
                name="tokens",
                yaxis="y2",
                mode="lines+markers",
                hovertemplate="%{x}: %{y:,} tokens<extra></extra>",
            ),
        ]
    )
    return _time_layout(
        fig, report, "USD", yaxis2={"title": "tokens", "overlaying": "y", "side": "right", "rangemode": "tozero"}
    )


def cost_split_figure(report: MetricsReport) -> go.Figure:
    """Where the money went: reviews and fixes, in USD."""
    h = report.headline
    fig = go.Figure(
        go.Bar(
            x=["reviews", "fixes"],
            y=[h.review_cost_usd, h.fix_cost_usd],
            name="USD",
            marker_color=["#4C78A8", "#B279A2"],
            **_usd_hover([h.review_cost_usd, h.fix_cost_usd]),
        )
    )
    return _layout(fig, "", "USD")


def cache_figure(report: MetricsReport) -> go.Figure:
    """Per time bucket: net cache savings in USD (bars, red below 0) and the cache hit rate (line, right axis)."""
    frame = series_frame(report)
    colours = ["#E45756" if v < 0 else "#54A24B" for v in frame["cache_savings_usd"]]
    fig = go.Figure(
        [
            go.Bar(
                x=frame["bucket"],
                y=frame["cache_savings_usd"],
                name="net savings (USD)",
                marker_color=colours,
                **_usd_hover(frame["cache_savings_usd"], " saved, net"),
            ),
            go.Scatter(
                x=frame["bucket"],
                y=frame["cache_hit_rate"],
                name="cache hit rate",
                yaxis="y2",
                mode="lines+markers",
                connectgaps=False,
                marker_color="#4C78A8",
                hovertemplate="%{x}: %{y:.1%} of review input read from the cache<extra></extra>",
            ),
        ]
    )
    fig.add_hline(y=0, line_color="#888888", line_width=1)
    return _time_layout(
        fig,
        report,
        "net savings (USD)",
        yaxis2={"title": "cache hit rate", "overlaying": "y", "side": "right", "tickformat": ".0%", "range": [0, 1.05]},
    )


def reviewer_cost_figure(report: MetricsReport) -> go.Figure:
    """USD spent per reviewer model (slots B and C together)."""
    frame = reviewers_frame(report)
    fig = go.Figure(
        go.Bar(
            x=[label(r) for r in frame["reviewer"]], y=frame["cost_usd"], name="USD", **_usd_hover(frame["cost_usd"])
        )
    )
    return _layout(fig, "reviewer", "USD")


def latency_figure(report: MetricsReport) -> go.Figure:
    """Mean and max seconds per answer of each reviewer model, and the mean round latency as a line."""
    frame = reviewers_frame(report)
    names = [label(r) for r in frame["reviewer"]]
    fig = go.Figure(
        [
            go.Bar(
                x=names, y=frame["mean_latency_s"], name="mean", hovertemplate="%{x}: %{y:.1f} s<extra>mean</extra>"
            ),
            go.Bar(x=names, y=frame["max_latency_s"], name="max", hovertemplate="%{x}: %{y:.1f} s<extra>max</extra>"),
        ]
    )
    if report.headline.mean_round_latency_s is not None:
        fig.add_hline(
            y=report.headline.mean_round_latency_s,
            line_dash="dot",
            line_color="#72B7B2",
            annotation_text=f"mean round {report.headline.mean_round_latency_s:.1f} s",
            annotation_position="top left",
        )
    return _layout(fig, "reviewer", "seconds", barmode="group")


def error_rate_figure(report: MetricsReport) -> go.Figure:
    """Share of answers that were errors or timeouts, per reviewer model."""
    frame = reviewers_frame(report)
    fig = go.Figure(
        go.Bar(
            x=[label(r) for r in frame["reviewer"]],
            y=frame["error_rate"],
            name="error rate",
            marker_color="#E45756",
            hovertemplate="%{x}: %{y:.1%}<extra></extra>",
        )
    )
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    return _layout(fig, "reviewer", "errors ÷ answers")


def families_figure(pairs: list[FamilyPairFigures]) -> go.Figure:
    """Escape rate per family pair (the table's order, first on top), two-family pairs apart by colour."""
    frame = families_frame(pairs)
    names = [label(p) for p in frame["pair"]]
    hover = [
        f"{p.escapes} escape{'s' if p.escapes != 1 else ''} on {p.shipped} shipped run{'s' if p.shipped != 1 else ''}"
        for p in pairs
    ]
    fig = go.Figure(
        go.Bar(
            y=names,
            x=frame["escape_rate"],
            orientation="h",
            name="escape rate",
            marker_color=[PANEL_COLOURS[bool(t)] for t in frame["two_families"]],
            customdata=hover,
            hovertemplate="%{y}: %{x:.1%} (%{customdata})<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(tickformat=".0%", rangemode="tozero")
    return _layout(fig, "escapes ÷ shipped runs", "", height=max(200, 60 + 32 * len(frame)), showlegend=False)


# --- empty charts -------------------------------------------------------------------------------

REVIEW_PAGE = "Start one on the Review page."
EMPTY: dict[str, tuple[str, bool]] = {
    "first_pass": (
        "No run in this view has finished yet, so there is no first-pass rate: it appears once a run "
        f"ships or escalates. {REVIEW_PAGE}",
        True,
    ),
    "iterations": (
        "No run in this view has reached NICE yet, so there are no iterations to count. Runs that ship "
        "appear here with the round they passed in.",
        True,
    ),
    "rounds": (
        f"No run in this view has finished yet: the rounds each run used appear once it ends. {REVIEW_PAGE}",
        True,
    ),
    "escapes": (
        "No run in this view has shipped yet, so there is no escape rate (escapes ÷ shipped runs). Once runs "
        "ship, report a defect found later on the run's page (Review).",
        True,
    ),
    "spend": (
        "Nothing spent in this view yet: spend and tokens appear once a reviewer or the fix agent answers. "
        f"{REVIEW_PAGE}",
        False,
    ),
    "cost": (
        "Nothing spent on reviews or fixes in this view yet: costs appear once a reviewer or the fix agent answers.",
        False,
    ),
    "reviewer_cost": (
        "No reviewer model has cost anything in this view yet: costs appear once a model reviewer "
        "answers (a person's review costs nothing here).",
        False,
    ),
    "latency": (f"No reviewer has answered in this view yet, so there is no latency to show. {REVIEW_PAGE}", True),
    "errors": (f"No reviewer has answered in this view yet, so there is no error rate. {REVIEW_PAGE}", True),
    "agreement": (
        "Neither reviewer flagged any criterion in this view: nothing to compare yet. Criteria one or "
        "both reviewers FAIL appear here.",
        False,
    ),
}
"""chart name → (what to do when it has nothing to draw, whether zeros are data). With nothing to draw
Plotly shows bare axes from −1 to 6; the page shows the sentence instead."""
NO_CRITERIA = (
    "No criterion has been judged in this view yet: agreement and κ appear once both reviewers have "
    f"answered a round. {REVIEW_PAGE}"
)
NO_REVIEWERS = f"No reviewer has answered in this view yet. {REVIEW_PAGE}"


def _values(trace: object) -> list[object]:
    """The values a trace plots: y, or x for a horizontal bar."""
    axis = "x" if getattr(trace, "orientation", None) == "h" else "y"
    values = getattr(trace, axis, None)
    return [] if values is None else list(values)


def has_data(fig: go.Figure, zeros: bool = True) -> bool:
    """Whether any trace plots a value (not blank; with `zeros=False`, not 0 either). Target lines are
    shapes, not traces: a chart of only its target has no data."""
    for trace in fig.data:
        for value in _values(trace):
            if value is None or (isinstance(value, float) and value != value):
                continue
            if zeros or value != 0:
                return True
    return False


def empty_message(name: str, fig: go.Figure) -> str | None:
    """What the page shows instead of the chart `name` when it has nothing to draw; None when it has."""
    message, zeros = EMPTY.get(name, ("No data in this view yet.", True))
    return None if has_data(fig, zeros) else message
