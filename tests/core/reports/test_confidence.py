"""The exact binomial interval against independent references, its edges, and the escape rate by group."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from scipy.stats import beta, binomtest

from santa_core import words
from santa_core.reports.confidence import clopper_pearson, escape_rates, rate, week_of
from santa_core.reports.labels import SpotCheckOutcome


def beta_interval(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Clopper and Pearson's bounds as beta quantiles, written out (Clopper & Pearson 1934; Brown, Cai and
    DasGupta 2001, eq. 4): low = B(α/2; k, n−k+1), high = B(1−α/2; k+1, n−k), 0 and 1 at the ends."""
    low = 0.0 if k == 0 else beta.ppf(alpha / 2, k, n - k + 1)
    high = 1.0 if k == n else beta.ppf(1 - alpha / 2, k + 1, n - k)
    return low, high


@pytest.mark.parametrize(("k", "n"), [(2, 140), (3, 140), (0, 61), (11, 61), (30, 30), (1, 2), (500, 1000)])
def test_interval_equals_the_beta_quantiles_and_scipys_exact_interval(k: int, n: int) -> None:
    assert clopper_pearson(k, n) == pytest.approx(beta_interval(k, n), abs=1e-9)
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert clopper_pearson(k, n) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_published_values() -> None:
    # 0 of n: the upper bound solves (1 − p)^n = α/2, so it is 1 − 0.025^(1/n) (0.3085 for n = 10, the
    # textbook figure); n of n mirrors it. 2 of 140 to four places: 0.0017 to 0.0507.
    assert clopper_pearson(0, 10) == pytest.approx((0.0, 0.30849710781876), abs=1e-9)
    assert clopper_pearson(10, 10) == pytest.approx((0.025 ** (1 / 10), 1.0), abs=1e-9)
    low, high = clopper_pearson(2, 140)
    assert (round(low, 4), round(high, 4)) == (0.0017, 0.0507)


def test_nothing_observed_is_no_figure() -> None:
    assert clopper_pearson(0, 0) is None
    r = rate(0, 0)
    assert (r.value, r.low, r.high) == (None, None, None)
    assert words.escapes_sentence(0, 0, None, None).startswith("no spot-check")
    assert words.with_interval(r.value, r.low, r.high) == "—"


def test_one_trial() -> None:
    assert clopper_pearson(0, 1) == pytest.approx((0.0, 0.975))
    assert clopper_pearson(1, 1) == pytest.approx((0.025, 1.0))
    assert words.escapes_sentence(1, 1, 0.025, 1.0) == "escapes 100 % (95 % CI 2.5–100 %) from 1 spot-check"


def test_not_a_count_is_refused() -> None:
    with pytest.raises(ValueError):
        clopper_pearson(3, 2)


def test_the_sentence() -> None:
    assert words.escapes_sentence(3, 140, 0.0044, 0.0613) == "escapes 2.1 % (95 % CI 0.4–6.1 %) from 140 spot-checks"
    assert words.misses_sentence("gpt-5.4-nano", "no outcome guarantees", 11, 61) == (
        "gpt-5.4-nano misses *no outcome guarantees* 18 % of the time, n = 61"
    )


def outcome(
    i: int, b: str, c: str, day: datetime, failed: tuple[str, ...] = (), rubric: str = "general"
) -> SpotCheckOutcome:
    return SpotCheckOutcome(
        spot_check_id=i,
        run_id=i,
        round_no=1,
        rubric_name=rubric,
        rubric_version=1,
        domain="general",
        reviewer_b=b,
        reviewer_c=c,
        submitted_at=day,
        judged=("accuracy", "tone"),
        failed=failed,
    )


def test_escape_rate_by_group() -> None:
    monday, sunday, next_monday = (datetime(2026, 11, d, 9, tzinfo=UTC) for d in (30, 29, 30))
    sunday = datetime(2026, 11, 29, 23, tzinfo=UTC)
    next_monday = datetime(2026, 12, 7, 1, tzinfo=UTC)
    claude, gpt = "claude-haiku-4-5", "openai:gpt-5.4-nano"
    outcomes = [
        outcome(1, claude, gpt, monday, ("tone",)),
        outcome(2, gpt, claude, sunday),
        outcome(3, claude, claude, next_monday, ("accuracy", "tone"), rubric="letters"),
        outcome(4, claude, gpt, next_monday),
    ]
    by_pair = {r.key: (r.escapes.k, r.escapes.n) for r in escape_rates(outcomes, "model_pair")}
    assert by_pair == {f"{claude} + {gpt}": (1, 3), f"{claude} + {claude}": (1, 1)}  # B and C swapped: one panel
    by_family = {r.key: (r.escapes.k, r.escapes.n) for r in escape_rates(outcomes, "family_pair")}
    assert by_family == {"Claude + GPT": (1, 3), "Claude + Claude": (1, 1)}
    weeks = [(r.key, r.escapes.k, r.escapes.n) for r in escape_rates(outcomes, "week")]
    assert weeks == [("2026-11-23", 0, 1), ("2026-11-30", 1, 1), ("2026-12-07", 1, 2)]
    months = [(r.key, r.escapes.k, r.escapes.n) for r in escape_rates(outcomes, "month")]
    assert months == [("2026-11", 1, 2), ("2026-12", 1, 2)]
    assert [(r.key, r.escapes.k) for r in escape_rates(outcomes, "rubric")] == [("general", 1), ("letters", 1)]
    assert escape_rates([], "all") == []
    assert week_of(sunday.date()).endswith("-23")
