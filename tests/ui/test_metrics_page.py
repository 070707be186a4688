"""The Metrics page, driven like a person would: filters, the URL, drill-down, exports, empty states.

One history is seeded per module by the real runner with reviewer doubles that report cost,
tokens and latency, then moved onto fixed creation days so the date filters and the time buckets
have exact answers:

| run | day        | rubric    | domain  | B / C           | how it went                                   | by     |
|-----|------------|-----------|---------|-----------------|-----------------------------------------------|--------|
| r1  | 2025-01-06 | general@1 | general | sonnet / haiku  | NICE in round 1                               | local  |
| r2  | 2025-01-07 | general@1 | general | sonnet / haiku  | both FAIL factual_accuracy, ann approves the fix, NICE in round 2; generation cost $0.05 | local |
| r3  | 2025-01-20 | content@1 | content | opus / fable    | B alone FAILs factual_accuracy, C alone brand_voice: escalated at the cap | editor |
| r4  | 2025-01-20 | content@1 | content | opus / fable    | NICE in round 1, then an escape               | editor |
| r5  | 2025-02-03 | general@2 | general | sonnet / haiku  | NICE in round 1                               | local  |
| r6  | 2025-02-03 | general@1 | general | opus / fable    | fable times out: escalated                    | editor |
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from sqlalchemy import text
from streamlit.runtime.media_file_storage import MediaFileKind
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from desk import calibration
from santa_core.models import LLMCall, ReviewOutcome, ReviewStatus, RunStatus, Usage
from santa_core.reports.metrics import MetricsFilter, MetricsReport, build_report, headline_rows
from santa_core.reports.metrics_words import format_figure
from santa_core.reports.spot_figures import document
from santa_core.reviewers.base import PERSON, ReviewRequest
from santa_core.reviewers.doubles import FunctionReviewer, failing, passing
from santa_core.rubrics.library import load_builtin
from santa_core.run import actions
from storage.metric_facts import backfill
from storage.metrics import FailedRun, MetricsOptions
from storage.runs import RunStore
from storage.startup import init_db
from tests.cli.test_rubric import err, out, santa
from tests.conftest import grant
from tests.core.run.test_runner import BAD, GOOD, SPEC, make_runner, strict
from tests.ui.test_app import plain, texts
from tests.ui.test_signin import AUTH
from ui import metric_frames as frames
from ui.metrics_drill import picked_bar
from ui.metrics_headline import report_json
from ui.metrics_tables import failed_runs_frame, kappa_table, reviewers_table
from ui.metrics_tabs import TABS
from ui.metrics_url import DRILL_CATEGORY, DRILL_CRITERION, PARAMS, filters_from_query, filters_to_query
from ui.run_list import RUN_LINK

SONNET, HAIKU, OPUS, FABLE = "claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5", "claude-fable-5-1"
EDITOR = "editor@example.com"
SLOW = "Acme launched its rocket in 2018, slowly."
"""An output the fable double times out on."""


class Costed(FunctionReviewer):
    """A reviewer double whose answers cost money, use tokens (some from the cache) and take time."""

    def __init__(self, name: str, fn, cost: float, latency: float) -> None:
        super().__init__(name, fn)
        self.cost, self.latency = cost, latency

    def review(self, request: ReviewRequest, slot) -> ReviewOutcome:
        out = super().review(request, slot)
        ok = out.status == ReviewStatus.OK
        calls = (
            [
                LLMCall(
                    purpose="review",
                    model=self.name,
                    request={},
                    cost_usd=self.cost,
                    usage=Usage(input_tokens=1000, output_tokens=100, cache_read_input_tokens=500),
                )
            ]
            if ok
            else []
        )
        return out.model_copy(update={"latency_s": self.latency, "cost_usd": self.cost if ok else 0.0, "calls": calls})


@dataclass
class History:
    url: str
    repo: RunStore
    runs: dict[str, int]


def fable(request: ReviewRequest):
    """Times out on SLOW; on a wrong year fails brand voice instead (so B and C disagree twice on r3)."""
    if "slowly" in request.output:
        return ReviewStatus.TIMEOUT
    if "2019" in request.output and "brand_voice" in request.rubric.criterion_ids():
        return failing(request, "brand_voice", "not the brand's voice")
    return passing(request)


def seed(repo: RunStore) -> dict[str, int]:
    """The six runs of the module docstring, on their days."""
    reviewers = {
        SONNET: Costed(SONNET, strict, 0.01, 2.0),
        HAIKU: Costed(HAIKU, strict, 0.002, 1.0),
        OPUS: Costed(OPUS, strict, 0.02, 4.0),
        FABLE: Costed(FABLE, fable, 0.03, 3.0),
    }
    runner, _ = make_runner(repo, reviewers)
    general, content = load_builtin("general"), repo.rubrics.resolved("content")
    pair1 = {"reviewer_b": SONNET, "reviewer_c": HAIKU, "fixer": "fixer"}
    pair2 = {"reviewer_b": OPUS, "reviewer_c": FABLE, "fixer": "fixer"}

    def run(output: str, rubric, pair: dict, **kw) -> int:
        run_id = repo.create_run(spec=SPEC, output=output, rubric=rubric, **pair, **kw)
        runner.execute(run_id)
        return run_id

    runs = {"r1": run(GOOD, general, pair1), "r2": run(BAD, general, pair1, generation_cost_usd=0.05)}
    actions.approve_fix(repo, runs["r2"], "ann", GOOD, "year fixed")
    assert runner.execute(runs["r2"]).status == RunStatus.SHIPPED
    runs["r3"] = run(BAD, content, pair2, max_rounds=1, created_by=EDITOR)
    runs["r4"] = run(GOOD, content, pair2, created_by=EDITOR)
    repo.report_escape(runs["r4"], "factual_accuracy", "the year was wrong after all", "major", "ann")
    runs["r5"] = run(GOOD, general.model_copy(update={"version": 2}), pair1)
    runs["r6"] = run(SLOW, general, pair2, created_by=EDITOR)
    days = dict(
        zip(
            runs.values(),
            ["2025-01-06", "2025-01-07", "2025-01-20", "2025-01-20", "2025-02-03", "2025-02-03"],
            strict=True,
        )
    )
    # A run's day is fixed when it is created, so move the runs and rebuild their facts from scratch.
    with repo.engine.begin() as conn:
        for run_id, day in days.items():
            conn.execute(
                text("UPDATE run SET created_at = :t WHERE id = :id"),
                {"t": datetime.fromisoformat(f"{day}T12:00:00"), "id": run_id},
            )
        for table in ("criterion_day", "criterion_result", "run_metric"):
            conn.execute(text(f"DELETE FROM {table}"))
    assert backfill(repo.engine) == 6
    return runs


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    """One seeded database for the whole module (seeding is the slow part)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('metrics') / 'santa.db'}"
    repo = grant(RunStore(init_db(url, mark_interrupted=False)))
    return History(url, repo, seed(repo))


@pytest.fixture
def seeded(history: History, monkeypatch: pytest.MonkeyPatch) -> Iterator[History]:
    """The app pointed at the seeded database, with no desk cached from another test."""
    monkeypatch.setenv("DATABASE_URL", history.url)
    st.cache_resource.clear()
    yield history
    st.cache_resource.clear()


def open_metrics(params: dict | None = None, email: str | None = None, tab: str | None = None) -> AppTest:
    """The Metrics page as `email` (None: the local user), opened on a URL holding `params`."""
    at = AppTest.from_file("../../app.py", default_timeout=30)
    if email is not None:
        at.secrets["auth"] = AUTH
        at.user = {"is_logged_in": True, "email": email, "name": email.split("@")[0].title()}
    at.run()
    at.switch_page("pages/metrics.py")
    at.query_params.clear()
    at.query_params.update(params or {})
    if tab is not None:
        at.session_state["metrics_tab"] = tab
    at.run()
    assert not at.exception, at.exception
    return at


def full_label(card: Any) -> str:
    """A figure card's name as the command line writes it: its label, or, where the label is shortened to fit
    the card, the name its help opens with ("**Mean iterations to converge.** …")."""
    match = re.match(r"\*\*(.+?)\.\*\*", card.help or "")
    return match.group(1) if match else card.label


def cards(at: AppTest) -> list[tuple[str, str]]:
    """(name, value) of every figure card, in page order."""
    return [(full_label(m), m.value) for m in at.metric]


def shown(at: AppTest) -> dict[str, str]:
    return dict(cards(at))


def ours(at: AppTest) -> dict:
    """The page's own parameters in the URL."""
    return {k: v for k, v in at.query_params.items() if k in PARAMS}


def media_url(data: str, mimetype: str, file_name: str) -> str:
    """Where AppTest's media store keeps a download of exactly `data` (the id is a hash of the content)."""
    store = MemoryMediaFileStorage("/mock/media")
    return store.get_url(store.load_and_get_id(data.encode(), mimetype, MediaFileKind.DOWNLOADABLE, file_name))


def downloads(at: AppTest) -> dict[str, str]:
    return {d.proto.id.rsplit("-", 1)[-1]: d.proto.url for d in at.get("download_button")}


# --- the page ---------------------------------------------------------------------------------


def test_empty_history_shows_what_will_appear_and_where_to_start(desk_env: RunStore) -> None:
    at = open_metrics()
    assert "No runs yet, so there is nothing to measure" in texts(at)
    assert not at.metric and not at.get("plotly_chart") and not at.multiselect and not at.error
    assert [link.proto.page for link in at.get("page_link")] == ["review"]


def test_a_history_of_unfinished_runs_shows_dashes_not_errors(desk_env: RunStore) -> None:
    desk_env.create_run(
        spec=SPEC, output=GOOD, rubric=load_builtin("general"), reviewer_b=SONNET, reviewer_c=HAIKU, fixer=OPUS
    )  # queued: nothing finished, reviewed or spent yet
    at = open_metrics()
    figures = shown(at)
    assert (figures["Runs"], figures["Finished runs"], figures["First-pass rate"], figures["Cohen's κ"]) == (
        "1",
        "0",
        "—",
        "—",
    )
    assert "No run in this view has a generation cost" in next(
        m.help for m in at.metric if full_label(m) == "Review ÷ generation cost"
    )
    for tab in ("Failure taxonomy", "Reviewer agreement", "Escapes", "Cost", "Reviewers", "Quality"):
        at.session_state["metrics_tab"] = tab
        at.run()
        assert not at.exception, (tab, at.exception)
    assert "No check failed in this view" in texts(open_metrics(tab="Failure taxonomy"))


def test_headline_shows_every_figure_as_the_report_writes_it(seeded: History) -> None:
    at = open_metrics(email="viewer@example.com")  # every role may read the metrics
    report = seeded.repo.metrics.report(MetricsFilter())
    assert cards(at) == headline_rows(report)  # all 21, in order
    figures = shown(at)
    assert (figures["Runs"], figures["First-pass rate"], figures["Mean iterations to converge"]) == (
        "6",
        "50.0 %",
        "1.25",
    )
    assert (figures["Reviewer agreement"], figures["Cohen's κ"], figures["Escape rate"]) == (
        "33.3 %",
        "0.476",
        "25.0 %",
    )
    assert figures["Failed checks"] == "4"
    assert (figures["Total spend"], figures["Cost per run"], figures["Cost per round"]) == (
        "$0.168",
        "$0.028",
        "$0.024",
    )
    assert (figures["Tokens per run"], figures["Review ÷ generation cost"]) == ("3,467", "0.48")
    assert (figures["Mean round latency"], figures["Reviewer error rate"]) == ("2.9 s", "7.1 %")
    review_to_generation = next(m for m in at.metric if full_label(m) == "Review ÷ generation cost")
    assert "over 1 run with a generation cost" in review_to_generation.help
    assert [plain(w.value) for w in at.warning] == report.warnings
    assert "Grouped by day: 4 buckets, 2025-01-06 to 2025-02-03" in texts(at)
    assert len(at.get("plotly_chart")) == 3  # the Quality tab: first-pass rate, iterations, rounds


def test_each_filter_changes_the_figures(seeded: History) -> None:
    at = open_metrics()
    cases = [
        ("since", date(2025, 1, 20), {"Runs": "4", "Mean iterations to converge": "1.00", "Escape rate": "50.0 %"}),
        (
            "until",
            date(2025, 1, 7),
            {
                "Runs": "2",
                "Mean iterations to converge": "1.50",
                "Escape rate": "0.0 %",
                "Review ÷ generation cost": "0.48",
            },
        ),
        (
            "rubric",
            ["content"],
            {"Runs": "2", "Escape rate": "100.0 %", "Reviewer agreement": "0.0 %", "Review ÷ generation cost": "—"},
        ),
        ("version", ["general@2"], {"Runs": "1", "First-pass rate": "100.0 %", "Cost per run": "$0.012"}),
        ("domain", ["content"], {"Runs": "2", "Cost per run": "$0.05", "Failed checks": "2"}),
        ("reviewer", [SONNET], {"Runs": "3", "First-pass rate": "66.7 %", "Mean iterations to converge": "1.33"}),
        ("reviewer", [FABLE], {"Runs": "3", "Reviewer error rate": "16.7 %", "Mean round latency": "4.0 s"}),
        ("person", ["ann"], {"Runs": "1", "First-pass rate": "0.0 %", "Mean iterations to converge": "2.00"}),
        ("person", [EDITOR], {"Runs": "3", "First-pass rate": "33.3 %", "Escapes": "1"}),
    ]
    for name, value, expected in cases:
        widget = at.date_input if name in ("since", "until") else at.multiselect
        widget(key=f"metrics_{name}").set_value(value).run()
        assert not at.exception, at.exception
        figures = shown(at)
        assert {k: figures[k] for k in expected} == expected, f"{name}={value}"
        url = ours(at)
        assert list(url) == [name], url
        assert url[name] == (value.isoformat() if isinstance(value, date) else value[0])
        at.button(key="metrics_reset").click().run()
        assert shown(at)["Runs"] == "6" and ours(at) == {}, f"reset after {name}"


def test_filters_combine_and_grain_changes_the_buckets(seeded: History) -> None:
    at = open_metrics()
    at.multiselect(key="metrics_rubric").set_value(["general"]).run()
    at.multiselect(key="metrics_version").set_value(["general@2"]).run()
    assert shown(at)["Runs"] == "1"  # rubric general AND version general@2
    at.button(key="metrics_reset").click().run()
    for grain, buckets, first in (("week", 3, "2025-01-06"), ("month", 2, "2025-01-01"), ("day", 4, "2025-01-06")):
        at.selectbox(key="metrics_grain").set_value(grain).run()
        assert f"Grouped by {grain}" in texts(at) and f"{buckets} buckets, {first} to" in texts(at)
        assert ours(at) == {"grain": grain}
        assert shown(at)["Runs"] == "6"  # the buckets change, not the view
    at.selectbox(key="metrics_grain").set_value("auto").run()
    assert ours(at) == {} and "Grouped by day" in texts(at)  # auto: two months of history go by day


def test_filters_come_from_the_url_and_bad_values_are_named_not_fatal(seeded: History) -> None:
    at = open_metrics(
        {"rubric": ["content", "nope"], "since": "2025-13-01", "until": "2025-01-31", "grain": "week", "run": "7"}
    )
    assert at.multiselect(key="metrics_rubric").value == ["content", "nope"]  # content OR nope
    assert at.date_input(key="metrics_since").value is None
    assert at.date_input(key="metrics_until").value == date(2025, 1, 31)
    assert at.selectbox(key="metrics_grain").value == "week"
    assert shown(at)["Runs"] == "2"
    notice = plain(at.info[0].value)
    assert "since=2025-13-01 is not a date written YYYY-MM-DD" in notice
    assert "no run in the history has rubric nope: nothing matches it" in notice
    assert ours(at) == {"until": "2025-01-31", "rubric": ["content", "nope"], "grain": "week"}  # what is applied
    assert at.query_params["run"] == "7"  # not the page's parameter: left alone

    at.multiselect(key="metrics_reviewer").set_value([OPUS, FABLE]).run()
    assert ours(at)["reviewer"] == [OPUS, FABLE]  # several values: the parameter repeats
    shared = dict(at.query_params)
    again = open_metrics(shared)  # the link opens the same view
    assert shown(again) == shown(at) and "rubric nope" in plain(again.info[0].value)  # still named

    at.button(key="metrics_reset").click().run()
    assert ours(at) == {} and shown(at)["Runs"] == "6"


def test_a_link_to_a_value_with_no_run_shows_no_run_as_the_command_line_does(
    seeded: History, env: dict[str, str], tmp_path: Path
) -> None:
    at = open_metrics({"person": "zed", "rubric": "general"})
    assert at.multiselect(key="metrics_person").value == ["zed"]
    assert "no run in the history has person zed: nothing matches it" in plain(at.info[0].value)
    assert "No run matches these filters" in texts(at) and not at.metric  # not the whole history
    done = santa(
        {**env, "DATABASE_URL": seeded.url}, tmp_path, "metrics", "--json", "--person", "zed", "--rubric", "general"
    )
    assert done.returncode == 0 and MetricsReport.model_validate_json(out(done)).headline.runs == 0
    at.multiselect(key="metrics_person").set_value([]).run()  # taking it out of the widget brings the runs back
    assert shown(at)["Runs"] == "4" and ours(at) == {"rubric": "general"}


def test_a_view_that_matches_nothing_offers_a_reset(seeded: History) -> None:
    at = open_metrics({"since": "2025-02-01", "until": "2025-01-01"})
    assert "since 2025-02-01 is after until 2025-01-01: no run can match" in plain(at.info[0].value)
    assert "No run matches these filters" in texts(at) and not at.metric
    at.button(key="metrics_reset_empty").click().run()
    assert shown(at)["Runs"] == "6" and ours(at) == {}


def test_drill_down_lists_exactly_the_runs_that_failed(seeded: History, monkeypatch: pytest.MonkeyPatch) -> None:
    r = seeded.runs
    at = open_metrics(tab="Failure taxonomy")
    assert len(at.get("plotly_chart")) == 2  # by criterion and by category
    # most first, by their names (the URL and the picks hold the ids)
    assert at.selectbox(key="metrics_drill_criterion").options == ["Factual accuracy", "Brand voice per spec"]
    assert at.selectbox(key="metrics_drill_category").options == ["factual accuracy", "compliance"]
    # the failed criteria by their rubric names, as a table whose rows pick like the bars; no run listed yet
    assert at.dataframe[0].value["name"].tolist() == ["Factual accuracy", "Brand voice per spec"]
    assert "Click a bar above" in texts(at) and len(at.dataframe) == 1
    at.selectbox(key="metrics_drill_criterion").set_value("factual_accuracy").run()
    table = at.dataframe[1].value
    assert table["run"].tolist() == [f"./review?run={r['r3']}", f"./review?run={r['r2']}"]  # newest first, as links
    assert (table["B"].tolist(), table["C"].tolist()) == ([1, 1], [0, 1])
    assert "2 runs that failed criterion Factual accuracy" in texts(at)
    at.selectbox(key="metrics_drill_criterion").set_value("brand_voice").run()
    table = at.dataframe[1].value
    assert (table["run"].tolist(), table["B"].tolist(), table["C"].tolist()) == ([f"./review?run={r['r3']}"], [0], [1])
    # one way to open a run: its number's link; no picker and button beside the table
    assert not [w for w in (*at.selectbox, *at.button) if "open" in w.label.lower()]

    at.selectbox(key="metrics_drill_criterion").set_value(None)
    at.selectbox(key="metrics_drill_category").set_value("compliance").run()
    assert at.dataframe[1].value["run"].tolist() == [f"./review?run={r['r3']}"]
    at.selectbox(key="metrics_drill_criterion").set_value("factual_accuracy").run()  # both: factual AND compliance
    assert "No run in this view failed criterion Factual accuracy in category compliance" in texts(at)
    at.selectbox(key="metrics_drill_criterion").set_value(None)
    at.selectbox(key="metrics_drill_category").set_value("factual accuracy").run()
    assert at.dataframe[1].value["run"].tolist() == [f"./review?run={r['r3']}", f"./review?run={r['r2']}"]
    at.multiselect(key="metrics_rubric").set_value(["general"]).run()
    assert at.dataframe[1].value["run"].tolist() == [f"./review?run={r['r2']}"]  # the drill-down follows the filters
    assert at.selectbox(key="metrics_drill_category").options == ["factual accuracy"]

    monkeypatch.setattr("ui.metrics_drill.DRILL_LIMIT", 1)
    at.button(key="metrics_reset").click().run()
    assert at.selectbox(key="metrics_drill_category").value is None  # reset clears the pick too
    at.selectbox(key="metrics_drill_criterion").set_value("factual_accuracy").run()
    assert at.dataframe[1].value["run"].tolist() == [f"./review?run={r['r3']}"]
    assert "Showing the newest 1 of 2 runs that failed criterion Factual accuracy" in texts(at)


def test_a_row_of_the_failed_criteria_table_picks_its_criterion(seeded: History) -> None:
    """A row is a bigger target than a bar's segment: picking one lists the runs behind it, as a click on the bar."""
    r = seeded.runs
    at = open_metrics(tab="Failure taxonomy")
    at.selectbox(key="metrics_drill_category").set_value("factual accuracy").run()
    at.session_state["metrics_criteria_table"] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    at.run()
    assert at.selectbox(key="metrics_drill_criterion").value == "brand_voice"
    assert at.selectbox(key="metrics_drill_category").value is None  # as a bar click: the other pick cleared
    assert at.dataframe[1].value["run"].tolist() == [f"./review?run={r['r3']}"]
    at.selectbox(key="metrics_drill_criterion").set_value("factual_accuracy").run()  # the person picks another...
    assert at.selectbox(key="metrics_drill_criterion").value == "factual_accuracy"  # ...the old row does not win


def test_a_run_waiting_for_a_person_reviewer_counts_only_once_the_reviews_are_in(desk_env: RunStore) -> None:
    runner, _ = make_runner(desk_env, {SONNET: Costed(SONNET, strict, 0.01, 2.0)})
    run_id = desk_env.create_run(
        spec=SPEC, output=BAD, rubric=load_builtin("general"), reviewer_b=SONNET, reviewer_c=PERSON, fixer="fixer"
    )

    def person_passes() -> RunStatus:
        run = desk_env.load_run(run_id)
        rnd = desk_env.load_round(run_id, run.state.round)
        review = passing(ReviewRequest(rubric=run.rubric, spec=run.spec, output=rnd.output_text))
        actions.submit_person_review(desk_env, run_id, "C", review, "local")
        return runner.execute(run_id).status

    def page() -> tuple[AppTest, dict[str, str]]:
        at = open_metrics(tab="Failure taxonomy")
        return at, dict(headline_rows(desk_env.metrics.report(MetricsFilter())))

    assert runner.execute(run_id).status == RunStatus.AWAITING_HUMAN_REVIEW  # B failed it, C not in yet
    # Round 1 is blind: B's FAIL, its cost and latency would tell the person what B said.
    at, rows = page()
    assert "No check failed in this view" in texts(at)
    assert rows["Total spend"] == shown(at)["Total spend"] == "$0.00" and rows["Failed checks"] == "0"
    # The person's review and the gate are in: round 1 counts (B FAILed, the person PASSed).
    assert person_passes() == RunStatus.AWAITING_APPROVAL
    at, rows = page()
    assert rows["Failed checks"] != "0" and shown(at)["Total spend"] == "$0.01"
    at.selectbox(key="metrics_drill_criterion").set_value("factual_accuracy").run()
    assert at.dataframe[1].value["run"].tolist() == [f"./review?run={run_id}"]
    # Round 2 waits for the person again: the whole run is blind once more (its earlier rounds too).
    actions.approve_fix(desk_env, run_id, "local")
    assert runner.execute(run_id).status == RunStatus.AWAITING_HUMAN_REVIEW
    at, rows = page()
    assert "No check failed in this view" in texts(at) and rows["Total spend"] == "$0.00"
    # NICE in round 2: both rounds count.
    assert person_passes() == RunStatus.SHIPPED
    at, rows = page()
    assert shown(at)["Total spend"] == "$0.02" and rows["First-pass rate"] == "0.0 %"
    at.selectbox(key="metrics_drill_criterion").set_value("factual_accuracy").run()
    assert at.dataframe[1].value["run"].tolist() == [f"./review?run={run_id}"]


def test_downloads_hold_the_report_and_each_charts_data(seeded: History) -> None:
    at = open_metrics({"rubric": "general"})
    report = seeded.repo.metrics.report(MetricsFilter(rubrics=["general"]))
    assert report_json(report) == report.model_dump_json(indent=2)
    links = downloads(at)
    whole = document(report, calibration.figures(seeded.repo))  # the page's download is `metrics --json`'s document
    assert links["metrics_json"] == media_url(whole, "application/json", "santa-metrics.json")
    assert links["metrics_csv_first_pass"] == media_url(
        frames.series_frame(report).to_csv(index=False), "text/csv", "santa-metrics-first_pass.csv"
    )
    assert links["metrics_csv_rounds"] == media_url(
        frames.rounds_frame(report).to_csv(index=False), "text/csv", "santa-metrics-rounds.csv"
    )
    at.session_state["metrics_tab"] = "Reviewer agreement"
    at.run()
    assert downloads(at)["metrics_csv_kappa"] == media_url(
        frames.agreement_frame(report).to_csv(index=False), "text/csv", "santa-metrics-kappa.csv"
    )
    kappa = at.dataframe[0].value.set_index("criterion")
    assert kappa.loc["Factual accuracy", "κ"] == "1.000" and kappa.loc["Factual accuracy", "both"] == 1


CSV_FRAMES = {
    "first_pass": frames.series_frame,
    "iterations": frames.series_frame,
    "rounds": frames.rounds_frame,
    "criteria": frames.criteria_frame,
    "categories": frames.categories_frame,
    "agreement": frames.agreement_frame,
    "kappa": frames.agreement_frame,
    "escapes": frames.series_frame,
    "spend": frames.series_frame,
    "cost": frames.cost_frame,
    "cache": frames.series_frame,
    "reviewer_cost": frames.reviewers_frame,
    "latency": frames.reviewers_frame,
    "errors": frames.reviewers_frame,
}
"""The data behind each chart's CSV download, by the download's name."""
TABLES = {"Reviewer agreement": kappa_table, "Reviewers": reviewers_table}
"""The tabs that show a table, and how the table is written from a report."""


@pytest.mark.parametrize(
    ("params", "flags"),
    [
        pytest.param({}, [], id="whole-history"),
        pytest.param(
            {"since": "2025-01-07", "until": "2025-01-20", "grain": "week"},
            ["--since", "2025-01-07", "--until", "2025-01-20", "--grain", "week"],
            id="dates-and-grain",
        ),
        pytest.param({"rubric": "content"}, ["--rubric", "content"], id="rubric"),
        pytest.param(
            {"version": ["general@1", "content@1"], "domain": "general"},
            ["--version", "general@1", "--version", "content@1", "--domain", "general"],
            id="version-domain",
        ),
        pytest.param({"reviewer": [OPUS, HAIKU]}, ["--reviewer", OPUS, "--reviewer", HAIKU], id="reviewers"),
        pytest.param({"person": EDITOR, "grain": "month"}, ["--person", EDITOR, "--grain", "month"], id="person"),
    ],
)
def test_the_command_line_and_the_page_agree_on_every_figure(
    seeded: History, env: dict[str, str], tmp_path: Path, params: dict, flags: list[str]
) -> None:
    """The same filters on the page (from its URL) and on the command line give the same figures."""
    done = santa({**env, "DATABASE_URL": seeded.url}, tmp_path, "metrics", "--json", *flags)
    assert done.returncode == 0 and not err(done), err(done)
    printed = out(done).rstrip("\n")
    cli = MetricsReport.model_validate_json(printed)
    assert cli.headline.runs, "every view here holds runs"
    at = open_metrics(params)
    # Every figure at once: the page's "All figures (JSON)" is the command's output, byte for byte.
    assert downloads(at)["metrics_json"] == media_url(printed, "application/json", "santa-metrics.json")
    # What the page writes: the headline, the warnings, and each tab's tables and chart data.
    assert cards(at) == headline_rows(cli)
    assert [plain(w.value) for w in at.warning] == cli.warnings
    checked = set()
    for tab in TABS:
        at.session_state["metrics_tab"] = tab
        at.run()
        assert not at.exception, (tab, at.exception)
        for name, url in downloads(at).items():
            if name.startswith("metrics_csv_"):
                chart = name.removeprefix("metrics_csv_")
                frame = CSV_FRAMES[chart](cli)
                assert url == media_url(frame.to_csv(index=False), "text/csv", f"santa-metrics-{chart}.csv"), chart
                checked.add(chart)
        if tab in TABLES:
            assert at.dataframe[-1].value.equals(TABLES[tab](cli)), tab
    assert {"first_pass", "iterations", "rounds", "kappa", "escapes", "spend", "cost", "cache", "latency"} <= checked


def test_every_tab_renders(seeded: History) -> None:
    at = open_metrics()
    charts = {"Quality": 3, "Failure taxonomy": 2, "Reviewer agreement": 1, "Escapes": 1, "Cost": 4, "Reviewers": 2}
    for tab, count in charts.items():
        at.session_state["metrics_tab"] = tab
        at.run()
        assert not at.exception, (tab, at.exception)
        assert len(at.get("plotly_chart")) == count, tab
    assert "1 escape on 1 of 4 shipped runs" not in texts(at)  # the Escapes tab is closed: not built
    at.session_state["metrics_tab"] = "Cost"
    at.run()
    assert "Review ÷ generation cost over 1 run with a generation cost" in texts(at)
    # 13 answered reviews, each 1,000 uncached input tokens and 500 read from the cache; no cache writes
    assert "6,500 of the review calls' 19,500 input tokens came from the prompt cache (0 written to it)" in texts(at)
    cards = shown(at)
    assert cards["Cache hit rate"] == "33.3 %"
    # 500 read × (input − cache-read rate): 4 sonnet × 1.80 + 4 haiku × 0.09 + 3 opus × 3.80 + 2 fable × 9.75 per million
    assert (
        cards["Cache savings"]
        == format_figure(500 * (4 * 1.80 + 4 * 0.09 + 3 * 3.80 + 2 * 9.75) / 1e6, "usd")
        == "$0.01923"
    )


# --- URL helpers (pure) -----------------------------------------------------------------------

OPTIONS = MetricsOptions(
    rubrics=["content", "general"],
    versions=["content@1", "general@1", "general@2"],
    domains=["content", "general"],
    reviewers=[FABLE, HAIKU],
    people=["ann", "local"],
    first_day=date(2025, 1, 6),
    last_day=date(2025, 2, 3),
)


def test_url_round_trip() -> None:
    f = MetricsFilter(
        since=date(2025, 1, 6),
        until=date(2025, 2, 3),
        rubrics=["general", "content"],
        versions=["general@2"],
        domains=["content"],
        reviewers=[FABLE],
        people=["ann", "local"],
    )
    params = filters_to_query(f, "week")
    assert params == {
        "since": "2025-01-06",
        "until": "2025-02-03",
        "rubric": ["general", "content"],
        "version": ["general@2"],
        "domain": ["content"],
        "reviewer": [FABLE],
        "person": ["ann", "local"],
        "grain": "week",
    }
    assert filters_from_query(params, OPTIONS) == (f, "week", [])
    assert filters_to_query(MetricsFilter(), None) == {}
    assert filters_from_query({}) == (MetricsFilter(), None, [])


@pytest.mark.parametrize(
    ("params", "expected", "problem"),
    [
        pytest.param({"since": "2025-02-30"}, MetricsFilter(), "since=2025-02-30 is not a date", id="bad-date"),
        pytest.param({"until": "1999-12-31"}, MetricsFilter(), "until=1999-12-31 is outside 2000–2100", id="too-early"),
        pytest.param(
            {"rubric": ["general", "nope"]},
            MetricsFilter(rubrics=["general", "nope"]),
            "no run in the history has rubric nope: nothing matches it",
            id="unknown-rubric-kept",
        ),
        pytest.param(
            {"version": ["general", "general@x", "general@²", "general@1"]},
            MetricsFilter(versions=["general@1"]),
            "version general, general@x, general@² is not written name@N",
            id="bad-version",
        ),
        pytest.param(
            {"reviewer": "gpt-9"},
            MetricsFilter(reviewers=["gpt-9"]),
            "no run in the history has reviewer gpt-9",
            id="unknown-model-kept",
        ),
        pytest.param({"person": ["", " "]}, MetricsFilter(), None, id="blank-values-are-no-filter"),
        pytest.param({"domain": ["content", "content"]}, MetricsFilter(domains=["content"]), None, id="repeats-once"),
        pytest.param(
            {"grain": "year"}, MetricsFilter(), "grain=year is not one of auto, hour, day, week, month", id="bad-grain"
        ),
        pytest.param(
            {"since": "2025-02-01", "until": "2025-01-01"},
            MetricsFilter(since=date(2025, 2, 1), until=date(2025, 1, 1)),
            "since 2025-02-01 is after until 2025-01-01",
            id="since-after-until",
        ),
    ],
)
def test_url_values_are_checked_and_named(params: dict, expected: MetricsFilter, problem: str | None) -> None:
    f, grain, problems = filters_from_query(params, OPTIONS)
    assert (f, grain) == (expected, None)
    if problem is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problem in problems[0], problems


def click_script() -> None:
    """A click on a bar as the chart reports it (set in session state), then the drill-down's pick."""
    import streamlit as st

    from ui.metrics_drill import take_click
    from ui.metrics_url import DRILL_CATEGORY, DRILL_CRITERION

    take_click(st.session_state.get("click"), DRILL_CRITERION, DRILL_CATEGORY, ["factual_accuracy", "brand_voice"])
    st.text(f"{st.session_state.get(DRILL_CRITERION)} / {st.session_state.get(DRILL_CATEGORY)}")


def test_a_click_on_a_bar_picks_it_once() -> None:
    at = AppTest.from_function(click_script, default_timeout=30)
    at.session_state[DRILL_CATEGORY] = "compliance"
    at.session_state["click"] = {
        "selection": {"points": [{"x": 1, "y": "Brand voice per spec", "customdata": "brand_voice"}]}
    }
    at.run()
    assert at.text[0].value == "brand_voice / None"  # the bar is picked, the other pick cleared
    at.session_state[DRILL_CRITERION] = "factual_accuracy"  # the person picks another criterion...
    at.run()
    assert at.text[0].value == "factual_accuracy / None"  # ...and the old selection does not take it back
    at.session_state["click"] = {"selection": {"points": [{"x": 1, "y": "not-a-bar"}]}}
    at.run()
    assert at.text[0].value == "factual_accuracy / None"


def test_clicked_bar_and_tables() -> None:
    click = {
        "selection": {
            "points": [
                {"x": 2, "y": "Factual accuracy", "customdata": "factual_accuracy", "curve_number": 0, "point_index": 0}
            ],
            "point_indices": [0],
            "box": [],
            "lasso": [],
        }
    }
    assert picked_bar(click) == "factual_accuracy"  # the bar's id, not its label
    assert picked_bar({"selection": {"points": []}}) is None and picked_bar(None) is None
    run = FailedRun(
        run_id=7,
        day=date(2025, 1, 6),
        rubric="general@1",
        status="shipped",
        rounds_failed=1,
        b_fail=1,
        c_fail=0,
        check_fail=0,
    )
    assert failed_runs_frame([run]).to_dict("records") == [
        {
            "run": "./review?run=7",
            "day": "2025-01-06",
            "rubric": "general@1",
            "status": "shipped (NICE)",
            "rounds": 1,
            "B": 1,
            "C": 0,
            "check": 0,
        }
    ]
    assert re.search(RUN_LINK, "./review?run=7").group(1) == "7"  # the link shows the run's number
    empty = kappa_table(build_report(MetricsFilter(), [], [], [], []))
    assert list(empty.columns)[:2] == ["criterion", "pairs"] and empty.empty
