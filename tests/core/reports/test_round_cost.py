"""The estimated cost of a round before it starts (`santa_core.reports.round_cost`): the prompt estimate grows
with the output and counts the rubric once and the answer schema, a person slot is free, a model with no listed
price is counted at the highest listed rate and named, the measured average replaces the estimate only from
five calls on, the screen adds its one call, the batch discount applies to the reviewers only, and the ratio to
the generation cost."""

from __future__ import annotations

import json

import pytest

from santa_core import pricing
from santa_core.models import Review
from santa_core.reports.round_cost import (
    ANSWER_BASE_TOKENS,
    ANSWER_TOKENS_PER_CRITERION,
    ESTIMATED_SOURCE,
    MEASURED_MIN_CALLS,
    PERSON_SOURCE,
    MeasuredCost,
    estimate_round,
    measured_source,
    prompt_usage,
)
from santa_core.reviewers.prompts import render_rubric
from santa_core.rubrics.library import load_builtin

RUBRIC = load_builtin("content")
SPEC = "Write a friendly 80-word blurb for the Acme rocket. Mention the 2018 launch and the free manual."
OUTPUT = "Meet the Acme rocket: launched in 2018, loved ever since. Every rocket ships with a free manual. " * 2
HAIKU, NANO, SONNET = "claude-haiku-5-5", "openai:gpt-5.4-nano", "claude-sonnet-5-5"


def test_the_prompt_estimate_counts_the_whole_request_and_a_clean_answer() -> None:
    usage = prompt_usage(RUBRIC, SPEC, OUTPUT)
    rubric_tokens = pricing.estimate_tokens(render_rubric(RUBRIC))
    schema_tokens = pricing.estimate_tokens(json.dumps(Review.model_json_schema()))
    data_tokens = pricing.estimate_tokens(SPEC + OUTPUT)
    # the rubric once (not twice), the schema, the data, and the instructions around them
    assert (
        rubric_tokens + schema_tokens + data_tokens
        < usage.input_tokens
        < 2 * rubric_tokens + schema_tokens + data_tokens
    )
    assert usage.output_tokens == ANSWER_BASE_TOKENS + ANSWER_TOKENS_PER_CRITERION * len(RUBRIC.criteria)


def test_the_estimate_grows_with_the_output() -> None:
    short = estimate_round(RUBRIC, SPEC, OUTPUT, HAIKU, NANO, None)
    long = estimate_round(RUBRIC, SPEC, OUTPUT * 10, HAIKU, NANO, None)
    for s, lng in zip(short.lines, long.lines, strict=True):
        assert lng.input_tokens - s.input_tokens == pytest.approx(9 * len(OUTPUT) / 4, abs=2)
        assert lng.usd > s.usd
    assert long.total_usd > short.total_usd


def test_each_line_is_priced_from_its_usage() -> None:
    estimate = estimate_round(RUBRIC, SPEC, OUTPUT, HAIKU, NANO, HAIKU)
    assert [(line.label, line.model) for line in estimate.lines] == [("B", HAIKU), ("C", NANO), ("screen", HAIKU)]
    for line in estimate.lines:
        assert line.usd == pytest.approx(pricing.cost_usd(line.model, line.usage)) and line.usd > 0
    assert estimate.total_usd == pytest.approx(sum(line.usd for line in estimate.lines))
    assert estimate.lines[0].source == ESTIMATED_SOURCE and not estimate.unpriced and not estimate.measured


def test_a_person_slot_costs_nothing() -> None:
    estimate = estimate_round(RUBRIC, SPEC, OUTPUT, "person", NANO, None)
    person, model = estimate.lines
    assert (person.usd, person.input_tokens, person.output_tokens, person.source) == (0.0, 0, 0, PERSON_SOURCE)
    assert estimate.total_usd == pytest.approx(model.usd) and model.usd > 0


def test_a_model_with_no_listed_price_is_flagged_and_counted_at_the_highest_rate() -> None:
    estimate = estimate_round(RUBRIC, SPEC, OUTPUT, "local:qwen3:32b", HAIKU, None)
    unknown, known = estimate.lines
    assert estimate.unpriced == ["local:qwen3:32b"] and not unknown.price_known and known.price_known
    fallback = pricing.load_rates().fallback()
    expected = (unknown.usage.input_tokens * fallback.input + unknown.usage.output_tokens * fallback.output) / 1e6
    assert unknown.usd == pytest.approx(expected) and unknown.usd > known.usd


def measured(calls: int) -> dict[str, MeasuredCost]:
    return {HAIKU: MeasuredCost(calls=calls, input_tokens=900.4, output_tokens=80.0, cache_read_input_tokens=1500.0)}


@pytest.mark.parametrize("calls, used", [(MEASURED_MIN_CALLS - 1, False), (MEASURED_MIN_CALLS, True), (40, True)])
def test_the_measured_average_is_used_from_five_calls_on(calls: int, used: bool) -> None:
    b, c = estimate_round(RUBRIC, SPEC, OUTPUT, f"anthropic:{HAIKU}", NANO, None, measured(calls)).lines
    assert c.source == ESTIMATED_SOURCE  # no calls of that model: its estimate
    if used:
        assert b.source == measured_source(calls)
        # the input follows this item (its prompt), the answer is the log's average answer
        assert b.usage == prompt_usage(RUBRIC, SPEC, OUTPUT).model_copy(update={"output_tokens": 80})
        assert b.input_tokens == prompt_usage(RUBRIC, SPEC, OUTPUT).input_tokens and b.usd == pytest.approx(
            pricing.cost_usd(HAIKU, b.usage)
        )
    else:
        assert b.source == ESTIMATED_SOURCE and b.usage == prompt_usage(RUBRIC, SPEC, OUTPUT)


def test_the_batch_discount_applies_to_the_reviewers_not_the_screen() -> None:
    one = estimate_round(RUBRIC, SPEC, OUTPUT, HAIKU, SONNET, HAIKU)
    batched = estimate_round(RUBRIC, SPEC, OUTPUT, HAIKU, SONNET, HAIKU, batch=True)
    discount = pricing.load_rates().batch_discount
    assert 0 < discount < 1 and batched.batch
    for a, b in zip(one.lines[:2], batched.lines[:2], strict=True):
        assert b.usd == pytest.approx(a.usd * (1 - discount))
    assert batched.lines[2].usd == pytest.approx(one.lines[2].usd)


def test_the_screen_is_two_short_calls_over_spec_and_output() -> None:
    """The key check and the extraction check each read the spec and output once, with a short instruction."""
    screen = estimate_round(RUBRIC, SPEC, OUTPUT, HAIKU, NANO, HAIKU).lines[-1]
    assert screen.label == "screen" and 2 * pricing.estimate_tokens(SPEC + OUTPUT) < screen.input_tokens
    assert screen.input_tokens < 2 * pricing.estimate_tokens(SPEC + OUTPUT) + 300
    assert len(estimate_round(RUBRIC, SPEC, OUTPUT, HAIKU, NANO, None).lines) == 2


def test_the_ratio_to_the_generation_cost() -> None:
    estimate = estimate_round(RUBRIC, SPEC, OUTPUT, HAIKU, NANO, HAIKU)
    assert estimate.ratio(estimate.total_usd * 2) == pytest.approx(0.5)
    assert estimate.ratio(estimate.total_usd / 4) == pytest.approx(4.0)
    assert estimate.ratio(None) is None and estimate.ratio(0.0) is None
    assert estimate.scaled(30) == pytest.approx(30 * estimate.total_usd)


def test_the_screen_line_counts_both_of_its_calls() -> None:
    """Issue 36: the known-answer screen and the extraction check are two calls: the key's at most its whole answer
    room, the extraction's a clean answer (NONE), as a reviewer's line counts a clean terse answer."""
    from santa_core.checks.extraction import extraction_prompt
    from santa_core.checks.screen import SCREEN_MAX_TOKENS, screen_prompt, screened_text
    from santa_core.reports.round_cost import EXTRACT_ANSWER_TOKENS

    (screen,) = [
        line for line in estimate_round(RUBRIC, SPEC, OUTPUT, HAIKU, NANO, HAIKU).lines if line.label == "screen"
    ]
    key = screen_prompt(screened_text(SPEC, OUTPUT), "FAIL-XXXXXXXXXX", nonce="0" * 16)
    quotes = extraction_prompt(SPEC, OUTPUT, nonce="0" * 16)
    assert screen.usage.input_tokens == pricing.estimate_tokens(key.user) + pricing.estimate_tokens(quotes.user)
    assert screen.usage.output_tokens == SCREEN_MAX_TOKENS + EXTRACT_ANSWER_TOKENS
