"""What one round of review will cost, before it starts (issue 18): each reviewer slot, the injection screen,
the total, and the total against the output's generation cost.

Pure. A reviewer line comes from one of two sources:

- **measured**: the call log holds at least `MEASURED_MIN_CALLS` review calls of this rubric and model from the
  last `MEASURED_DAYS` days; the input is still counted from this prompt (it follows this item's size), the
  answer is their average answer (how much a model writes back is its habit, which only the log knows);
- **estimated from the prompt**: the exact request the reviewer is sent (`build_review_prompt`: instructions and
  rubric once, the fenced data, the criterion ids and the answer contract) plus the answer schema that travels
  with it, counted at the desk's token estimate (`pricing.estimate_tokens`, an upper one, no cache read assumed),
  and a clean terse answer (`ANSWER_BASE_TOKENS` + `ANSWER_TOKENS_PER_CRITERION` per criterion).

A person in a slot costs nothing. A model with no listed price is counted at the highest listed rate, as the
budget counts it (`pricing.for_model`), and the estimate names it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from santa_core import pricing
from santa_core.checks.extraction import extraction_prompt
from santa_core.checks.screen import KEY_LENGTH, KEY_VERDICT, SCREEN_MAX_TOKENS, screen_prompt, screened_text
from santa_core.models import Review, Rubric, Usage
from santa_core.providers import PERSON_FAMILY, canonical
from santa_core.reviewers.prompts import build_review_prompt

MEASURED_MIN_CALLS = 5
"""Review calls of one rubric and model the call log must hold before their average replaces the estimate."""
MEASURED_DAYS = 30
"""How far back the measured average looks (prices, prompts and caching change)."""
ANSWER_BASE_TOKENS = 25
"""A clean answer's frame: the verdict, the empty lists and the JSON around the checks (about)."""
ANSWER_TOKENS_PER_CRITERION = 12
"""One PASS check with no detail (about); a FAIL adds a sentence and a quote."""
_NONCE = "0" * 16
"""A nonce of the real length: the estimate is the same on every rerun."""
_KEY = f"{KEY_VERDICT}-" + "X" * KEY_LENGTH

PERSON_SOURCE = "a person: no model call"
ESTIMATED_SOURCE = "estimated from the prompt"
SCREEN_SOURCE = (
    "estimated from the screening prompts: the key check at most its whole answer room, the extraction "
    "check a clean answer"
)
EXTRACT_ANSWER_TOKENS = 8
"""The extraction check's clean answer, NONE (about, with the provider's framing)."""


@dataclass(frozen=True)
class MeasuredCost:
    """The average review call of one rubric and model in the call log (tokens as the provider counted them)."""

    calls: int
    input_tokens: float
    output_tokens: float
    cache_creation_input_tokens: float = 0.0
    cache_read_input_tokens: float = 0.0

    def usage(self) -> Usage:
        """The average call as a usage (rounded to whole tokens)."""
        return Usage(
            input_tokens=round(self.input_tokens),
            output_tokens=round(self.output_tokens),
            cache_creation_input_tokens=round(self.cache_creation_input_tokens),
            cache_read_input_tokens=round(self.cache_read_input_tokens),
        )


@dataclass(frozen=True)
class CostLine:
    """One call of the round: who makes it, its tokens, its price and where the figure comes from."""

    label: str
    """"B", "C", "D" (the third reviewer of a rubric's high-risk criteria) or "screen"."""
    model: str
    usage: Usage
    usd: float
    source: str
    price_known: bool = True
    """False: no listed price, counted at the highest listed rate."""

    @property
    def input_tokens(self) -> int:
        """Every prompt token, cached or not."""
        u = self.usage
        return u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens

    @property
    def output_tokens(self) -> int:
        return self.usage.output_tokens


@dataclass(frozen=True)
class RoundEstimate:
    """The estimated cost of one round before it starts."""

    lines: tuple[CostLine, ...]
    batch: bool = False
    """Reviewer calls priced with the Message Batches discount."""

    @property
    def total_usd(self) -> float:
        return sum(line.usd for line in self.lines)

    @property
    def unpriced(self) -> list[str]:
        """Models with no listed price (counted at the highest listed rate)."""
        return list(dict.fromkeys(line.model for line in self.lines if not line.price_known))

    @property
    def measured(self) -> bool:
        """True when some line comes from the call log rather than the prompt."""
        return any(line.source.startswith("measured") for line in self.lines)

    def ratio(self, generation_usd: float | None) -> float | None:
        """Review cost of the round ÷ the generation cost (None: no generation cost, or zero)."""
        if generation_usd is None or generation_usd <= 0:
            return None
        return self.total_usd / generation_usd

    def scaled(self, times: int) -> float:
        """What `times` such rounds cost (a batch sample: one round per item)."""
        return self.total_usd * times


@cache
def _schema_tokens() -> int:
    """The answer schema every review request carries."""
    return pricing.estimate_tokens(json.dumps(Review.model_json_schema()))


def prompt_usage(rubric: Rubric, spec: str, output: str) -> Usage:
    """One review call as estimated from its prompt: the request the reviewer is sent, the schema, a clean answer."""
    prompt = build_review_prompt(rubric, spec, output, nonce=_NONCE)
    system = "".join(block["text"] for block in prompt.system)
    sent = pricing.estimate_tokens(system) + pricing.estimate_tokens(prompt.user) + _schema_tokens()
    answer = ANSWER_BASE_TOKENS + ANSWER_TOKENS_PER_CRITERION * len(rubric.criteria)
    return Usage(input_tokens=sent, output_tokens=answer)


def screen_usage(spec: str, output: str) -> Usage:
    """The injection screen's two calls, each its prompt over the spec and output: the known-answer screen with all
    of its answer room (a key's), the extraction check with a clean answer (`EXTRACT_ANSWER_TOKENS`: NONE), as a
    reviewer's line counts a clean terse answer (its room, `EXTRACT_MAX_TOKENS`, is for texts that hold quotes)."""
    key = screen_prompt(screened_text(spec, output), _KEY, nonce=_NONCE)
    quotes = extraction_prompt(spec, output, nonce=_NONCE)
    return Usage(
        input_tokens=pricing.estimate_tokens(key.user) + pricing.estimate_tokens(quotes.user),
        output_tokens=SCREEN_MAX_TOKENS + EXTRACT_ANSWER_TOKENS,
    )


def measured_source(calls: int) -> str:
    return f"measured: the input from this prompt, the answer the average of {calls} review calls with this rubric"


def _line(label: str, model: str, usage: Usage, source: str, batch: bool, rates: pricing.Rates) -> CostLine:
    known = pricing.is_known(model, rates)
    return CostLine(label, model, usage, pricing.cost_usd(model, usage, rates, batch=batch), source, known)


def reviewer_line(
    label: str,
    model: str,
    rubric: Rubric,
    spec: str,
    output: str,
    measured: Mapping[str, MeasuredCost] | None,
    batch: bool,
    rates: pricing.Rates,
) -> CostLine:
    """One reviewer slot: a person is free; a model is measured when the log holds enough calls, else estimated."""
    if model == PERSON_FAMILY:
        return CostLine(label, model, Usage(), 0.0, PERSON_SOURCE)
    seen = (measured or {}).get(canonical(model))
    usage = prompt_usage(rubric, spec, output)
    if seen is not None and seen.calls >= MEASURED_MIN_CALLS:
        # Why only the answer is measured: the input follows this item's size (a 2 MB output is not the average
        # item), while how much a model writes back is its habit, which the log knows and the prompt does not.
        usage = usage.model_copy(update={"output_tokens": round(seen.output_tokens)})
        return _line(label, model, usage, measured_source(seen.calls), batch, rates)
    return _line(label, model, usage, ESTIMATED_SOURCE, batch, rates)


def estimate_round(
    rubric: Rubric,
    spec: str,
    output: str,
    reviewer_b: str,
    reviewer_c: str,
    screen_model: str | None,
    measured: Mapping[str, MeasuredCost] | None = None,
    batch: bool = False,
    rates: pricing.Rates | None = None,
    reviewer_d: str | None = None,
) -> RoundEstimate:
    """The cost of one round of `rubric` on this spec and output: B, C, D (when the rubric has high-risk criteria
    and `reviewer_d` names a model) and (when `screen_model`) the screen.

    `measured` maps a model id (canonical) to its average review call with this rubric; `batch` prices the
    reviewers with the Message Batches discount (the screen is one call at a time, at the full rate).
    """
    rates = rates or pricing.load_rates()
    lines = [
        reviewer_line(slot, model, rubric, spec, output, measured, batch, rates)
        for slot, model in (("B", reviewer_b), ("C", reviewer_c))
    ]
    if reviewer_d and (high_risk := rubric.high_risk()) is not None:
        # D is asked the high-risk criteria only: its prompt is that smaller rubric. Not measured: the log's
        # averages are of whole-rubric answers, longer than D's.
        lines.append(reviewer_line("D", reviewer_d, high_risk, spec, output, None, batch, rates))
    if screen_model:
        lines.append(_line("screen", screen_model, screen_usage(spec, output), SCREEN_SOURCE, False, rates))
    return RoundEstimate(tuple(lines), batch)
