"""The Metrics report over the seeded history (`storage.metrics`, the SQL sums and counts behind
the figures): first pass, iterations and rounds, the failure taxonomy and its drill-down,
reviewer agreement and Cohen's kappa, escapes, cost, latency and errors, the time series, every
filter and the options they offer, the round path against the rollup path, and the headline as
the pages write it; each expected figure carries its arithmetic, counted from `HISTORY`
(tests/support/metrics_history.py) by the hand count below, on SQLite and, when
SANTA_TEST_POSTGRES_URL is set, on PostgreSQL.
"""

from __future__ import annotations

from datetime import date, datetime
from fractions import Fraction

import pytest
from sqlmodel import Session

from santa_core.reports import metrics as m
from santa_core.reports.metrics import MetricsFilter
from santa_core.reports.metrics_words import format_figure
from santa_core.reviewers.base import PERSON
from storage import metrics as queries
from tests.support import metrics_history
from tests.support.metrics_history import HAIKU, OPUS, SONNET, Seeded
from tests.support.report_figures import Totals, close, same, table

history = metrics_history.history  # the fixture (an imported name would trip ruff's F811)


# --- the hand count of HISTORY, used by the tests below ------------------------------------
#
# Criterion results per judged round, as (B, C) with check result for "short" (P/F, "·" = none;
# "-" = no result: errored, timed out, pending or skipped → unscored):
#
#   run/round   facts  numbers  tone  short (check)   | memo run  facts  cites
#   nice/1      PP     PP       PP    PP (P)          | timeout/1 F-     P-
#   fixed/1     FF     PP       PP    PF (F)          | approved/1 PF    FF
#   fixed/2     PP     PP       PP    PP (F)          | approved/2 PP    PP
#   capped/1    FP     PP       PF    PP (P)
#   capped/2    FP     PP       PP    PP (P)
#   capped/3    FP     FF       PP    PP (P)          (+ B's "ghost" FAIL: not in the rubric, ignored)
#   b_error/1   -P     -P       -P    -P (P)
#   waiting/1   PP     FF       P-    PP (P)
#   sonnet/1    PP     PP       PP    PP (P)
#   person/1    PP     PP       PP    PP (P)
#   pending/1   (blind: the person has not answered, so nothing of the round counts)
#
# pp/pf/fp/ff (pf = B PASS & C FAIL = "C only", fp = "B only", ff = "both"), fails and unscored:
#   facts   pp 6 (nice, fixed/2, waiting, sonnet, person, approved/2), pf 1 (approved/1),
#           fp 3 (capped ×3), ff 1 (fixed/1); b_fail 5 (fixed/1, capped ×3, timeout), c_fail 2, unscored 2
#   numbers pp 7, ff 2 (capped/3, waiting); b_fail 2, c_fail 2, unscored 1 (b_error)
#   tone    pp 7, pf 1 (capped/1); c_fail 1, unscored 2 (b_error, waiting)
#   short   pp 8, pf 1 (fixed/1); c_fail 1, check_fail 2 (fixed ×2), unscored 1 (b_error)
#   cites   pp 1, ff 1; b_fail 1, c_fail 1, unscored 1 (timeout)
#   pooled  pp 29, pf 3, fp 3, ff 4 = 39 pairs; failed 7+4+1+3+2 = 17; unscored 2+1+2+1+1 = 7
#
# Runs: 11. Status: nice, fixed, sonnet, person, approved shipped; capped escalated; b_error
# resolved_shipped; timeout resolved_rejected; waiting awaiting_approval; queued queued; pending
# awaiting_human_review. Rounds started: capped 3, fixed 2, approved 2, the other seven 1 = 14 (pending's
# round is blind: not counted).
#
# Answers (review rows that are ok/error/timeout): B (OPUS) 12 ok + 1 error (b_error) = 13 (pending's
# B answer is blind); C HAIKU 10 ok + 1 timeout (timeout) = 11; C SONNET 1; C person 1 (pat).
# Fix calls (SONNET, $0.05, 2,400 tokens): fixed/1, capped/1, capped/2, waiting/1, approved/1 = 5.


def crit(report: m.MetricsReport, cid: str) -> m.CriterionFigures:
    return next(c for c in report.criteria if c.criterion == cid)


HISTORY_TABLE: dict[str, Totals] = {
    "facts": (6, 1, 3, 1, 5, 2, 0, 2),
    "numbers": (7, 0, 0, 2, 2, 2, 0, 1),
    "short": (8, 1, 0, 0, 0, 1, 2, 1),
    "cites": (1, 0, 0, 1, 1, 1, 0, 1),
    "tone": (7, 1, 0, 0, 0, 1, 0, 2),
}


# --- first pass, iterations, rounds ---------------------------------------------------------


def test_the_history_ends_as_described(history: Seeded) -> None:
    """If the runner changes, this says so before any figure does."""
    states = {key: history.repo.load_run(run_id).state for key, run_id in history.ids.items()}
    assert {k: (s.status.value, s.round) for k, s in states.items()} == {
        "nice": ("shipped", 1),
        "fixed": ("shipped", 2),
        "capped": ("escalated", 3),
        "b_error": ("resolved_shipped", 1),
        "waiting": ("awaiting_approval", 1),
        "timeout": ("resolved_rejected", 1),
        "sonnet": ("shipped", 1),
        "person": ("shipped", 1),
        "approved": ("shipped", 2),
        "queued": ("queued", 1),
        "pending": ("awaiting_human_review", 1),
    }
    assert states["capped"].escalation_reason == "disagreement"  # B and C still split on facts in round 3


def test_first_pass_mean_iterations_and_rounds(history: Seeded) -> None:
    h = history.report().headline
    assert (h.runs, h.finished, h.first_pass) == (11, 8, 3)
    # finished = shipped 5 + escalated 1 (capped, still waiting for a person: in the denominator)
    #          + resolved_shipped 1 + resolved_rejected 1 = 8; waiting (awaiting_approval), pending
    #          (awaiting_human_review) and queued are not finished. NICE in round 1: nice, sonnet, person.
    assert h.first_pass_rate == 3 / 8 == 0.375
    # reached NICE: nice (1), fixed (2), sonnet (1), person (1), approved (2) → (1+2+1+1+2) / 5 = 7/5
    assert (h.nice_runs, h.mean_iterations) == (5, pytest.approx(1.4))
    assert h.rounds == 14


def test_rounds_distribution(history: Seeded) -> None:
    rounds = [(r.rounds, r.status, r.runs) for r in history.report().rounds]
    # finished runs only, by (rounds used, how they ended)
    assert rounds == [
        (1, "resolved_rejected", 1),
        (1, "resolved_shipped", 1),
        (1, "shipped", 3),
        (2, "shipped", 2),
        (3, "escalated", 1),
    ]


# --- failure taxonomy -------------------------------------------------------------------------


def test_failure_taxonomy_by_criterion_and_category(history: Seeded) -> None:
    report = history.report()
    assert table(report) == HISTORY_TABLE  # "ghost" (not in any rubric) is nowhere
    assert [c.criterion for c in report.criteria] == ["facts", "numbers", "short", "cites", "tone"]
    # most failures first: facts 5+2 = 7, numbers 2+2 = 4, short 0+1+2 = 3, cites 1+1 = 2, tone 1
    assert [c.failed for c in report.criteria] == [7, 4, 3, 2, 1]
    assert {c.criterion: (c.category, c.severity) for c in report.criteria} == {
        "facts": ("factual accuracy", "critical"),
        "numbers": ("factual accuracy", "critical"),
        "short": ("completeness", "suggestion"),
        "cites": ("compliance", "critical"),
        "tone": ("compliance", "critical"),
    }
    # factual accuracy = facts + numbers: B 5+2, C 2+2 → 11; completeness = short: C 1, check 2 → 3;
    # compliance = tone + cites: B 0+1, C 1+1 → 3 (ties by name)
    assert [(c.category, c.b_fail, c.c_fail, c.check_fail, c.failed) for c in report.categories] == [
        ("factual accuracy", 7, 4, 0, 11),
        ("completeness", 0, 1, 2, 3),
        ("compliance", 1, 2, 0, 3),
    ]
    assert report.headline.failed_checks == 17


def test_failed_runs_drill_down(history: Seeded) -> None:
    ids, store = history.ids, history.repo.metrics
    total, runs = store.failed_runs(MetricsFilter(), criterion="facts")
    # facts failed in: fixed/1 (B, C), capped/1-3 (B), timeout/1 (B), approved/1 (C); newest first
    assert total == 4
    assert [(r.run_id, r.day, r.rubric, r.status, r.rounds_failed, r.b_fail, r.c_fail, r.check_fail) for r in runs] == [
        (ids["approved"], date(2025, 3, 15), "memo@1", "shipped", 1, 0, 1, 0),
        (ids["timeout"], date(2025, 2, 1), "memo@1", "resolved_rejected", 1, 1, 0, 0),
        (ids["capped"], date(2025, 1, 12), "desk@1", "escalated", 3, 3, 0, 0),
        (ids["fixed"], date(2025, 1, 6), "desk@1", "shipped", 1, 1, 1, 0),
    ]
    total, runs = store.failed_runs(MetricsFilter(), criterion="facts", limit=2)
    assert (total, [r.run_id for r in runs]) == (4, [ids["approved"], ids["timeout"]])
    # category completeness = short: fixed/1 (C and the check), fixed/2 (the check)
    total, runs = store.failed_runs(MetricsFilter(), category="completeness")
    assert (total, [(r.run_id, r.rounds_failed, r.b_fail, r.c_fail, r.check_fail) for r in runs]) == (
        1,
        [(ids["fixed"], 2, 0, 1, 2)],
    )
    # any criterion: capped has B 4 (facts ×3, numbers) and C 2 (tone/1, numbers/3) over 3 rounds
    total, runs = store.failed_runs(MetricsFilter())
    assert total == 5 and {r.run_id for r in runs} == history.run("fixed", "capped", "waiting", "timeout", "approved")
    capped = next(r for r in runs if r.run_id == ids["capped"])
    assert (capped.rounds_failed, capped.b_fail, capped.c_fail) == (3, 4, 2)
    assert store.failed_runs(MetricsFilter(), criterion="ghost") == (0, [])
    # filters apply: desk only → fixed, capped; bob's runs → capped, timeout, approved
    assert store.failed_runs(MetricsFilter(rubrics=["desk"]), criterion="facts")[0] == 2
    total, runs = store.failed_runs(MetricsFilter(people=["bob"]), criterion="facts")
    assert {r.run_id for r in runs} == history.run("capped", "timeout", "approved") and total == 3


# --- agreement and kappa --------------------------------------------------------------------


def test_agreement_and_kappa_per_criterion(history: Seeded) -> None:
    figures = {c.criterion: c for c in history.report().criteria}
    facts = figures["facts"]
    assert (facts.pairs, facts.both, facts.b_only, facts.c_only, facts.pass_both) == (11, 1, 3, 1, 6)
    assert facts.agreement == pytest.approx(1 / 5)  # flagged by both 1 ÷ by either (1 + 3 + 1)
    # n = 11, observed (6+1)/11 = 7/11; B PASS (6+1)/11 = 7/11, C PASS (6+3)/11 = 9/11;
    # chance 7/11·9/11 + 4/11·2/11 = 71/121; κ = (77/121 − 71/121) ÷ (1 − 71/121) = 6/50
    assert close(facts.kappa, Fraction(6, 50))
    # numbers: 7 pp + 2 ff, no disagreement → observed 1 → κ 1; flagged both 2 ÷ either 2
    assert (figures["numbers"].kappa, figures["numbers"].agreement) == (1.0, 1.0)
    # tone: pp 7, pf 1; B always PASS (8/8), C 7/8 → chance = 1·7/8 = 7/8 = observed → κ 0
    assert close(figures["tone"].kappa, 0) and figures["tone"].agreement == 0.0  # 0 both ÷ 1 either
    # cites: pp 1, ff 1 → observed 1, chance ½·½ + ½·½ = ½ → κ = (1 − ½) ÷ ½ = 1
    assert close(figures["cites"].kappa, 1)
    # short: pp 8, pf 1 → κ 0 as for tone; 2 check failures are not pairs
    assert close(figures["short"].kappa, 0) and figures["short"].pairs == 9


def test_pooled_agreement_and_kappa(history: Seeded) -> None:
    h = history.report().headline
    assert (h.compared_pairs, h.flagged_both, h.flagged_b_only, h.flagged_c_only) == (39, 4, 3, 3)
    assert h.agreement == pytest.approx(4 / 10)  # 4 ÷ (4 + 3 + 3)
    # pooled 2×2: pp 29, pf 3, fp 3, ff 4; n = 39; observed 33/39; B PASS 32/39, C PASS 32/39;
    # chance (32² + 7²)/39² = 1073/1521; κ = (1287 − 1073) ÷ (1521 − 1073) = 214/448 = 107/224
    assert close(h.kappa, Fraction(107, 224))
    assert h.unscored == 7  # one reviewer errored (b_error, timeout) or skipped (waiting)


def test_kappa_undefined_when_chance_agreement_is_one(history: Seeded) -> None:
    report = history.report(versions=["desk@2"])  # sonnet: one round, every criterion PP
    assert [(c.criterion, c.pairs, c.kappa, c.agreement) for c in report.criteria] == [
        (k, 1, None, None) for k in ("facts", "numbers", "short", "tone")
    ]
    h = report.headline
    assert (h.compared_pairs, h.kappa, h.agreement) == (4, None, None)
    assert format_figure(h.kappa, "kappa") == "—"


def low(report: m.MetricsReport) -> list[str]:
    return [w for w in report.warnings if w.startswith("Low reviewer agreement")]


def test_low_agreement_warning_needs_ten_pairs(history: Seeded) -> None:
    # whole history: facts κ 0.12 over 11 pairs → flagged
    report = history.report()
    assert [c.criterion for c in report.criteria if c.low_agreement] == ["facts"]
    assert low(report) == [
        "Low reviewer agreement on Facts (κ = 0.120 over 11 pairs): the two reviewers read "
        "this criterion differently; tighten its pass condition and fail signal."
    ]
    # without sonnet (desk@2): 10 pairs pp 5, pf 1, fp 3, ff 1; observed 6/10; B PASS 6/10, C PASS 8/10;
    # chance .48 + .08 = .56; κ = .04/.44 = 1/11 → still flagged at exactly 10 pairs
    report = history.report(versions=["desk@1", "memo@1"])
    facts = crit(report, "facts")
    assert (facts.pairs, facts.low_agreement) == (10, True) and close(facts.kappa, Fraction(1, 11))
    assert low(report) == [
        "Low reviewer agreement on Facts (κ = 0.091 over 10 pairs): the two reviewers read "
        "this criterion differently; tighten its pass condition and fail signal."
    ]
    # HAIKU runs only (no sonnet, no person): 9 pairs pp 4, pf 1, fp 3, ff 1; observed 5/9;
    # B PASS 5/9, C PASS 7/9; chance 35/81 + 8/81 = 43/81; κ = (45 − 43)/(81 − 43) = 1/19 → 9 pairs: no flag
    report = history.report(reviewers=[HAIKU])
    facts = crit(report, "facts")
    assert (facts.pairs, facts.low_agreement) == (9, False) and close(facts.kappa, Fraction(1, 19))
    assert low(report) == []


def test_split_by_family_pair(history: Seeded) -> None:
    """B is always OPUS; C is HAIKU or SONNET (Claude + Claude) or a person (Claude + person: person, pending).

    Claude + Claude: the 9 other runs; shipped nice, fixed, sonnet, approved, b_error = 5, escapes 3 on 2 runs;
    the pooled pairs less person/1's four PP: pp 25, pf 3, fp 3, ff 4 (unscored 7, none of them person's) →
    agreement 4/10, κ (35·29 − 833)/(35² − 833) = 13/28, escape rate 3/5. Claude + person: pending is blind,
    so only person/1's four PP: agreement and κ undefined; 1 shipped run, no escape.
    """
    pairs = history.repo.metrics.family_pairs(MetricsFilter())
    assert [
        (
            p.pair,
            p.two_families,
            p.runs,
            p.shipped,
            p.escapes,
            p.escaped_runs,
            p.pass_both,
            p.c_only,
            p.b_only,
            p.both,
            p.unscored,
        )
        for p in pairs
    ] == [("Claude + Claude", False, 9, 5, 3, 2, 25, 3, 3, 4, 7), ("Claude + person", True, 2, 1, 0, 0, 4, 0, 0, 0, 0)]
    claude, person = pairs
    assert claude.agreement == 0.4 and close(claude.kappa, Fraction(13, 28)) and claude.escape_rate == 0.6
    assert (person.agreement, person.kappa, person.escape_rate) == (None, None, 0.0)
    h = history.report().headline  # the pairs add up to the headline
    assert (
        sum(p.runs for p in pairs),
        sum(p.shipped for p in pairs),
        sum(p.escapes for p in pairs),
        sum(p.pairs for p in pairs),
        sum(p.unscored for p in pairs),
    ) == (h.runs, h.shipped, h.escapes, h.compared_pairs, h.unscored)


def test_split_by_family_pair_follows_the_filters(history: Seeded) -> None:
    everyone = history.repo.metrics.family_pairs(MetricsFilter(people=["ann", "bob", "lee"]))  # round path
    assert same(
        [p.model_dump() for p in everyone], [p.model_dump() for p in history.repo.metrics.family_pairs(MetricsFilter())]
    )
    [pat] = history.repo.metrics.family_pairs(MetricsFilter(people=["pat"]))  # pat filled C of "person" only
    assert (pat.pair, pat.runs, pat.shipped, pat.pass_both, pat.pairs) == ("Claude + person", 1, 1, 4, 4)
    [sonnet] = history.repo.metrics.family_pairs(MetricsFilter(reviewers=[SONNET]))
    assert (sonnet.pair, sonnet.runs, sonnet.escapes, sonnet.escape_rate, sonnet.pairs) == (
        "Claude + Claude",
        1,
        2,
        2.0,
        4,
    )


# --- escapes ------------------------------------------------------------------------------


def test_escape_rate_counts_resolved_shipped(history: Seeded) -> None:
    h = history.report().headline
    # shipped: nice, fixed, sonnet, person, approved + b_error (resolved_shipped) = 6;
    # escapes: b_error 1 + sonnet 2 = 3 on 2 runs → 3/6
    assert (h.shipped, h.escapes, h.escaped_runs, h.escape_rate) == (6, 3, 2, 0.5)
    assert "3 escape(s) reported on shipped runs; the target is 0." in history.report().warnings


# --- cost --------------------------------------------------------------------------------


def test_cost_tokens_per_run_and_round(history: Seeded) -> None:
    h = history.report().headline
    # review calls: OPUS 12 × $0.03 = 0.36, HAIKU 10 × $0.01 = 0.10, SONNET 1 × $0.02 = 0.02 → 0.48
    # (errors and the timeout logged a call that cost nothing; people cost nothing; pending's B call
    # is blind until the person answers); fix 5 × 0.05 = 0.25
    assert h.review_cost_usd == pytest.approx(0.48)
    assert h.fix_cost_usd == pytest.approx(0.25)
    assert h.total_cost_usd == pytest.approx(0.73)
    assert h.cost_per_run_usd == pytest.approx(0.73 / 11)  # 11 runs (queued, waiting and pending included)
    assert h.cost_per_round_usd == pytest.approx(0.73 / 14)  # 14 rounds started (pending's is blind)
    # tokens: OPUS 12 × 1,600 = 19,200; HAIKU 10 × 1,380 = 13,800; SONNET 1,490; fixes 5 × 2,400 = 12,000
    assert h.tokens == 19_200 + 13_800 + 1_490 + 12_000 == 46_490
    assert h.tokens_per_run == pytest.approx(46_490 / 11)
    assert h.tokens_per_round == pytest.approx(46_490 / 14)


def test_review_to_generation_cost_uses_runs_with_a_known_generation_cost(history: Seeded) -> None:
    h = history.report().headline
    # known: nice $0.50, fixed $1.00, b_error $0.20, sonnet $0.25 → 4 runs, $1.95
    # their review cost: nice 0.03+0.01, fixed 2 × 0.04, b_error 0 (error) + 0.01, sonnet 0.03+0.02 = 0.18
    # (fixed's $0.05 fix is not review cost; the other runs' reviews are left out)
    assert h.generation_runs == 4
    assert h.review_to_generation == pytest.approx(0.18 / 1.95)
    assert history.report(versions=["desk@2"]).headline.review_to_generation == pytest.approx(0.05 / 0.25)
    assert history.report(rubrics=["memo"]).headline.review_to_generation is None  # none known


def test_cache_savings_from_the_rates_file(history: Seeded) -> None:
    from santa_core.pricing import load_rates

    rates = load_rates().models
    # the rates the arithmetic below uses (USD per million tokens, santa_core/rates.toml)
    assert (rates[OPUS].input, rates[OPUS].cache_read) == (5.0, 0.50)
    assert (rates[HAIKU].input, rates[HAIKU].cache_read) == (1.0, 0.10)
    assert (rates[SONNET].input, rates[SONNET].cache_read, rates[SONNET].cache_write_5m) == (2.0, 0.20, 2.5)
    h = history.report().headline
    assert h.cache_read_tokens == 11_500  # 12 + 10 + 1 answered reviews × 500; fixes read no cache
    # reads: OPUS 6,000 × (5.00 − 0.50)/1e6 = 0.027; HAIKU 5,000 × (1.00 − 0.10)/1e6 = 0.0045;
    # SONNET 500 × (2.00 − 0.20)/1e6 = 0.0009 → 0.0324 saved; writes: 5 fixes (SONNET) × 100 tokens,
    # never read, × (2.50 − 2.00)/1e6 = 0.00025 paid above the input rate → 0.03215 net
    assert h.cache_savings_usd == pytest.approx(0.0324 - 0.00025)


def test_cache_hit_rate_is_over_the_review_calls(history: Seeded) -> None:
    h = history.report().headline
    # review calls: OPUS 12 × (1,000 + 500 read), HAIKU 10 × (800 + 500), SONNET 1 × (900 + 500); the fixes'
    # 5 × (2,000 + 100 written) are not review calls, so they move neither side
    assert (h.review_prompt_tokens, h.review_cache_read_tokens, h.review_cache_write_tokens) == (32_400, 11_500, 0)
    assert h.cache_hit_rate == pytest.approx(11_500 / 32_400)
    assert h.cache_unknown_runs == 0
    by_day = {p.bucket.isoformat(): p for p in history.report(grain="day").series}
    # 2025-01-06: nice (OPUS + HAIKU) and fixed (2 rounds of both, one 100-token fix write)
    jan6 = by_day["2025-01-06"]
    assert (jan6.review_prompt_tokens, jan6.review_cache_read_tokens) == (3 * (1_500 + 1_300), 3 * 1_000)
    assert jan6.cache_hit_rate == pytest.approx(3_000 / 8_400)
    assert jan6.cache_savings_usd == pytest.approx(3 * (0.00225 + 0.00045) - 0.00005)
    assert history.report(rubrics=["nope"]).headline.cache_hit_rate is None  # no review call: undefined


def test_spend_and_tokens_per_reviewer(history: Seeded) -> None:
    cost = {r.reviewer: r.cost_usd for r in history.report().reviewers}
    assert cost == pytest.approx({OPUS: 0.36, HAIKU: 0.10, SONNET: 0.02, PERSON: 0.0})


# --- latency and errors -------------------------------------------------------------------


def test_latency_and_error_rate_per_reviewer(history: Seeded) -> None:
    rows = [(r.reviewer, r.reviews, r.errors) for r in history.report().reviewers]
    # most answers first; pending's round is blind (its person slot holds a `pending` row, not an answer)
    assert rows == [(OPUS, 13, 1), (HAIKU, 11, 1), (SONNET, 1, 0), (PERSON, 1, 0)]
    by = {r.reviewer: r for r in history.report().reviewers}
    # OPUS: 12 × 2.0 s + one error of 5.0 s = 29 s over 13; HAIKU: 10 × 1.0 + a 30 s timeout = 40 over 11
    assert (by[OPUS].mean_latency_s, by[OPUS].max_latency_s) == (pytest.approx(29 / 13), 5.0)
    assert (by[HAIKU].mean_latency_s, by[HAIKU].max_latency_s) == (pytest.approx(40 / 11), 30.0)
    # a person's review time is not measured: no latency, not 0 s
    assert (by[SONNET].mean_latency_s, by[PERSON].mean_latency_s, by[PERSON].max_latency_s) == (1.5, None, None)
    assert (by[OPUS].error_rate, by[HAIKU].error_rate) == (pytest.approx(1 / 13), pytest.approx(1 / 11))
    h = history.report().headline
    assert (h.reviews, h.reviewer_errors, h.reviewer_error_rate) == (26, 2, pytest.approx(2 / 26))


def test_mean_round_latency_is_the_slower_reviewer(history: Seeded) -> None:
    # rounds with an answer and their slower reviewer: 13 rounds at 2.0 s (B, OPUS) except
    # b_error/1 max(5.0 error, 1.0) = 5.0 and timeout/1 max(2.0, 30.0 timeout) = 30.0:
    # 11 × 2.0 + 5.0 + 30.0 = 57.0 over 13 rounds (queued has none; pending's is blind)
    assert history.report().headline.mean_round_latency_s == pytest.approx(57 / 13)


# --- time series ------------------------------------------------------------------------------

Point = tuple[date, int, int, float | None, float | None, int, float | None, float, int]


def points(report: m.MetricsReport) -> list[Point]:
    return [
        (
            p.bucket,
            p.runs,
            p.finished,
            p.first_pass_rate,
            p.mean_iterations,
            p.shipped,
            p.escape_rate,
            pytest.approx(p.cost_usd),
            p.tokens,
        )
        for p in report.series
    ]


def test_series_by_day(history: Seeded) -> None:
    # cost and tokens per run: nice 0.04 / 2,980; fixed 0.13 / 8,360; capped 0.22 / 13,740;
    # b_error 0.01 / 1,380; waiting 0.09 / 5,380; timeout 0.03 / 1,600; sonnet 0.05 / 3,090;
    # person 0.03 / 1,600; approved 0.13 / 8,360; queued 0 / 0; pending 0 / 0 (blind)
    assert points(history.report("day")) == [
        (date(2025, 1, 6), 2, 2, 0.5, 1.5, 2, 0.0, 0.17, 11_340),  # nice + fixed (00:00 and 23:59 UTC)
        (date(2025, 1, 12), 1, 1, 0.0, None, 0, None, 0.22, 13_740),  # capped
        (date(2025, 1, 13), 1, 1, 0.0, None, 1, 1.0, 0.01, 1_380),  # b_error, 1 escape
        (date(2025, 1, 31), 1, 0, None, None, 0, None, 0.09, 5_380),  # waiting: not finished
        (date(2025, 2, 1), 1, 1, 0.0, None, 0, None, 0.03, 1_600),  # timeout
        # sonnet, person, approved, queued, pending: NICE in 1, 1, 2 → 4/3; escapes 2 on 3 shipped
        (date(2025, 3, 15), 5, 3, pytest.approx(2 / 3), pytest.approx(4 / 3), 3, pytest.approx(2 / 3), 0.21, 13_050),
    ]


def test_series_by_iso_week(history: Seeded) -> None:
    assert points(history.report("week")) == [
        # Mon 6 Jan: Mon 6 + Sun 12 → 3 runs, first pass 1/3, NICE (1+2)/2, cost 0.17+0.22
        (date(2025, 1, 6), 3, 3, pytest.approx(1 / 3), 1.5, 2, 0.0, 0.39, 25_080),
        (date(2025, 1, 13), 1, 1, 0.0, None, 1, 1.0, 0.01, 1_380),  # Mon 13 Jan starts the next week
        # Mon 27 Jan: Fri 31 Jan and Sat 1 Feb share a week across the month boundary
        (date(2025, 1, 27), 2, 1, 0.0, None, 0, None, 0.12, 6_980),
        (
            date(2025, 3, 10),
            5,
            3,
            pytest.approx(2 / 3),
            pytest.approx(4 / 3),
            3,
            pytest.approx(2 / 3),
            0.21,
            13_050,
        ),  # Sat 15 Mar → Mon 10 Mar
    ]


def test_series_by_month(history: Seeded) -> None:
    assert points(history.report("month")) == [
        # January: nice, fixed, capped, b_error, waiting: finished 4, first pass 1/4, NICE (1+2)/2,
        # shipped 3 (nice, fixed, b_error) with 1 escape; cost 0.17+0.22+0.01+0.09
        (date(2025, 1, 1), 5, 4, 0.25, 1.5, 3, pytest.approx(1 / 3), 0.49, 31_840),
        (date(2025, 2, 1), 1, 1, 0.0, None, 0, None, 0.03, 1_600),
        (date(2025, 3, 1), 5, 3, pytest.approx(2 / 3), pytest.approx(4 / 3), 3, pytest.approx(2 / 3), 0.21, 13_050),
    ]


@pytest.mark.parametrize(
    ("filters", "grain"),
    [
        pytest.param({}, "week", id="6-jan-to-15-mar-is-68-days"),
        pytest.param({"since": date(2025, 3, 1)}, "day", id="since-1-mar-is-14-days"),
        # the span runs from the first day with data (6 Jan) to `until`
        pytest.param({"until": date(2025, 3, 9)}, "day", id="6-jan-to-9-mar-is-62-days"),
        pytest.param({"until": date(2025, 3, 10)}, "week", id="6-jan-to-10-mar-is-63-days"),
        pytest.param({"since": date(2024, 3, 1)}, "month", id="since-a-year-before"),
    ],
)
def test_auto_grain_follows_the_span(history: Seeded, filters: dict, grain: str) -> None:
    assert history.report(**filters).grain == grain


def test_a_day_is_grouped_by_the_hour_its_runs_were_created(history: Seeded) -> None:
    """6 Jan: "nice" created at 00:00 (NICE in round 1), "fixed" at 23:59 (NICE in round 2): two hour buckets, in UTC
    (on PostgreSQL too, whose session may not be in UTC)."""
    report = history.report(since=date(2025, 1, 6), until=date(2025, 1, 6))
    assert report.grain == "hour"
    assert [(p.bucket, p.runs, p.first_pass_rate, p.mean_iterations) for p in report.series] == [
        (datetime(2025, 1, 6, 0), 1, 1.0, 1.0),
        (datetime(2025, 1, 6, 23), 1, 0.0, 2.0),
    ]
    assert report.headline.runs == 2 and report.headline.first_pass_rate == 0.5  # from the day's sums, as before
    two_days = history.report(since=date(2025, 1, 12), until=date(2025, 1, 13), reviewers=[OPUS])
    assert two_days.grain == "hour" and [p.bucket for p in two_days.series] == [
        datetime(2025, 1, 12, 12),
        datetime(2025, 1, 13, 12),
    ]  # "capped" and "b_error", at noon
    assert history.report(grain="day", since=date(2025, 1, 6), until=date(2025, 1, 6)).series[0].bucket == date(
        2025, 1, 6
    )  # a grain asked for wins


# --- filters ------------------------------------------------------------------------------


def headline(report: m.MetricsReport) -> tuple:
    h = report.headline
    return (
        h.runs,
        h.finished,
        h.first_pass_rate,
        h.mean_iterations,
        h.shipped,
        h.escape_rate,
        pytest.approx(h.total_cost_usd),
    )


def test_filter_since_until_inclusive(history: Seeded) -> None:
    # capped (12 Jan), b_error (13 Jan), waiting (31 Jan): both ends included
    report = history.report(since=date(2025, 1, 12), until=date(2025, 1, 31))
    # finished 2 (capped, b_error), first pass 0, shipped 1 (b_error) with 1 escape;
    # cost 0.22 + 0.01 + 0.09 = 0.32
    assert headline(report) == (3, 2, 0.0, None, 1, 1.0, 0.32)
    assert report.grain == "day" and [p.bucket for p in report.series] == [
        date(2025, 1, 12),
        date(2025, 1, 13),
        date(2025, 1, 31),
    ]
    # facts there: capped fp ×3, waiting pp, b_error unscored → 4 pairs; C always PASS → chance =
    # observed B PASS share 1/4 → κ 0
    assert table(report)["facts"] == (1, 0, 3, 0, 3, 0, 0, 1) and crit(report, "facts").kappa == 0.0
    # one day: the runs created at 00:00 and at 23:59 UTC on 6 Jan, nothing of 5 or 7 Jan
    report = history.report(since=date(2025, 1, 6), until=date(2025, 1, 6))
    assert headline(report) == (2, 2, 0.5, 1.5, 2, 0.0, 0.17)
    assert history.report(since=date(2025, 3, 16)).empty
    assert history.report(until=date(2025, 1, 5)).empty


def test_filter_rubric(history: Seeded) -> None:
    report = history.report(rubrics=["memo"])  # timeout, approved
    # finished 2, first pass 0, NICE approved in round 2, shipped 1 without escape; cost 0.03 + 0.13
    assert headline(report) == (2, 2, 0.0, 2.0, 1, 0.0, 0.16)
    assert table(report) == {"facts": (1, 1, 0, 0, 1, 1, 0, 1), "cites": (1, 0, 0, 1, 1, 1, 0, 1)}
    # facts: pp 1, pf 1 → B PASS 2/2 → chance = C PASS share ½ = observed → κ 0
    assert {c.criterion: c.kappa for c in report.criteria} == {"facts": 0.0, "cites": 1.0}
    assert [c.category for c in report.categories] == ["compliance", "factual accuracy"]  # 2 each, by name
    assert history.report(rubrics=["desk"]).headline.runs == 9


def test_filter_version(history: Seeded) -> None:
    report = history.report(versions=["desk@2"])  # sonnet
    # first pass 1/1, NICE in 1, shipped 1 with 2 escapes → 2.0; cost 0.03 + 0.02
    assert headline(report) == (1, 1, 1.0, 1.0, 1, 2.0, 0.05)
    assert [(r.reviewer, r.reviews) for r in report.reviewers] == [(OPUS, 1), (SONNET, 1)]
    assert history.report(versions=["desk@1"]).headline.runs == 8
    assert history.report(versions=["desk@1", "memo@1"]).headline.runs == 10
    assert history.report(versions=["desk@x"]).empty  # not name@N: matches nothing


def test_filter_domain(history: Seeded) -> None:
    report = history.report(domains=["legal"])  # memo runs (timeout, approved) and desk@2 (sonnet)
    # finished 3, first pass 1/3 (sonnet), NICE sonnet 1 + approved 2 → 1.5, shipped 2 with 2 escapes;
    # cost 0.03 + 0.13 + 0.05
    assert headline(report) == (3, 3, pytest.approx(1 / 3), 1.5, 2, 1.0, 0.21)
    assert history.report(domains=["marketing"]).headline.runs == 8


def test_filter_reviewer_in_either_slot(history: Seeded) -> None:
    # B is OPUS everywhere: the whole history (floats summed in another order on PostgreSQL)
    assert same(history.report(reviewers=[OPUS]).headline.model_dump(), history.report().headline.model_dump())
    report = history.report(reviewers=[PERSON])  # person, pending
    # finished 1 (person), first pass 1/1, shipped 1, no escape; cost: person's OPUS answer 0.03
    # (pending's is blind until the person answers)
    assert headline(report) == (2, 1, 1.0, 1.0, 1, 0.0, 0.03)
    assert [(r.reviewer, r.reviews, r.errors) for r in report.reviewers] == [(OPUS, 1, 0), (PERSON, 1, 0)]
    assert report.headline.unscored == 0  # pending's blind round is not counted at all
    report = history.report(reviewers=[HAIKU])  # everything but sonnet, person, pending
    # runs 8; finished: nice, fixed, capped, b_error, timeout, approved = 6; first pass: nice;
    # NICE nice 1, fixed 2, approved 2 → 5/3; shipped nice, fixed, b_error, approved with 1 escape;
    # cost 0.73 − sonnet 0.05 − person 0.03 (pending: 0 while blind) = 0.65
    assert headline(report) == (8, 6, pytest.approx(1 / 6), pytest.approx(5 / 3), 4, 0.25, 0.65)


def test_filter_person(history: Seeded) -> None:
    # bob started capped and waiting, rejected timeout's escalation, approved approved's fix
    report = history.report(people=["bob"])
    # finished 3 (capped, timeout, approved), first pass 0, NICE approved in 2, shipped 1;
    # cost 0.22 + 0.09 + 0.03 + 0.13 = 0.47
    assert headline(report) == (4, 3, 0.0, 2.0, 1, 0.0, 0.47)
    # facts: capped fp ×3, waiting pp, approved pf + pp, timeout unscored → pp 2, pf 1, fp 3;
    # observed 2/6; B PASS 3/6, C PASS 5/6; chance 15/36 + 3/36 = 1/2; κ = (1/3 − 1/2) ÷ (1/2) = −1/3
    facts = crit(report, "facts")
    assert (facts.pass_both, facts.c_only, facts.b_only, facts.both, facts.unscored) == (2, 1, 3, 0, 1)
    assert close(facts.kappa, Fraction(-1, 3))
    # pat only filled person's slot C; lee started sonnet and approved and shipped b_error as is
    assert history.report(people=["pat"]).headline.runs == 1
    assert headline(history.report(people=["lee"])) == (3, 3, pytest.approx(1 / 3), 1.5, 3, 1.0, 0.19)
    # 0.01 (b_error) + 0.05 (sonnet) + 0.13 (approved) = 0.19; escapes 1 + 2 on 3 shipped
    assert history.report(people=["nobody"]).empty
    # filters combine: bob's runs from 1 Feb on → timeout, approved
    assert history.report(people=["bob"], since=date(2025, 2, 1)).headline.runs == 2


def test_options_list_what_the_history_holds(history: Seeded) -> None:
    o = history.repo.metrics.options()
    assert (o.rubrics, o.versions, o.domains) == (
        ["desk", "memo"],
        ["desk@1", "desk@2", "memo@1"],
        ["legal", "marketing"],
    )
    assert o.reviewers == [HAIKU, OPUS, SONNET, PERSON]
    assert {"ann", "bob", "lee", "pat"} <= set(o.people)
    assert (o.first_day, o.last_day) == (date(2025, 1, 6), date(2025, 3, 15))


# --- consistency ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "filters",
    [
        pytest.param({}, id="all"),
        pytest.param({"since": date(2025, 1, 12), "until": date(2025, 2, 1)}, id="dates"),
        pytest.param({"rubrics": ["memo"]}, id="rubric"),
        pytest.param({"versions": ["desk@1"]}, id="version"),
        pytest.param({"domains": ["legal"]}, id="domain"),
        pytest.param({"reviewers": [HAIKU]}, id="reviewer"),
    ],
)
def test_round_path_equals_rollup_path(history: Seeded, filters: dict) -> None:
    f = MetricsFilter(**filters)
    with Session(history.repo.engine) as s:
        by_rounds = sorted(queries._criteria_from_rounds(s, f), key=lambda c: c.criterion)
        by_days = sorted(queries._criteria(s, f), key=lambda c: c.criterion)
    assert by_rounds == by_days and by_days


def test_person_filter_over_everyone_equals_no_filter(history: Seeded) -> None:
    everyone = history.report(people=["ann", "bob", "lee"])  # between them they started every run
    whole = history.report()
    assert same(everyone.model_dump(exclude={"filters"}), whole.model_dump(exclude={"filters"}))


# --- the headline as the pages write it -------------------------------------------------


def test_headline_rows_write_the_seeded_figures(history: Seeded) -> None:
    rows = dict(m.headline_rows(history.report()))
    assert rows["First-pass rate"] == "37.5 %" and rows["Mean iterations to converge"] == "1.40"
    assert rows["Reviewer agreement"] == "40.0 %" and rows["Cohen's κ"] == "0.478"  # 107/224 = 0.4777
    assert rows["Escape rate"] == "50.0 %" and rows["Total spend"] == "$0.73"
    assert rows["Tokens per round"] == "3,321" and rows["Mean round latency"] == "4.4 s"  # 57/13
