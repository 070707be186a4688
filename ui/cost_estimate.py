"""The estimated cost of a round before it starts, on the Review page and the Batch page (issue 18).

The figures come from `santa_core.reports.round_cost` (pure: the exact reviewer prompt counted at four
characters a token, or the call log's average where it holds enough calls); this module reads the averages
(cached, no network), picks the screening model the desk will use, and lays the line out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from statistics import fmean

import streamlit as st

from santa_core import pricing
from santa_core.batch.report import CostEstimate
from santa_core.batch.store import BatchConfig
from santa_core.models import Rubric
from santa_core.providers import key_problem
from santa_core.reports.round_cost import MEASURED_DAYS, MEASURED_MIN_CALLS, MeasuredCost, RoundEstimate, estimate_round
from ui import app_desk, components
from ui.safe import escape_markdown

MEASURED_TTL_S = 300
"""How long the call log's averages are kept before they are read again (they move slowly)."""


@st.cache_data(ttl=MEASURED_TTL_S, max_entries=32, show_spinner=False)
def _measured(url: str, rubric_name: str, since: datetime) -> dict[str, MeasuredCost]:
    return app_desk.desk().runs.review_call_averages(rubric_name, since)


def measured_costs(rubric_name: str) -> dict[str, MeasuredCost]:
    """The average review call per model of this rubric over the last MEASURED_DAYS days (read at most every
    few minutes: the window starts on the hour, so reruns share one read)."""
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    return _measured(app_desk.desk().url, rubric_name, hour - timedelta(days=MEASURED_DAYS))


def screen_model() -> str | None:
    """The model of the injection screen when it will run (on in Settings, and its provider callable), else None."""
    d = app_desk.defaults()
    return d.screen_model if d.screen and not key_problem(d.screen_model) else None


@st.cache_data(max_entries=16, show_spinner=False)
def _estimate(
    rubric_json: str,
    spec: str,
    output: str,
    reviewer_b: str,
    reviewer_c: str,
    screen: str | None,
    measured: tuple[tuple[str, MeasuredCost], ...],
    batch: bool,
    reviewer_d: str | None,
) -> RoundEstimate:
    return estimate_round(
        Rubric.model_validate_json(rubric_json),
        spec,
        output,
        reviewer_b,
        reviewer_c,
        screen,
        dict(measured),
        batch=batch,
        reviewer_d=reviewer_d,
    )


def round_estimate(
    rubric: Rubric,
    spec: str,
    output: str,
    reviewer_b: str,
    reviewer_c: str,
    batch: bool = False,
    reviewer_d: str | None = None,
) -> RoundEstimate:
    """One round of this rubric, spec and output by B and C (and D on the high-risk criteria, when the rubric has
    some and `reviewer_d` names a model), and the screen when it runs (cached per input)."""
    measured = tuple(sorted(measured_costs(rubric.name).items()))
    return _estimate(
        rubric.model_dump_json(), spec, output, reviewer_b, reviewer_c, screen_model(), measured, batch, reviewer_d
    )


def breakdown(estimate: RoundEstimate) -> str:
    """'B claude-haiku-5-5 $0.0002 · C openai:gpt-5.4-nano $0.0006 · screen $0.0001' (plain text)."""
    return " · ".join(
        f"{line.label} {line.model} {components.usd(line.usd)}"
        if line.label != "screen"
        else f"screen {components.usd(line.usd)}"
        for line in estimate.lines
    )


def comparison(estimate: RoundEstimate, generation_usd: float | None) -> str:
    """The round against the generation cost entered, or how to get that comparison."""
    ratio = estimate.ratio(generation_usd)
    if ratio is None:
        return "enter the generation cost to compare"
    return f"{ratio:.1f}× the generation cost you entered"


def sources(estimate: RoundEstimate) -> str:
    """Where each line's figure comes from (the tooltip)."""
    lines = [
        f"{line.label} ({line.model}): {line.input_tokens:,} tokens in, {line.output_tokens:,} out, "
        f"{components.usd(line.usd)}; {line.source}."
        for line in estimate.lines
    ]
    how = (
        "Estimated from the prompt: the exact request each reviewer is sent (instructions and rubric, the spec "
        "and output, the answer contract and schema) at about four characters a token, an upper estimate with "
        "no cache read, and a clean terse answer (each failed criterion adds a sentence and a quote). "
        f"Measured: once the call log holds {MEASURED_MIN_CALLS} or more review calls of this rubric and model "
        f"from the last {MEASURED_DAYS} days, the answer is their average answer (the input still follows this "
        f"item's prompt). Priced from "
        f"santa_core/rates.toml (as of {pricing.rates_as_of()})."
    )
    if estimate.batch:
        how += " Reviewers are priced with the Message Batches discount; the screen is one call at a time."
    return "\n\n".join([*lines, how])


def unpriced_note(estimate: RoundEstimate) -> str | None:
    """What the estimate does with models that have no listed price, or None."""
    if not estimate.unpriced:
        return None
    return (
        f"{pricing.PRICE_UNKNOWN}: {', '.join(estimate.unpriced)} is counted at the highest listed rate (an upper "
        "bound, as the budget counts it); add it to santa_core/rates.toml to price it."
    )


def show_round(estimate: RoundEstimate, generation_usd: float | None) -> None:
    """The Review page's line: the round's total, its parts, and the ratio to the generation cost."""
    text = (
        f"Estimated review cost of a round: {components.usd(estimate.total_usd)} ({breakdown(estimate)}) — "
        f"{comparison(estimate, generation_usd)}"
    )
    st.caption(escape_markdown(text), help=sources(estimate))
    if note := unpriced_note(estimate):
        st.caption(escape_markdown(note))


def sample_estimate(
    base: CostEstimate, config: BatchConfig, spec_chars: Sequence[int], output_chars: Sequence[int]
) -> tuple[CostEstimate, RoundEstimate]:
    """A batch's sample and full verification (sizes from `base`), priced as rounds of its average item (the mean
    spec and output lengths): the sample with the Message Batches discount when it is on, full verification one
    call at a time. Also the average item's round."""
    spec, output = "x" * round(fmean(spec_chars or [0])), "x" * round(fmean(output_chars or [0]))
    panel = (config.rubric, spec, output, config.reviewer_b, config.reviewer_c)
    per_item = round_estimate(*panel, batch=config.message_batches)
    full = round_estimate(*panel) if config.message_batches else per_item
    return replace(base, sample_usd=per_item.scaled(base.sample), full_usd=full.scaled(base.items)), per_item


def show_sample(estimate: CostEstimate, per_item: RoundEstimate) -> None:
    """The Batch page's line: one item's round and the sample it adds up to."""
    discount = " with the Message Batches discount" if estimate.message_batches else ""
    text = (
        f"Estimated review cost of one sample: {estimate.sample:,} items × {components.usd(per_item.total_usd)} "
        f"per item{discount} = {components.usd(estimate.sample_usd)} (per item: {breakdown(per_item)}), from the "
        "file's average item length"
    )
    st.caption(escape_markdown(text), help=sources(per_item))
    if note := unpriced_note(per_item):
        st.caption(escape_markdown(note))
