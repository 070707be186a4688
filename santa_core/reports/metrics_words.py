"""The metrics in words: what each figure means (`DEFINITIONS`, shown next to it on the page and in
`docs/metrics.md`) and how a figure is written (`format_figure`, `HEADLINE`); the page and the command line use
the same words."""

from __future__ import annotations

from typing import Literal

from santa_core.reports.metrics_cache import CACHE_DEFINITIONS
from santa_core.words import usd

DEFINITIONS: dict[str, str] = {
    "first_pass_rate": (
        "Runs NICE in round 1 ÷ finished runs. Finished runs are shipped, escalated (waiting for a "
        "person), resolved shipped, resolved rejected, or a batch sample's NAUGHTY review (sampled); "
        "runs still queued, running, waiting for a "
        "person's review or approval, or interrupted count once they finish. Target: above 70 %."
    ),
    "mean_iterations": (
        "Mean round number at which runs reached NICE (both reviewers PASS), over the runs that "
        "reached NICE. Runs that never did (escalated, rejected) are left out here and shown in the "
        "distribution of rounds. Target: below 1.5."
    ),
    "rounds_distribution": ("Finished runs by the number of rounds they used, coloured by how they ended."),
    "failure_taxonomy": (
        "Failed checks by criterion and category: every FAIL a reviewer (B or C) gave a criterion in "
        "a round, plus every failed deterministic check, counted once per round and source. Results "
        "for ids that are not in the run's rubric are ignored."
    ),
    "agreement": (
        "Per criterion and round where both reviewers gave a PASS/FAIL: flagged by both ÷ flagged by "
        "either (a flag is a FAIL). 'B only' and 'C only' are criteria only one reviewer failed. "
        "A criterion that only one reviewer judged (the other errored, was pending or skipped it) is "
        "left out and counted apart ('judged by one reviewer only')."
    ),
    "kappa": (
        "Cohen's kappa over per-criterion PASS/FAIL of reviewer B against reviewer C: "
        "(observed agreement − agreement expected by chance) ÷ (1 − agreement expected by chance). "
        "1 is perfect agreement, 0 is chance. Undefined (shown as —) when both reviewers gave every "
        "pair the same single answer. Below 0.40 with at least 10 pairs the criterion is flagged: "
        "the rubric needs tightening."
    ),
    "escape_rate": (
        "Escapes ÷ shipped runs (shipped or shipped as is by a person), for runs in the view. An "
        "escape is a defect reported after the output shipped. Target: 0."
    ),
    "cost": (
        "USD and tokens of every model call of the runs (reviews and fixes), from the rates file. "
        "Per run: total ÷ runs. Per round: total ÷ rounds started. Review ÷ generation: review cost "
        "÷ generation cost, over the runs whose generation cost was entered. Cache hit rate and cache "
        "savings: defined on their own cards."
    ),
    **CACHE_DEFINITIONS,
    "latency": (
        "Seconds a reviewer took to answer (retries included), per reviewer model; per round: the "
        "slower of the two reviewers, i.e. how long the round waited for its verdicts. A person's "
        "review time is not measured: a person shows —, and a round with a person reviewer counts "
        "the model reviewer's time only."
    ),
    "error_rate": (
        "Reviewer answers that were errors or timeouts ÷ answers, per reviewer model. An error is "
        "never a PASS (fail closed)."
    ),
    "family_pairs": (
        "Reviewer agreement, Cohen's kappa and escape rate as defined above, over the runs of each family pair "
        "of reviewers B and C, in either order (Claude + GPT and GPT + Claude are one pair; Claude + Claude is "
        "a pair of its own). Models of one family share blind spots: two families whose misses are "
        "independent should show a lower escape rate than one family."
    ),
}
"""What each figure means, shown next to it on the page and in `docs/metrics.md`."""


Kind = Literal["rate", "mean", "ratio", "count", "usd", "seconds", "kappa"]

HEADLINE: tuple[tuple[str, str, Kind, str], ...] = (
    ("first_pass_rate", "First-pass rate", "rate", "first_pass_rate"),
    ("mean_iterations", "Mean iterations to converge", "mean", "mean_iterations"),
    ("agreement", "Reviewer agreement", "rate", "agreement"),
    ("kappa", "Cohen's κ", "kappa", "kappa"),
    ("escape_rate", "Escape rate", "rate", "escape_rate"),
    ("cost_per_run_usd", "Cost per run", "usd", "cost"),
    ("runs", "Runs", "count", "first_pass_rate"),
    ("finished", "Finished runs", "count", "first_pass_rate"),
    ("shipped", "Shipped runs", "count", "escape_rate"),
    ("escapes", "Escapes", "count", "escape_rate"),
    ("failed_checks", "Failed checks", "count", "failure_taxonomy"),
    ("unscored", "Judged by one reviewer only", "count", "agreement"),
    ("total_cost_usd", "Total spend", "usd", "cost"),
    ("cost_per_round_usd", "Cost per round", "usd", "cost"),
    ("tokens_per_run", "Tokens per run", "count", "cost"),
    ("tokens_per_round", "Tokens per round", "count", "cost"),
    ("review_to_generation", "Review ÷ generation cost", "ratio", "cost"),
    ("cache_hit_rate", "Cache hit rate", "rate", "cache_hit_rate"),
    ("cache_savings_usd", "Cache savings", "usd", "cache_savings"),
    ("mean_round_latency_s", "Mean round latency", "seconds", "latency"),
    ("reviewer_error_rate", "Reviewer error rate", "rate", "error_rate"),
)
"""(Headline field, label, kind, definition key) of every top-line figure, in page order."""


def format_figure(value: float | None, kind: Kind) -> str:
    """A figure as people read it: 72.5 %, 1.43, 0.0031, 1,204, $0.0123, 2.4 s, 0.615; — when undefined."""
    if value is None:
        return "—"
    if kind == "rate":
        return f"{value * 100:.1f} %"
    if kind == "mean":
        return f"{value:.2f}"
    if kind == "ratio":  # three significant digits: a review may cost 0.003 of the generation
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    if kind == "count":
        return f"{round(value):,}"
    if kind == "usd":  # net cache savings may be negative: usd puts the sign before the $
        return usd(value)
    if kind == "seconds":
        return f"{value:.1f} s"
    return f"{value:.3f}"
