"""The seeded history every storage metric test checks its figures against (issue 5), made the
way production makes it: `RunStore.create_run`, the real `Runner` with deterministic reviewer and
fixer doubles, `santa_core.run.actions` for people's decisions, `RunStore.resolve_escalation` and
`RunStore.report_escape`. The fact tables are never written by hand; only `run.created_at` is moved
to a chosen day right after a run is created (before anything else happens to it), so the time
series and the date filters have several days to work on. `HISTORY` lists every run, round by
round; `history` (a fixture: bind it in the test module) seeds it once per module and database.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from sqlmodel import Session

from santa_core.models import (
    CheckResult,
    Criterion,
    FixEdit,
    FixPlan,
    LLMCall,
    Review,
    ReviewIssue,
    ReviewOutcome,
    ReviewStatus,
    Rubric,
    Slot,
    Usage,
)
from santa_core.reports import metrics as m
from santa_core.reports.metrics import MetricsFilter
from santa_core.reviewers.base import PERSON, FixAnswer, FixRequest, ReviewRequest
from santa_core.reviewers.doubles import passing
from santa_core.run import actions
from santa_core.run.runner import Runner
from storage import metric_facts as sm
from storage.runs import RunStore
from storage.startup import init_db
from storage.tables import RunRow
from tests.conftest import PG_URL, _pg_database, grant

# --- the reviewers, their prices and their answers ------------------------------------------

OPUS, HAIKU, SONNET = "claude-opus-5", "claude-haiku-4-5", "claude-sonnet-5"
"""Reviewer B is always OPUS; reviewer C is HAIKU, SONNET or a person. The fixer bills as SONNET."""

COST = {OPUS: 0.03, HAIKU: 0.01, SONNET: 0.02}
"""USD of one answered review call (set explicitly, so the sums are easy to check by hand)."""
USAGE = {
    OPUS: Usage(input_tokens=1000, output_tokens=100, cache_read_input_tokens=500),  # 1,600 tokens
    HAIKU: Usage(input_tokens=800, output_tokens=80, cache_read_input_tokens=500),  # 1,380 tokens
    SONNET: Usage(input_tokens=900, output_tokens=90, cache_read_input_tokens=500),  # 1,490 tokens
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


def scripted_review(rubric: Rubric, step: str, evidence: str = "") -> Review:
    """A review from a step such as "FP-P": one letter per criterion in rubric order (P PASS,
    F FAIL, - no check at all), "+ghost" adds a FAIL for an id that is not in the rubric. With
    `evidence`, each blocking FAIL is also listed as a critical issue quoting it (so a fix may
    anchor there)."""
    results, _, extra = step.partition("+")
    checks = [
        CheckResult(criterion=c.id, result="PASS" if r == "P" else "FAIL", detail=f"{c.id} {r}")
        for c, r in zip(rubric.criteria, results, strict=True)
        if r != "-"
    ]
    if extra:
        checks.append(CheckResult(criterion=extra, result="FAIL", detail="not a criterion of this rubric"))
    failed = any(c.result == "FAIL" for c in checks)
    advisory = set(rubric.advisory_ids())
    issues = [
        ReviewIssue(criterion=c.criterion, description=c.detail, evidence=evidence)
        for c in checks
        if evidence and c.result == "FAIL" and c.criterion not in advisory
    ]
    return Review(verdict="FAIL" if failed else "PASS", checks=checks, critical_issues=issues, suggestions=[])


def outcome(model: str, slot: Slot, rubric: Rubric, step: str, evidence: str = "") -> ReviewOutcome:
    """The outcome of one scripted step ("E": error, "T": timeout), with one logged call."""
    if step in ("E", "T"):
        status, latency = (ReviewStatus.ERROR, ERROR_S) if step == "E" else (ReviewStatus.TIMEOUT, TIMEOUT_S)
        call = LLMCall(purpose="review", model=model, request={"slot": slot}, latency_s=latency, error=status.value)
        return ReviewOutcome(
            slot=slot, reviewer=model, status=status, error=f"scripted {status.value}", latency_s=latency, calls=[call]
        )
    review = scripted_review(rubric, step, evidence)
    raw = review.model_dump_json()
    call = LLMCall(
        purpose="review",
        model=model,
        request={"slot": slot},
        response=raw,
        usage=USAGE[model],
        cost_usd=COST[model],
        latency_s=LATENCY[model],
    )
    return ReviewOutcome(
        slot=slot,
        reviewer=model,
        status=ReviewStatus.OK,
        review=review,
        usage=USAGE[model],
        cost_usd=COST[model],
        latency_s=LATENCY[model],
        raw_response=raw,
        calls=[call],
    )


SCRIPTS: dict[str, dict[str, tuple[str, ...]]] = {}
"""spec → slot → one step per round (filled from HISTORY; tests of their own add theirs)."""


class ScriptReviewer:
    """A reviewer model that answers the step its run's script gives for this round."""

    def __init__(self, name: str) -> None:
        self.name = name

    def review(self, request: ReviewRequest, slot: Slot) -> ReviewOutcome:
        step = SCRIPTS[request.spec][slot][round_of(request.output) - 1]
        return outcome(self.name, slot, request.rubric, step, MARKER.search(request.output).group(0))


class MarkerFixer:
    """A fix agent that fixes issue 0 by moving the round marker on (the reviewers quote the marker
    as their evidence, so the edit is in scope), billed as one SONNET call."""

    name = "fixer"

    def propose(self, request: FixRequest) -> FixAnswer:
        n = round_of(request.output)
        plan = FixPlan(edits=[FixEdit(issue=0, before=f"[round {n}]", after=f"[round {n + 1}]")])
        call = LLMCall(
            purpose="fix", model=SONNET, request={"round": n}, usage=FIX_USAGE, cost_usd=FIX_COST, latency_s=3.0
        )
        return FixAnswer(plan=plan, usage=FIX_USAGE, cost_usd=FIX_COST, calls=[call])


def make_runner(repo: RunStore) -> Runner:
    reviewers = {name: ScriptReviewer(name) for name in COST}
    fixer = MarkerFixer()
    return Runner(repo, reviewers.__getitem__, lambda name: fixer, workers=2)


# --- rubrics ----------------------------------------------------------------------------------


def criterion(cid: str, category: str, **kw: object) -> Criterion:
    return Criterion(
        id=cid,
        name=cid.title(),
        category=category,
        pass_condition=f"{cid} holds.",
        fail_signal=f"{cid} does not hold.",
        **kw,
    )


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
    Case("capped", on(1, 12), DESK1, ("FPPP", "FPPP", "FFPP+ghost"), ("PPFP", "PPPP", "PFPP"), by="bob", auto=True),
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
        spec=spec_of(case.key),
        output=case.text,
        rubric=case.rubric,
        reviewer_b=OPUS,
        reviewer_c=PERSON if case.c is None else case.reviewer_c,
        fixer="fixer",
        auto_approve=case.auto,
        created_by=case.by,
        generation_cost_usd=case.gen,
    )
    set_created(repo, run_id, case.day)
    return run_id


def person_pass(repo: RunStore, run_id: int, person: str) -> None:
    """`person` fills slot C of the run's current round with a PASS of every criterion."""
    run = repo.load_run(run_id)
    rnd = repo.load_round(run_id, run.state.round)
    review = passing(ReviewRequest(rubric=run.rubric, spec=run.spec, output=rnd.output_text))
    actions.submit_person_review(repo, run_id, "C", review, person)


def seed(repo: RunStore, cases: Sequence[Case] = HISTORY) -> dict[str, int]:
    """Make HISTORY (or these cases: HISTORY's keys, moved in time, and more) happen; the run ids by key."""
    runner = make_runner(repo)
    try:
        ids = {case.key: create(repo, case) for case in cases}
        for case in cases:
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


@pytest.fixture(
    scope="module",
    params=[
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.skipif(not PG_URL, reason="SANTA_TEST_POSTGRES_URL not set")),
    ],
)
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
