"""The prompt cache's figures, defined once: the cache hit rate, the net savings, and what they mean in words.

A prompt cache pays off only when a prefix is read back: a read is billed below the input rate, a write
above it (1.25 × input for a 5-minute entry on the Claude platform; OpenAI bills no write premium). So the
savings are net, `santa_core.pricing.cache_savings_usd`, and may be negative. Storage stores them per run
and sums them, with the review calls' input tokens of each kind; this module turns the sums into the
figures (`santa_core.reports.metrics` puts them in the headline and the time series) and into the note the
Metrics page shows next to them.

Pure, and upstream of `santa_core.reports.metrics` (which imports it): nothing here imports the report.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol, TypedDict

HIT_RATE = (
    "Cache-read tokens ÷ all input tokens of the review calls (the reviewers' and the injection screen's): read ÷ "
    "(uncached input + written to the cache + read from the cache). The share of what the reviewers were sent "
    "that the provider served from its prompt cache. — when the view holds no review call."
)
SAVINGS = (
    "Net, over every model call of the runs, each at its model's rates: cache-read tokens × (input rate − "
    "cache-read rate) − cache-write tokens × (cache-write rate of the entry's lifetime − input rate), scaled by what the call was "
    "charged against its list price (a batch call pays half). What the calls cost "
    "against the same calls with no cache at all. Negative when the write premium (1.25 × input on Claude; none "
    "on OpenAI, which bills writes as input) outweighed the reads: prefixes written and not read back within "
    "their lifetime."
)
CACHE_DEFINITIONS: dict[str, str] = {
    "cache_hit_rate": HIT_RATE,
    "cache_savings": SAVINGS,
    "cache": f"Cache hit rate: {HIT_RATE}\n\nCache savings: {SAVINGS}",
}
"""The cache figures' definitions, each apart and both together for the chart (part of
`santa_core.reports.metrics.DEFINITIONS`)."""


class ReviewPrompt(Protocol):
    """Sums of the review calls' input tokens (a day's totals, or a bucket's)."""

    review_input_tokens: int
    review_cache_write_tokens: int
    review_cache_read_tokens: int


def cache_hit_rate(read: int, written: int, uncached: int) -> float | None:
    """Cache-read tokens ÷ all input tokens (uncached + written to the cache + read from it); None: no input."""
    total = uncached + written + read
    return read / total if total else None


class CacheFigures(TypedDict):
    """The cache's figures of one headline or series point (fields of both)."""

    review_prompt_tokens: int
    review_cache_read_tokens: int
    cache_hit_rate: float | None


def cache_figures(t: ReviewPrompt) -> CacheFigures:
    """The review calls' input tokens (all three kinds), those read from the cache, and the hit rate."""
    return {
        "review_prompt_tokens": t.review_input_tokens + t.review_cache_write_tokens + t.review_cache_read_tokens,
        "review_cache_read_tokens": t.review_cache_read_tokens,
        "cache_hit_rate": cache_hit_rate(
            t.review_cache_read_tokens, t.review_cache_write_tokens, t.review_input_tokens
        ),
    }


NoteKind = Literal["empty", "unused", "loss", "saved"]

NO_REVIEW_CALLS = "No review call in this view reported its input tokens yet, so there is no cache figure."
UNUSED = (
    "No review call in this view used the prompt cache: nothing was written to it and nothing read from it. "
    "Either no prompt was long enough to cache — the shared prefix (instructions and rubric, the part every "
    "review of one rubric and model sends alike) must reach the model's smallest cacheable prefix (on the "
    "Claude platform 512 to 4,096 tokens depending on the model; OpenAI caches prompts of 1,024 tokens and "
    "more by itself) — or no prefix was reused within its lifetime (5 minutes on the Claude platform, renewed "
    "by every read), so each review paid for its prompt in full. To get hits: review runs of one rubric and "
    "panel close together (a batch does), and use a rubric whose prefix is long enough to cache."
)


def cache_note(
    prompt: int, read: int, written: int, savings: float, usd: Callable[[float], str]
) -> tuple[NoteKind, str]:
    """(kind, sentence) saying what the view's cache figures mean and, when caching did not pay, why.

    `prompt`, `read`, `written`: the review calls' input tokens (all kinds, read from, written to the cache);
    `savings`: the net cache savings of every call; `usd` writes an amount as the page does.
    """
    if not prompt:
        return "empty", NO_REVIEW_CALLS
    if not read and not written:
        return "unused", UNUSED
    if savings < 0:
        unread = "none" if not read else f"only {read:,}"
        return "loss", (
            f"Prompt caching cost more than it saved: net {usd(savings)}. Cache writes are billed above "
            f"the input rate; the review calls wrote {written:,} tokens to the cache and read {unread} "
            "back, so most entries expired before a review reused their prefix. Reviews of one rubric "
            "and panel that come within the cache's lifetime (5 minutes on the Claude platform) read "
            "what the first one wrote."
        )
    return "saved", (
        f"{read:,} of the review calls' {prompt:,} input tokens came from the prompt cache "
        f"({written:,} written to it); caching saved {usd(savings)} net of the write premium."
    )
