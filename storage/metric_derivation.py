"""Deriving one run's metric facts from its rows: its `run_metric` row and its `criterion_result` rows, and the
`criterion_day` counts those add up to. Pure over row-like objects (`storage.metric_facts` keeps the tables current
with them; the benchmark reuses them)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from santa_core.models import Usage
from santa_core.pricing import cache_savings_usd, cost_usd, is_known
from santa_core.reviewers.caching import ttl_of
from storage.spend import REVIEW_PURPOSES, Spend, costed, usd
from storage.times import utc

ERRORS = ("error", "timeout")
"""Review statuses that are reviewer errors (never a PASS)."""
ANSWERED = ("ok", *ERRORS)
"""Review statuses that count as an answer (a pending person slot does not)."""
DIMS = ("day", "rubric_name", "rubric_version", "domain", "reviewer_b", "reviewer_c")
"""The view dimensions every fact row carries."""
DAY_KEY = (*DIMS, "criterion", "category", "severity")
"""criterion_day's unique key."""
COUNTERS = ("pp", "pf", "fp", "ff", "b_fail", "c_fail", "check_fail", "unscored")
"""criterion_day's summed columns."""


def run_dims(run: Any) -> dict[str, Any]:
    """The view dimensions of a run row."""
    return {
        "day": utc(run.created_at).date().isoformat(),
        "rubric_name": run.rubric_name,
        "rubric_version": run.rubric_version,
        "domain": str(run.rubric_json.get("domain") or "general"),
        "reviewer_b": run.reviewer_b,
        "reviewer_c": run.reviewer_c,
    }


def _slot_figures(slot: str, reviews: Sequence[Any], spends: Sequence[Spend]) -> dict[str, Any]:
    """Answers, errors, latency and cost of one reviewer slot."""
    mine = [r for r in reviews if r.slot == slot and r.status in ANSWERED]
    key = slot.lower()
    return {
        f"{key}_reviews": len(mine),
        f"{key}_errors": sum(r.status in ERRORS for r in mine),
        f"{key}_latency_s": sum(r.latency_s for r in mine),
        f"{key}_latency_max_s": max((r.latency_s for r in mine), default=0.0),
        f"{key}_cost_usd": usd(spends, ("review",), slot=slot),
    }


def _round_latency(reviews: Sequence[Any]) -> tuple[int, float]:
    """(rounds with an answer, sum over them of the slower reviewer's latency)."""
    slowest: dict[int, float] = {}
    for r in reviews:
        if r.status in ANSWERED:
            slowest[r.round_no] = max(slowest.get(r.round_no, 0.0), r.latency_s)
    return len(slowest), sum(slowest.values())


REVIEW_CALLS = REVIEW_PURPOSES
"""The calls whose cost is review cost (the reviewers' and the injection screen's): the cache hit rate is theirs."""


def _call_savings(c: Any) -> float:
    """Net cache savings of one stored call: at list price, scaled by what the call was actually charged against its
    list price (a Message Batches call pays half of everything, its savings too). A model with no listed price
    saves nothing on paper (its cost is an upper bound, not a bill)."""
    read, write = c.cache_read_input_tokens, c.cache_creation_input_tokens
    if not (read or write) or not is_known(c.model):
        return 0.0
    ttl = ttl_of(c.request_json or {})
    listed = cost_usd(
        c.model,
        Usage(
            input_tokens=c.input_tokens,
            output_tokens=c.output_tokens,
            cache_creation_input_tokens=write,
            cache_read_input_tokens=read,
        ),
        write_ttl=ttl,
    )
    # A call stored with no cost (an older row) says nothing about a discount: counted at list price.
    charged = min(1.0, c.cost_usd / listed) if listed > 0 and c.cost_usd > 0 else 1.0
    return cache_savings_usd(c.model, read, write, write_ttl=ttl) * charged


def _review_prompt(calls: Sequence[Any]) -> dict[str, int]:
    """Input tokens of the review calls: uncached, written to the prompt cache, read from it."""
    mine = [c for c in calls if c.purpose in REVIEW_CALLS]
    return {
        "review_input_tokens": sum(c.input_tokens for c in mine),
        "review_cache_write_tokens": sum(c.cache_creation_input_tokens for c in mine),
        "review_cache_read_tokens": sum(c.cache_read_input_tokens for c in mine),
    }


def before_nice(rounds: Sequence[Any]) -> list[int]:
    """The NAUGHTY rounds before the run's first NICE one with no injection found: only whether these were judged
    moves a figure (first pass, iterations), so only these are read back to ask."""
    first = min((r.round_no for r in rounds if r.gate_decision == "NICE"), default=0)
    return [r.round_no for r in rounds if r.gate_decision == "NAUGHTY" and not r.gate_injection and r.round_no < first]


def derive_run_metric(
    run: Any,
    rounds: Sequence[Any],
    reviews: Sequence[Any],
    calls: Sequence[Any],
    escapes: int,
    hidden: bool = False,
    sent: Sequence[Any] = (),
    unjudged: Collection[int] = (),
) -> dict[str, Any]:
    """The run_metric row of a run, from its run, round, review, llm_call and llm_call_sent rows (a sent note no
    call answers is a call cut off, counted at its estimate by its purpose and slot).

    `unjudged`: the rounds nobody could judge (the model provider failed, `storage.unjudged`): no iteration, so a
    run NICE after Try again passed first time; they still count in cost and in the rounds started.

    `hidden`: the run is blind, so its rounds and generation cost stay out too (per-round and
    review ÷ generation figures would otherwise move without the costs that go with them).
    """
    first_nice = min((r.round_no for r in rounds if r.gate_decision == "NICE"), default=None)
    nice_round = None if first_nice is None else first_nice - sum(n < first_nice for n in unjudged)
    reviewed, latency = _round_latency(reviews)
    # The one definition of cost (`storage.spend`): every call's cost plus each cut-off call's estimate.
    spends = costed(
        [Spend(run.id, 0, c.purpose, c.slot, c.cost_usd) for c in calls], sent, answers=(c.request_hash for c in calls)
    )
    return {
        "run_id": run.id,
        **run_dims(run),
        "created_by": run.created_by,
        "status": run.status,
        "rounds": 0 if hidden else run.round,
        "nice_round": nice_round,
        "generation_cost_usd": None if hidden else run.generation_cost_usd,
        # The injection screen is part of verifying, so its cost counts with the reviews'.
        "review_cost_usd": usd(spends, REVIEW_CALLS),
        "fix_cost_usd": usd(spends, ("fix",)),
        "input_tokens": sum(c.input_tokens for c in calls),
        "output_tokens": sum(c.output_tokens for c in calls),
        "cache_write_tokens": sum(c.cache_creation_input_tokens for c in calls),
        "cache_read_tokens": sum(c.cache_read_input_tokens for c in calls),
        "cache_savings_usd": sum(map(_call_savings, calls)),
        **_review_prompt(calls),
        "escapes": escapes,
        **_slot_figures("B", reviews, spends),
        **_slot_figures("C", reviews, spends),
        "rounds_reviewed": reviewed,
        "round_latency_s": latency,
    }


def _results(review_json: dict | None) -> dict[str, str]:
    """criterion → PASS/FAIL of one review (a criterion checked twice counts as FAIL if either is)."""
    out: dict[str, str] = {}
    for check in (review_json or {}).get("checks") or []:
        cid, result = check.get("criterion"), check.get("result")
        if isinstance(cid, str) and result in ("PASS", "FAIL") and out.get(cid) != "FAIL":
            out[cid] = result
    return out


def _check_results(gate_checks: list | None) -> dict[str, str]:
    """criterion → PASS/FAIL of the round's deterministic checks."""
    return _results({"checks": gate_checks or []})


def derive_criteria(run: Any, rounds: Sequence[Any], reviews: Sequence[Any]) -> list[dict[str, Any]]:
    """The criterion_result rows of a run: every rubric criterion of every judged round.

    A round is judged once a reviewer answered or the gate stored its checks. Results for ids that
    are not in the run's rubric are ignored; a reviewer that errored, is pending or skipped a
    criterion leaves it empty (unscored).
    """
    dims = run_dims(run)
    criteria = [
        (c["id"], c.get("category", ""), c.get("severity", "critical")) for c in run.rubric_json.get("criteria", [])
    ]
    by_round: dict[int, dict[str, dict[str, str]]] = defaultdict(dict)
    answered: set[int] = set()
    for r in reviews:
        if r.status in ANSWERED:
            answered.add(r.round_no)
            by_round[r.round_no][r.slot] = _results(r.review_json if r.status == "ok" else None)
    rows = []
    for rnd in sorted(rounds, key=lambda r: r.round_no):
        if rnd.round_no not in answered and rnd.gate_checks is None:
            continue
        checks, slots = _check_results(rnd.gate_checks), by_round.get(rnd.round_no, {})
        for cid, category, severity in criteria:
            rows.append(
                {
                    "run_id": run.id,
                    "round_no": rnd.round_no,
                    "criterion": cid,
                    "category": category,
                    "severity": severity,
                    "b": slots.get("B", {}).get(cid),
                    "c": slots.get("C", {}).get(cid),
                    "check_result": checks.get(cid),
                    **dims,
                }
            )
    return rows


def counters(b: str | None, c: str | None, check: str | None) -> dict[str, int]:
    """One criterion_result row's contribution to criterion_day."""
    pair = b is not None and c is not None
    return {
        "pp": int(pair and b == "PASS" and c == "PASS"),
        "pf": int(pair and b == "PASS" and c == "FAIL"),
        "fp": int(pair and b == "FAIL" and c == "PASS"),
        "ff": int(pair and b == "FAIL" and c == "FAIL"),
        "b_fail": int(b == "FAIL"),
        "c_fail": int(c == "FAIL"),
        "check_fail": int(check == "FAIL"),
        "unscored": int(not pair),
    }


def rollup(rows: Iterable[dict[str, Any]], sign: int = 1) -> dict[tuple, Counter]:
    """criterion_day deltas of criterion_result rows, by key (sign -1: taking them away)."""
    out: dict[tuple, Counter] = defaultdict(Counter)
    for row in rows:
        out[tuple(row[k] for k in DAY_KEY)].update(
            {k: sign * v for k, v in counters(row["b"], row["c"], row["check_result"]).items()}
        )
    return out
