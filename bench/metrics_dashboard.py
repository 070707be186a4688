"""What the Metrics page costs on a large history: its data queries and a full render.

Fills a fresh SQLite file with N seeded, realistic runs spread over about a year (rounds, reviews
B and C, LLM calls, fix proposals, decisions, escalations, escapes), derives the metric facts with
the functions the app itself uses, checks a sample of them against `storage.metric_facts.refresh`, then
times every query the Metrics page runs for five views, `MetricsStore.report`, and an AppTest
render of the page. Prints the figures; asserts nothing about time.

    python bench/metrics_dashboard.py [--runs 100000] [--seed 1] [--now YYYY-MM-DD] [--db PATH] [--repeat 5]

The history is simulated, not replayed: each run has a hidden set of true defects (a rate per
criterion, scaled by how hard the run is); each reviewer catches a defect with its model's
sensitivity and flags clean criteria at a small false-positive rate (higher for criteria whose
wording leaves room for judgement, so their kappa is low); the fix agent removes most flagged
defects; people approve, edit or reject fixes and resolve escalations after a while; defects that
both reviewers missed are sometimes reported later as escapes. Texts are short on purpose: the
point is realistic row counts and distributions, not prose.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from bisect import bisect
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import sqlalchemy as sa
from sqlalchemy import insert
from sqlmodel import Session

from santa_core.config import DEFAULT_DUE_HOURS
from santa_core.models import Criterion, Usage
from santa_core.pricing import cost_usd, is_known
from santa_core.reports.metrics import MetricsFilter
from santa_core.text import sha256_text
from storage.hashing import content_hash
from storage.metric_derivation import derive_criteria, derive_run_metric
from storage.metric_facts import rebuild_rollup, refresh
from storage.metrics import MetricsStore, _criteria, _rounds, _run_sums
from storage.runs import RunStore
from storage.startup import init_db
from storage.tables import TABLES, CriterionResultRow, RunMetricRow

REPO = Path(__file__).resolve().parents[1]
"""The checkout: app.py and pages/ for the page-load timings."""

# --- the simulated world ----------------------------------------------------------------------

DAYS = 365
BATCH = 2_000
"""Runs per write transaction of the fill."""

PEOPLE: dict[str, tuple[str, tuple[str, ...]]] = {
    "maria@example.com": ("Maria Lopez", ("editor",)),
    "dev@example.com": ("Dev Patel", ("editor", "rubric_author")),
    "sam@example.com": ("Sam Ortiz", ("editor",)),
    "kim@example.com": ("Kim Ng", ("compliance_officer", "editor")),
    "ops@example.com": ("Ops Lead", ("admin",)),
}
STARTED_BY: dict[str, tuple[tuple[str, float], ...]] = {
    "general": (("sam@example.com", 50), ("maria@example.com", 20), ("dev@example.com", 15), ("local", 15)),
    "content": (("maria@example.com", 70), ("sam@example.com", 20), ("cli", 10)),
    "code": (("dev@example.com", 75), ("cli", 15), ("local", 10)),
    "compliance": (("kim@example.com", 60), ("maria@example.com", 30), ("cli", 10)),
}
"""Who starts runs of each domain, with weights (`cli`: runs started from the command line)."""
RUBRIC_SHARE = (("general", 30), ("content", 35), ("code", 20), ("compliance", 15))
NEW_VERSION_DAY = {"code": 120, "content": 200, "compliance": 280}
"""Day (0 = a year ago) from which a rubric's version 2 exists; most runs switch to it."""

PAIRS = (
    ("claude-sonnet-5", "claude-haiku-4-5"),
    ("claude-sonnet-5-5", "claude-haiku-5-5"),
    ("claude-opus-5-5", "claude-sonnet-5-5"),
    ("claude-opus-5", "claude-sonnet-5-5"),
)
"""Reviewer B / C model pairs (ids from santa_core/rates.toml)."""


def pair_weights(x: float) -> tuple[float, ...]:
    """Pair weights at fraction x of the year: the 4.5/5 pair gives way to the 5.5 models."""
    return (max(0.0, 0.7 - x), 0.2 + 0.6 * x, 0.15, max(0.02, 0.1 - 0.05 * x))


MODEL = {  # median review latency in seconds, sensitivity multiplier
    "claude-opus-5-5": (28.0, 1.03),
    "claude-opus-5": (30.0, 1.02),
    "claude-sonnet-5-5": (14.0, 1.0),
    "claude-sonnet-5": (15.0, 0.98),
    "claude-haiku-5-5": (6.0, 0.94),
    "claude-haiku-4-5": (7.0, 0.92),
}


@dataclass(frozen=True)
class Behaviour:
    """How a criterion behaves: true defect rate, reviewer sensitivity and false-positive rate,
    and how often its deterministic check (if any) catches a true defect."""

    defect: float = 0.03
    sensitivity: float = 0.86
    false_positive: float = 0.005
    check_catch: float = 0.0


BEHAVIOUR: dict[str, Behaviour] = {
    "factual_accuracy": Behaviour(0.05, 0.87, 0.006),
    "hallucination_free": Behaviour(0.035, 0.82, 0.006),
    "completeness": Behaviour(0.045, 0.86, 0.008),
    "compliance": Behaviour(0.015, 0.85, 0.004),
    "internal_consistency": Behaviour(0.02, 0.84, 0.004),
    "technical_correctness": Behaviour(0.025, 0.88, 0.004),
    "brand_voice": Behaviour(0.05, 0.55, 0.035),  # judgement call: low agreement
    "seo_keywords": Behaviour(0.06, 0.93, 0.004),
    "no_competitor_trademark_misuse": Behaviour(0.008, 0.9, 0.002),
    "cta_present_and_linked": Behaviour(0.035, 0.94, 0.003),
    "type_safety": Behaviour(0.06, 0.86, 0.01),
    "error_handling": Behaviour(0.05, 0.76, 0.02),
    "security": Behaviour(0.015, 0.9, 0.004, check_catch=0.4),
    "test_coverage": Behaviour(0.07, 0.6, 0.04),  # judgement call: low agreement
    "no_outcome_guarantees": Behaviour(0.012, 0.95, 0.002, check_catch=0.7),
    "required_disclaimers": Behaviour(0.035, 0.9, 0.004),
    "approved_terminology": Behaviour(0.03, 0.5, 0.03),  # judgement call (retired in v2)
    "jurisdiction_language": Behaviour(0.025, 0.72, 0.01),
    "word_limit": Behaviour(0.025, 0.95, 0.002, check_catch=1.0),
    "python_parses": Behaviour(0.015, 0.9, 0.002, check_catch=1.0),
}

SPECS = {
    "general": "Summarise the {n}-page release notes for customers in under 200 words; keep version numbers exact.",
    "content": "Write a {n}-word product page for the Acme kettle: brand voice per guide, keywords 'kettle', "
    "'fast boil', a call to action linking to /shop.",
    "code": "Add retry with backoff (max {n} tries) to fetch_invoice() in billing/client.py, typed, with tests.",
    "compliance": "Draft the {n}-paragraph fund newsletter intro for EU retail clients; include the risk "
    "disclaimer; no performance promises.",
}
OUTPUTS = {
    "general": "Release {n}.2 speeds up exports by 30 % and fixes the login loop on Safari. Reports now keep "
    "your filters. Version {n}.1 users upgrade automatically next week; nothing to do on your side.",
    "content": "Boil water in 90 seconds with the Acme kettle. Its fast boil element and auto shut-off make "
    "mornings easy. Quiet, light, and built to last {n} years. Shop now at acme.example/shop.",
    "code": "def fetch_invoice(inv_id: str, tries: int = {n}) -> Invoice:\n    for attempt in range(tries):\n"
    "        try:\n            return _get(inv_id)\n        except TransientError:\n"
    "            time.sleep(2 ** attempt)\n    raise FetchFailed(inv_id)",
    "compliance": "Markets moved sideways this quarter. Our fund kept its focus on quality bonds across {n} "
    "sectors. Past performance is not a reliable indicator of future results.",
}
PASS_DETAIL = ("meets the pass condition", "matches the spec", "no fail signal")
FAIL_DETAIL = "fail signal present: see the critical issue"
ANSWER_CHARS = 200
"""Stored raw answers are cut to this length: the dashboard never reads them, and whole copies of
every review (in review.raw_response and llm_call.response_text) would triple the file."""


@dataclass(frozen=True)
class Version:
    """One stored rubric version as runs use it."""

    name: str
    version: int
    since_day: int
    rubric_json: dict
    criteria: tuple[tuple[str, str, dict | None], ...]
    """(id, name, deterministic check or None) per criterion, in rubric order."""
    tokens: int
    """Prompt tokens of the rubric + instructions block (the cached part of a review request)."""


def setup_catalog(repo: RunStore) -> dict[str, list[Version]]:
    """People with roles, version 2 of three built-ins (saved through the rubric store), and
    every rubric version a run may use."""
    for pid, (name, roles) in PEOPLE.items():
        repo.people.set_roles(pid, roles, actor="local", name=name)
    changes = {
        "code": (
            "adds a deterministic Python syntax check",
            lambda doc: [
                *doc.criteria,
                Criterion(
                    id="python_parses",
                    name="Python parses",
                    category="technical correctness",
                    pass_condition="Every Python block in the output parses.",
                    fail_signal="A Python block with a syntax error.",
                    check={"type": "python_parses"},
                ),
            ],
        ),
        "content": (
            "adds the spec's word limit as a check",
            lambda doc: [
                *doc.criteria,
                Criterion(
                    id="word_limit",
                    name="Word limit",
                    category="compliance",
                    pass_condition="The output stays within 400 words.",
                    fail_signal="More than 400 words.",
                    check={"type": "max_words", "max": 400},
                ),
            ],
        ),
        "compliance": (
            "retires approved_terminology: reviewers read it too differently",
            lambda doc: [c.model_copy(update={"retired": c.id == "approved_terminology"}) for c in doc.criteria],
        ),
    }
    for name, (note, edit) in changes.items():
        doc = repo.rubrics.document(name, 1)
        repo.rubrics.save(doc.model_copy(update={"criteria": edit(doc)}), "dev@example.com", note, base_version=1)
    catalog: dict[str, list[Version]] = {}
    for name, _ in RUBRIC_SHARE:
        for number in range(1, (repo.rubrics.latest_version(name) or 1) + 1):
            rubric = repo.rubrics.resolved(name, number)
            data = rubric.model_dump(mode="json")
            catalog.setdefault(name, []).append(
                Version(
                    name,
                    number,
                    NEW_VERSION_DAY.get(name, 0) if number > 1 else 0,
                    data,
                    tuple((c.id, c.name, c.check) for c in rubric.criteria),
                    600 + len(str(data)) // 4,
                )
            )
    return catalog


def creation_times(rng: random.Random, runs: int, now: datetime) -> list[datetime]:
    """Sorted creation times over the last year: more runs lately, fewer at weekends, office hours."""
    first = (now - timedelta(days=DAYS - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
    days = [first + timedelta(days=i) for i in range(DAYS)]
    weights = [(0.5 + i / DAYS) * (0.3 if d.weekday() >= 5 else 1.0) for i, d in enumerate(days)]
    cumulative = list(accumulate(weights))
    out = []
    for _ in range(runs):
        day = days[min(bisect(cumulative, rng.random() * cumulative[-1]), DAYS - 1)]
        at = day + timedelta(hours=min(23.99, max(0.0, rng.gauss(13.0, 3.0))))
        out.append(at if at < now else now - timedelta(seconds=rng.uniform(5, 6 * 3600)))
    return sorted(out)


def weighted(rng: random.Random, options: tuple[tuple[Any, float], ...]) -> Any:
    """One option, drawn by weight."""
    return rng.choices([o for o, _ in options], [w for _, w in options])[0]


# --- one run's history, as rows ---------------------------------------------------------------


@dataclass
class Review:
    """One reviewer slot's answer in a round."""

    status: str
    results: dict[str, str]
    row: dict[str, Any]

    def passes(self, criteria: list[str]) -> bool:
        """The gate's reading: an answered review, PASS on every criterion, none skipped."""
        return self.status == "ok" and all(self.results.get(c) == "PASS" for c in criteria)


@dataclass
class RunCtx:
    """What the simulation knows while it writes one run."""

    run: dict[str, Any]
    version: Version
    defects: set[str]
    now: datetime
    t: datetime
    output: str
    cost: float = 0.0
    rounds: list[dict] = field(default_factory=list)
    reviews: list[dict] = field(default_factory=list)
    calls: list[dict] = field(default_factory=list)
    escapes: int = 0
    flagged: set[str] = field(default_factory=set)


class History:
    """Seeded generator of a realistic run history: row dicts per table, collected per batch."""

    def __init__(self, rng: random.Random, catalog: dict[str, list[Version]], now: datetime) -> None:
        self.rng, self.catalog, self.now = rng, catalog, now
        self.first_day = now - timedelta(days=DAYS)
        self.next_call = 1
        self.rows: dict[str, list[dict]] = defaultdict(list)
        self.sources: list[RunCtx] = []

    def take(self) -> tuple[dict[str, list[dict]], list[RunCtx]]:
        """The rows and run contexts of the batch so far, and start a new batch."""
        out = self.rows, self.sources
        self.rows, self.sources = defaultdict(list), []
        return out

    # -- the run ----------------------------------------------------------------------------

    def add_run(self, run_id: int, created: datetime) -> None:
        """One run from creation to its current state, with every row it leaves behind."""
        ctx = self._new_run(run_id, created)
        self._state(ctx, None, "queued", ctx.run["created_by"], "created")
        ctx.t += timedelta(seconds=self.rng.uniform(0.2, 3.0))
        self._state(ctx, "queued", "running", "worker", "")
        status = self._loop(ctx)
        ctx.run.update(status=status, updated_at=min(ctx.t, self.now))
        if status in ("shipped", "resolved_shipped"):
            self._escapes(ctx)
        self.rows["run"].append(ctx.run)
        self.sources.append(ctx)

    def _new_run(self, run_id: int, created: datetime) -> RunCtx:
        rng = self.rng
        x = (created - self.first_day) / timedelta(days=DAYS)
        name = weighted(rng, RUBRIC_SHARE)
        versions = [v for v in self.catalog[name] if v.since_day <= x * DAYS]
        version = versions[-1] if rng.random() < 0.92 else rng.choice(versions)
        b, c = rng.choices(PAIRS, pair_weights(x))[0]
        person_c = "kim@example.com" if name == "compliance" and rng.random() < 0.05 else None
        n = rng.randint(2, 9)
        output = OUTPUTS[name].format(n=n)
        run = {
            "id": run_id,
            "created_at": created,
            "updated_at": created,
            "status": "queued",
            "round": 1,
            "max_rounds": 3,
            "round_cap": 3,
            "escalation_reason": None,
            "note": "",
            "spec": SPECS[name].format(n=n * 100),
            "original_output": output,
            "rubric_name": name,
            "rubric_version": version.version,
            "rubric_json": version.rubric_json,
            "reviewer_b": b,
            "reviewer_c": "person" if person_c else c,
            "fixer": "claude-opus-5-5" if rng.random() < 0.2 else "claude-sonnet-5-5",
            "auto_approve": rng.random() < 0.25,
            "budget_usd": rng.choice((0.05, 0.1, 0.25)) if rng.random() < 0.15 else None,
            "created_by": weighted(rng, STARTED_BY[name]),
            "source": "app",
            "worker": None,
            "person_b": None,
            "person_c": person_c,
            "generation_cost_usd": round(rng.lognormvariate(-2.5, 0.8), 4) if rng.random() < 0.3 else None,
        }
        run["source"] = "cli" if run["created_by"] == "cli" else "app"
        difficulty = rng.lognormvariate(-0.35, 0.6)
        defects = {
            cid for cid, _, _ in version.criteria if rng.random() < BEHAVIOUR.get(cid, Behaviour()).defect * difficulty
        }
        return RunCtx(run, version, defects, self.now, created, output)

    def _loop(self, ctx: RunCtx) -> str:
        """Rounds until NICE, a person is needed, or the run is still in flight; the final status."""
        for no in range(1, ctx.run["max_rounds"] + 1):
            ctx.run["round"] = no
            gate = self._round(ctx, no)
            if gate is None:
                return "running"
            if gate == "NICE":
                self._state(ctx, "running", "shipped", "gate", "")
                return "shipped"
            reason = self._stop_reason(ctx, no, gate)
            if reason:
                return self._escalate(ctx, no, reason)
            outcome = self._fix(ctx, no)
            if outcome != "approved":
                return outcome if outcome == "awaiting_approval" else self._escalate(ctx, no, outcome)
        raise AssertionError("unreachable: the last round either ships or escalates")

    def _stop_reason(self, ctx: RunCtx, no: int, gate: str) -> str | None:
        """Why a NAUGHTY round goes to a person instead of a fix, if it does."""
        if gate == "error":
            return "reviewer_error"
        if ctx.run["budget_usd"] is not None and ctx.cost > ctx.run["budget_usd"]:
            return "budget"
        if no == ctx.run["max_rounds"]:
            return "disagreement" if ctx.rounds[-1]["gate_disagreement"] else "round_cap"
        return None

    # -- a round ----------------------------------------------------------------------------

    def _round(self, ctx: RunCtx, no: int) -> str | None:
        """Checks, two reviews and the gate: NICE, NAUGHTY, error (a reviewer failed) or None (in flight)."""
        row = {
            "run_id": ctx.run["id"],
            "round_no": no,
            "output_text": ctx.output,
            "output_hash": sha256_text(ctx.output),
            "gate_decision": None,
            "gate_reasons": None,
            "gate_reviewer_error": None,
            "gate_injection": None,
            "gate_checks": None,
            "gate_disagreement": None,
            "started_at": ctx.t,
        }
        self.rows["round"].append(row)
        ctx.rounds.append(row)
        if ctx.t > self.now - timedelta(hours=2) and self.rng.random() < 0.3:  # a slow queue: still in flight
            if self.rng.random() < 0.5:  # B has answered, C not yet
                self._review(ctx, no, "B", ctx.run["reviewer_b"])
            return None
        b = self._review(ctx, no, "B", ctx.run["reviewer_b"])
        c = self._review(ctx, no, "C", ctx.run["reviewer_c"])
        checks = self._checks(ctx)
        ctx.t += timedelta(seconds=max(b.row["latency_s"], c.row["latency_s"]))
        return self._gate(ctx, no, row, b, c, checks)

    def _checks(self, ctx: RunCtx) -> list[dict]:
        """The round's deterministic check outcomes (criteria that carry a check)."""
        out = []
        for cid, _, check in ctx.version.criteria:
            if check:
                caught = cid in ctx.defects and self.rng.random() < BEHAVIOUR[cid].check_catch
                out.append(
                    {
                        "criterion": cid,
                        "check_type": check["type"],
                        "result": "FAIL" if caught else "PASS",
                        "detail": "matched in the output" if caught else "nothing matched",
                        "evidence": "sk-ant-…" if caught else "",
                    }
                )
        return out

    def _gate(self, ctx: RunCtx, no: int, row: dict, b: Review, c: Review, checks: list[dict]) -> str:
        """The AND gate, merged issues with attribution, and the round's gate columns."""
        ids = [cid for cid, _, _ in ctx.version.criteria]
        failed_checks = {ch["criterion"] for ch in checks if ch["result"] == "FAIL"}
        nice = b.passes(ids) and c.passes(ids) and not failed_checks
        error = b.status != "ok" or c.status != "ok"
        flagged = {cid for r in (b, c) for cid, res in r.results.items() if res == "FAIL"} | failed_checks
        disagree = any({b.results.get(i), c.results.get(i)} == {"PASS", "FAIL"} for i in ids)
        reasons = [
            f"reviewer {s} ({r.row['reviewer']}) {'FAIL' if r.status == 'ok' else r.status}"
            for s, r in (("B", b), ("C", c))
            if not r.passes(ids)
        ]
        row.update(
            gate_decision="NICE" if nice else "NAUGHTY",
            gate_reasons=reasons,
            gate_reviewer_error=error,
            gate_injection=False,
            gate_checks=checks,
            gate_disagreement=disagree,
        )
        for idx, cid in enumerate(i for i in ids if i in flagged):
            who = [s for s, r in (("B", b), ("C", c)) if r.results.get(cid) == "FAIL"]
            self.rows["merged_issue"].append(
                {
                    "run_id": ctx.run["id"],
                    "round_no": no,
                    "idx": idx,
                    "criterion": cid,
                    "description": f"{cid.replace('_', ' ')}: fail signal present",
                    "evidence": ctx.output[:60],
                    "flagged_by": "both" if len(who) == 2 else who[0] if who else "check",
                }
            )
        ctx.flagged = flagged
        return "NICE" if nice else "error" if error else "NAUGHTY"

    def _review(self, ctx: RunCtx, no: int, slot: str, reviewer: str) -> Review:
        """One reviewer's answer: a person's, a model's, or a model error after retries."""
        if reviewer == "person":
            results = self._judge(ctx, "claude-sonnet-5-5")
            return self._review_row(ctx, no, slot, f"person:{ctx.run['person_c']}", "ok", results, [], 0.0)
        median, _ = MODEL[reviewer]
        if self.rng.random() < 0.015:
            status = "timeout" if self.rng.random() < 0.4 else "error"
            calls = [self._call(ctx, no, "review", slot, reviewer, failed=status) for _ in range(2)]
            return self._review_row(ctx, no, slot, reviewer, status, {}, calls, sum(c["latency_s"] for c in calls))
        results = self._judge(ctx, reviewer)
        call = self._call(ctx, no, "review", slot, reviewer, failures=sum(r == "FAIL" for r in results.values()))
        return self._review_row(ctx, no, slot, reviewer, "ok", results, [call], call["latency_s"])

    def _judge(self, ctx: RunCtx, model: str) -> dict[str, str]:
        """criterion → PASS/FAIL as this reviewer sees the output (a rare criterion is skipped)."""
        rng, (_, sharp) = self.rng, MODEL[model]
        out = {}
        for cid, _, _ in ctx.version.criteria:
            if rng.random() < 0.002:
                continue
            how = BEHAVIOUR.get(cid, Behaviour())
            p_fail = min(0.99, how.sensitivity * sharp) if cid in ctx.defects else how.false_positive
            out[cid] = "FAIL" if rng.random() < p_fail else "PASS"
        return out

    def _review_row(
        self,
        ctx: RunCtx,
        no: int,
        slot: str,
        reviewer: str,
        status: str,
        results: dict[str, str],
        calls: list[dict],
        latency: float,
    ) -> Review:
        review_json = None
        if status == "ok":
            review_json = {
                "verdict": "FAIL" if "FAIL" in results.values() else "PASS",
                "checks": [
                    {
                        "criterion": cid,
                        "result": res,
                        "detail": FAIL_DETAIL if res == "FAIL" else self.rng.choice(PASS_DETAIL),
                    }
                    for cid, res in results.items()
                ],
                "critical_issues": [
                    {"criterion": cid, "description": f"{cid.replace('_', ' ')} fails", "evidence": ctx.output[:50]}
                    for cid, res in results.items()
                    if res == "FAIL"
                ],
                "suggestions": [],
            }
        row = {
            "run_id": ctx.run["id"],
            "round_no": no,
            "slot": slot,
            "reviewer": reviewer,
            "status": status,
            "verdict": review_json["verdict"] if review_json else "FAIL",
            "review_json": review_json,
            "error": None if status == "ok" else f"{status}: no valid verdict after retries",
            **{k: sum(c[k] for c in calls) for k in USAGE_COLS},
            "cost_usd": sum(c["cost_usd"] for c in calls),
            "latency_s": latency,
            "raw_response": calls[-1]["response_text"] if calls else "",
            "call_ids": [c["id"] for c in calls],
            "created_at": ctx.t + timedelta(seconds=latency),
        }
        self.rows["review"].append(row)
        ctx.reviews.append(row)
        return Review(status, results, row)

    def _call(
        self,
        ctx: RunCtx,
        no: int,
        purpose: str,
        slot: str | None,
        model: str,
        failures: int = 0,
        failed: str | None = None,
    ) -> dict:
        """One llm_call row with plausible tokens, prompt caching, cost from the rates file and latency."""
        rng = self.rng
        cached = ctx.version.tokens if purpose == "review" else 0
        hit = rng.random() < (0.9 if ctx.run["auto_approve"] and no > 1 else 0.55)
        usage = Usage(
            input_tokens=int(rng.lognormvariate(7.4, 0.5)) + 200,
            output_tokens=0
            if failed == "timeout"
            else 60 * len(ctx.version.criteria) + 150 * failures + int(rng.lognormvariate(5.5, 0.5)),
            cache_creation_input_tokens=0 if hit else cached,
            cache_read_input_tokens=cached if hit else 0,
        )
        if failed == "timeout":
            usage = Usage()
        median = MODEL.get(model, (18.0, 1.0))[0] * (1.3 if purpose == "fix" else 1.0)
        latency = 120.0 if failed == "timeout" else round(rng.lognormvariate(math.log(median), 0.35), 3)
        request = {
            "model": model,
            "max_tokens": 8000,
            "purpose": purpose,
            "system": f"<{ctx.version.name}@{ctx.version.version} block: {cached} tokens, cached>",
            "messages": [{"role": "user", "content": f"<spec + output, nonce {rng.getrandbits(32):08x}>"}],
        }
        response = (
            ""
            if failed == "timeout"
            else (
                f'{{"verdict": "{"FAIL" if failures or failed else "PASS"}", "checks": [...{failures} failed]}}'
                if purpose == "review"
                else '{"edits": [{"issue": 0, "before": "…", "after": "…"}]}'
            )[:ANSWER_CHARS]
        )
        row = {
            "id": self.next_call,
            "run_id": ctx.run["id"],
            "round_no": no,
            "purpose": purpose,
            "slot": slot,
            "model": model,
            "request_json": request,
            "response_text": response,
            "content_hash": content_hash(request, response),
            **usage.model_dump(),
            "cost_usd": cost_usd(model, usage),
            "latency_s": latency,
            "error": None if failed is None else f"{failed} (attempt failed)",
            "created_at": ctx.t,
        }
        self.next_call += 1
        self.rows["llm_call"].append(row)
        ctx.calls.append(row)
        ctx.cost += row["cost_usd"]
        return row

    # -- after a NAUGHTY round ----------------------------------------------------------------

    def _fix(self, ctx: RunCtx, no: int) -> str:
        """The fix agent's proposal and the decision on it: approved, awaiting_approval, or an escalation reason."""
        rng, run = self.rng, ctx.run
        call = self._call(ctx, no, "fix", None, run["fixer"])
        failed = rng.random() < 0.004
        before, after = ctx.output, ctx.output if failed else self._fixed(ctx.output, no)
        issues = [
            {"criterion": cid, "description": f"{cid} fails", "evidence": "", "flagged_by": "both"}
            for cid in sorted(ctx.flagged)
        ]
        self.rows["proposal"].append(
            {
                "run_id": run["id"],
                "round_no": no,
                "issues_json": issues,
                "edits_json": [] if failed else [{"issue": 0, "before": before[:30], "after": after[:30]}],
                "rejected_json": [],
                "before_text": before,
                "proposed_text": after,
                "before_hash": sha256_text(before),
                "proposed_hash": sha256_text(after),
                "cost_usd": call["cost_usd"],
                **{k: call[k] for k in USAGE_COLS},
                "error": "fix agent returned no usable edit" if failed else None,
                "call_ids": [call["id"]],
                "created_at": ctx.t + timedelta(seconds=call["latency_s"]),
            }
        )
        ctx.t += timedelta(seconds=call["latency_s"])
        if failed:
            return "fix_failed"
        self._state(ctx, "running", "awaiting_approval", "worker", "fix proposed")
        action, actor = self._decide(ctx)
        if action is None:
            return "awaiting_approval"
        text = after + (" Edited by hand." if action == "edit" else "")
        self._decision(ctx, no, action, actor, before, text if action != "reject" else before)
        if action == "reject":
            return "rejected_fix"
        self._state(ctx, "awaiting_approval", "running", actor, "")
        ctx.output = text
        # sorted: a set's order changes with PYTHONHASHSEED, and each element draws a random number
        ctx.defects = {d for d in sorted(ctx.defects) if d not in ctx.flagged or rng.random() < 0.08}
        if rng.random() < 0.01:  # a fix now and then breaks something else
            ctx.defects.add(rng.choice(ctx.version.criteria)[0])
        return "approved"

    def _decide(self, ctx: RunCtx) -> tuple[str | None, str]:
        """Auto-approve at once, or a person after a while (None: not decided yet)."""
        rng = self.rng
        if ctx.run["auto_approve"]:
            return "auto_approve", "auto-approve"
        ctx.t += timedelta(minutes=rng.lognormvariate(math.log(25), 1.2))
        if ctx.t > self.now or rng.random() < 0.005:
            return None, ""
        actor = ctx.run["created_by"] if ctx.run["created_by"] not in ("cli", "local") else "sam@example.com"
        return rng.choices(("approve", "edit", "reject"), (82, 11, 7))[0], actor

    @staticmethod
    def _fixed(text: str, no: int) -> str:
        return f"{text.rstrip('.')} (rev {no})."

    def _decision(
        self, ctx: RunCtx, no: int, action: str, actor: str, before: str, after: str, reason: str = ""
    ) -> None:
        self.rows["decision"].append(
            {
                "run_id": ctx.run["id"],
                "round_no": no,
                "action": action,
                "actor": actor,
                "reason": reason or ("run set to auto-approve fixes" if action == "auto_approve" else "looks right"),
                "before_hash": sha256_text(before),
                "after_hash": sha256_text(after),
                "after_text": after,
                "created_at": ctx.t,
            }
        )

    def _escalate(self, ctx: RunCtx, no: int, reason: str) -> str:
        """Hand the run to a person; most escalations are resolved hours later, some stay open."""
        rng, run = self.rng, ctx.run
        run.update(escalation_reason=reason, note=f"escalated: {reason.replace('_', ' ')}")
        frm = "awaiting_approval" if reason == "rejected_fix" else "running"
        self._state(ctx, frm, "escalated", "gate" if frm == "running" else "worker", run["note"])
        owner = "kim@example.com" if run["rubric_name"] == "compliance" or rng.random() < 0.4 else "ops@example.com"
        esc = {
            "run_id": run["id"],
            "reason": reason,
            "created_at": ctx.t,
            "status": "open",
            "resolution": None,
            "resolved_by": None,
            "resolved_at": None,
            "justification": None,
            "owner": owner if rng.random() < 0.8 else None,
            "due_at": ctx.t + timedelta(hours=DEFAULT_DUE_HOURS.get(reason, 24.0)),
        }
        self.rows["escalation"].append(esc)
        ctx.t += timedelta(hours=rng.lognormvariate(math.log(20), 1.0))
        if ctx.t > self.now or rng.random() < 0.02:
            return "escalated"
        ship = rng.random() < 0.55
        why = "checked by hand: acceptable as is" if ship else "not fit to send; rewrite requested"
        self._decision(ctx, no, "ship_as_is" if ship else "resolve_reject", owner, ctx.output, ctx.output, why)
        esc.update(
            status="resolved",
            resolution="ship_as_is" if ship else "reject",
            resolved_by=owner,
            resolved_at=ctx.t,
            justification=why,
        )
        status = "resolved_shipped" if ship else "resolved_rejected"
        self._state(ctx, "escalated", status, owner, "")
        return status

    def _escapes(self, ctx: RunCtx) -> None:
        """Defects both reviewers missed are sometimes reported after the output shipped."""
        for cid in sorted(ctx.defects - ctx.flagged):
            found = ctx.t + timedelta(days=self.rng.lognormvariate(math.log(6), 1.0))
            if self.rng.random() < 0.5 and found < self.now:
                self.rows["escape"].append(
                    {
                        "run_id": ctx.run["id"],
                        "criterion": cid,
                        "description": f"customer found: {cid} defect",
                        "severity": weighted(self.rng, (("critical", 2), ("major", 5), ("minor", 3))),
                        "reported_by": ctx.run["created_by"] if ctx.run["created_by"] != "cli" else "kim@example.com",
                        "created_at": found,
                    }
                )
                ctx.escapes += 1

    def _state(self, ctx: RunCtx, frm: str | None, to: str, actor: str, note: str) -> None:
        self.rows["state_change"].append(
            {
                "run_id": ctx.run["id"],
                "from_status": frm,
                "to_status": to,
                "actor": actor,
                "note": note,
                "created_at": min(ctx.t, self.now),
            }
        )


USAGE_COLS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
TABLE_ORDER = (
    "run",
    "round",
    "review",
    "merged_issue",
    "proposal",
    "decision",
    "escalation",
    "llm_call",
    "state_change",
    "escape",
)
"""Parents first: foreign keys are on."""
BY_NAME = {t.__tablename__: t.__table__ for t in TABLES}


# --- fill -------------------------------------------------------------------------------------


@dataclass
class Timer:
    """Seconds spent per phase."""

    spent: Counter = field(default_factory=Counter)

    def add(self, phase: str, since: float) -> float:
        now = time.perf_counter()
        self.spent[phase] += now - since
        return now


def derive_facts(sources: list[RunCtx]) -> tuple[list[dict], list[dict]]:
    """run_metric and criterion_result rows, by the app's own functions, over row-like objects."""
    metrics, results = [], []
    for ctx in sources:
        run = SimpleNamespace(**ctx.run)
        rounds = [SimpleNamespace(**r) for r in ctx.rounds]
        reviews = [SimpleNamespace(**r) for r in ctx.reviews]
        calls = [SimpleNamespace(**c) for c in ctx.calls]
        metrics.append(derive_run_metric(run, rounds, reviews, calls, ctx.escapes))
        results += derive_criteria(run, rounds, reviews)
    return metrics, results


def fill(
    engine: sa.Engine, catalog: dict[str, list[Version]], runs: int, seed: int, now: datetime, timer: Timer
) -> None:
    """Bulk Core inserts, one write transaction per batch of runs (and one for its facts).

    No audit events are written: the hash chain costs one event per change (bench/audit_chain.py
    measures that) and the dashboard never reads it.
    """
    rng = random.Random(seed)
    history = History(rng, catalog, now)
    times = creation_times(rng, runs, now)
    for first in range(0, runs, BATCH):
        t0 = time.perf_counter()
        for i in range(first, min(runs, first + BATCH)):
            history.add_run(i + 1, times[i])
        rows, sources = history.take()
        t0 = timer.add("generate history", t0)
        with Session(engine) as s, s.begin():
            for name in TABLE_ORDER:
                if rows[name]:
                    s.execute(insert(BY_NAME[name]), rows[name])
        t0 = timer.add("insert history", t0)
        metrics, results = derive_facts(sources)
        t0 = timer.add("derive facts", t0)
        with Session(engine) as s, s.begin():
            s.execute(insert(RunMetricRow.__table__), metrics)
            s.execute(insert(CriterionResultRow.__table__), results)
        timer.add("insert facts", t0)
        if sys.stdout.isatty():
            print(f"\r  filled {min(runs, first + BATCH):,} / {runs:,} runs", end="", flush=True)
    if sys.stdout.isatty():
        print()
    t0 = time.perf_counter()
    with Session(engine) as s, s.begin():
        rebuild_rollup(s)
    timer.add("rebuild rollup", t0)


# --- self-check: the bench facts are what the live code writes ---------------------------------


def _facts_of(s: Session, run_id: int) -> tuple[dict, list[tuple]]:
    metric = RunMetricRow.__table__
    result = CriterionResultRow.__table__
    row = dict(s.execute(sa.select(metric).where(metric.c.run_id == run_id)).mappings().one())
    cols = [c for c in result.c if c.name != "id"]
    rows = sorted(tuple(r) for r in s.execute(sa.select(*cols).where(result.c.run_id == run_id)))
    return row, rows


def _same(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    return all(
        math.isclose(a[k], b[k], rel_tol=1e-9, abs_tol=1e-12)
        if isinstance(a[k], float) and isinstance(b[k], float)
        else a[k] == b[k]
        for k in a
    )


def facts_check(engine: sa.Engine, runs: int, seed: int, sample: int = 50) -> None:
    """`refresh` on a sample of runs (rolled back) must leave their facts exactly as the bench wrote them."""
    ids = sorted(random.Random(seed + 1).sample(range(1, runs + 1), min(sample, runs)))
    with Session(engine) as s:
        s.begin()
        try:
            for run_id in ids:
                before = _facts_of(s, run_id)
                refresh(s, run_id)
                s.flush()
                after = _facts_of(s, run_id)
                if not (_same(before[0], after[0]) and before[1] == after[1]):
                    raise AssertionError(f"run {run_id}: bench facts differ from refresh():\n{before}\n{after}")
        finally:
            s.rollback()
    print(f"facts check: ok ({len(ids)} runs: refresh() rewrote identical run_metric and criterion_result rows)")


# --- the dashboard's queries ------------------------------------------------------------------

QUERIES: tuple[tuple[str, Callable], ...] = (
    ("_run_sums (days and reviewers)", _run_sums),
    ("_rounds", _rounds),
    ("_criteria", _criteria),
)


def views(now: datetime) -> list[tuple[str, MetricsFilter]]:
    """The views the bench times (dates are the runs' UTC creation days, as on the page)."""
    since = now.date() - timedelta(days=89)
    return [
        ("default: whole history, auto grain", MetricsFilter()),
        ("last 90 days", MetricsFilter(since=since)),
        ("rubric content + last 90 days", MetricsFilter(since=since, rubrics=["content"])),
        ("reviewer claude-haiku-5-5", MetricsFilter(reviewers=["claude-haiku-5-5"])),
        ("person kim@example.com (criterion_result path)", MetricsFilter(people=["kim@example.com"])),
    ]


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


PAGE_LOAD = "page load: options() + report queries"
DRILL = "with a drill-down: + failed_runs()"
REPORT = "MetricsStore.report() end to end"


def time_view(store: MetricsStore, f: MetricsFilter, repeat: int) -> tuple[dict[str, list[float]], Any]:
    """Seconds per query over `repeat` rounds, and subtotals: what the page runs on every rerun
    (options() and the three report queries, those in one snapshot), then failed_runs() for the
    view's most-failed criterion (the page runs it when someone picks a bar); then report() alone."""
    report = store.report(f)
    top = report.criteria[0].criterion if report.criteria else None
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(repeat):
        spent = 0.0
        with store._read() as s:
            for name, query in QUERIES:
                seconds, _ = _timed(lambda q=query: q(s, f))
                times[name].append(seconds)
                spent += seconds
        seconds, _ = _timed(store.options)
        times["options()"].append(seconds)
        times[PAGE_LOAD].append(spent + seconds)
        seconds, _ = _timed(lambda: store.failed_runs(f, top))
        times[f"failed_runs({top})"].append(seconds)
        times[DRILL].append(times[PAGE_LOAD][-1] + seconds)
    for _ in range(repeat):
        times[REPORT].append(_timed(lambda: store.report(f))[0])
    return times, report


def print_view(label: str, times: dict[str, list[float]], report: Any) -> None:
    h = report.headline
    print(
        f"\n{label}: {h.runs:,} runs, grain {report.grain}, {len(report.series)} points, "
        f"first-pass {h.first_pass_rate or 0:.1%}, kappa {h.kappa or 0:.2f}"
    )
    print(f"  {'query':<44}{'min ms':>10}{'median ms':>11}")
    for name in [
        *(q for q, _ in QUERIES),
        "options()",
        PAGE_LOAD,
        *(k for k in times if k.startswith("failed_runs")),
        DRILL,
        REPORT,
    ]:
        if name in (PAGE_LOAD, DRILL, REPORT):
            print(f"  {'-' * 65}")
        values = times[name]
        print(f"  {name:<44}{min(values) * 1000:>10.1f}{statistics.median(values) * 1000:>11.1f}")


# --- the page, rendered -----------------------------------------------------------------------


def render(url: str) -> tuple[str, float | None, float | None]:
    """(outcome, cold s, warm s) of an AppTest render of pages/metrics.py against the bench database."""
    if not (REPO / "pages" / "metrics.py").exists():
        return "skipped (pages/metrics.py not found)", None, None
    import streamlit as st
    from streamlit import config as st_config
    from streamlit.testing.v1 import AppTest

    os.environ["DATABASE_URL"] = url  # how the app finds its database (storage.db.database_url)
    # AppTest keeps an unpicklable dict in session state; the committed config forbids those (as in tests).
    st_config.set_option("runner.enforceSerializableSessionState", False)
    # Outside a script run, clearing a cache warns "missing ScriptRunContext"; expected here.
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)
    st.cache_resource.clear()  # a desk opened on another database must not be reused
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    if at.exception:
        return f"FAILED on the home page: {at.exception}", None, None
    at.switch_page("pages/metrics.py")
    cold, _ = _timed(at.run)
    if at.exception:
        return f"FAILED: {at.exception}", cold, None
    warm, _ = _timed(at.run)
    if at.exception:
        return f"FAILED on the second run: {at.exception}", cold, warm
    runs = next((m.value for m in at.metric if m.label == "Runs"), "?")
    return f"ok, no exception ({len(at.metric)} figures shown, Runs = {runs})", cold, warm


# --- summary ----------------------------------------------------------------------------------


def row_counts(engine: sa.Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            t.__tablename__: conn.execute(sa.select(sa.func.count()).select_from(t.__table__)).scalar_one()
            for t in TABLES
        }


def db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def distribution(engine: sa.Engine) -> str:
    """Statuses and rounds of the filled history, to show it looks like a real desk."""
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT status, rounds, count(*) FROM run_metric GROUP BY 1, 2")).all()
    total = sum(n for *_, n in rows)
    parts = [
        f"{s} r{r} {n / total:.1%}" if n / total >= 0.001 else f"{s} r{r} {n} run{'s' if n != 1 else ''}"
        for s, r, n in sorted(rows, key=lambda x: -x[2])
    ]
    return ", ".join(parts)


@dataclass
class Bench:
    """The figures to summarise."""

    timer: Timer = field(default_factory=Timer)
    fill_s: float = 0.0
    view_totals: list[tuple[str, float, float, float]] = field(default_factory=list)
    render: tuple[str, float | None, float | None] = ("not run", None, None)


def summarise(bench: Bench, engine: sa.Engine, path: Path) -> None:
    print("\n== summary ==")
    print(f"fill: {bench.fill_s:.1f} s  (" + ", ".join(f"{k} {v:.1f} s" for k, v in bench.timer.spent.items()) + ")")
    print(f"database: {path} {db_bytes(path) / 1e6:,.0f} MB")
    print("rows: " + ", ".join(f"{k} {v:,}" for k, v in row_counts(engine).items() if v))
    print(f"runs by status and rounds: {distribution(engine)}")
    print(f"\nmedian ms per view{'':<33}{'page load':>10}{'+ drill':>9}{'report()':>10}")
    for label, load, drill, whole in bench.view_totals:
        print(f"  {label:<49}{load * 1000:>10.1f}{drill * 1000:>9.1f}{whole * 1000:>10.1f}")
    _, load, drill, _ = bench.view_totals[0]
    print(
        f"default view: the page's data queries take {load * 1000:.0f} ms on page load and {drill * 1000:.0f} ms "
        "with a drill-down open (median)"
    )
    person = next((v for v in bench.view_totals if v[0].startswith("person")), None)
    if person:
        print(
            f"person filter: {person[1] * 1000:.0f} ms on page load and {person[2] * 1000:.0f} ms with a drill-down "
            "open (median)"
        )
    label, _, slowest, _ = max(bench.view_totals, key=lambda v: v[2])
    verdict = "UNDER" if slowest < 1.0 else "NOT under"
    print(f"every view, drill-down included: {verdict} 1 second (slowest: {label}, {slowest * 1000:.0f} ms)")
    outcome, cold, warm = bench.render
    times = f" - first render {cold:.2f} s, second (warm) run {warm:.2f} s" if warm is not None else ""
    print(f"render: {outcome}{times}")
    print(
        f"machine: {os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}, SQLAlchemy {sa.__version__}"
    )


def run_bench(args: argparse.Namespace, path: Path) -> int:
    url = f"sqlite:///{path}"
    bench = Bench()
    engine = init_db(url)
    catalog = setup_catalog(RunStore(engine))
    print(f"filling {path} with {args.runs:,} runs (seed {args.seed})")
    t0 = time.perf_counter()
    fill(engine, catalog, args.runs, args.seed, args.now, bench.timer)
    bench.fill_s = time.perf_counter() - t0
    facts_check(engine, args.runs, args.seed)
    raw = engine.raw_connection()  # autocommit (see storage.db): a checkpoint cannot run in a transaction
    try:
        if not args.no_analyze:
            # Planner statistics for a freshly bulk-loaded file. The app does not need them for
            # correctness (and works without them); --no-analyze shows the figures without.
            raw.execute("ANALYZE")
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the whole database in one file, for its size
    finally:
        raw.close()
    store = RunStore(engine).metrics
    for label, f in views(args.now):
        times, report = time_view(store, f, args.repeat)
        print_view(label, times, report)
        bench.view_totals.append((label, *(statistics.median(times[k]) for k in (PAGE_LOAD, DRILL, REPORT))))
    bench.render = render(url)
    summarise(bench, engine, path)
    return 1 if bench.render[0].startswith("FAILED") else 0


def temp_or_kept(db: str | None) -> Iterator[Path]:
    """The database path: `db` (must not exist yet), or a file in a temporary folder removed afterwards."""
    if db:
        path = Path(db).resolve()
        if path.exists():
            raise SystemExit(f"{path} exists: the bench needs a fresh database; remove it or pick another path")
        yield path
        return
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp) / "bench.db"


def _anchor(text: str) -> datetime:
    """A --now argument: the end of that UTC day."""
    try:
        day = datetime.fromisoformat(text).date()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date written YYYY-MM-DD") from None
    return datetime(day.year, day.month, day.day, 23, 59, 59, tzinfo=UTC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db", help="keep the database at this path (default: a temporary file)")
    parser.add_argument("--repeat", type=int, default=5, help="times each query is run (min and median shown)")
    parser.add_argument("--no-analyze", action="store_true", help="skip ANALYZE after the fill")
    parser.add_argument(
        "--now",
        type=_anchor,
        default=datetime.now(UTC),
        help="end of the simulated year, YYYY-MM-DD (UTC; default: now). The same --seed and "
        "--now give the same history",
    )
    args = parser.parse_args()
    unknown = {m for pair in PAIRS for m in pair} - {m for m in MODEL if is_known(m)}
    if unknown:
        raise SystemExit(f"models not in santa_core/rates.toml: {sorted(unknown)}")
    status = 0
    for path in temp_or_kept(args.db):
        status = run_bench(args, path)
    sys.exit(status)


if __name__ == "__main__":
    main()
