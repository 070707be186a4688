"""Every metric checked against hand-computed values on a small seeded history (issue 5).

The history is made the way production makes it: `RunStore.create_run`, the real `Runner` with
deterministic reviewer and fixer doubles, `santa_core.run.actions` for people's decisions,
`RunStore.resolve_escalation` and `RunStore.report_escape`. The fact tables are never written by hand;
only `run.created_at` is moved to a chosen day right after a run is created (before anything
else happens to it), so the time series and the date filters have several days to work on.

Reading guide: `HISTORY` below lists every run, round by round; each expected figure in the
tests carries its arithmetic in a comment, counted from that table.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from fractions import Fraction

import pytest
from sqlalchemy import delete
from sqlmodel import Session, select

from santa_core.models import (
    CheckResult,
    Criterion,
    FixEdit,
    FixPlan,
    LLMCall,
    Review,
    ReviewOutcome,
    ReviewStatus,
    Rubric,
    Slot,
    Usage,
)
from santa_core.reports import metrics as m
from santa_core.reports.metrics import (
    CriterionTotals,
    DayTotals,
    MetricsFilter,
    ReviewerTotals,
    RoundsCount,
    auto_grain,
    bucket_of,
    build_report,
    cohens_kappa,
    format_figure,
    ratio,
)
from santa_core.reviewers.base import PERSON, FixAnswer, FixRequest, ReviewRequest
from santa_core.reviewers.doubles import passing
from santa_core.run import actions
from santa_core.run.runner import Runner
from storage import metric_facts as sm
from storage import metrics as queries
from storage.runs import RunStore
from storage.startup import init_db
from storage.tables import CriterionDayRow, CriterionResultRow, RunMetricRow, RunRow
from tests.conftest import PG_URL, _pg_database, grant

# --- the reviewers, their prices and their answers ------------------------------------------

OPUS, HAIKU, SONNET = "claude-opus-5", "claude-haiku-4-5", "claude-sonnet-5"
"""Reviewer B is always OPUS; reviewer C is HAIKU, SONNET or a person. The fixer bills as SONNET."""

COST = {OPUS: 0.03, HAIKU: 0.01, SONNET: 0.02}
"""USD of one answered review call (set explicitly, so the sums are easy to check by hand)."""
USAGE = {
    OPUS: Usage(input_tokens=1000, output_tokens=100, cache_read_input_tokens=500),    # 1,600 tokens
    HAIKU: Usage(input_tokens=800, output_tokens=80, cache_read_input_tokens=500),     # 1,380 tokens
    SONNET: Usage(input_tokens=900, output_tokens=90, cache_read_input_tokens=500),    # 1,490 tokens
}
LATENCY = {OPUS: 2.0, HAIKU: 1.0, SONNET: 1.5}
"""Seconds of one answered review; an error takes ERROR_S, a timeout TIMEOUT_S (no tokens, no cost)."""
ERROR_S, TIMEOUT_S = 5.0, 30.0
FIX_COST = 0.05
FIX_USAGE = Usage(input_tokens=2000, output_tokens=300, cache_creation_input_tokens=100)  # 2,400 tokens

MARKER = re.compile(r"\[round (\d+)\]")
"""Every output carries "[round N]"; the fixer moves it to N+1, so a reviewer knows the round."""


def round_of(text: str) -> int:
    match = MARKER.search(text)
    assert match, text
    return int(match.group(1))


def scripted_review(rubric: Rubric, step: str) -> Review:
    """A review from a step such as "FP-P": one letter per criterion in rubric order (P PASS,
    F FAIL, - no check at all), "+ghost" adds a FAIL for an id that is not in the rubric."""
    results, _, extra = step.partition("+")
    checks = [CheckResult(criterion=c.id, result="PASS" if r == "P" else "FAIL", detail=f"{c.id} {r}")
              for c, r in zip(rubric.criteria, results, strict=True) if r != "-"]
    if extra:
        checks.append(CheckResult(criterion=extra, result="FAIL", detail="not a criterion of this rubric"))
    failed = any(c.result == "FAIL" for c in checks)
    return Review(verdict="FAIL" if failed else "PASS", checks=checks, critical_issues=[], suggestions=[])


def outcome(model: str, slot: Slot, rubric: Rubric, step: str) -> ReviewOutcome:
    """The outcome of one scripted step ("E": error, "T": timeout), with one logged call."""
    if step in ("E", "T"):
        status, latency = (ReviewStatus.ERROR, ERROR_S) if step == "E" else (ReviewStatus.TIMEOUT, TIMEOUT_S)
        call = LLMCall(purpose="review", model=model, request={"slot": slot}, latency_s=latency, error=status.value)
        return ReviewOutcome(slot=slot, reviewer=model, status=status, error=f"scripted {status.value}",
                             latency_s=latency, calls=[call])
    review = scripted_review(rubric, step)
    raw = review.model_dump_json()
    call = LLMCall(purpose="review", model=model, request={"slot": slot}, response=raw, usage=USAGE[model],
                   cost_usd=COST[model], latency_s=LATENCY[model])
    return ReviewOutcome(slot=slot, reviewer=model, status=ReviewStatus.OK, review=review, usage=USAGE[model],
                         cost_usd=COST[model], latency_s=LATENCY[model], raw_response=raw, calls=[call])


SCRIPTS: dict[str, dict[str, tuple[str, ...]]] = {}
"""spec → slot → one step per round (filled from HISTORY; tests of their own add theirs)."""


class ScriptReviewer:
    """A reviewer model that answers the step its run's script gives for this round."""

    def __init__(self, name: str) -> None:
        self.name = name

    def review(self, request: ReviewRequest, slot: Slot) -> ReviewOutcome:
        step = SCRIPTS[request.spec][slot][round_of(request.output) - 1]
        return outcome(self.name, slot, request.rubric, step)


class MarkerFixer:
    """A fix agent that fixes issue 0 by moving the round marker on (failed checks carry no
    evidence, so the edit is in scope), billed as one SONNET call."""

    name = "fixer"

    def propose(self, request: FixRequest) -> FixAnswer:
        n = round_of(request.output)
        plan = FixPlan(edits=[FixEdit(issue=0, before=f"[round {n}]", after=f"[round {n + 1}]")])
        call = LLMCall(purpose="fix", model=SONNET, request={"round": n}, usage=FIX_USAGE, cost_usd=FIX_COST,
                       latency_s=3.0)
        return FixAnswer(plan=plan, usage=FIX_USAGE, cost_usd=FIX_COST, calls=[call])


def make_runner(repo: RunStore) -> Runner:
    reviewers = {name: ScriptReviewer(name) for name in COST}
    fixer = MarkerFixer()
    return Runner(repo, reviewers.__getitem__, lambda name: fixer, workers=2)


# --- rubrics ----------------------------------------------------------------------------------


def criterion(cid: str, category: str, **kw: object) -> Criterion:
    return Criterion(id=cid, name=cid.title(), category=category, pass_condition=f"{cid} holds.",
                     fail_signal=f"{cid} does not hold.", **kw)


FACTS = criterion("facts", "factual accuracy")
NUMBERS = criterion("numbers", "factual accuracy")
TONE = criterion("tone", "compliance")
SHORT = criterion("short", "completeness", severity="suggestion", check={"type": "max_words", "max": 6})
CITES = criterion("cites", "compliance")
DESK1 = Rubric(name="desk", version=1, domain="marketing", criteria=[FACTS, NUMBERS, TONE, SHORT])
DESK2 = DESK1.model_copy(update={"version": 2, "domain": "legal"})
MEMO = Rubric(name="memo", version=1, domain="legal", criteria=[FACTS, CITES])
"""Steps of DESK runs read facts, numbers, tone, short; steps of MEMO runs read facts, cites.
"short" is a suggestion with a deterministic check: at most 6 words."""

BRIEF = "Acme ships rockets. [round 1]"
"""5 words: the `short` check PASSes."""
WORDY = "Acme ships many fine rockets to the Moon. [round 1]"
"""10 words: the `short` check FAILs (a suggestion: it never blocks)."""


@dataclass(frozen=True)
class Case:
    """One run of the seeded history."""

    key: str
    day: datetime
    rubric: Rubric
    b: tuple[str, ...]
    c: tuple[str, ...] | None
    """None: slot C is a person's."""
    reviewer_c: str = HAIKU
    by: str = "ann"
    gen: float | None = None
    text: str = BRIEF
    auto: bool = False


def on(month: int, day: int, hour: int = 12, minute: int = 0) -> datetime:
    """A creation time in 2025 (UTC)."""
    return datetime(2025, month, day, hour, minute, tzinfo=UTC)


HISTORY: tuple[Case, ...] = (
    # key       created (UTC)    rubric  B per round                     C per round
    Case("nice", on(1, 6, 0, 0), DESK1, ("PPPP",), ("PPPP",), gen=0.50),
    Case("fixed", on(1, 6, 23, 59), DESK1, ("FPPP", "PPPP"), ("FPPF", "PPPP"), gen=1.00, text=WORDY, auto=True),
    Case("capped", on(1, 12), DESK1, ("FPPP", "FPPP", "FFPP+ghost"), ("PPFP", "PPPP", "PFPP"), by="bob",
         auto=True),
    Case("b_error", on(1, 13), DESK1, ("E",), ("PPPP",), gen=0.20),
    Case("waiting", on(1, 31), DESK1, ("PFPP",), ("PF-P",), by="bob"),
    Case("timeout", on(2, 1), MEMO, ("FP",), ("T",)),
    Case("sonnet", on(3, 15), DESK2, ("PPPP",), ("PPPP",), reviewer_c=SONNET, by="lee", gen=0.25),
    Case("person", on(3, 15), DESK1, ("PPPP",), None),
    Case("approved", on(3, 15), MEMO, ("PF", "PP"), ("FF", "PP"), by="lee"),
    Case("queued", on(3, 15), DESK1, (), ()),
    Case("pending", on(3, 15), DESK1, ("PPPP",), None),
)
"""The seeded history, and what happens to each run after the runner:

- nice      round 1 NICE → shipped (first pass).
- fixed     round 1 NAUGHTY (both FAIL facts; C also FAILs the suggestion "short"), the fix is
            auto-approved, round 2 NICE → shipped. Wordy: the `short` check FAILs in both rounds.
- capped    three NAUGHTY rounds (auto-approved fixes) → escalated at the cap, left open. B FAILs
            "ghost" in round 3, an id that is not in the rubric: ignored by every figure.
- b_error   B errors in round 1 → escalated; lee ships it as is (resolved_shipped); ann reports
            1 escape afterwards.
- waiting   round 1 NAUGHTY, the fix waits for a person's approval (not finished). C skipped
            "tone" in a FAIL review: tone is unscored there.
- timeout   C times out in round 1 → escalated; bob rejects it (resolved_rejected).
- sonnet    desk@2 (domain legal), C is SONNET; round 1 NICE → shipped; 2 escapes reported.
- person    C is a person: pat fills it with a PASS → round 1 NICE → shipped.
- approved  round 1 NAUGHTY, bob approves the fix, round 2 NICE → shipped.
- queued    created, never run.
- pending   C is a person whose slot holds a `pending` row: waiting for the person review. Its
            review is blind, so nothing of its round counts yet (B's answer, its cost and latency
            would tell the person what B said): it counts as a run, not finished, 1 round started.
"""


# --- seeding -------------------------------------------------------------------------------


def spec_of(key: str) -> str:
    return f"Announce the Acme rocket ({key})."


def set_created(repo: RunStore, run_id: int, when: datetime) -> None:
    """Move a fresh run to another creation day, and its facts with it (before anything else happens)."""
    with Session(repo.engine) as s, s.begin():
        row = s.get(RunRow, run_id)
        row.created_at = when
        sm.refresh(s, run_id)


def new_repo(url: str) -> RunStore:
    return grant(grant(RunStore(init_db(url, mark_interrupted=False))), {"pat": ("editor",)})


def create(repo: RunStore, case: Case) -> int:
    """Create the run of a case on its day and register its script."""
    SCRIPTS[spec_of(case.key)] = {"B": case.b, "C": case.c or ()}
    run_id = repo.create_run(
        spec=spec_of(case.key), output=case.text, rubric=case.rubric, reviewer_b=OPUS,
        reviewer_c=PERSON if case.c is None else case.reviewer_c, fixer="fixer", auto_approve=case.auto,
        created_by=case.by, generation_cost_usd=case.gen)
    set_created(repo, run_id, case.day)
    return run_id


def person_pass(repo: RunStore, run_id: int, person: str) -> None:
    """`person` fills slot C of the run's current round with a PASS of every criterion."""
    run = repo.load_run(run_id)
    rnd = repo.load_round(run_id, run.state.round)
    review = passing(ReviewRequest(rubric=run.rubric, spec=run.spec, output=rnd.output_text))
    actions.submit_person_review(repo, run_id, "C", review, person)


def seed(repo: RunStore) -> dict[str, int]:
    """Make HISTORY happen; the run ids by key."""
    runner = make_runner(repo)
    try:
        ids = {case.key: create(repo, case) for case in HISTORY}
        for case in HISTORY:
            if case.key != "queued":
                runner.execute(ids[case.key])
        repo.resolve_escalation(ids["b_error"], "ship_as_is", "lee", "the reviewer failed, not the output")
        repo.report_escape(ids["b_error"], "facts", "the launch year was wrong", "major", "ann")
        repo.resolve_escalation(ids["timeout"], "reject", "bob", "out of scope")
        for _ in range(2):
            repo.report_escape(ids["sonnet"], "numbers", "a price was wrong", "minor", "ann")
        person_pass(repo, ids["person"], "pat")
        runner.execute(ids["person"])
        actions.approve_fix(repo, ids["approved"], "bob")
        runner.execute(ids["approved"])
        repo.save_review(ids["pending"], 1, ReviewOutcome(slot="C", reviewer=PERSON, status=ReviewStatus.PENDING))
    finally:
        runner.shutdown()
    return ids


@dataclass
class Seeded:
    repo: RunStore
    ids: dict[str, int]

    def report(self, grain: m.Grain | None = None, **filters: object) -> m.MetricsReport:
        return self.repo.metrics.report(MetricsFilter(**filters), grain)

    def run(self, *keys: str) -> set[int]:
        return {self.ids[k] for k in keys}


@pytest.fixture(scope="module", params=[
    "sqlite", pytest.param("postgres", marks=pytest.mark.skipif(not PG_URL, reason="SANTA_TEST_POSTGRES_URL not set"))])
def history(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    """HISTORY seeded once per module and database (the same two databases as `db_url`)."""
    if request.param == "sqlite":
        urls: Iterator[str] = iter([f"sqlite:///{tmp_path_factory.mktemp('metrics') / 'santa.db'}"])
    else:
        urls = _pg_database(PG_URL)
    for url in urls:
        repo = new_repo(url)
        yield Seeded(repo, seed(repo))
        repo.engine.dispose()


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

Totals = tuple[int, int, int, int, int, int, int, int]


def table(report: m.MetricsReport) -> dict[str, Totals]:
    """criterion → (pp, pf, fp, ff, b_fail, c_fail, check_fail, unscored)."""
    return {c.criterion: (c.pass_both, c.c_only, c.b_only, c.both, c.b_fail, c.c_fail, c.check_fail, c.unscored)
            for c in report.criteria}


def crit(report: m.MetricsReport, cid: str) -> m.CriterionFigures:
    return next(c for c in report.criteria if c.criterion == cid)


def same(a: object, b: object) -> bool:
    """Equal, floats to 1e-9 (PostgreSQL may sum floats in another order), through dicts and lists."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) < 1e-9
    return a == b


def close(value: float | None, expected: float | Fraction, tol: float = 1e-9) -> bool:
    return value is not None and abs(value - float(expected)) < tol


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
        "nice": ("shipped", 1), "fixed": ("shipped", 2), "capped": ("escalated", 3),
        "b_error": ("resolved_shipped", 1), "waiting": ("awaiting_approval", 1),
        "timeout": ("resolved_rejected", 1), "sonnet": ("shipped", 1), "person": ("shipped", 1),
        "approved": ("shipped", 2), "queued": ("queued", 1), "pending": ("awaiting_human_review", 1)}
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
    assert rounds == [(1, "resolved_rejected", 1), (1, "resolved_shipped", 1), (1, "shipped", 3),
                      (2, "shipped", 2), (3, "escalated", 1)]


# --- failure taxonomy -------------------------------------------------------------------------


def test_failure_taxonomy_by_criterion_and_category(history: Seeded) -> None:
    report = history.report()
    assert table(report) == HISTORY_TABLE  # "ghost" (not in any rubric) is nowhere
    assert [c.criterion for c in report.criteria] == ["facts", "numbers", "short", "cites", "tone"]
    # most failures first: facts 5+2 = 7, numbers 2+2 = 4, short 0+1+2 = 3, cites 1+1 = 2, tone 1
    assert [c.failed for c in report.criteria] == [7, 4, 3, 2, 1]
    assert {c.criterion: (c.category, c.severity) for c in report.criteria} == {
        "facts": ("factual accuracy", "critical"), "numbers": ("factual accuracy", "critical"),
        "short": ("completeness", "suggestion"), "cites": ("compliance", "critical"),
        "tone": ("compliance", "critical")}
    # factual accuracy = facts + numbers: B 5+2, C 2+2 → 11; completeness = short: C 1, check 2 → 3;
    # compliance = tone + cites: B 0+1, C 1+1 → 3 (ties by name)
    assert [(c.category, c.b_fail, c.c_fail, c.check_fail, c.failed) for c in report.categories] == [
        ("factual accuracy", 7, 4, 0, 11), ("completeness", 0, 1, 2, 3), ("compliance", 1, 2, 0, 3)]
    assert report.headline.failed_checks == 17


def test_failed_runs_drill_down(history: Seeded) -> None:
    ids, store = history.ids, history.repo.metrics
    total, runs = store.failed_runs(MetricsFilter(), criterion="facts")
    # facts failed in: fixed/1 (B, C), capped/1-3 (B), timeout/1 (B), approved/1 (C); newest first
    assert total == 4
    assert [(r.run_id, r.day, r.rubric, r.status, r.rounds_failed, r.b_fail, r.c_fail, r.check_fail)
            for r in runs] == [
        (ids["approved"], date(2025, 3, 15), "memo@1", "shipped", 1, 0, 1, 0),
        (ids["timeout"], date(2025, 2, 1), "memo@1", "resolved_rejected", 1, 1, 0, 0),
        (ids["capped"], date(2025, 1, 12), "desk@1", "escalated", 3, 3, 0, 0),
        (ids["fixed"], date(2025, 1, 6), "desk@1", "shipped", 1, 1, 1, 0)]
    total, runs = store.failed_runs(MetricsFilter(), criterion="facts", limit=2)
    assert (total, [r.run_id for r in runs]) == (4, [ids["approved"], ids["timeout"]])
    # category completeness = short: fixed/1 (C and the check), fixed/2 (the check)
    total, runs = store.failed_runs(MetricsFilter(), category="completeness")
    assert (total, [(r.run_id, r.rounds_failed, r.b_fail, r.c_fail, r.check_fail) for r in runs]) == (
        1, [(ids["fixed"], 2, 0, 1, 2)])
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
        (k, 1, None, None) for k in ("facts", "numbers", "short", "tone")]
    h = report.headline
    assert (h.compared_pairs, h.kappa, h.agreement) == (4, None, None)
    assert format_figure(h.kappa, "kappa") == "—"


def low(report: m.MetricsReport) -> list[str]:
    return [w for w in report.warnings if w.startswith("Low reviewer agreement")]


def test_low_agreement_warning_needs_ten_pairs(history: Seeded) -> None:
    # whole history: facts κ 0.12 over 11 pairs → flagged
    report = history.report()
    assert [c.criterion for c in report.criteria if c.low_agreement] == ["facts"]
    assert low(report) == ["Low reviewer agreement on facts (κ = 0.120 over 11 pairs): the two reviewers read "
                           "this criterion differently; tighten its pass condition and fail signal."]
    # without sonnet (desk@2): 10 pairs pp 5, pf 1, fp 3, ff 1; observed 6/10; B PASS 6/10, C PASS 8/10;
    # chance .48 + .08 = .56; κ = .04/.44 = 1/11 → still flagged at exactly 10 pairs
    report = history.report(versions=["desk@1", "memo@1"])
    facts = crit(report, "facts")
    assert (facts.pairs, facts.low_agreement) == (10, True) and close(facts.kappa, Fraction(1, 11))
    assert low(report) == ["Low reviewer agreement on facts (κ = 0.091 over 10 pairs): the two reviewers read "
                           "this criterion differently; tighten its pass condition and fail signal."]
    # HAIKU runs only (no sonnet, no person): 9 pairs pp 4, pf 1, fp 3, ff 1; observed 5/9;
    # B PASS 5/9, C PASS 7/9; chance 35/81 + 8/81 = 43/81; κ = (45 − 43)/(81 − 43) = 1/19 → 9 pairs: no flag
    report = history.report(reviewers=[HAIKU])
    facts = crit(report, "facts")
    assert (facts.pairs, facts.low_agreement) == (9, False) and close(facts.kappa, Fraction(1, 19))
    assert low(report) == []


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
    assert (rates[SONNET].input, rates[SONNET].cache_read) == (2.0, 0.20)
    h = history.report().headline
    assert h.cache_read_tokens == 11_500  # 12 + 10 + 1 answered reviews × 500; fixes read no cache
    # OPUS 6,000 × (5.00 − 0.50)/1e6 = 0.027; HAIKU 5,000 × (1.00 − 0.10)/1e6 = 0.0045;
    # SONNET 500 × (2.00 − 0.20)/1e6 = 0.0009 → 0.0324
    assert h.cache_savings_usd == pytest.approx(0.0324)


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
    return [(p.bucket, p.runs, p.finished, p.first_pass_rate, p.mean_iterations, p.shipped, p.escape_rate,
             pytest.approx(p.cost_usd), p.tokens) for p in report.series]


def test_series_by_day(history: Seeded) -> None:
    # cost and tokens per run: nice 0.04 / 2,980; fixed 0.13 / 8,360; capped 0.22 / 13,740;
    # b_error 0.01 / 1,380; waiting 0.09 / 5,380; timeout 0.03 / 1,600; sonnet 0.05 / 3,090;
    # person 0.03 / 1,600; approved 0.13 / 8,360; queued 0 / 0; pending 0 / 0 (blind)
    assert points(history.report("day")) == [
        (date(2025, 1, 6), 2, 2, 0.5, 1.5, 2, 0.0, 0.17, 11_340),        # nice + fixed (00:00 and 23:59 UTC)
        (date(2025, 1, 12), 1, 1, 0.0, None, 0, None, 0.22, 13_740),     # capped
        (date(2025, 1, 13), 1, 1, 0.0, None, 1, 1.0, 0.01, 1_380),       # b_error, 1 escape
        (date(2025, 1, 31), 1, 0, None, None, 0, None, 0.09, 5_380),     # waiting: not finished
        (date(2025, 2, 1), 1, 1, 0.0, None, 0, None, 0.03, 1_600),       # timeout
        # sonnet, person, approved, queued, pending: NICE in 1, 1, 2 → 4/3; escapes 2 on 3 shipped
        (date(2025, 3, 15), 5, 3, pytest.approx(2 / 3), pytest.approx(4 / 3), 3, pytest.approx(2 / 3), 0.21,
         13_050),
    ]


def test_series_by_iso_week(history: Seeded) -> None:
    assert points(history.report("week")) == [
        # Mon 6 Jan: Mon 6 + Sun 12 → 3 runs, first pass 1/3, NICE (1+2)/2, cost 0.17+0.22
        (date(2025, 1, 6), 3, 3, pytest.approx(1 / 3), 1.5, 2, 0.0, 0.39, 25_080),
        (date(2025, 1, 13), 1, 1, 0.0, None, 1, 1.0, 0.01, 1_380),  # Mon 13 Jan starts the next week
        # Mon 27 Jan: Fri 31 Jan and Sat 1 Feb share a week across the month boundary
        (date(2025, 1, 27), 2, 1, 0.0, None, 0, None, 0.12, 6_980),
        (date(2025, 3, 10), 5, 3, pytest.approx(2 / 3), pytest.approx(4 / 3), 3, pytest.approx(2 / 3), 0.21,
         13_050),  # Sat 15 Mar → Mon 10 Mar
    ]


def test_series_by_month(history: Seeded) -> None:
    assert points(history.report("month")) == [
        # January: nice, fixed, capped, b_error, waiting: finished 4, first pass 1/4, NICE (1+2)/2,
        # shipped 3 (nice, fixed, b_error) with 1 escape; cost 0.17+0.22+0.01+0.09
        (date(2025, 1, 1), 5, 4, 0.25, 1.5, 3, pytest.approx(1 / 3), 0.49, 31_840),
        (date(2025, 2, 1), 1, 1, 0.0, None, 0, None, 0.03, 1_600),
        (date(2025, 3, 1), 5, 3, pytest.approx(2 / 3), pytest.approx(4 / 3), 3, pytest.approx(2 / 3), 0.21,
         13_050),
    ]


@pytest.mark.parametrize(("filters", "grain"), [
    pytest.param({}, "week", id="6-jan-to-15-mar-is-68-days"),
    pytest.param({"since": date(2025, 3, 1)}, "day", id="since-1-mar-is-14-days"),
    # the span runs from the first day with data (6 Jan) to `until`
    pytest.param({"until": date(2025, 3, 9)}, "day", id="6-jan-to-9-mar-is-62-days"),
    pytest.param({"until": date(2025, 3, 10)}, "week", id="6-jan-to-10-mar-is-63-days"),
    pytest.param({"since": date(2024, 3, 1)}, "month", id="since-a-year-before"),
])
def test_auto_grain_follows_the_span(history: Seeded, filters: dict, grain: str) -> None:
    assert history.report(**filters).grain == grain


# --- filters ------------------------------------------------------------------------------


def headline(report: m.MetricsReport) -> tuple:
    h = report.headline
    return (h.runs, h.finished, h.first_pass_rate, h.mean_iterations, h.shipped, h.escape_rate,
            pytest.approx(h.total_cost_usd))


def test_filter_since_until_inclusive(history: Seeded) -> None:
    # capped (12 Jan), b_error (13 Jan), waiting (31 Jan): both ends included
    report = history.report(since=date(2025, 1, 12), until=date(2025, 1, 31))
    # finished 2 (capped, b_error), first pass 0, shipped 1 (b_error) with 1 escape;
    # cost 0.22 + 0.01 + 0.09 = 0.32
    assert headline(report) == (3, 2, 0.0, None, 1, 1.0, 0.32)
    assert report.grain == "day" and [p.bucket for p in report.series] == [
        date(2025, 1, 12), date(2025, 1, 13), date(2025, 1, 31)]
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
    assert (o.rubrics, o.versions, o.domains) == (["desk", "memo"], ["desk@1", "desk@2", "memo@1"],
                                                  ["legal", "marketing"])
    assert o.reviewers == [HAIKU, OPUS, SONNET, PERSON]
    assert {"ann", "bob", "lee", "pat"} <= set(o.people)
    assert (o.first_day, o.last_day) == (date(2025, 1, 6), date(2025, 3, 15))


# --- consistency ------------------------------------------------------------------------------

DAY_COLUMNS = [CriterionDayRow.__table__.c[k] for k in (*sm.DAY_KEY, *sm.COUNTERS)]


def day_rows(s: Session) -> dict[tuple, tuple]:
    """criterion_day by key (rows whose counters all went back to 0 hold nothing)."""
    n = len(sm.DAY_KEY)
    return {tuple(r[:n]): tuple(r[n:]) for r in s.exec(select(*DAY_COLUMNS)).all() if any(r[n:])}


def rebuilt_equals_incremental(repo: RunStore, refresh_all: bool = False) -> tuple[dict, dict]:
    """(criterion_day as kept by every write, as `rebuild_rollup` computes it); nothing is kept."""
    with Session(repo.engine) as s:
        tx = s.begin()
        try:
            kept = day_rows(s)
            if refresh_all:  # refresh is idempotent: running it again moves nothing
                for run_id in s.exec(select(RunRow.id)).all():
                    sm.refresh(s, run_id)
                assert day_rows(s) == kept
            sm.rebuild_rollup(s)
            return kept, day_rows(s)
        finally:
            tx.rollback()


def test_incremental_rollup_equals_rebuild(history: Seeded) -> None:
    kept, rebuilt = rebuilt_equals_incremental(history.repo, refresh_all=True)
    assert kept == rebuilt and kept


@pytest.mark.parametrize("filters", [
    pytest.param({}, id="all"),
    pytest.param({"since": date(2025, 1, 12), "until": date(2025, 2, 1)}, id="dates"),
    pytest.param({"rubrics": ["memo"]}, id="rubric"),
    pytest.param({"versions": ["desk@1"]}, id="version"),
    pytest.param({"domains": ["legal"]}, id="domain"),
    pytest.param({"reviewers": [HAIKU]}, id="reviewer"),
])
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


def test_backfill_fills_facts_of_runs_without_any(db_url: str) -> None:
    repo = new_repo(db_url)
    seed(repo)
    before = repo.metrics.report(MetricsFilter()).model_dump()
    with Session(repo.engine) as s, s.begin():  # as in a database from before the facts existed
        for table_ in (CriterionDayRow, CriterionResultRow, RunMetricRow):
            s.exec(delete(table_))
    assert repo.metrics.report(MetricsFilter()).empty
    assert sm.backfill(repo.engine, batch=4) == 11  # batches of 4, 4, 3
    assert sm.backfill(repo.engine) == 0
    assert same(repo.metrics.report(MetricsFilter()).model_dump(), before)
    kept, rebuilt = rebuilt_equals_incremental(repo)
    assert kept == rebuilt
    repo.engine.dispose()


# --- facts follow later changes ---------------------------------------------------------------


def fresh(db_url: str, *cases: Case) -> tuple[RunStore, Runner, dict[str, int]]:
    repo = new_repo(db_url)
    runner = make_runner(repo)
    ids = {case.key: create(repo, case) for case in cases}
    for run_id in ids.values():
        runner.execute(run_id)
    return repo, runner, ids


def whole(repo: RunStore) -> m.MetricsReport:
    return repo.metrics.report(MetricsFilter())


def test_a_person_review_counts_for_the_person_filter_once_the_gate_is_in(db_url: str) -> None:
    repo, runner, ids = fresh(db_url, Case("f-person", on(4, 1), DESK1, ("PPPP",), None, gen=0.5))
    try:
        assert repo.metrics.report(MetricsFilter(people=["pat"])).headline.runs == 0
        person_pass(repo, ids["f-person"], "pat")
        # pat's review is in, the gate is not: a run under pat now would tell another person reviewer so
        assert repo.metrics.report(MetricsFilter(people=["pat"])).headline.runs == 0
        h = whole(repo).headline  # blind: no round, no generation cost, no review cost yet
        assert (h.runs, h.rounds, h.generation_runs, h.review_cost_usd) == (1, 0, 0, 0.0)
        runner.execute(ids["f-person"])
        assert repo.metrics.report(MetricsFilter(people=["pat"])).headline.runs == 1
        h = whole(repo).headline
        assert (h.rounds, h.generation_runs, h.review_cost_usd) == (1, 1, pytest.approx(0.03))
    finally:
        runner.shutdown()
        repo.engine.dispose()


def test_facts_follow_an_escape_and_a_resolution(db_url: str) -> None:
    repo, runner, ids = fresh(db_url, Case("f-ship", on(4, 1), DESK1, ("PPPP",), ("PPPP",)),
                              Case("f-err", on(4, 2), DESK1, ("E",), ("PPPP",)))
    try:
        before = whole(repo)
        h = before.headline
        assert (h.finished, h.shipped, h.escapes, h.escape_rate, h.first_pass_rate) == (2, 1, 0, 0.0, 0.5)
        repo.report_escape(ids["f-ship"], "facts", "found later", "critical", "ann")
        h = whole(repo).headline
        assert (h.shipped, h.escapes, h.escaped_runs, h.escape_rate) == (1, 1, 1, 1.0)
        repo.resolve_escalation(ids["f-err"], "ship_as_is", "bob", "checked by hand")
        after = whole(repo)
        h = after.headline
        # resolved_shipped joins the shipped runs; still 2 finished runs and 1 first pass
        assert (h.runs, h.finished, h.shipped, h.escapes, h.escape_rate, h.first_pass_rate) == (2, 2, 2, 1, 0.5, 0.5)
        assert [(r.rounds, r.status, r.runs) for r in after.rounds] == [(1, "resolved_shipped", 1), (1, "shipped", 1)]
        assert after.criteria == before.criteria  # no criterion counted twice
        assert same(after.model_dump(include={"reviewers"}), before.model_dump(include={"reviewers"}))
        kept, rebuilt = rebuilt_equals_incremental(repo, refresh_all=True)
        assert kept == rebuilt
    finally:
        runner.shutdown()
        repo.engine.dispose()


def test_facts_follow_replaced_reviews(db_url: str) -> None:
    repo, runner, ids = fresh(db_url, Case("f-wait", on(4, 1), DESK1, ("FPPP",), ("PPPP",)),
                              Case("f-person", on(4, 1), DESK1, ("PPPP",), None))
    try:
        t = table(whole(repo))
        # f-wait/1: facts fp, the rest pp (short check PASS). f-person/1 is blind: B answered, the
        # person has not, so nothing of the round counts (B's FAILs, cost or latency would leak)
        assert t["facts"] == (0, 0, 1, 0, 1, 0, 0, 0) and t["tone"] == (1, 0, 0, 0, 0, 0, 0, 0)
        assert [(r.reviewer, r.reviews, r.cost_usd) for r in whole(repo).reviewers] == [
            (HAIKU, 1, pytest.approx(0.01)), (OPUS, 1, pytest.approx(0.03))]  # ties by name
        # a pending row in the person's slot changes nothing
        repo.save_review(ids["f-person"], 1, ReviewOutcome(slot="C", reviewer=PERSON, status=ReviewStatus.PENDING))
        assert table(whole(repo)) == t
        # the person's review is in but the gate is not: still blind
        person_pass(repo, ids["f-person"], "pat")
        assert table(whole(repo)) == t
        # the gate is in: the round counts, B's answer and the person's, 4 pp
        runner.execute(ids["f-person"])
        report = whole(repo)
        assert table(report)["facts"] == (1, 0, 1, 0, 1, 0, 0, 0)
        assert table(report)["tone"] == (2, 0, 0, 0, 0, 0, 0, 0)
        assert report.headline.unscored == 0 and report.headline.compared_pairs == 8
        assert [(r.reviewer, r.reviews) for r in report.reviewers] == [(OPUS, 2), (HAIKU, 1), (PERSON, 1)]
        # B's review of f-wait/1 is replaced: facts fp → pp, short pp → fp (B fails the suggestion)
        repo.save_review(ids["f-wait"], 1, outcome(OPUS, "B", DESK1, "PPPF"))
        report = whole(repo)
        assert table(report)["facts"] == (2, 0, 0, 0, 0, 0, 0, 0)
        assert table(report)["short"] == (1, 0, 1, 0, 1, 0, 0, 0)
        assert report.headline.compared_pairs == 8  # still one pair per criterion and round
        opus = report.reviewers[0]
        # still 2 OPUS answers (one per run); every call was paid: 2 for f-wait/1 + 1 for f-person = 3 × 0.03
        assert (opus.reviewer, opus.reviews) == (OPUS, 2) and opus.cost_usd == pytest.approx(0.09)
        repo.save_review(ids["f-wait"], 1, outcome(OPUS, "B", DESK1, "PPPF"))  # the same again: nothing moves
        assert same(whole(repo).model_dump(), report.model_dump())
        kept, rebuilt = rebuilt_equals_incremental(repo, refresh_all=True)
        assert kept == rebuilt
    finally:
        runner.shutdown()
        repo.engine.dispose()


# --- pure definitions (santa_core.reports.metrics) ---------------------------------------------------


@pytest.mark.parametrize(("pp", "pf", "fp", "ff", "expected"), [
    pytest.param(0, 0, 0, 0, None, id="no-pairs"),
    pytest.param(5, 0, 0, 0, None, id="all-pass-chance-is-one"),
    pytest.param(0, 0, 0, 3, None, id="all-fail-chance-is-one"),
    pytest.param(3, 0, 0, 2, Fraction(1), id="perfect"),
    pytest.param(0, 2, 2, 0, Fraction(-1), id="always-opposite"),
    pytest.param(0, 3, 0, 0, Fraction(0), id="b-always-pass-c-always-fail"),
    # observed 7/8, B PASS 1, C PASS 7/8 → chance 7/8 → 0
    pytest.param(7, 1, 0, 0, Fraction(0), id="one-reviewer-constant"),
    # the textbook table (50 pairs): observed 35/50, chance .5·.6 + .5·.4 = .5 → (.7 − .5)/.5 = 2/5
    pytest.param(20, 5, 10, 15, Fraction(2, 5), id="textbook-0.40"),
    pytest.param(6, 1, 3, 1, Fraction(6, 50), id="history-facts"),
    pytest.param(29, 3, 3, 4, Fraction(107, 224), id="history-pooled"),
    # observed 2/6, B PASS 3/6, C PASS 5/6 → chance 1/2 → −1/3
    pytest.param(2, 1, 3, 0, Fraction(-1, 3), id="worse-than-chance"),
])
def test_cohens_kappa(pp: int, pf: int, fp: int, ff: int, expected: Fraction | None) -> None:
    kappa = cohens_kappa(pp, pf, fp, ff)
    if expected is None:
        assert kappa is None
    else:
        assert close(kappa, expected)
        assert cohens_kappa(pp, fp, pf, ff) == pytest.approx(kappa)  # symmetric in B and C


def test_a_kappa_of_exactly_040_is_not_below_040() -> None:
    assert cohens_kappa(20, 5, 10, 15) == m.LOW_KAPPA
    assert cohens_kappa(3, 1, 2, 4) == 0.4  # 10 pairs: exactly 2/5 too


def test_agreement_and_other_ratios() -> None:
    assert m.agreement(1, 3, 1) == 0.2 and m.agreement(0, 0, 0) is None
    assert m.first_pass_rate(3, 8) == 0.375 and m.first_pass_rate(0, 0) is None
    assert m.mean_iterations(7, 5) == 1.4 and m.escape_rate(3, 6) == 0.5 and m.escape_rate(1, 0) is None


@pytest.mark.parametrize(("numerator", "denominator", "expected"), [
    pytest.param(1, 4, 0.25, id="quarter"),
    pytest.param(0, 5, 0.0, id="zero-over-some"),
    pytest.param(3, 0, None, id="nothing-to-divide-by"),
    pytest.param(0.0, 0.0, None, id="zero-over-zero"),
    pytest.param(2, 1, 2.0, id="above-one"),
])
def test_ratio(numerator: float, denominator: float, expected: float | None) -> None:
    assert ratio(numerator, denominator) == expected


@pytest.mark.parametrize(("day", "grain", "bucket"), [
    pytest.param(date(2025, 1, 15), "day", date(2025, 1, 15), id="day-is-itself"),
    pytest.param(date(2025, 1, 6), "week", date(2025, 1, 6), id="monday-starts-its-week"),
    pytest.param(date(2025, 1, 12), "week", date(2025, 1, 6), id="sunday-ends-it"),
    pytest.param(date(2025, 2, 1), "week", date(2025, 1, 27), id="week-across-months"),
    pytest.param(date(2025, 1, 1), "week", date(2024, 12, 30), id="week-across-years"),
    pytest.param(date(2025, 1, 1), "month", date(2025, 1, 1), id="first-is-its-month"),
    pytest.param(date(2025, 1, 31), "month", date(2025, 1, 1), id="last-of-month"),
    pytest.param(date(2024, 2, 29), "month", date(2024, 2, 1), id="leap-day"),
])
def test_bucket_of(day: date, grain: m.Grain, bucket: date) -> None:
    assert bucket_of(day, grain) == bucket


@pytest.mark.parametrize(("first", "last", "grain"), [
    pytest.param(None, None, "day", id="no-history"),
    pytest.param(date(2025, 1, 1), None, "day", id="open-end"),
    pytest.param(date(2025, 1, 1), date(2025, 1, 1), "day", id="one-day"),
    pytest.param(date(2025, 1, 1), date(2025, 3, 4), "day", id="62-days"),
    pytest.param(date(2025, 1, 1), date(2025, 3, 5), "week", id="63-days"),
    pytest.param(date(2024, 1, 1), date(2025, 1, 1), "week", id="366-days"),
    pytest.param(date(2024, 1, 1), date(2025, 1, 2), "month", id="367-days"),
])
def test_auto_grain(first: date | None, last: date | None, grain: str) -> None:
    assert auto_grain(first, last) == grain


@pytest.mark.parametrize(("value", "kind", "text"), [
    pytest.param(None, "rate", "—", id="undefined"),
    pytest.param(0.725, "rate", "72.5 %", id="rate"),
    pytest.param(0.0, "rate", "0.0 %", id="rate-zero"),
    pytest.param(1.4286, "mean", "1.43", id="mean"),
    pytest.param(0.48, "ratio", "0.48", id="ratio"),
    pytest.param(0.003142, "ratio", "0.00314", id="ratio-small"),
    pytest.param(12345.6, "ratio", "12,346", id="ratio-large"),
    pytest.param(1204, "count", "1,204", id="count"),
    pytest.param(4371.8, "count", "4,372", id="count-rounded"),
    pytest.param(0.0123, "usd", "$0.0123", id="usd-cents"),
    pytest.param(0.76, "usd", "$0.7600", id="usd-under-a-dollar"),
    pytest.param(1234.5, "usd", "$1,234.50", id="usd-dollars"),
    pytest.param(2.44, "seconds", "2.4 s", id="seconds"),
    pytest.param(0.6154, "kappa", "0.615", id="kappa"),
    pytest.param(-0.3333, "kappa", "-0.333", id="kappa-negative"),
])
def test_format_figure(value: float | None, kind: m.Kind, text: str) -> None:
    assert format_figure(value, kind) == text


def pure_report(table_: Totals | None = None, **day: object) -> m.MetricsReport:
    days = [DayTotals(day=date(2025, 1, 1), runs=1, **day)]
    criteria = [] if table_ is None else [CriterionTotals(criterion="x", category="c", **dict(
        zip(("pp", "pf", "fp", "ff"), table_, strict=False)))]
    return build_report(MetricsFilter(), days, [], criteria, [])


@pytest.mark.parametrize(("counts", "flagged"), [
    # observed 8/10, B PASS 8/10, C PASS 8/10 → chance .68 → (.8 − .68)/.32 = 0.375
    pytest.param((7, 1, 1, 1), True, id="10-pairs-kappa-0.375"),
    pytest.param((3, 1, 2, 4), False, id="10-pairs-kappa-exactly-0.40"),
    # observed 7/9, B and C PASS 7/9 → chance 53/81 → (63 − 53)/(81 − 53) = 10/28 ≈ 0.357
    pytest.param((6, 1, 1, 1), False, id="9-pairs-kappa-0.357"),
    pytest.param((1, 0, 2, 7), False, id="10-pairs-kappa-0.41"),
    pytest.param((10, 0, 0, 0), False, id="10-pairs-kappa-undefined"),
    pytest.param((20, 5, 10, 15), False, id="50-pairs-kappa-exactly-0.40"),
])
def test_low_agreement_boundary(counts: tuple[int, int, int, int], flagged: bool) -> None:
    report = pure_report(counts)
    assert report.criteria[0].low_agreement is flagged
    assert bool([w for w in report.warnings if w.startswith("Low reviewer agreement on x")]) is flagged


@pytest.mark.parametrize(("day", "warning"), [
    pytest.param({"finished": 10, "first_pass": 7}, "First-pass rate 70.0 % is not above the 70 % target.",
                 id="first-pass-at-target"),
    pytest.param({"finished": 100, "first_pass": 71}, None, id="first-pass-above-target"),
    pytest.param({"nice_runs": 2, "nice_rounds": 3},
                 "Mean iterations to converge 1.50 is not below the 1.5 target.", id="iterations-at-target"),
    pytest.param({"nice_runs": 3, "nice_rounds": 4}, None, id="iterations-below-target"),
    pytest.param({"shipped": 1, "escapes": 1}, "1 escape(s) reported on shipped runs; the target is 0.",
                 id="an-escape"),
])
def test_target_warnings_at_the_boundary(day: dict, warning: str | None) -> None:
    assert pure_report(**day).warnings == ([] if warning is None else [warning])


def test_build_report_sums_before_dividing() -> None:
    days = [DayTotals(day=date(2025, 1, 6), runs=2, finished=2, first_pass=1, rounds=3, review_cost_usd=0.3,
                      generation_cost_usd=1.0, generation_runs=1, review_cost_with_generation_usd=0.1),
            DayTotals(day=date(2025, 1, 8), runs=1, finished=1, first_pass=1, rounds=1, fix_cost_usd=0.1,
                      input_tokens=10, output_tokens=5, cache_write_tokens=2, cache_read_tokens=3)]
    criteria = [CriterionTotals(criterion="x", category="c", pp=1, ff=1, b_fail=1),
                CriterionTotals(criterion="x", category="c", pf=1, c_fail=2, check_fail=1)]
    reviewers = [ReviewerTotals(reviewer="r", reviews=2, errors=1, latency_s=3.0, max_latency_s=2.0, cost_usd=0.1),
                 ReviewerTotals(reviewer="r", reviews=1, latency_s=6.0, max_latency_s=6.0, cost_usd=0.2),
                 ReviewerTotals(reviewer="idle")]
    report = build_report(MetricsFilter(), reversed(days), [RoundsCount(rounds=2, status="shipped", runs=1)],
                          criteria, reviewers)
    h = report.headline
    assert report.grain == "day" and [p.bucket for p in report.series] == [date(2025, 1, 6), date(2025, 1, 8)]
    assert h.first_pass_rate == pytest.approx(2 / 3)  # (1 + 1) ÷ (2 + 1), not the mean of ½ and 1
    assert (h.total_cost_usd, h.cost_per_run_usd, h.cost_per_round_usd) == pytest.approx((0.4, 0.4 / 3, 0.1))
    assert (h.tokens, h.review_to_generation) == (20, pytest.approx(0.1))
    # the two rows of criterion x merge: pp 1, pf 1, ff 1; failed 1 + 2 + 1
    [x] = report.criteria
    assert (x.pairs, x.both, x.c_only, x.failed) == (3, 1, 1, 4)
    # reviewer r over both slots: 3 answers, 1 error, (3 + 6)/3 s mean, 6 s max; "idle" answered nothing
    assert [(r.reviewer, r.reviews, r.errors, r.mean_latency_s, r.max_latency_s) for r in report.reviewers] == [
        ("r", 3, 1, 3.0, 6.0)]


def test_a_criterion_whose_severity_or_category_changed_is_one_criterion() -> None:
    """Versions 1 and 2 of a rubric file criterion x under other categories and severities."""
    criteria = [CriterionTotals(criterion="x", category="facts", severity="critical", pp=5, fp=3, b_fail=3),
                CriterionTotals(criterion="x", category="style", severity="suggestion", pp=4, ff=2, fp=1, b_fail=3,
                                c_fail=2)]
    report = build_report(MetricsFilter(), [], [], criteria, [])
    [x] = report.criteria  # one row: its agreement and kappa need all 15 pairs
    assert (x.category, x.severity, x.pairs, x.both, x.b_only, x.pass_both) == (
        "facts / style", "critical / suggestion", 15, 2, 4, 9)
    assert close(x.kappa, m.cohens_kappa(9, 0, 4, 2))
    # categories keep each version's failures where they were filed
    assert [(c.category, c.failed) for c in report.categories] == [("style", 5), ("facts", 3)]


def test_empty_report() -> None:
    report = build_report(MetricsFilter(), [], [], [], [])
    assert report.empty and report.grain == "day" and report.series == [] and report.warnings == []
    h = report.headline
    assert (h.first_pass_rate, h.mean_iterations, h.escape_rate, h.kappa, h.cost_per_run_usd) == (None,) * 5
    assert dict(m.headline_rows(report))["First-pass rate"] == "—"


def test_every_headline_figure_has_a_definition() -> None:
    for field, _, _, key in m.HEADLINE:
        assert field in m.Headline.model_fields and key in m.DEFINITIONS
    assert MetricsFilter().is_empty() and not MetricsFilter(people=["ann"]).is_empty()


def test_headline_rows_write_the_seeded_figures(history: Seeded) -> None:
    rows = dict(m.headline_rows(history.report()))
    assert rows["First-pass rate"] == "37.5 %" and rows["Mean iterations to converge"] == "1.40"
    assert rows["Reviewer agreement"] == "40.0 %" and rows["Cohen's κ"] == "0.478"  # 107/224 = 0.4777
    assert rows["Escape rate"] == "50.0 %" and rows["Total spend"] == "$0.7300"
    assert rows["Tokens per round"] == "3,321" and rows["Mean round latency"] == "4.4 s"  # 57/13
