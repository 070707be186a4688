"""The prompt cache on the Metrics page's Cost tab (issue 18): the "Cache hit rate" and "Cache savings" cards with
their formulas, the chart of both per bucket and its CSV, and what the tab says when caching cost more than it
saved or when no review call used the cache at all. Each history is one run, driven by the real runner with
reviewer doubles that report the cache usage a provider would.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from santa_core.models import LLMCall, ReviewOutcome, Usage
from santa_core.pricing import cost_usd, load_rates
from santa_core.reports.metrics import MetricsFilter
from santa_core.reports.metrics_words import format_figure
from santa_core.reviewers.base import ReviewRequest
from santa_core.reviewers.doubles import FunctionReviewer
from santa_core.rubrics.library import load_builtin
from storage.runs import RunStore
from tests.core.run.test_runner import GOOD, SPEC, make_runner, strict
from tests.ui.test_app import texts
from tests.ui.test_metrics_page import downloads, media_url, open_metrics
from ui import metric_frames as frames

SONNET, HAIKU = "claude-sonnet-5-5", "claude-haiku-5-5"
PREFIX = 1_800
"""Tokens of the shared prefix a review writes to or reads from the cache."""


class Cached(FunctionReviewer):
    """A reviewer double whose answer is one call with `usage`, priced as the desk prices it."""

    def __init__(self, name: str, usage: Usage) -> None:
        super().__init__(name, strict)
        self.usage = usage

    def review(self, request: ReviewRequest, slot) -> ReviewOutcome:
        out = super().review(request, slot)
        cost = cost_usd(self.name, self.usage)
        call = LLMCall(purpose="review", model=self.name, request={}, cost_usd=cost, usage=self.usage)
        return out.model_copy(update={"cost_usd": cost, "usage": self.usage, "calls": [call]})


def one_run(repo: RunStore, b: Usage, c: Usage) -> AppTest:
    """One clean run (B on SONNET, C on HAIKU, each with its usage), then the Metrics page on its Cost tab."""
    runner, _ = make_runner(repo, {SONNET: Cached(SONNET, b), HAIKU: Cached(HAIKU, c)})
    try:
        runner.execute(
            repo.create_run(
                spec=SPEC,
                output=GOOD,
                rubric=load_builtin("general"),
                reviewer_b=SONNET,
                reviewer_c=HAIKU,
                fixer="fixer",
            )
        )
    finally:
        runner.shutdown()
    return open_metrics(tab="Cost")


def net_savings(*calls: tuple[str, int, int]) -> float:
    """Σ reads × (input − read rate) − writes × (write − input rate), per (model, read, written), in USD."""
    rates = load_rates()
    total = 0.0
    for model, read, written in calls:
        r = rates.for_model(model)
        total += (read * (r.input - r.cache_read) - written * (r.cache_write_5m - r.input)) / 1_000_000
    return total


def card(at: AppTest, label: str) -> tuple[str, str]:
    """(value, help) of a figure card; the Cost tab repeats the cache cards of the headline's "More figures"."""
    found = [m for m in at.metric if m.label == label]
    assert len(found) == 2, [m.label for m in at.metric]  # the headline's, and the Cost tab's
    assert found[0].value == found[1].value
    return found[-1].value, found[-1].help


def test_the_cost_tab_shows_the_hit_rate_and_the_net_savings(desk_env: RunStore) -> None:
    # B reads the prefix C's call wrote: 1,800 of the review calls' 4,000 input tokens came from the cache
    at = one_run(
        desk_env,
        Usage(input_tokens=200, output_tokens=50, cache_read_input_tokens=PREFIX),
        Usage(input_tokens=200, output_tokens=50, cache_creation_input_tokens=PREFIX),
    )
    value, help_text = card(at, "Cache hit rate")
    assert value == "45.0 %"
    assert "read ÷ (uncached input + written to the cache + read from the cache)" in help_text
    assert "1,800 of the review calls' 4,000 input tokens came from the prompt cache (1,800 written to it)" in help_text
    saved = net_savings((SONNET, PREFIX, 0), (HAIKU, 0, PREFIX))
    assert saved > 0
    value, help_text = card(at, "Cache savings")
    assert value == format_figure(saved, "usd") == "$0.003195"  # 1,800 × 1.80 − 1,800 × 0.025 per million
    assert "cache-write tokens × (cache-write rate of the entry's lifetime − input rate)" in help_text
    assert f"caching saved {value} net of the write premium" in texts(at)
    assert len(at.get("plotly_chart")) == 4  # spend, reviews and fixes, the prompt cache, cost per reviewer
    report = desk_env.metrics.report(MetricsFilter())
    assert downloads(at)["metrics_csv_cache"] == media_url(
        frames.series_frame(report).to_csv(index=False), "text/csv", "santa-metrics-cache.csv"
    )
    assert not at.warning and "no prompt was long enough to cache" not in texts(at)


def test_writes_never_read_show_that_the_cache_cost_more_than_it_saved(desk_env: RunStore) -> None:
    at = one_run(
        desk_env,
        Usage(input_tokens=200, output_tokens=50, cache_creation_input_tokens=PREFIX),
        Usage(input_tokens=200, output_tokens=50, cache_creation_input_tokens=PREFIX),
    )
    lost = net_savings((SONNET, 0, PREFIX), (HAIKU, 0, PREFIX))
    assert lost < 0
    assert card(at, "Cache hit rate")[0] == "0.0 %"
    assert card(at, "Cache savings")[0] == format_figure(lost, "usd") == "-$0.000945"
    warning = "\n".join(w.value for w in at.warning)
    assert "Prompt caching cost more than it saved: net -$0.000945" in warning
    assert "wrote 3,600 tokens to the cache and read none back" in warning
    assert len(at.get("plotly_chart")) == 4  # the chart shows the loss below 0


def test_no_cached_call_says_why_and_what_to_do(desk_env: RunStore) -> None:
    usage = Usage(input_tokens=2_000, output_tokens=50)  # the provider neither wrote nor read a cache entry
    at = one_run(desk_env, usage, usage)
    assert card(at, "Cache hit rate")[0] == "0.0 %" and card(at, "Cache savings")[0] == "$0.00"
    info = texts(at)
    assert "No review call in this view used the prompt cache" in info
    assert "no prompt was long enough to cache" in info and "no prefix was reused within its lifetime" in info
    assert "review runs of one rubric and panel close together" in info
    assert len(at.get("plotly_chart")) == 3 and "metrics_csv_cache" not in downloads(at)  # no empty chart


def test_a_view_with_no_review_call_has_no_hit_rate(desk_env: RunStore) -> None:
    desk_env.create_run(
        spec=SPEC, output=GOOD, rubric=load_builtin("general"), reviewer_b=SONNET, reviewer_c=HAIKU, fixer="fixer"
    )  # queued: no call yet
    at = open_metrics(tab="Cost")
    assert card(at, "Cache hit rate")[0] == "—"
    assert "No review call in this view reported its input tokens yet" in texts(at)
