"""The Metrics page's headline: the figure cards (written as the command line writes them), the warnings, and
the one JSON export of every figure in the view."""

from __future__ import annotations

import streamlit as st

from santa_core.reports.metrics import MetricsReport, headline_rows
from santa_core.reports.metrics_cache import NoteKind
from santa_core.reports.metrics_cache import cache_note as _cache_note
from santa_core.reports.metrics_words import DEFINITIONS, HEADLINE, format_figure
from santa_core.reports.spot_figures import ConfidenceFigures, document
from ui.safe import escape_markdown

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
CACHE_CARDS = ("cache_hit_rate", "cache_savings_usd")
"""The cards whose help says what the view's cache figures mean."""


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


def metric_rows(items: list[tuple[str, str, str]]) -> None:
    """Figure cards, PER_ROW to a row (every row as wide: a card's width does not depend on how many follow)."""
    for start in range(0, len(items), PER_ROW):
        for column, (label, value, help_text) in zip(st.columns(PER_ROW), items[start : start + PER_ROW], strict=False):
            column.metric(label, value, help=help_text)


def figure_cards(report: MetricsReport) -> dict[str, tuple[str, str, str]]:
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
    items = list(figure_cards(report).values())
    metric_rows(items[:PRIMARY])
    with st.expander("More figures: counts, spend, tokens, latency, errors"):
        metric_rows(items[PRIMARY:])


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
