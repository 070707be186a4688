"""Issue 35's acceptance for the escape rate: a seeded history of 400 shipped runs whose texts carry a planted miss
at a known rate; a rule draws its share at random, a person double judges each drawn text blind, and the escape
rate the Metrics figures state is the reference computation here (the planted texts among the runs hashlib says
are drawn; scipy's own exact interval), and its interval holds the true rate. A reported escape stays apart.

SQLite only: the draw and the submit are the same SQL on PostgreSQL (tests/storage/test_spot_checks.py runs both).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from scipy.stats import binomtest

from santa_core.models import ReviewOutcome, ReviewStatus, RunState
from santa_core.reports.metrics import MetricsFilter
from santa_core.reviewers.base import ReviewRequest
from santa_core.reviewers.doubles import passing
from santa_core.spotchecks import actions
from santa_core.spotchecks.model import Judgement, RuleDraft
from storage.db import make_engine
from storage.runs import RunStore
from tests.conftest import migrated_sqlite
from tests.core.run.test_runner import GOOD, RUBRIC, SPEC
from tests.core.spotchecks.test_draw import reference_number
from tests.support.people import AUTHOR, EDITOR, OFFICER
from tests.support.people_runs import S

RUNS = 400
TRUE_RATE = 0.12
"""The share of shipped texts that carry the planted miss (a promise both reviewers passed)."""
SHARE = 25.0
PLANTED = "Returns are guaranteed."
SEED = 20261205


@pytest.fixture
def repo(tmp_path: Path) -> RunStore:
    return RunStore(make_engine(migrated_sqlite(tmp_path / "santa.db", granted=True)))  # the test people granted


def shipped_history(repo: RunStore) -> dict[int, bool]:
    """400 runs shipped as both reviewers passed them; run id → whether its text carries the planted miss."""
    rng = random.Random(SEED)
    planted: dict[int, bool] = {}
    for _ in range(RUNS):
        bad = rng.random() < TRUE_RATE
        run_id = repo.create_run(
            spec=SPEC,
            output=f"{GOOD} {PLANTED}" if bad else GOOD,
            rubric=RUBRIC,
            created_by=EDITOR,
            reviewer_b="claude-haiku-4-5",
            reviewer_c="gpt-5.4-nano",
            fixer="fixer",
        )
        # Shipped in one move (the runner's claim and its reviews are not what this test is about: the draw at
        # shipping, the blind judgement and the figures are).
        assert repo.transition(run_id, {S.QUEUED}, RunState(status=S.SHIPPED, note="both PASS"), "gate")
        planted[run_id] = bad
    return planted


def both_passed(repo: RunStore, run_id: int) -> None:
    """The reviewers' PASS of every criterion, stored on the shipped round: what an escape is traced to (only the
    drawn runs need them; a spot-check FAIL no reviewer passed would be no escape past the reviewers)."""
    review = passing(ReviewRequest(rubric=RUBRIC, spec=SPEC, output=GOOD))
    for slot, model in (("B", "claude-haiku-4-5"), ("C", "gpt-5.4-nano")):
        repo.save_review(run_id, 1, ReviewOutcome(slot=slot, reviewer=model, status=ReviewStatus.OK, review=review))


def person_double(repo: RunStore, spot_check_id: int) -> list[Judgement]:
    """A careful person: reads the blind case (the shipped text, not the reviewers') and fails compliance on the
    planted promise, passes everything else."""
    case = repo.spot_checks.blind_case(spot_check_id)
    bad = PLANTED in case.text
    return [
        Judgement(
            criterion=c.id,
            verdict="FAIL" if bad and c.id == "compliance" else "PASS",
            evidence=PLANTED if bad and c.id == "compliance" else "",
        )
        for c in case.criteria
    ]


def test_the_spot_check_escape_rate_is_the_reference_estimate_and_its_interval_holds_the_true_rate(
    repo: RunStore, env: dict[str, str], tmp_path: Path
) -> None:
    from tests.cli.test_metrics import metrics

    actions.save_rule(repo.spot_checks, RuleDraft(rubric_name=RUBRIC.name, share_percent=SHARE), AUTHOR, [RUBRIC.name])
    seed = repo.spot_checks.rules()[0].seed
    planted = shipped_history(repo)
    assert abs(sum(planted.values()) / RUNS - TRUE_RATE) < 0.04  # the history is what it says

    # The draw: the runs whose hash number is under the share, and no others (hashlib, not the code under test).
    expected = sorted(r for r in planted if reference_number(seed, r) < SHARE / 100)
    drawn = repo.spot_checks.spot_checks()
    assert sorted(c.run_id for c in drawn) == expected
    assert 0.18 < len(expected) / RUNS < 0.32  # about the stated share

    for check in drawn:
        both_passed(repo, check.run_id)
        actions.submit(repo.spot_checks, check.id, person_double(repo, check.id), OFFICER)
    # A complaint about a run nobody drew: a reported escape, the other series.
    reported_on = next(r for r in planted if r not in expected)
    repo.report_escape(reported_on, "compliance", "A customer found a promise.", "major", OFFICER)

    k, n = sum(planted[r] for r in expected), len(expected)
    reference = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    data = metrics(env, tmp_path)  # the figures `metrics --json` prints
    overall = data["spot_check_escape_rate"]["overall"]
    assert (overall["k"], overall["n"]) == (k, n)
    assert overall["value"] == pytest.approx(k / n)
    assert (overall["low"], overall["high"]) == pytest.approx((reference.low, reference.high), abs=1e-9)
    assert overall["low"] <= TRUE_RATE <= overall["high"]
    panels = data["spot_check_escape_rate"]["groups"]["model_pair"]
    assert [(g["escapes"]["k"], g["escapes"]["n"]) for g in panels] == [(k, n)]  # one panel: all of it

    # Reported escapes stay apart: the spot-checks' escapes are not in the reported series, the complaint is.
    assert data["headline"]["escapes"] == 1
    assert repo.metrics.report(MetricsFilter()).headline.escapes == 1
    spot_escapes = [e for e in repo.escapes() if e.source == "spot_check"]
    assert len(spot_escapes) == k and {e.criterion for e in spot_escapes} == {"compliance"}
