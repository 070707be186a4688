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
        """Rates of `model`, or the conservative fallback when the model is not listed."""
        return self.models.get(model) or self.fallback()


def parse_rates(data: dict) -> Rates:
    """Build Rates from the decoded TOML table (raises KeyError/TypeError on a malformed file)."""
    models = {name: ModelRates(**row) for name, row in data["models"].items()}
    if not models:
        raise ValueError("rates file lists no models")
    return Rates(
        as_of=str(data["as_of"]),
        batch_discount=float(data.get("batch_discount", 0.0)),
        models=models,
    )


@lru_cache(maxsize=8)
def _load_cached(path: Path) -> Rates:
    with path.open("rb") as fh:
        return parse_rates(tomllib.load(fh))


def load_rates(path: str | Path | None = None) -> Rates:
    """Load a rates file (default: santa_core/rates.toml); parsed once per path."""
    return _load_cached(Path(path) if path else DEFAULT_RATES_PATH)


def is_known(model: str, rates: Rates | None = None) -> bool:
    """True when the rates file lists `model` (otherwise costs use the fallback rate)."""
    return model in (rates or load_rates()).models


def rates_as_of(rates: Rates | None = None) -> str:
    """The date (YYYY-MM-DD) the rates were last checked."""
    return (rates or load_rates()).as_of


def cost_usd(model: str, usage: Usage, rates: Rates | None = None, batch: bool = False) -> float:
    """USD cost of `usage` on `model`: input, output, 5-minute cache writes and cache reads."""
    rates = rates or load_rates()
    r = rates.for_model(model)
    total = (
        usage.input_tokens * r.input
        + usage.output_tokens * r.output
        + usage.cache_creation_input_tokens * r.cache_write_5m
        + usage.cache_read_input_tokens * r.cache_read
    ) / PER_TOKENS
    # batch_discount is the fraction taken off (0.5 = half price). Batch and cache discounts
    # stack, so it applies to every line.
    return total * (1 - rates.batch_discount) if batch else total


PROMPT_OVERHEAD_TOKENS = 1_500
"""Reviewer instructions and answer contract around the rubric, spec and output (about)."""
REVIEW_ANSWER_TOKENS = 700
"""A typical review answer: one check per criterion and a few issues (about)."""


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
    usage = Usage(input_tokens=chars // 4 + 1, output_tokens=int(body.get("max_tokens") or REVIEW_ANSWER_TOKENS))
    return cost_usd(model, usage, rates)


def cache_savings_usd(model: str, cache_read_tokens: int, rates: Rates | None = None) -> float:
    """What reading `cache_read_tokens` from the prompt cache saved against paying the input rate."""
    r = (rates or load_rates()).for_model(model)
    return cache_read_tokens * (r.input - r.cache_read) / PER_TOKENS
