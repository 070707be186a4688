"""The Metrics page's filters, kept in the URL, and what the page shows when there is nothing to measure.

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

from dataclasses import dataclass

import streamlit as st

from santa_core.reports.metrics import Grain, MetricsFilter
from storage.metrics import MetricsOptions
from ui import identity
from ui import metrics_url as url_state
from ui.metrics_url import (
    DRILL_CATEGORY,
    DRILL_CRITERION,
    EARLIEST,
    GRAINS,
    LATEST,
    LISTS,
    PARAMS,
    filters_from_query,
    filters_to_query,
)
from ui.safe import escape_markdown

GRAIN_LABEL = {"auto": "auto", "hour": "hour", "day": "day", "week": "week", "month": "month"}
"""Short enough for the box at 1,024 px; the help says what auto picks and that weeks start on Monday."""
KEY = {p: f"metrics_{p}" for p in PARAMS}
"""Session-state key of each filter widget."""

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
