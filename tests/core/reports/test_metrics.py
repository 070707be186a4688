"""The pure metric definitions (`santa_core.reports.metrics`): Cohen's kappa and its 0.40 boundary,
agreement and the other ratios, time buckets and the automatic grain, how each kind of figure is
written, and `build_report` from aggregate rows: the low-agreement flag, the target warnings at
their boundaries, sums before division, a criterion filed under several categories, the empty
report and a definition for every headline figure.
"""

from __future__ import annotations

from datetime import date, datetime
from fractions import Fraction

import pytest

from santa_core.reports import metrics as m
from santa_core.reports import metrics_words
from santa_core.reports.metrics import MetricsFilter, auto_grain, bucket_of, build_report, cohens_kappa, ratio
from santa_core.reports.metrics_totals import CriterionTotals, DayTotals, ReviewerTotals, RoundsCount
from santa_core.reports.metrics_words import format_figure
from tests.support.report_figures import Totals, close

# --- pure definitions (santa_core.reports.metrics) ---------------------------------------------------


@pytest.mark.parametrize(
    ("pp", "pf", "fp", "ff", "expected"),
    [
        pytest.param(0, 0, 0, 0, None, id="no-pairs"),
        pytest.param(5, 0, 0, 0, None, id="all-pass-chance-is-one"),
        pytest.param(0, 0, 0, 3, None, id="all-fail-chance-is-one"),
        pytest.param(3, 0, 0, 2, Fraction(1), id="perfect"),
        pytest.param(0, 2, 2, 0, Fraction(-1), id="always-opposite"),
        pytest.param(0, 3, 0, 0, Fraction(0), id="b-always-pass-c-always-fail"),
        # observed 7/8, B PASS 1, C PASS 7/8 → chance 7/8 → 0
        pytest.param(7, 1, 0, 0, Fraction(0), id="one-reviewer-constant"),
        # the textbook table (50 pairs): observed 35/50, chance .5·.6 + .5·.4 = .5 → (.7 − .5)/.5 = 2/5
        pytest.param(20, 5, 10, 15, Fraction(2, 5), id="textbook-0.40"),
        pytest.param(6, 1, 3, 1, Fraction(6, 50), id="history-facts"),
        pytest.param(29, 3, 3, 4, Fraction(107, 224), id="history-pooled"),
        # observed 2/6, B PASS 3/6, C PASS 5/6 → chance 1/2 → −1/3
        pytest.param(2, 1, 3, 0, Fraction(-1, 3), id="worse-than-chance"),
    ],
)
def test_cohens_kappa(pp: int, pf: int, fp: int, ff: int, expected: Fraction | None) -> None:
    kappa = cohens_kappa(pp, pf, fp, ff)
    if expected is None:
        assert kappa is None
    else:
        assert close(kappa, expected)
        assert cohens_kappa(pp, fp, pf, ff) == pytest.approx(kappa)  # symmetric in B and C


def test_a_kappa_of_exactly_040_is_not_below_040() -> None:
    assert cohens_kappa(20, 5, 10, 15) == m.LOW_KAPPA
    assert cohens_kappa(3, 1, 2, 4) == 0.4  # 10 pairs: exactly 2/5 too


def test_agreement_and_other_ratios() -> None:
    assert m.agreement(1, 3, 1) == 0.2 and m.agreement(0, 0, 0) is None
    assert m.first_pass_rate(3, 8) == 0.375 and m.first_pass_rate(0, 0) is None
    assert m.mean_iterations(7, 5) == 1.4 and m.escape_rate(3, 6) == 0.5 and m.escape_rate(1, 0) is None


@pytest.mark.parametrize(
    ("numerator", "denominator", "expected"),
    [
        pytest.param(1, 4, 0.25, id="quarter"),
        pytest.param(0, 5, 0.0, id="zero-over-some"),
        pytest.param(3, 0, None, id="nothing-to-divide-by"),
        pytest.param(0.0, 0.0, None, id="zero-over-zero"),
        pytest.param(2, 1, 2.0, id="above-one"),
    ],
)
def test_ratio(numerator: float, denominator: float, expected: float | None) -> None:
    assert ratio(numerator, denominator) == expected


@pytest.mark.parametrize(
    ("day", "grain", "bucket"),
    [
        pytest.param(date(2025, 1, 15), "day", date(2025, 1, 15), id="day-is-itself"),
        pytest.param(date(2025, 1, 6), "week", date(2025, 1, 6), id="monday-starts-its-week"),
        pytest.param(date(2025, 1, 12), "week", date(2025, 1, 6), id="sunday-ends-it"),
        pytest.param(date(2025, 2, 1), "week", date(2025, 1, 27), id="week-across-months"),
        pytest.param(date(2025, 1, 1), "week", date(2024, 12, 30), id="week-across-years"),
        pytest.param(date(2025, 1, 1), "month", date(2025, 1, 1), id="first-is-its-month"),
        pytest.param(date(2025, 1, 31), "month", date(2025, 1, 1), id="last-of-month"),
        pytest.param(date(2024, 2, 29), "month", date(2024, 2, 1), id="leap-day"),
    ],
)
def test_bucket_of(day: date, grain: m.Grain, bucket: date) -> None:
    assert bucket_of(day, grain) == bucket


@pytest.mark.parametrize(
    ("at", "grain", "bucket"),
    [
        pytest.param(
            datetime(2025, 1, 15, 13, 45, 10, 5), "hour", datetime(2025, 1, 15, 13), id="hour-starts-on-the-hour"
        ),
        pytest.param(datetime(2025, 1, 15, 0, 0), "hour", datetime(2025, 1, 15, 0), id="midnight-is-its-hour"),
        pytest.param(datetime(2025, 1, 15, 23, 59, 59), "hour", datetime(2025, 1, 15, 23), id="last-second"),
        pytest.param(datetime(2025, 1, 12, 23, 30), "week", date(2025, 1, 6), id="a-time-in-a-week-bucket"),
        pytest.param(datetime(2025, 1, 15, 9), "day", date(2025, 1, 15), id="a-time-in-a-day-bucket"),
    ],
)
def test_bucket_of_a_time(at: datetime, grain: m.Grain, bucket: date) -> None:
    assert bucket_of(at, grain) == bucket and type(bucket_of(at, grain)) is type(bucket)


def test_an_hour_bucket_needs_a_time_of_day() -> None:
    with pytest.raises(ValueError, match="needs a time of day"):
        bucket_of(date(2025, 1, 15), "hour")


@pytest.mark.parametrize(
    ("first", "last", "grain"),
    [
        pytest.param(None, None, "day", id="no-history"),
        pytest.param(date(2025, 1, 1), None, "day", id="open-end"),
        pytest.param(date(2025, 1, 1), date(2025, 1, 1), "hour", id="one-day"),
        pytest.param(date(2025, 1, 1), date(2025, 1, 2), "hour", id="two-days"),
        pytest.param(date(2025, 1, 1), date(2025, 1, 3), "day", id="three-days"),
        pytest.param(date(2025, 1, 1), date(2025, 3, 4), "day", id="62-days"),
        pytest.param(date(2025, 1, 1), date(2025, 3, 5), "week", id="63-days"),
        pytest.param(date(2024, 1, 1), date(2025, 1, 1), "week", id="366-days"),
        pytest.param(date(2024, 1, 1), date(2025, 1, 2), "month", id="367-days"),
    ],
)
def test_auto_grain(first: date | None, last: date | None, grain: str) -> None:
    assert auto_grain(first, last) == grain


@pytest.mark.parametrize(
    ("value", "kind", "text"),
    [
        pytest.param(None, "rate", "—", id="undefined"),
        pytest.param(0.725, "rate", "72.5 %", id="rate"),
        pytest.param(0.0, "rate", "0.0 %", id="rate-zero"),
        pytest.param(1.4286, "mean", "1.43", id="mean"),
        pytest.param(0.48, "ratio", "0.48", id="ratio"),
        pytest.param(0.003142, "ratio", "0.00314", id="ratio-small"),
        pytest.param(12345.6, "ratio", "12,346", id="ratio-large"),
        pytest.param(1204, "count", "1,204", id="count"),
        pytest.param(4371.8, "count", "4,372", id="count-rounded"),
        pytest.param(0.0123, "usd", "$0.0123", id="usd-cents"),
        pytest.param(0.76, "usd", "$0.76", id="usd-under-a-dollar"),
        pytest.param(1234.5, "usd", "$1,234.50", id="usd-dollars"),
        pytest.param(2.44, "seconds", "2.4 s", id="seconds"),
        pytest.param(0.6154, "kappa", "0.615", id="kappa"),
        pytest.param(-0.3333, "kappa", "-0.333", id="kappa-negative"),
    ],
)
def test_format_figure(value: float | None, kind: metrics_words.Kind, text: str) -> None:
    assert format_figure(value, kind) == text


def pure_report(table_: Totals | None = None, **day: object) -> m.MetricsReport:
    days = [DayTotals(day=date(2025, 1, 1), runs=1, **day)]
    criteria = (
        []
        if table_ is None
        else [CriterionTotals(criterion="x", category="c", **dict(zip(("pp", "pf", "fp", "ff"), table_, strict=False)))]
    )
    return build_report(MetricsFilter(), days, [], criteria, [])


@pytest.mark.parametrize(
    ("counts", "flagged"),
    [
        # observed 8/10, B PASS 8/10, C PASS 8/10 → chance .68 → (.8 − .68)/.32 = 0.375
        pytest.param((7, 1, 1, 1), True, id="10-pairs-kappa-0.375"),
        pytest.param((3, 1, 2, 4), False, id="10-pairs-kappa-exactly-0.40"),
        # observed 7/9, B and C PASS 7/9 → chance 53/81 → (63 − 53)/(81 − 53) = 10/28 ≈ 0.357
        pytest.param((6, 1, 1, 1), False, id="9-pairs-kappa-0.357"),
        pytest.param((1, 0, 2, 7), False, id="10-pairs-kappa-0.41"),
        pytest.param((10, 0, 0, 0), False, id="10-pairs-kappa-undefined"),
        pytest.param((20, 5, 10, 15), False, id="50-pairs-kappa-exactly-0.40"),
    ],
)
def test_low_agreement_boundary(counts: tuple[int, int, int, int], flagged: bool) -> None:
    report = pure_report(counts)
    assert report.criteria[0].low_agreement is flagged
    assert bool([w for w in report.warnings if w.startswith("Low reviewer agreement on x")]) is flagged


@pytest.mark.parametrize(
    ("day", "warning"),
    [
        pytest.param(
            {"finished": 10, "first_pass": 7},
            "First-pass rate 70.0 % is not above the 70 % target.",
            id="first-pass-at-target",
        ),
        pytest.param({"finished": 100, "first_pass": 71}, None, id="first-pass-above-target"),
        pytest.param(
            {"nice_runs": 2, "nice_rounds": 3},
            "Mean iterations to converge 1.50 is not below the 1.5 target.",
            id="iterations-at-target",
        ),
        pytest.param({"nice_runs": 3, "nice_rounds": 4}, None, id="iterations-below-target"),
        pytest.param(
            {"shipped": 1, "escapes": 1}, "1 escape(s) reported on shipped runs; the target is 0.", id="an-escape"
        ),
    ],
)
def test_target_warnings_at_the_boundary(day: dict, warning: str | None) -> None:
    assert pure_report(**day).warnings == ([] if warning is None else [warning])


def test_build_report_sums_before_dividing() -> None:
    days = [
        DayTotals(
            day=date(2025, 1, 6),
            runs=2,
            finished=2,
            first_pass=1,
            rounds=3,
            review_cost_usd=0.3,
            generation_cost_usd=1.0,
            generation_runs=1,
            review_cost_with_generation_usd=0.1,
        ),
        DayTotals(
            day=date(2025, 1, 8),
            runs=1,
            finished=1,
            first_pass=1,
            rounds=1,
            fix_cost_usd=0.1,
            input_tokens=10,
            output_tokens=5,
            cache_write_tokens=2,
            cache_read_tokens=3,
        ),
    ]
    criteria = [
        CriterionTotals(criterion="x", category="c", pp=1, ff=1, b_fail=1),
        CriterionTotals(criterion="x", category="c", pf=1, c_fail=2, check_fail=1),
    ]
    reviewers = [
        ReviewerTotals(reviewer="r", reviews=2, errors=1, latency_s=3.0, max_latency_s=2.0, cost_usd=0.1),
        ReviewerTotals(reviewer="r", reviews=1, latency_s=6.0, max_latency_s=6.0, cost_usd=0.2),
        ReviewerTotals(reviewer="idle"),
    ]
    report = build_report(
        MetricsFilter(), reversed(days), [RoundsCount(rounds=2, status="shipped", runs=1)], criteria, reviewers
    )
    h = report.headline
    assert report.grain == "day" and [p.bucket for p in report.series] == [date(2025, 1, 6), date(2025, 1, 8)]
    assert h.first_pass_rate == pytest.approx(2 / 3)  # (1 + 1) ÷ (2 + 1), not the mean of ½ and 1
    assert (h.total_cost_usd, h.cost_per_run_usd, h.cost_per_round_usd) == pytest.approx((0.4, 0.4 / 3, 0.1))
    assert (h.tokens, h.review_to_generation) == (20, pytest.approx(0.1))
    # the two rows of criterion x merge: pp 1, pf 1, ff 1; failed 1 + 2 + 1
    [x] = report.criteria
    assert (x.pairs, x.both, x.c_only, x.failed) == (3, 1, 1, 4)
    # reviewer r over both slots: 3 answers, 1 error, (3 + 6)/3 s mean, 6 s max; "idle" answered nothing
    assert [(r.reviewer, r.reviews, r.errors, r.mean_latency_s, r.max_latency_s) for r in report.reviewers] == [
        ("r", 3, 1, 3.0, 6.0)
    ]


def test_a_criterion_whose_severity_or_category_changed_is_one_criterion() -> None:
    """Versions 1 and 2 of a rubric file criterion x under other categories and severities."""
    criteria = [
        CriterionTotals(criterion="x", category="facts", severity="critical", pp=5, fp=3, b_fail=3),
        CriterionTotals(criterion="x", category="style", severity="suggestion", pp=4, ff=2, fp=1, b_fail=3, c_fail=2),
    ]
    report = build_report(MetricsFilter(), [], [], criteria, [])
    [x] = report.criteria  # one row: its agreement and kappa need all 15 pairs
    assert (x.category, x.severity, x.pairs, x.both, x.b_only, x.pass_both) == (
        "facts / style",
        "critical / suggestion",
        15,
        2,
        4,
        9,
    )
    assert close(x.kappa, m.cohens_kappa(9, 0, 4, 2))
    # categories keep each version's failures where they were filed
    assert [(c.category, c.failed) for c in report.categories] == [("style", 5), ("facts", 3)]


def test_empty_report() -> None:
    report = build_report(MetricsFilter(), [], [], [], [])
    assert report.empty and report.grain == "day" and report.series == [] and report.warnings == []
    h = report.headline
    assert (h.first_pass_rate, h.mean_iterations, h.escape_rate, h.kappa, h.cost_per_run_usd) == (None,) * 5
    assert dict(m.headline_rows(report))["First-pass rate"] == "—"


def test_every_headline_figure_has_a_definition() -> None:
    for field, _, _, key in metrics_words.HEADLINE:
        assert field in m.Headline.model_fields and key in metrics_words.DEFINITIONS
    assert MetricsFilter().is_empty() and not MetricsFilter(people=["ann"]).is_empty()


# --- hour buckets -------------------------------------------------------------------------------------------


def test_hour_buckets_come_from_the_hour_rows_and_the_headline_from_the_days() -> None:
    day = [DayTotals(day=date(2025, 1, 15), runs=3, finished=3, first_pass=2)]
    hours = [
        DayTotals(day=datetime(2025, 1, 15, 14), runs=1, finished=1, first_pass=0),
        DayTotals(day=datetime(2025, 1, 15, 9), runs=2, finished=2, first_pass=2),
    ]
    report = build_report(MetricsFilter(), day, [], [], [], hours=hours)
    assert report.grain == "hour"  # one day of runs: auto picks hours
    assert [(p.bucket, p.runs, p.first_pass_rate) for p in report.series] == [
        (datetime(2025, 1, 15, 9), 2, 1.0),
        (datetime(2025, 1, 15, 14), 1, 0.0),
    ]
    assert report.headline.runs == 3 and report.headline.first_pass_rate == pytest.approx(2 / 3)
    week = build_report(MetricsFilter(), day, [], [], [], "week", hours=hours)  # a grain asked for wins
    assert [(p.bucket, p.runs) for p in week.series] == [(date(2025, 1, 13), 3)]


def test_without_the_hour_rows_auto_stays_at_days_and_asking_for_hours_is_an_error() -> None:
    day = [DayTotals(day=date(2025, 1, 15), runs=3)]
    assert build_report(MetricsFilter(), day, [], [], []).grain == "day"
    with pytest.raises(ValueError, match="hour buckets need the sums per hour"):
        build_report(MetricsFilter(), day, [], [], [], "hour")


@pytest.mark.parametrize(
    ("filters", "found", "grain"),
    [
        pytest.param({}, [date(2025, 1, 15)], "hour", id="one-day-of-runs"),
        pytest.param({"since": date(2025, 1, 14)}, [date(2025, 1, 15)], "hour", id="since-the-day-before"),
        pytest.param({"since": date(2025, 1, 13)}, [date(2025, 1, 15)], "day", id="since-two-days-before"),
        pytest.param({"until": date(2025, 1, 31)}, [date(2025, 1, 15)], "day", id="until-a-later-day"),
        pytest.param({"since": date(2025, 1, 15), "until": date(2025, 1, 15)}, [], "hour", id="one-day-no-runs"),
        pytest.param({}, [], "day", id="no-runs-at-all"),
    ],
)
def test_the_views_buckets_follow_its_span(filters: dict, found: list[date], grain: str) -> None:
    assert m.view_grain(MetricsFilter(**filters), [DayTotals(day=d) for d in found]) == grain
