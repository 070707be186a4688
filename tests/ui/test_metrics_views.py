"""The Metrics page's views: charts with nothing to draw say what to do, and the open tab and the drill-down
live in the URL (restored from a link, written back after every change).

The seeded history is the one of `tests/ui/test_metrics_page.py` (six runs; r2 and r3 failed
factual_accuracy, r3 also brand_voice, category compliance).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import make_url

from santa_core import words
from santa_core.models import RunStatus
from santa_core.rubrics.library import load_builtin
from storage.metrics import FailedRun
from storage.runs import RunStore
from tests.core.run.test_runner import GOOD, SPEC
from tests.ui import test_metrics_page as page
from tests.ui.test_app import plain, texts
from tests.ui.test_metrics_page import HAIKU, OPUS, SONNET, History, open_metrics
from ui import metric_figures as figs
from ui.metrics_tables import failed_runs_frame, status_help
from ui.metrics_tabs import TABS
from ui.metrics_url import DRILL_CATEGORY, DRILL_CRITERION, TAB_KEY, VIEW_PARAMS, restore, tab_from_query, view_to_query
from ui.metrics_url import TABS as URL_TABS

history, seeded = page.history, page.seeded  # the fixtures (an imported name would trip ruff's F811)

EMPTY_TABS = {
    "Quality": ["first_pass", "iterations", "rounds"],
    "Reviewer agreement": ["agreement"],
    "Escapes": ["escapes"],
    "Cost": ["spend", "cost", "reviewer_cost"],
    "Reviewers": ["latency", "errors"],
}
"""Each tab's charts that have nothing to draw while the only run is still queued."""


def view(at) -> dict:
    """The URL parameters of the open tab and the drill-down."""
    return {k: v for k, v in at.query_params.items() if k in VIEW_PARAMS}


def open_tab(at, tab: str):
    """A click on a tab, as the stateful tabs report it."""
    at.session_state[TAB_KEY] = tab
    at.run()
    assert not at.exception, at.exception
    return at


# --- empty states -------------------------------------------------------------------------------


def test_every_chart_with_nothing_to_draw_says_what_to_do(desk_env: RunStore) -> None:
    desk_env.create_run(
        spec=SPEC, output=GOOD, rubric=load_builtin("general"), reviewer_b=SONNET, reviewer_c=HAIKU, fixer=OPUS
    )  # queued: nothing finished, reviewed or spent yet
    at = open_metrics()
    for tab, charts in EMPTY_TABS.items():
        open_tab(at, tab)
        assert not at.get("plotly_chart"), tab  # no blank axes from −1 to 6
        shown = [plain(i.value) for i in at.info]
        for chart in charts:
            assert figs.EMPTY[chart][0] in shown, (tab, chart)
    open_tab(at, "Reviewer agreement")
    assert figs.NO_CRITERIA in [plain(i.value) for i in at.info]
    open_tab(at, "Quality")
    assert "Start one on the Review page" in texts(at)


# --- the URL ------------------------------------------------------------------------------------


def test_a_link_opens_its_tab_and_drill_down(seeded: History) -> None:
    r = seeded.runs
    at = open_metrics({"tab": "failures", "criterion": "factual_accuracy", "rubric": "general"})
    assert at.session_state[TAB_KEY] == "Failure taxonomy"
    assert at.selectbox(key=DRILL_CRITERION).value == "factual_accuracy"
    assert at.dataframe[1].value["run"].tolist() == [f"./review?run={r['r2']}"]  # it follows the link's filters too
    assert view(at) == {"tab": "failures", "criterion": "factual_accuracy"}

    at = open_metrics({"tab": "Failure taxonomy", "category": "compliance"})  # a tab's label works too
    assert at.selectbox(key=DRILL_CATEGORY).value == "compliance" and at.selectbox(key=DRILL_CRITERION).value is None
    assert at.dataframe[1].value["run"].tolist() == [f"./review?run={r['r3']}"]
    assert view(at) == {"tab": "failures", "category": "compliance"}  # written as the page names it

    at = open_metrics({"tab": "escapes"})
    assert at.session_state[TAB_KEY] == "Escapes" and "1 escape on 1 of 4 shipped runs" in texts(at)
    assert "An escape is a defect found after the output shipped" in texts(at)  # the word is explained where shown


def test_picking_a_tab_and_a_bar_is_written_to_the_url_and_a_link_restores_it(seeded: History) -> None:
    at = open_metrics({"rubric": "general", "run": "7"})
    assert view(at) == {}  # the first tab is the default: no parameter
    open_tab(at, "Reviewer agreement")
    assert view(at) == {"tab": "agreement"}
    open_tab(at, "Failure taxonomy")
    assert view(at) == {"tab": "failures"}
    at.selectbox(key=DRILL_CRITERION).set_value("factual_accuracy").run()
    assert view(at) == {"tab": "failures", "criterion": "factual_accuracy"}
    shared = dict(at.query_params)
    assert shared["rubric"] == "general" and shared["run"] == "7"  # the filters stay; others are left alone

    again = open_metrics(shared)  # the link opens the same view
    assert again.session_state[TAB_KEY] == "Failure taxonomy"
    assert again.dataframe[0].value.equals(at.dataframe[0].value)

    at.selectbox(key=DRILL_CRITERION).set_value(None)
    at.selectbox(key=DRILL_CATEGORY).set_value("factual accuracy").run()
    assert view(at) == {"tab": "failures", "category": "factual accuracy"}
    open_tab(at, "Cost")
    assert view(at) == {"tab": "cost"}  # the drill-down is not shown: not in the URL either
    open_tab(at, "Quality")
    assert view(at) == {} and at.query_params["rubric"] == "general"


def test_a_link_to_a_tab_or_bar_that_is_not_there_is_named(seeded: History) -> None:
    at = open_metrics({"tab": "nope"})
    assert "tab=nope is not one of quality, failures, agreement, escapes, cost, reviewers" in plain(at.info[0].value)
    assert at.session_state[TAB_KEY] == "Quality" and view(at) == {}
    at = open_metrics({"tab": "failures", "criterion": "completeness"})  # no check of it failed
    assert "The link picks criterion Completeness, but no check of it failed in this view" in texts(at)
    assert at.selectbox(key=DRILL_CRITERION).value is None and view(at) == {"tab": "failures"}


def test_view_params_round_trip() -> None:
    assert list(URL_TABS) == list(TABS)  # every tab has its name in the URL
    for label, name in URL_TABS.items():
        params = view_to_query(label, "factual_accuracy", None)
        state: dict = {}
        assert restore(state, params) == []
        assert state.get(TAB_KEY, "Quality") == label and params.get("tab", "quality") == name
        if label == "Failure taxonomy":
            assert params == {"tab": "failures", "criterion": "factual_accuracy"}
            assert (state[DRILL_CRITERION], state[DRILL_CATEGORY]) == ("factual_accuracy", None)
        else:
            assert "criterion" not in params  # a pick is in the URL only with its tab
    problems: list[str] = []
    assert tab_from_query({"tab": ["cost", "REVIEWERS"]}, problems) == "Reviewers" and problems == []
    assert tab_from_query({}, problems) is None and problems == []


@pytest.mark.parametrize("tab", [None, "Quality"])
def test_the_default_tab_is_left_out(tab: str | None) -> None:
    assert view_to_query(tab, None, None) == {}


# --- the drill-down's statuses --------------------------------------------------------------------

CODES = {s.value for s in RunStatus} - {words.status(s) for s in RunStatus}
"""The status codes that read differently from their words (`awaiting_approval`, `resolved_shipped`, ...)."""


@pytest.fixture
def restated(history: History, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[History]:
    """A copy of the seeded history where r3 waits for a fix's approval and r2 was shipped by a person."""
    copy = tmp_path / "restated.db"
    with sqlite3.connect(make_url(history.url).database) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)  # the whole database, what is still in the write-ahead log too
        for run, status in (
            (history.runs["r3"], RunStatus.AWAITING_APPROVAL),
            (history.runs["r2"], RunStatus.RESOLVED_SHIPPED),
        ):
            for table, key in (("run", "id"), ("run_metric", "run_id")):
                assert dst.execute(f"UPDATE {table} SET status = ? WHERE {key} = ?", (status.value, run)).rowcount == 1
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{copy}")
    st.cache_resource.clear()
    yield history
    st.cache_resource.clear()


def test_the_runs_behind_a_bar_show_their_status_in_words_and_the_code_in_the_tooltip(restated: History) -> None:
    at = open_metrics({"tab": "failures", "criterion": "factual_accuracy"})
    table = at.dataframe[1].value
    assert table["run"].tolist() == [f"./review?run={restated.runs[k]}" for k in ("r3", "r2")]
    assert table["status"].tolist() == ["waiting for approval of the fix", "shipped by a person"]
    cells = {str(v) for v in table.to_numpy().ravel()}
    assert not cells & CODES and not {"awaiting_approval", "resolved_shipped"} & cells
    tooltip = json.loads(at.dataframe[1].proto.columns)["status"]["help"]
    assert "waiting for approval of the fix = `awaiting_approval`" in tooltip
    assert "shipped by a person = `resolved_shipped`" in tooltip


def test_no_status_code_is_shown_raw_in_the_drill_down_table() -> None:
    runs = [
        FailedRun(
            run_id=i,
            day=date(2025, 1, 6),
            rubric="general@1",
            status=s.value,
            rounds_failed=1,
            b_fail=1,
            c_fail=0,
            check_fail=0,
        )
        for i, s in enumerate(RunStatus, start=1)
    ]
    runs.append(
        FailedRun(
            run_id=99,
            day=date(2025, 1, 6),
            rubric="general@1",
            status="",
            rounds_failed=1,
            b_fail=0,
            c_fail=0,
            check_fail=1,
        )
    )  # a run without facts yet
    shown = failed_runs_frame(runs)["status"].tolist()
    assert shown == [words.status(s) for s in RunStatus] + [""]
    assert not set(shown) & CODES
    assert not [cell for cell in shown for code in CODES if "_" in code and code in cell]  # not even within words
    assert all(f"= `{s.value}`" in status_help(runs) for s in RunStatus)
