"""The over-time charts' time axis: a single day shows as a day, a single point as a point, a year as months,
and no tick is ever finer than the chart's buckets (`ui.metrics_axis`); charts with nothing to draw are
named, not drawn (`ui.metric_figures.empty_message`)."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import plotly.graph_objects as go
import pytest

from santa_core.reports.metrics import MetricsFilter, MetricsReport, build_report
from santa_core.reports.metrics_totals import DayTotals
from ui import metric_figures as figs
from ui.metrics_axis import BUCKET_DAYS, DAY_MS, HOUR_TICKS, MAX_TICKS, axis_settings, format_days, time_ticks

OVER_TIME = {
    "first_pass": figs.first_pass_figure,
    "iterations": figs.iterations_figure,
    "escapes": figs.escape_figure,
    "spend": figs.spend_figure,
    "cache": figs.cache_figure,
}
"""Every chart with a time axis, by its name on the page."""


def days_report(days: list[date], grain: str | None = None) -> MetricsReport:
    """A report with a finished, shipped, costed run on each of `days`."""
    rows = [
        DayTotals(
            day=d,
            runs=1,
            finished=1,
            first_pass=1,
            nice_runs=1,
            nice_rounds=1,
            shipped=1,
            rounds=1,
            review_cost_usd=0.01,
            input_tokens=100,
            review_input_tokens=50,
            review_cache_read_tokens=50,
            cache_savings_usd=0.001,
        )
        for d in days
    ]
    return build_report(MetricsFilter(), rows, [], [], [], grain)


def span(first: date, n: int, every: int = 1) -> list[date]:
    return [first + timedelta(days=i) for i in range(0, n, every)]


@pytest.mark.parametrize("name", OVER_TIME)
def test_one_day_of_data_shows_as_that_day(name: str) -> None:
    ticks = time_ticks(OVER_TIME[name](days_report([date(2026, 12, 2)])))
    assert ticks.labels == ["Dec 2 2026"]  # not "23:59:59.999 Dec 2, 2026 · 23:59:59.9995 · 00:00:00 Dec 3"
    assert ticks.step_days == 1 and ticks.format_days == 1


@pytest.mark.parametrize(("grain", "label", "bucket"), [("week", "Nov 30 2026", 7), ("month", "Dec 2026", 28)])
def test_a_single_point_shows_as_its_bucket(grain: str, label: str, bucket: int) -> None:
    report = days_report([date(2026, 12, 2)], grain)
    for name, make in OVER_TIME.items():
        ticks = time_ticks(make(report))
        assert ticks.labels == [label], name  # the week's Monday; the month
        assert ticks.step_days >= bucket, name


def test_a_year_shows_as_months() -> None:
    report = days_report(span(date(2025, 12, 3), 365))
    assert report.grain == "week"
    ticks = time_ticks(figs.first_pass_figure(report))
    assert ticks.format_days == 28 and ticks.step_days >= 28  # month labels, a month or more apart
    assert ticks.labels[:3] == ["Dec 2025", "Feb 2026", "Apr 2026"] and len(ticks.labels) <= MAX_TICKS


@pytest.mark.parametrize("grain", [None, "day", "week", "month"])
@pytest.mark.parametrize(
    ("days", "every"), [(1, 1), (2, 1), (9, 1), (31, 1), (62, 2), (120, 3), (365, 5), (800, 7), (1500, 10)]
)
def test_no_tick_is_finer_than_the_bucket(grain: str | None, days: int, every: int) -> None:
    report = days_report(span(date(2024, 2, 27), days, every), grain)
    for name, make in OVER_TIME.items():
        ticks = time_ticks(make(report))
        assert ticks.step_days >= BUCKET_DAYS[report.grain], (name, ticks)
        assert 1 <= ticks.format_days <= ticks.step_days, (name, ticks)  # never a time of day
        assert 1 <= len(ticks.labels) <= MAX_TICKS, (name, ticks)
        assert len(set(ticks.labels)) == len(ticks.labels), (name, ticks)  # each tick says which it is


def test_bars_are_a_bucket_wide_and_an_axis_left_to_plotly_reads_as_unset() -> None:
    report = days_report([date(2026, 12, 2)])
    bars = [t for t in figs.spend_figure(report).data if t.type == "bar"]
    assert [b.width for b in bars] == [0.8 * DAY_MS]  # a lone bar is no hairline
    plotly_default = time_ticks(go.Figure(go.Scatter(x=["2026-12-02"], y=[1])))
    assert plotly_default.step_days == 0  # what a check of "no tick finer than a day" must catch
    assert format_days("%H:%M:%S.%L") < 1 and format_days("%b %-d\n%Y") == 1 and format_days("%Y") == 365


def test_a_chart_with_nothing_to_draw_is_named_not_drawn() -> None:
    nothing = build_report(MetricsFilter(), [DayTotals(day=date(2026, 12, 2), runs=1)], [], [], [])
    for name in ("first_pass", "iterations", "escapes", "spend", "rounds", "cost", "agreement"):
        make = {"rounds": figs.rounds_figure, "cost": figs.cost_split_figure, "agreement": figs.agreement_figure}.get(
            name
        ) or OVER_TIME[name]
        assert figs.empty_message(name, make(nothing)) == figs.EMPTY[name][0], name
    full = days_report([date(2026, 12, 2)])
    for name, make in OVER_TIME.items():
        assert figs.empty_message(name, make(full)) is None, name
    assert figs.has_data(go.Figure(go.Bar(x=["a"], y=[0])))  # a zero rate is a value...
    assert not figs.has_data(go.Figure(go.Bar(x=["a"], y=[0])), zeros=False)  # ...zero spend is nothing spent
    assert not figs.has_data(go.Figure(go.Scatter(x=["a", "b"], y=[None, float("nan")])))


def hours_report(hours: list[datetime]) -> MetricsReport:
    """A report of one finished run in each of `hours` (their day rows summed per day)."""

    def row(at: date) -> DayTotals:
        return DayTotals(
            day=at,
            runs=1,
            finished=1,
            first_pass=1,
            nice_runs=1,
            nice_rounds=1,
            shipped=1,
            rounds=1,
            review_cost_usd=0.01,
            input_tokens=100,
        )

    days = {h.date(): row(h.date()) for h in hours}
    return build_report(MetricsFilter(), list(days.values()), [], [], [], "hour", hours=[row(h) for h in hours])


@pytest.mark.parametrize(
    "hours",
    [
        pytest.param([datetime(2026, 12, 2, 9)], id="one-hour"),
        pytest.param([datetime(2026, 12, 2, h) for h in (9, 10, 14)], id="a-working-day"),
        pytest.param([datetime(2026, 12, 2, h) for h in range(24)], id="every-hour-of-a-day"),
        pytest.param([datetime(2026, 12, 2, 23), datetime(2026, 12, 3, 1)], id="across-midnight"),
        pytest.param([datetime(2026, 12, 2, 0), datetime(2026, 12, 3, 23)], id="two-whole-days"),
    ],
)
def test_an_axis_of_hours_ticks_on_the_hour_names_the_day_and_stays_level(hours: list[datetime]) -> None:
    report = hours_report(hours)
    assert [p.bucket for p in report.series] == hours
    for name, make in OVER_TIME.items():
        ticks = time_ticks(make(report))
        assert ticks.step_days >= 1 / 24 and ticks.format_days <= ticks.step_days, (name, ticks)  # hours show
        assert 1 <= len(ticks.labels) <= HOUR_TICKS, (name, ticks)  # few enough to stay level at 1,024 px
        assert len(set(ticks.labels)) == len(ticks.labels), (name, ticks)  # the day too: two 09:00s differ
        assert all(label[2:6] == ":00 " for label in ticks.labels), (name, ticks)  # on the hour, then the day


def test_hour_bars_are_an_hour_wide_and_the_axis_spans_half_an_hour_around_the_buckets() -> None:
    report = hours_report([datetime(2026, 12, 2, 9), datetime(2026, 12, 2, 12)])
    bars = [t for t in figs.spend_figure(report).data if t.type == "bar"]
    assert [b.width for b in bars] == [0.8 * DAY_MS / 24]
    axis = axis_settings("hour", datetime(2026, 12, 2, 9), datetime(2026, 12, 2, 12))
    assert axis["range"] == ["2026-12-02T08:30:00", "2026-12-02T12:30:00"]
