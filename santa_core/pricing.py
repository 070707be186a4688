"""Token usage to US dollars, from the rates file kept in the repo (santa_core/rates.toml).

Pure: reads a TOML file, does arithmetic. Rates live in data, not code, because prices and
model ids change monthly.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from santa_core.models import Usage
from santa_core.providers import PERSON_FAMILY, canonical

DEFAULT_RATES_PATH = Path(__file__).with_name("rates.toml")
PER_TOKENS = 1_000_000
"""Rates are quoted in USD per million tokens."""


@dataclass(frozen=True)
class ModelRates:
    """USD per million tokens for one model."""

    input: float
    output: float
    cache_write_5m: float
    cache_read: float
    as_of: str | None = None
    """When this model's prices were read (None: the file's `as_of`)."""
    cache_write_1h: float | None = None
    """A 1-hour prompt-cache write (None: twice the input rate, as the Claude platform bills it)."""
    min_cache_tokens: int | None = None
    """The shortest prompt prefix the provider caches behind an explicit breakpoint (None: the provider caches by
    itself, or the figure is not known, so the desk never places one)."""

    def cache_write(self, ttl: str = "5m") -> float:
        """The write rate of a cache entry that lives `ttl` ("5m" or "1h")."""
        if ttl == "1h":
            return self.cache_write_1h if self.cache_write_1h is not None else 2 * self.input
        return self.cache_write_5m


@dataclass(frozen=True)
class Rates:
    """The whole rates file: per-model rates, the batch discount (fraction off) and its date."""

    as_of: str
    batch_discount: float
    models: dict[str, ModelRates]

    def fallback(self) -> ModelRates:
        """The most expensive listed rate per line, so an unknown model is never under-costed."""
        rows = self.models.values()
        return ModelRates(
            input=max(r.input for r in rows),
            output=max(r.output for r in rows),
            cache_write_5m=max(r.cache_write_5m for r in rows),
            cache_read=max(r.cache_read for r in rows),
        )

    def for_model(self, model: str) -> ModelRates:
        """Rates of `model`, or the conservative fallback when the model is not listed (the budget rule for a
        price unknown: counted at the highest listed rate, an upper bound, so a budget still stops the run)."""
        return self.models.get(canonical(model)) or self.fallback()


def parse_rates(data: dict) -> Rates:
    """Build Rates from the decoded TOML table (raises KeyError/TypeError on a malformed file)."""
    models = {name: ModelRates(**row) for name, row in data["models"].items()}
    if not models:
        raise ValueError("rates file lists no models")
    return Rates(as_of=str(data["as_of"]), batch_discount=float(data.get("batch_discount", 0.0)), models=models)


@lru_cache(maxsize=8)
def _load_cached(path: Path) -> Rates:
    with path.open("rb") as fh:
        return parse_rates(tomllib.load(fh))


def load_rates(path: str | Path | None = None) -> Rates:
    """Load a rates file (default: santa_core/rates.toml); parsed once per path."""
    return _load_cached(Path(path) if path else DEFAULT_RATES_PATH)


def is_known(model: str, rates: Rates | None = None) -> bool:
    """True when the rates file lists `model` (otherwise its price is unknown and costs use the fallback rate)."""
    return canonical(model) in (rates or load_rates()).models


PRICE_UNKNOWN = "price unknown"
UNKNOWN_PRICE_RULE = (
    "a model with no listed price is counted against the budget at the highest listed rate (an "
    'upper bound, so the budget still stops a run), and its cost is shown as "price unknown" '
    "with its tokens; add it to santa_core/rates.toml to price it"
)
"""What the desk does with a model it has no price for (the budget rule, in words)."""


def unpriced(*models: str, rates: Rates | None = None) -> list[str]:
    """The models (people left out) with no listed price: their calls count against a budget at the highest
    listed rate, and their cost shows as "price unknown"."""
    return [m for m in dict.fromkeys(models) if m != PERSON_FAMILY and not is_known(m, rates)]


def model_as_of(model: str, rates: Rates | None = None) -> str | None:
    """When `model`'s price was read (None: no listed price)."""
    rates = rates or load_rates()
    row = rates.models.get(canonical(model))
    return None if row is None else row.as_of or rates.as_of


def rates_as_of(rates: Rates | None = None) -> str:
    """The date (YYYY-MM-DD) the rates were last checked."""
    return (rates or load_rates()).as_of


def cost_usd(model: str, usage: Usage, rates: Rates | None = None, batch: bool = False, write_ttl: str = "5m") -> float:
    """USD cost of `usage` on `model`: input, output, cache writes (of a `write_ttl` entry) and cache reads."""
    rates = rates or load_rates()
    r = rates.for_model(model)
    total = (
        usage.input_tokens * r.input
        + usage.output_tokens * r.output
        + usage.cache_creation_input_tokens * r.cache_write(write_ttl)
        + usage.cache_read_input_tokens * r.cache_read
    ) / PER_TOKENS
    # batch_discount is the fraction taken off (0.5 = half price). Batch and cache discounts
    # stack, so it applies to every line.
    return total * (1 - rates.batch_discount) if batch else total


CHARS_PER_TOKEN = 4
"""The desk's token estimate: 4 characters a token, on the high side for English prose and markup (the
platform's tokenizer counts about 6 on the desk's prompts), so an estimate shown before a call is an upper one."""


def estimate_tokens(text: str) -> int:
    """Tokens `text` counts as, estimated (4 characters a token, at least 1)."""
    return len(text) // CHARS_PER_TOKEN + 1


PROMPT_OVERHEAD_TOKENS = 1_100
"""Reviewer instructions, fences, answer contract and schema around the rubric, spec and output (about 4,200
characters in the terse layout, at 4 characters a token)."""
REVIEW_ANSWER_TOKENS = 300
"""A review answer under the terse contract: one short check per criterion, a sentence and a quote per failure
(a clean answer is about 25 + 12 per criterion; 300 leaves room for a few failures)."""


def estimate_review_usd(model: str, text_chars: int, batch: bool = False, rates: Rates | None = None) -> float:
    """What one review of `text_chars` characters of rubric, spec and output costs, roughly (4 chars a token).

    For estimates shown before anything runs; actual costs come from the usage each call reports.
    """
    usage = Usage(input_tokens=PROMPT_OVERHEAD_TOKENS + text_chars // 4, output_tokens=REVIEW_ANSWER_TOKENS)
    return cost_usd(model, usage, rates, batch=batch)


def estimate_call_usd(model: str, body: dict, rates: Rates | None = None) -> float:
    """The most a request sent and never answered may have cost: its whole body as input (4 characters a
    token) and all of its `max_tokens` as output. What the budget counts for a call cut off by a crash."""
    chars = len(json.dumps(body, ensure_ascii=False, default=str))
    room = body.get("max_tokens") or body.get("max_completion_tokens")  # Messages API / OpenAI's Chat Completions
    usage = Usage(input_tokens=chars // CHARS_PER_TOKEN + 1, output_tokens=int(room or REVIEW_ANSWER_TOKENS))
    return cost_usd(model, usage, rates)


def cache_savings_usd(
    model: str, cache_read_tokens: int, cache_write_tokens: int = 0, rates: Rates | None = None, write_ttl: str = "5m"
) -> float:
    """What prompt caching saved on `model`, net: the cached call's cost against the same call with no cache.

    Reads are paid at the cache-read rate instead of the input rate (a saving); writes at the write rate of
    their lifetime (`write_ttl`: "5m" or "1h", 2 × input) instead of the input rate (a premium, 1.25 × input on the Claude platform, none where the provider
    bills writes as input, e.g. OpenAI). Negative when the writes cost more than the reads saved: a prefix
    written and never read back within its lifetime is money lost.
    """
    r = (rates or load_rates()).for_model(model)
    saved = cache_read_tokens * (r.input - r.cache_read)
    premium = cache_write_tokens * (r.cache_write(write_ttl) - r.input)
    return (saved - premium) / PER_TOKENS
