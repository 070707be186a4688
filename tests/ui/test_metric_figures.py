"""The Metrics page's Plotly figures and the tables behind them, as pure functions of a report.

AppTest shows a Plotly chart as an unknown element, so the charts are checked here: their traces,
the target lines at 70 %, 1.5 and 0, and that every plotted value is the report's.
"""

from __future__ import annotations

import io
from datetime import date

import pandas as pd
import plotly.graph_objects as go
import pytest

from santa_core.reports.metrics import (
    ESCAPE_TARGET,
    FIRST_PASS_TARGET,
    ITERATIONS_TARGET,
    MetricsFilter,
    MetricsReport,
    build_report,
)
from santa_core.reports.metrics_families import PanelTotals, family_pair_figures
from santa_core.reports.metrics_totals import CriterionTotals, DayTotals, ReviewerTotals, RoundsCount
from ui import metric_figures as figs
from ui import metric_frames as frames

EVIL = '<a href="https://evil.example/">click</a>'
"""A custom category someone typed into a rubric: Plotly would render it as a link."""


def report(grain: str | None = "day") -> MetricsReport:
    """Three days of history: rates that move, a day with nothing finished, two reviewers, four criteria."""
    days = [
        DayTotals(
            day=date(2025, 1, 6),
            runs=4,
            finished=4,
            first_pass=3,
            nice_runs=4,
            nice_rounds=5,
            shipped=4,
            escapes=1,
            escaped_runs=1,
            rounds=5,
            review_cost_usd=0.04,
            fix_cost_usd=0.01,
            input_tokens=4000,
            output_tokens=400,
            rounds_reviewed=5,
            round_latency_s=10.0,
            review_input_tokens=3000,
            review_cache_write_tokens=1000,
            cache_savings_usd=-0.001,
        ),
        DayTotals(day=date(2025, 1, 7), runs=1, finished=0, rounds=1, review_cost_usd=0.01, input_tokens=1000),
        DayTotals(
            day=date(2025, 1, 20),
            runs=2,
            finished=2,
            first_pass=0,
            nice_runs=1,
            nice_rounds=3,
            shipped=1,
            rounds=5,
            review_cost_usd=0.05,
            generation_cost_usd=0.1,
            generation_runs=1,
            review_cost_with_generation_usd=0.02,
            input_tokens=5000,
            cache_read_tokens=2000,
            cache_savings_usd=0.003,
            rounds_reviewed=5,
            round_latency_s=20.0,
            review_input_tokens=1000,
            review_cache_read_tokens=2000,
        ),
    ]
    rounds = [
        RoundsCount(rounds=1, status="shipped", runs=3),
        RoundsCount(rounds=2, status="shipped", runs=2),
        RoundsCount(rounds=3, status="escalated", runs=1),
    ]
    criteria = [
        CriterionTotals(
            criterion="factual_accuracy",
            category="factual accuracy",
            pp=10,
            ff=2,
            fp=1,
            pf=1,
            b_fail=3,
            c_fail=3,
            check_fail=1,
        ),
        CriterionTotals(criterion="brand_voice", category=EVIL, pp=12, fp=2, b_fail=2),
        CriterionTotals(criterion="completeness", category="completeness", pp=14, check_fail=2, unscored=1),
        CriterionTotals(criterion="compliance", category="compliance", pp=14),
    ]
    reviewers = [
        ReviewerTotals(
            reviewer="claude-sonnet-5-5", reviews=8, errors=1, latency_s=16.0, max_latency_s=4.0, cost_usd=0.07
        ),
        ReviewerTotals(reviewer="claude-haiku-5-5", reviews=6, latency_s=6.0, max_latency_s=1.5, cost_usd=0.03),
    ]
    return build_report(MetricsFilter(), days, rounds, criteria, reviewers, grain)


def hlines(fig: go.Figure) -> list[float]:
    """The y of every horizontal line drawn across the plot (the targets)."""
    return [s.y0 for s in fig.layout.shapes if s.y0 == s.y1]


def as_list(values: object) -> list:
    return [None if v is None or (isinstance(v, float) and pd.isna(v)) else v for v in list(values)]


def test_first_pass_rate_over_time_with_the_70_percent_target() -> None:
    r = report()
    fig = figs.first_pass_figure(r)
    (line,) = fig.data
    assert line.type == "scatter"
    assert list(line.x) == [date(2025, 1, 6), date(2025, 1, 7), date(2025, 1, 20)]
    assert as_list(line.y) == [p.first_pass_rate for p in r.series] == [0.75, None, 0.0]  # no finished run: a gap
    assert hlines(fig) == [FIRST_PASS_TARGET] == [0.7]
    assert fig.layout.yaxis.tickformat == ".0%"


def test_mean_iterations_over_time_with_the_1_5_target() -> None:
    r = report()
    fig = figs.iterations_figure(r)
    assert as_list(fig.data[0].y) == [p.mean_iterations for p in r.series] == [1.25, None, 3.0]
    assert hlines(fig) == [ITERATIONS_TARGET] == [1.5]
    assert fig.layout.yaxis.range[1] >= 3.0  # the highest point is on the chart


def test_escape_rate_over_time_with_the_target_0() -> None:
    r = report()
    fig = figs.escape_figure(r)
    assert as_list(fig.data[0].y) == [p.escape_rate for p in r.series] == [0.25, None, 0.0]
    assert hlines(fig) == [ESCAPE_TARGET] == [0.0]


def test_weekly_grain_rolls_the_days_up() -> None:
    r = report("week")
    fig = figs.first_pass_figure(r)
    assert list(fig.data[0].x) == [date(2025, 1, 6), date(2025, 1, 20)]
    assert as_list(fig.data[0].y) == [0.75, 0.0]
    assert fig.layout.xaxis.title.text == "Week (from Monday, UTC)"


def test_rounds_distribution_is_stacked_by_final_status() -> None:
    r = report()
    fig = figs.rounds_figure(r)
    assert fig.layout.barmode == "stack"
    bars = {t.name: dict(zip(t.x, t.y, strict=True)) for t in fig.data}
    assert bars == {"shipped (NICE)": {1: 3, 2: 2}, "escalated": {3: 1}}
    assert sum(v for b in bars.values() for v in b.values()) == sum(x.runs for x in r.rounds)


def test_failure_taxonomy_by_criterion_stacks_sources_and_leaves_out_clean_criteria() -> None:
    r = report()
    fig = figs.criteria_figure(r)
    assert [t.name for t in fig.data] == ["Reviewer B", "Reviewer C", "Deterministic check"]
    assert all(t.orientation == "h" for t in fig.data) and fig.layout.barmode == "stack"
    failed = [c for c in r.criteria if c.failed]
    assert list(fig.data[0].y) == [c.criterion for c in failed] == ["factual_accuracy", "brand_voice", "completeness"]
    assert list(fig.data[0].x) == [c.b_fail for c in failed] == [3, 2, 0]
    assert list(fig.data[1].x) == [c.c_fail for c in failed] == [3, 0, 0]
    assert list(fig.data[2].x) == [c.check_fail for c in failed] == [1, 0, 2]
    assert fig.layout.yaxis.autorange == "reversed"  # most failures on top, as the report orders them


def test_failure_taxonomy_by_category() -> None:
    r = report()
    fig = figs.categories_figure(r)
    failed = [c for c in r.categories if c.failed]
    assert [sum(t.x[i] for t in fig.data) for i in range(len(failed))] == [c.failed for c in failed] == [7, 2, 2]


def test_reviewer_agreement_both_b_only_c_only() -> None:
    r = report()
    fig = figs.agreement_figure(r)
    assert [t.name for t in fig.data] == ["Both B and C", "B only", "C only"]
    flagged = [c for c in r.criteria if c.both + c.b_only + c.c_only]
    assert list(fig.data[0].y) == [c.criterion for c in flagged] == ["factual_accuracy", "brand_voice"]
    assert [list(t.x) for t in fig.data] == [[2, 0], [1, 2], [1, 0]]


def test_cost_and_reviewer_figures_carry_the_reports_values() -> None:
    r = report()
    spend = figs.spend_figure(r)
    assert list(spend.data[0].y) == [p.cost_usd for p in r.series]
    assert list(spend.data[1].y) == [p.tokens for p in r.series] and spend.data[1].yaxis == "y2"
    split = figs.cost_split_figure(r)
    assert list(split.data[0].y) == [r.headline.review_cost_usd, r.headline.fix_cost_usd]
    per = figs.reviewer_cost_figure(r)
    assert list(per.data[0].x) == [x.reviewer for x in r.reviewers] == ["claude-sonnet-5-5", "claude-haiku-5-5"]
    assert list(per.data[0].y) == [0.07, 0.03]
    latency = figs.latency_figure(r)
    assert [t.name for t in latency.data] == ["mean", "max"]
    assert list(latency.data[0].y) == [2.0, 1.0] and list(latency.data[1].y) == [4.0, 1.5]
    assert hlines(latency) == [r.headline.mean_round_latency_s] == [3.0]
    errors = figs.error_rate_figure(r)
    assert list(errors.data[0].y) == [x.error_rate for x in r.reviewers] == [0.125, 0.0]


def test_prompt_cache_figure_net_savings_bars_and_hit_rate_line() -> None:
    r = report()
    fig = figs.cache_figure(r)
    bars, line = fig.data
    assert list(bars.x) == list(line.x) == [p.bucket for p in r.series]
    assert list(bars.y) == [p.cache_savings_usd for p in r.series] == [-0.001, 0.0, 0.003]
    assert list(bars.marker.color) == ["#E45756", "#54A24B", "#54A24B"]  # a loss is red, below the 0 line
    # 1/6: 1,000 written, none read → 0 %; 1/7: no review call → a gap, not 0 %; 1/20: 2,000 of 3,000 read
    assert as_list(line.y) == [p.cache_hit_rate for p in r.series] == [0.0, None, pytest.approx(2 / 3)]
    assert line.yaxis == "y2" and fig.layout.yaxis2.tickformat == ".0%" and hlines(fig) == [0]
    assert r.headline.cache_hit_rate == pytest.approx(2000 / 7000)  # summed first: 2,000 read of 7,000
    cost = dict(frames.cost_frame(r).itertuples(index=False))
    assert (cost["cache_hit_rate"], cost["cache_savings_usd"]) == (pytest.approx(2 / 7), pytest.approx(0.002))
    assert (cost["review_prompt_tokens"], cost["review_cache_write_tokens"], cost["review_cache_read_tokens"]) == (
        7000,
        1000,
        2000,
    )
    assert frames.series_frame(r)["cache_hit_rate"].tolist()[0] == 0.0


def test_typed_labels_cannot_become_markup() -> None:
    fig = figs.categories_figure(report())
    text = fig.to_json()
    assert "<a" not in text and "evil.example" in text  # still readable, no longer a link
    assert figs.label(EVIL) == '‹a href="https://evil.example/"›click‹/a›'


@pytest.mark.parametrize(
    "frame",
    [
        frames.series_frame,
        frames.rounds_frame,
        frames.criteria_frame,
        frames.categories_frame,
        frames.agreement_frame,
        frames.reviewers_frame,
        frames.cost_frame,
    ],
)
def test_every_table_round_trips_through_csv(frame) -> None:
    r = report()
    table = frame(r)
    back = pd.read_csv(io.StringIO(table.to_csv(index=False)))
    assert list(back.columns) == list(table.columns) and len(back) == len(table)


def test_tables_hold_the_reports_numbers() -> None:
    r = report()
    assert frames.series_frame(r)["first_pass"].tolist() == [3, 0, 0]
    assert frames.criteria_frame(r)["failed"].tolist() == [7, 2, 2]
    agreement = frames.agreement_frame(r).set_index("criterion")
    assert agreement.loc["factual_accuracy", "kappa"] == pytest.approx(r.criteria[0].kappa)
    cost = dict(frames.cost_frame(r).itertuples(index=False))
    assert cost["review_to_generation"] == r.headline.review_to_generation == pytest.approx(0.2)
    assert cost["total_cost_usd"] == pytest.approx(0.11)


BUILDERS = [
    figs.first_pass_figure,
    figs.iterations_figure,
    figs.rounds_figure,
    figs.criteria_figure,
    figs.categories_figure,
    figs.agreement_figure,
    figs.escape_figure,
    figs.spend_figure,
    figs.cost_split_figure,
    figs.reviewer_cost_figure,
    figs.latency_figure,
    figs.error_rate_figure,
    figs.cache_figure,
]


@pytest.mark.parametrize("build", BUILDERS, ids=lambda f: f.__name__)
def test_an_empty_view_still_draws(build) -> None:
    empty = build_report(MetricsFilter(), [], [], [], [])
    assert isinstance(build(empty), go.Figure)


def test_escape_rate_per_family_pair() -> None:
    """One bar per pair in the table's order, two-family pairs apart by colour; a pair with nothing shipped
    has no bar; a family named after a model id typed by someone stays text."""
    panels = [
        PanelTotals(reviewer_b="claude-opus-5", reviewer_c="claude-haiku-4-5", runs=3, shipped=2, escapes=1),
        PanelTotals(reviewer_b="openai:gpt-5.4-mini", reviewer_c="claude-opus-5", runs=2, shipped=2),
        PanelTotals(reviewer_b="local:<script>", reviewer_c="claude-opus-5", runs=1),
    ]
    pairs = family_pair_figures(panels)
    [bar] = figs.families_figure(pairs).data
    assert list(bar.y) == ["Claude + Claude", "Claude + GPT", "Claude + unknown (‹script›)"]
    assert list(bar.x[:2]) == [0.5, 0.0] and pd.isna(bar.x[2])  # no shipped run: no escape rate, no bar
    # an unknown family is never counted as a second one
    assert list(bar.marker.color) == [figs.PANEL_COLOURS[False], figs.PANEL_COLOURS[True], figs.PANEL_COLOURS[False]]
    frame = frames.families_frame(pairs)
    assert frame["escape_rate"].tolist()[:2] == [0.5, 0.0] and frame["runs"].tolist() == [3, 2, 1]
    back = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
    assert list(back.columns) == list(frame.columns) and len(back) == 3
    assert isinstance(figs.families_figure([]), go.Figure)
