"""The Metrics page's drill-down: a failure bar (or a row of the criteria's table) clicked, or a criterion and a
category picked, lists the runs in the view that failed it, each opened by its link."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from santa_core.reports.metrics import MetricsFilter, MetricsReport
from ui import app_desk
from ui import metric_frames as frames
from ui.metrics_tables import FAILED_RUNS_COLUMNS, SOURCE_COLUMNS, failed_runs_frame, status_help, table
from ui.metrics_url import DRILL_CATEGORY, DRILL_CRITERION, FROM_URL
from ui.run_list import RUN_LINK
from ui.safe import escape_markdown

DRILL_LIMIT = 200
"""At most this many runs are listed behind a bar (the newest)."""


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


CRITERIA_TABLE = "metrics_criteria_table"
"""The failed criteria's table: a row picked is a criterion picked in the drill-down, as a click on its bar."""


def criteria_table(report: MetricsReport) -> dict[str, Any]:
    """The failed criteria as a table whose rows can be picked (a bigger target than a bar's segment); the pick
    as a bar click reads (`picked_bar`: the criterion's id as the point's customdata)."""
    frame = frames.criteria_frame(report)
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
