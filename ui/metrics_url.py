"""The Metrics page's URL: the filters, the open tab and the drill-down, read when the page opens and
written after every change, so a link shares the view (`?rubric=general&tab=failures&criterion=brand_voice`).

Pure functions turn parameters into a view and back (`filters_from_query`, `filters_to_query`,
`tab_from_query`, `drill_from_query`, `view_to_query`); `restore` and `write` move the tab and the
drill-down between the URL and the widgets' session state (`ui.metrics_filters` does the same for the filters).
Why by hand and not `bind="query-params"`: see `ui.metrics_filters`.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from datetime import date
from typing import Any, cast, get_args

from santa_core.reports.metrics import Grain, MetricsFilter, parse_version
from storage.metrics import MetricsOptions

LISTS = {"rubric": "rubrics", "version": "versions", "domain": "domains", "reviewer": "reviewers", "person": "people"}
"""URL parameter → the MetricsFilter (and MetricsOptions) field of each multi-valued filter."""
PARAMS = ("since", "until", *LISTS, "grain")
"""Every URL parameter the page reads and writes; any other parameter is left alone."""
GRAINS = ("auto", *get_args(Grain))
EARLIEST, LATEST = date(2000, 1, 1), date(2100, 12, 31)
"""The date inputs' bounds; a date in the URL outside them is ignored."""

QueryParams = Mapping[str, str | Sequence[str]]
"""Query parameters as `st.query_params` / `AppTest.query_params` hold them: one value or several."""


# --- URL ↔ filters (pure) -----------------------------------------------------------------------


def _values(params: QueryParams, name: str) -> list[str]:
    """Every non-blank value of a parameter, in order, without repeats."""
    raw = params.get(name) or []
    items = [raw] if isinstance(raw, str) else list(raw)
    return list(dict.fromkeys(v.strip() for v in items if v and v.strip()))


def _day(params: QueryParams, name: str, problems: list[str]) -> date | None:
    """A YYYY-MM-DD parameter (the last one when repeated); None and a problem when unusable."""
    values = _values(params, name)
    if not values:
        return None
    text = values[-1]
    try:
        day = date.fromisoformat(text)
    except ValueError:
        problems.append(f"{name}={text} is not a date written YYYY-MM-DD; ignored.")
        return None
    if not EARLIEST <= day <= LATEST:
        problems.append(f"{name}={text} is outside {EARLIEST.year}–{LATEST.year}; ignored.")
        return None
    return day


def _listed(params: QueryParams, name: str, known: Sequence[str] | None, problems: list[str]) -> list[str]:
    """The usable values of a multi-valued parameter; those that match nothing in the history are named.

    Why they are kept: a shared link to `?rubric=acme` opened on a history without acme must show
    no run, not every run (the command line's `--rubric acme` shows none either).
    """
    values = _values(params, name)
    if name == "version":
        malformed = [v for v in values if parse_version(v) is None]
        if malformed:
            problems.append(f"version {', '.join(malformed)} is not written name@N; ignored.")
        values = [v for v in values if v not in malformed]
    unknown = [] if known is None else [v for v in values if v not in known]
    if unknown:
        problems.append(f"no run in the history has {name} {', '.join(unknown)}: nothing matches it.")
    return values


def _grain(params: QueryParams, problems: list[str]) -> Grain | None:
    """The time buckets asked for (None: auto); a problem when the value is not one of them."""
    values = _values(params, "grain")
    if not values or values[-1] == "auto":
        return None
    if values[-1] not in GRAINS:
        problems.append(f"grain={values[-1]} is not one of {', '.join(GRAINS)}; auto is used.")
        return None
    return cast("Grain", values[-1])


def filters_from_query(
    params: QueryParams, options: MetricsOptions | None = None
) -> tuple[MetricsFilter, Grain | None, list[str]]:
    """(filters, grain, problems) from URL parameters; what is unusable is left out and named in problems.

    With `options`, values that match nothing in the history are named in problems too (they
    stay in the filters). Parameters the page does not own are ignored.
    """
    problems: list[str] = []
    since, until = _day(params, "since", problems), _day(params, "until", problems)
    if since and until and since > until:
        problems.append(f"since {since} is after until {until}: no run can match.")
    lists = {
        field: _listed(params, name, None if options is None else getattr(options, field), problems)
        for name, field in LISTS.items()
    }
    return MetricsFilter(since=since, until=until, **lists), _grain(params, problems), problems


def filters_to_query(f: MetricsFilter, grain: Grain | None) -> dict[str, str | list[str]]:
    """URL parameters of a view: dates as YYYY-MM-DD, several values as repeated parameters; defaults left out."""
    out: dict[str, str | list[str]] = {}
    if f.since:
        out["since"] = f.since.isoformat()
    if f.until:
        out["until"] = f.until.isoformat()
    for name, field in LISTS.items():
        if values := list(getattr(f, field)):
            out[name] = values
    if grain:
        out["grain"] = grain
    return out


# --- the open tab and the drill-down ---------------------------------------------------------------

TAB_KEY, DRILL_CRITERION, DRILL_CATEGORY = "metrics_tab", "metrics_drill_criterion", "metrics_drill_category"
"""Session-state keys of the tabs and of the drill-down's two pickers."""
TABS = {
    "Quality": "quality",
    "Failure taxonomy": "failures",
    "Reviewer agreement": "agreement",
    "Escapes": "escapes",
    "Cost": "cost",
    "Reviewers": "reviewers",
}
"""Each tab's label → its name in the URL (`?tab=failures`); the first is the default, left out of the URL."""
DRILL_TAB = "Failure taxonomy"
"""The tab the drill-down lives in: its picks are in the URL only while it is open."""
VIEW_PARAMS = ("tab", "criterion", "category")
"""The URL parameters of the open tab and the drill-down."""
FROM_URL = "metrics_drill_from_url"
"""Session-state key: the drill-down picks the link asked for (named on the page when the view has no such bar)."""


def tab_from_query(params: QueryParams, problems: list[str]) -> str | None:
    """The label of the tab the URL names (by its URL name or its label, any case); None: the default."""
    values = _values(params, "tab")
    if not values:
        return None
    wanted = values[-1].casefold()
    for label, name in TABS.items():
        if wanted in (name, label.casefold()):
            return label
    problems.append(f"tab={values[-1]} is not one of {', '.join(TABS.values())}; {next(iter(TABS))} is shown.")
    return None


def drill_from_query(params: QueryParams) -> tuple[str | None, str | None]:
    """(criterion, category) the URL picks in the drill-down; None where it picks none."""
    criterion, category = _values(params, "criterion"), _values(params, "category")
    return (criterion[-1] if criterion else None), (category[-1] if category else None)


def view_to_query(tab: str | None, criterion: str | None, category: str | None) -> dict[str, str]:
    """URL parameters of the open tab and the drill-down: the default tab left out, picks only in their tab."""
    out: dict[str, str] = {}
    if tab in TABS and tab != next(iter(TABS)):
        out["tab"] = TABS[tab]
    if tab == DRILL_TAB:
        out.update({k: v for k, v in (("criterion", criterion), ("category", category)) if v is not None})
    return out


def restore(state: MutableMapping[str, Any], params: QueryParams) -> list[str]:
    """When the page opens: the tab and the drill-down picks from the URL into session state; the problems.

    A URL without a tab leaves the tab as it is (the first, unless something already chose one).
    """
    problems: list[str] = []
    if (tab := tab_from_query(params, problems)) is not None:
        state[TAB_KEY] = tab
    criterion, category = drill_from_query(params)
    if criterion is not None or category is not None:
        state[DRILL_CRITERION], state[DRILL_CATEGORY] = criterion, category
        state[FROM_URL] = (criterion, category)
    return problems


def write(state: Mapping[str, Any], url: MutableMapping[str, Any]) -> None:
    """Make the URL's tab and drill-down parameters say what the widgets say (others are left alone)."""
    wanted = view_to_query(state.get(TAB_KEY), state.get(DRILL_CRITERION), state.get(DRILL_CATEGORY))
    for name in VIEW_PARAMS:
        if name not in wanted:
            if name in url:
                del url[name]
        elif url.get(name) != wanted[name]:
            url[name] = wanted[name]
