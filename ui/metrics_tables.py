"""The Metrics page's tables (pure frames and their column settings), and `table`, which fits one to the page.

Each table fits the main area of a 1,024 px window (`ui.table_fit`): a column is left out here only when it is in
the chart or the CSV beside the table.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from santa_core import words
from santa_core.models import RunStatus
from santa_core.reports.metrics import LOW_KAPPA, MIN_PAIRS, MetricsReport
from santa_core.reports.metrics_families import FamilyPairFigures
from santa_core.reports.metrics_words import format_figure
from storage.metrics import FailedRun
from ui import components, table_fit
from ui import metric_frames as frames


def status_words(code: str) -> str:
    """A run's status in words, as the Runs list shows it; "" for a run with no facts yet."""
    if not code:
        return ""
    try:
        status = RunStatus(code)
    except ValueError:  # a status this version has no words for: readable, never raw
        return words.status(code)
    return words.status(status)


def status_help(runs: list[FailedRun]) -> str:
    """The status column's tooltip: where each run stands now, and the stored codes behind the words."""
    return "Where the run stands now. The stored codes (JSON record, command line):  \n" + words.legend(
        words.STATUS, [r.status for r in runs if r.status]
    )


def failed_runs_frame(runs: list[FailedRun]) -> pd.DataFrame:
    """The runs behind a bar as a table, each run's number the link that opens it; statuses in words (codes in
    the column's tooltip, `status_help`)."""
    rows = [
        {
            "run": f"./review?run={r.run_id}",
            "day": r.day.isoformat(),
            "rubric": r.rubric,
            "status": status_words(r.status),
            "rounds": r.rounds_failed,
            "B": r.b_fail,
            "C": r.c_fail,
            "check": r.check_fail,
        }
        for r in runs
    ]
    return pd.DataFrame(rows, columns=["run", "day", "rubric", "status", "rounds", "B", "C", "check"])


SOURCE_COLUMNS = {
    "B": st.column_config.NumberColumn("B", help="Failed by reviewer B."),
    "C": st.column_config.NumberColumn("C", help="Failed by reviewer C."),
    "check": st.column_config.NumberColumn("check", help="Failed by the criterion's deterministic check."),
}
"""The failure counts by source, in the failed criteria's table and the runs behind a bar."""
FAILED_RUNS_COLUMNS = {
    "rounds": st.column_config.NumberColumn("rounds", help="Rounds in which the run failed what was picked."),
    **SOURCE_COLUMNS,
}


def table(frame: pd.DataFrame, config: dict | None = None, wide: tuple[str, ...] = (), **select: Any) -> Any:
    """A table whose columns fit the page at 1,024 px (`ui.table_fit`), every row shown; a table whose rows can be
    picked (`select`: key, on_select, selection_mode) leaves room for the box at the start of each row."""
    room = table_fit.PAGE_PX - (table_fit.MARKER_PX if select else 0)
    fitted = table_fit.fit(frame, room, wide=wide, labels=components.labels_of(config))
    return st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        height="content",
        row_height=fitted.row_height,
        column_config=components.fitted_config(fitted, config),
        **select,
    )


def kappa_table(report: MetricsReport) -> pd.DataFrame:
    """Agreement and Cohen's kappa per criterion, written as the headline writes them; criteria by their names
    (their ids, categories and unscored results are in the CSV, so that the table fits the page at 1,024 px)."""
    names = frames.criterion_names(report)
    rows = [
        {
            "criterion": names[c.criterion],
            "pairs": c.pairs,
            "both": c.both,
            "B only": c.b_only,
            "C only": c.c_only,
            "agreement": format_figure(c.agreement, "rate"),
            "κ": format_figure(c.kappa, "kappa"),
            "tighten": "yes" if c.low_agreement else "",
        }
        for c in report.criteria
    ]
    return pd.DataFrame(rows, columns=["criterion", "pairs", "both", "B only", "C only", "agreement", "κ", "tighten"])


KAPPA_COLUMNS = {
    "tighten": st.column_config.TextColumn(
        "tighten",
        help=f"κ below {LOW_KAPPA:g} over at least {MIN_PAIRS} pairs: the two reviewers read this criterion "
        "differently; tighten its pass condition and fail signal.",
    )
}


def family_table(pairs: list[FamilyPairFigures]) -> pd.DataFrame:
    """Runs, agreement, kappa and escape rate per family pair, written as the headline writes them (escapes and
    whether the pair is of two families are in the CSV and the chart, so that the table fits the page)."""
    rows = [
        {
            "family pair": p.pair,
            "runs": p.runs,
            "pairs": p.pairs,
            "agreement": format_figure(p.agreement, "rate"),
            "κ": format_figure(p.kappa, "kappa"),
            "shipped": p.shipped,
            "escape rate": format_figure(p.escape_rate, "rate"),
        }
        for p in pairs
    ]
    return pd.DataFrame(rows, columns=["family pair", "runs", "pairs", "agreement", "κ", "shipped", "escape rate"])


def reviewers_table(report: MetricsReport) -> pd.DataFrame:
    """Per reviewer model, written as the headline writes figures."""
    rows = [
        {
            "reviewer": r.reviewer,
            "answers": r.reviews,
            "errors": r.errors,
            "error rate": format_figure(r.error_rate, "rate"),
            "mean": format_figure(r.mean_latency_s, "seconds"),
            "max": format_figure(r.max_latency_s, "seconds"),
            "cost": format_figure(r.cost_usd, "usd"),
        }
        for r in report.reviewers
    ]
    return pd.DataFrame(rows, columns=["reviewer", "answers", "errors", "error rate", "mean", "max", "cost"])


REVIEWER_COLUMNS = {
    "mean": st.column_config.TextColumn("mean", help="Mean seconds per answer (latency)."),
    "max": st.column_config.TextColumn("max", help="Longest answer, in seconds (latency)."),
}
