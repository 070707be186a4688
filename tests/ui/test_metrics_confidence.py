"""The figures stated with confidence, on the pages a person reads them: the Metrics page's spot-check escape
rate with its interval (apart from the reported escapes) and the panel's claim on the Escapes tab, the reviewers'
calibration table and plot on the Reviewers tab, and the Settings picker's line per model."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from desk import calibration
from santa_core.reports.calibration import MIN_LABELS
from santa_core.reports.labels import PersonLabel, SpotCheckOutcome
from santa_core.reviewers.doubles import FunctionReviewer, passing
from santa_core.run import actions
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant, migrated_sqlite, stop_opened_desks
from tests.core.run.test_runner import BAD, make_runner, new_run, strict
from tests.ui.test_app import open_app, texts
from ui.table_fit import PAGE_PX, fit

SONNET, NANO = "claude-sonnet-5-5", "openai:gpt-5.4-nano"
OFFICER = "ann"


def rejected_escalations(repo: RunStore, count: int) -> None:
    """`count` runs on the wrong year: Sonnet fails it, Nano passes it (a miss); the fix is rejected, then the run."""
    runner, _ = make_runner(repo, {SONNET: FunctionReviewer(SONNET, strict), NANO: FunctionReviewer(NANO, passing)})
    for _ in range(count):
        run_id = new_run(repo, BAD, reviewer_b=SONNET, reviewer_c=NANO)
        runner.execute(run_id)
        actions.reject_fix(repo, run_id, OFFICER, "no")
        actions.resolve_escalation(repo, run_id, "reject", OFFICER, "the launch year is wrong")


class Spot:
    """140 spot-checks of the Sonnet + Nano panel, 3 of them failed on factual accuracy."""

    def outcomes(self) -> list[SpotCheckOutcome]:
        at = datetime(2026, 11, 30, 9, tzinfo=UTC)
        return [
            SpotCheckOutcome(
                spot_check_id=i,
                run_id=10_000 + i,
                round_no=1,
                rubric_name="general",
                rubric_version=1,
                domain="general",
                reviewer_b=SONNET,
                reviewer_c=NANO,
                submitted_at=at,
                judged=("factual_accuracy",),
                failed=("factual_accuracy",) if i < 3 else (),
            )
            for i in range(140)
        ]

    def labels(self) -> list[PersonLabel]:
        return []


def metrics_tab(tab: str) -> AppTest:
    """The Metrics page with `tab` open."""
    at = open_app("pages/metrics.py")
    at.session_state["metrics_tab"] = tab
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def seeded_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One database for the module's page tests (they only read): the escalations are the slow part."""
    url = migrated_sqlite(tmp_path_factory.mktemp("calibration") / "santa.db")
    rejected_escalations(grant(RunStore(init_db(url, mark_interrupted=False))), MIN_LABELS)
    return url


@pytest.fixture
def history(seeded_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The app on the seeded database, with the spot-checks of `Spot` and no desk cached from another test."""
    monkeypatch.setenv("DATABASE_URL", seeded_url)
    monkeypatch.setattr(calibration, "spot_checks", lambda db: Spot())
    st.cache_resource.clear()
    yield
    stop_opened_desks()
    st.cache_resource.clear()


def test_the_escapes_tab_states_the_interval_apart_from_reported_escapes(history: None) -> None:
    at = metrics_tab("Escapes")
    shown = texts(at)
    # 3 of 140: the exact 95 % interval is 0.44 %–6.13 % (Clopper–Pearson; tests/core/reports/test_confidence.py).
    assert "Escapes 2.1 % (95 % CI 0.4–6.1 %) from 140 spot-checks" in shown
    assert "**Reported escapes (biased low):** 0 reported on 0 of 0 shipped runs" in shown
    panel = next(df.value for df in at.dataframe if "q_B × q_C (range)" in df.value.columns)
    row = panel.iloc[0]
    assert (row["panel"], row["criterion"]) == (f"{SONNET} + {NANO}", "Factual accuracy")
    assert row["escaped (95 % CI)"] == "2.1 % (0.4–6.1 %) of 140"
    # q = 0 of 20 and 20 of 20: the product is 0, its range 0 to 16.8 % × 1.
    assert (
        row["q_B × q_C (range)"] == f"0.0 % (0.0–17 %): {SONNET} 0.0 % of {MIN_LABELS} × {NANO} 100 % of {MIN_LABELS}"
    )
    assert row["verdict"] == "no sign of misses together"
    assert_fits(panel, ("q_B × q_C (range)", "verdict"))
    at.segmented_control(key="metrics_spot_by").set_value("week").run()
    weekly = next(df.value for df in at.dataframe if "week" in df.value.columns)
    assert weekly.to_dict("records") == [{"week": "2026-11-30", "escaped (95 % CI)": "2.1 % (0.4–6.1 %) of 140"}]


def assert_fits(frame: pd.DataFrame, wide: tuple[str, ...]) -> None:
    """The table's columns fit the page's room at 1,024 px (the screen test measures it in a browser)."""
    assert sum(fit(frame, PAGE_PX, wide=wide).widths.values()) <= PAGE_PX


def test_the_reviewers_tab_shows_calibration_with_intervals(history: None) -> None:
    at = metrics_tab("Reviewers")
    table = next(df.value for df in at.dataframe if "recall (95 % CI)" in df.value.columns)
    rows = {r["model"]: r for r in table.to_dict("records")}
    # 20 of 20 caught: the lower bound is 0.025^(1/20) = 83.2 %; 0 of 20: the upper bound is 16.8 %.
    assert rows[SONNET]["recall (95 % CI)"] == f"100 % (83–100 %) of {MIN_LABELS}"
    assert rows[NANO]["recall (95 % CI)"] == f"0.0 % (0.0–17 %) of {MIN_LABELS}"
    assert rows[NANO]["false alarms (95 % CI)"] == "— of 0" and rows[NANO]["labels"] == f"escalation {MIN_LABELS}"
    assert_fits(table, ("criterion", "labels"))
    assert any(chart.proto.spec and "Recall against people" in chart.proto.spec for chart in at.get("plotly_chart"))


def test_the_settings_picker_names_each_models_weakest_criterion(history: None) -> None:
    shown = texts(open_app("pages/settings.py"))
    assert f"{NANO} misses *Factual accuracy* 100 % of the time, n = {MIN_LABELS}" in shown
    assert f"{SONNET} misses *Factual accuracy* 0.0 % of the time" in shown


def test_no_label_and_no_spot_check_say_so(desk_env: RunStore) -> None:
    rejected_escalations(desk_env, 1)
    shown = texts(metrics_tab("Escapes"))
    assert "No spot-check submitted yet" in shown and "No spot-check yet: nothing to hold the product against" in shown
    assert "Against people's judgements" not in texts(
        open_app("pages/settings.py")
    )  # one label is too few to state a miss rate
