"""The prompt cache's figures (issue 18): the net savings formula (`santa_core.pricing.cache_savings_usd`), the
cache hit rate from summed review-call tokens, the report's headline and buckets, the note that says what the
figures mean (and what to do when nothing was cached), and a negative amount written with its sign.
"""

from __future__ import annotations

from datetime import date

import pytest

from santa_core.pricing import cache_savings_usd, load_rates, parse_rates
from santa_core.reports import metrics as m
from santa_core.reports.metrics import MetricsFilter, build_report
from santa_core.reports.metrics_cache import cache_hit_rate, cache_note
from santa_core.reports.metrics_totals import DayTotals
from santa_core.reports.metrics_words import format_figure

RATES = parse_rates(
    {
        "as_of": "2026-01-01",
        "models": {
            # Claude-like: a 5-minute write costs 1.25 × input, a read 0.1 × input
            "claude-like": {"input": 4.0, "output": 20.0, "cache_write_5m": 5.0, "cache_read": 0.4},
            # OpenAI-like: writes are billed as plain input (no premium), reads at the cached-input price
            "openai:like": {"input": 2.0, "output": 8.0, "cache_write_5m": 2.0, "cache_read": 0.5},
        },
    }
)
M = 1_000_000


def usd(value: float) -> str:
    return format_figure(value, "usd")


# --- the savings formula ---------------------------------------------------------------------


def test_a_write_never_read_costs_money() -> None:
    # 10,000 tokens written at 5.0 instead of 4.0 per million, nothing read back
    assert cache_savings_usd("claude-like", 0, 10_000, RATES) == pytest.approx(-10_000 * 1.0 / M)
    assert cache_savings_usd("claude-like", 0, 10_000, RATES) < 0


def test_reads_after_one_write_save_more_than_the_write_cost() -> None:
    # one write of a 2,000-token prefix, then four reads of it
    saved = cache_savings_usd("claude-like", 4 * 2_000, 2_000, RATES)
    assert saved == pytest.approx((8_000 * (4.0 - 0.4) - 2_000 * (5.0 - 4.0)) / M)  # 0.0288 − 0.002
    assert saved > 0
    # a single read already pays for a Claude write: 3.6 saved per token read, 1.0 paid per token written
    assert cache_savings_usd("claude-like", 2_000, 2_000, RATES) == pytest.approx(2_000 * 2.6 / M)


def test_reads_alone_keep_the_old_figure() -> None:
    assert cache_savings_usd("claude-like", 5_000, rates=RATES) == pytest.approx(5_000 * 3.6 / M)
    assert cache_savings_usd("claude-like", 0, 0, RATES) == 0


def test_a_provider_that_bills_writes_as_input_has_no_write_premium() -> None:
    assert cache_savings_usd("openai:like", 0, 50_000, RATES) == 0  # a write costs what input costs
    assert cache_savings_usd("openai:like", 3_000, 50_000, RATES) == pytest.approx(3_000 * 1.5 / M)
    # and so in the shipped rates file: every OpenAI model lists cache_write_5m == input
    rates = load_rates()
    openai = [name for name in rates.models if name.startswith("openai:")]
    assert openai
    for name in openai:
        assert cache_savings_usd(name, 0, 12_345, rates) == 0, name
    claude = rates.models["claude-sonnet-5"]
    assert cache_savings_usd("claude-sonnet-5", 0, 1_000, rates) == pytest.approx(
        -1_000 * (claude.cache_write_5m - claude.input) / M
    )


# --- the hit rate and the report --------------------------------------------------------------


def test_cache_hit_rate_counts_every_kind_of_input() -> None:
    assert cache_hit_rate(read=600, written=200, uncached=200) == pytest.approx(0.6)
    assert cache_hit_rate(read=0, written=1_000, uncached=0) == 0.0  # written, not read: 0 %, not undefined
    assert cache_hit_rate(0, 0, 0) is None


def day(when: int, **sums: object) -> DayTotals:
    return DayTotals(day=date(2025, 1, when), runs=1, **sums)


def test_the_report_sums_tokens_before_dividing_per_bucket_and_overall() -> None:
    days = [
        day(
            6,
            review_input_tokens=1_000,
            review_cache_write_tokens=1_000,
            review_cache_read_tokens=0,
            cache_savings_usd=-0.004,
        ),
        day(
            7,
            review_input_tokens=500,
            review_cache_write_tokens=0,
            review_cache_read_tokens=3_000,
            cache_savings_usd=0.0108,
        ),
    ]
    report = build_report(MetricsFilter(), days, [], [], [])
    h = report.headline
    assert (h.review_prompt_tokens, h.review_cache_read_tokens, h.review_cache_write_tokens) == (5_500, 3_000, 1_000)
    assert h.cache_hit_rate == pytest.approx(3_000 / 5_500)  # not the mean of 0 % and 85.7 %
    assert h.cache_savings_usd == pytest.approx(0.0068)
    assert [(p.cache_hit_rate, p.cache_savings_usd) for p in report.series] == [
        (0.0, pytest.approx(-0.004)),
        (pytest.approx(3_000 / 3_500), pytest.approx(0.0108)),
    ]
    rows = dict(m.headline_rows(report))
    assert (rows["Cache hit rate"], rows["Cache savings"]) == ("54.5 %", "$0.0068")
    week = build_report(MetricsFilter(), days, [], [], [], grain="week").series
    assert len(week) == 1 and week[0].cache_hit_rate == pytest.approx(3_000 / 5_500)


def test_no_review_call_leaves_the_hit_rate_undefined() -> None:
    report = build_report(MetricsFilter(), [day(6)], [], [], [])
    assert report.headline.cache_hit_rate is None and dict(m.headline_rows(report))["Cache hit rate"] == "—"
    assert report.series[0].cache_hit_rate is None


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param(-0.0012, "-$0.0012", id="negative-cents"),
        pytest.param(-12.5, "-$12.50", id="negative-dollars"),
        pytest.param(-0.00001, "-$0.00001", id="a-tiny-loss-keeps-its-sign"),
        pytest.param(0.0068, "$0.0068", id="positive"),
    ],
)
def test_a_negative_amount_keeps_its_sign_before_the_dollar(value: float, text: str) -> None:
    assert format_figure(value, "usd") == text


# --- the note -------------------------------------------------------------------------------


def test_the_note_says_what_to_do_when_nothing_was_cached() -> None:
    kind, text = cache_note(0, 0, 0, 0.0, usd)
    assert kind == "empty" and "No review call in this view" in text
    kind, text = cache_note(4_000, 0, 0, 0.0, usd)
    assert kind == "unused"
    assert "no prompt was long enough to cache" in text and "no prefix was reused within its lifetime" in text
    assert "smallest cacheable prefix" in text and "5 minutes" in text


def test_the_note_says_so_when_the_cache_cost_more_than_it_saved() -> None:
    kind, text = cache_note(4_000, 0, 3_000, -0.003, usd)
    assert kind == "loss"
    assert "Prompt caching cost more than it saved: net -$0.003" in text and "read none back" in text
    kind, text = cache_note(9_000, 1_000, 6_000, -0.0005, usd)
    assert kind == "loss" and "read only 1,000 back" in text


def test_the_note_states_the_hits_and_the_net_savings() -> None:
    kind, text = cache_note(5_500, 3_000, 1_000, 0.0068, usd)
    assert kind == "saved"
    assert text == (
        "3,000 of the review calls' 5,500 input tokens came from the prompt cache (1,000 written to it); "
        "caching saved $0.0068 net of the write premium."
    )


def test_a_one_hour_write_costs_its_own_premium() -> None:
    """A 1-hour entry (a busy desk, a batch) is written at 2 x input: its premium is the whole input rate."""
    r = load_rates().models["claude-sonnet-5-5"]
    assert cache_savings_usd("claude-sonnet-5-5", 0, 1_000_000, write_ttl="1h") == pytest.approx(-r.input)
    assert cache_savings_usd("claude-sonnet-5-5", 0, 1_000_000) == pytest.approx(-(r.cache_write_5m - r.input))
