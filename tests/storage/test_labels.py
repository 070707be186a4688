"""Labels the desk already holds (`storage.labels`): a person's review once its round's gate is in, and an
escalation rejected (FAIL) on its flagged criteria (shipped as is: none); the models' verdicts on the same
rounds; and the calibration computed from them (`desk.calibration.figures`). SQLite and, when
SANTA_TEST_POSTGRES_URL is set, PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime

from desk.calibration import figures
from santa_core.reports.labels import PersonLabel, SpotCheckOutcome
from santa_core.reviewers.base import PERSON, ReviewRequest
from santa_core.reviewers.doubles import failing
from santa_core.run import actions
from storage.labels import LabelStore
from storage.runs import RunStore
from tests.core.run.test_runner import BAD, RUBRIC, SPEC
from tests.support import people_runs
from tests.support.people import EDITOR, OFFICER
from tests.support.people_runs import S, make_runner, new_run

engine, repo = people_runs.engine, people_runs.repo  # the fixtures

WRONG_YEAR = failing(
    ReviewRequest(rubric=RUBRIC, spec=SPEC, output=BAD), "factual_accuracy", "wrong year", evidence="in 2019"
)


def test_a_person_review_is_a_label_once_its_gate_is_in(repo: RunStore) -> None:
    run_id = new_run(repo, BAD, reviewer_b=PERSON)
    assert make_runner(repo).execute(run_id).status == S.AWAITING_HUMAN_REVIEW
    actions.submit_person_review(repo, run_id, "B", WRONG_YEAR, EDITOR)
    store = LabelStore(repo)
    assert store.labels() == []  # no gate yet: the round is still blind
    make_runner(repo).execute(run_id)
    labels = store.labels()
    assert {(lb.criterion, lb.verdict) for lb in labels} == {
        (c, "FAIL" if c == "factual_accuracy" else "PASS") for c in RUBRIC.criterion_ids()
    }
    assert {(lb.run_id, lb.round_no, lb.source, lb.person) for lb in labels} == {(run_id, 1, "person_review", EDITOR)}
    assert next(lb for lb in labels if lb.verdict == "FAIL").evidence == "in 2019"
    verdicts = store.model_verdicts({(run_id, 1)})
    assert {(v.slot, v.model) for v in verdicts} == {("C", "c")}  # the person's own slot is no model verdict
    assert {v.criterion for v in verdicts if v.verdict == "FAIL"} == {"factual_accuracy"}
    assert store.model_verdicts({(run_id, 2)}) == []


def escalated(repo: RunStore) -> int:
    """A run whose fix a person rejected: escalated, with both reviewers' factual_accuracy issue merged."""
    run_id = new_run(repo, BAD)
    assert make_runner(repo).execute(run_id).status == S.AWAITING_APPROVAL
    assert actions.reject_fix(repo, run_id, EDITOR, "no").status == S.ESCALATED
    return run_id


def test_a_rejected_escalation_labels_only_its_flagged_criteria_and_a_waiver_labels_none(repo: RunStore) -> None:
    shipped, rejected, sent_back = escalated(repo), escalated(repo), escalated(repo)
    actions.resolve_escalation(repo, shipped, "ship_as_is", OFFICER, "the year is right in this market")
    actions.resolve_escalation(repo, rejected, "reject", OFFICER, "wrong year")
    actions.resolve_escalation(
        repo, sent_back, "rereview", OFFICER, "fixed the year", edited_output="Acme launched its rocket in 2018."
    )
    labels = LabelStore(repo).labels()
    # Shipped as is is a waiver, not a finding that the flag was wrong: no label (a PASS would be a false alarm).
    assert sorted((lb.run_id, lb.criterion, lb.verdict, lb.source, lb.person) for lb in labels) == [
        (rejected, "factual_accuracy", "FAIL", "escalation", OFFICER)
    ]
    assert all(lb.evidence == "in 2019" for lb in labels)


def test_the_figures_join_labels_with_verdicts(repo: RunStore) -> None:
    shipped, rejected = escalated(repo), escalated(repo)
    actions.resolve_escalation(repo, shipped, "ship_as_is", OFFICER, "fine")
    actions.resolve_escalation(repo, rejected, "reject", OFFICER, "wrong year")
    # Both models failed factual_accuracy on both runs: one caught defect each; the waiver labels nothing.
    at = datetime(2026, 12, 1, tzinfo=UTC)

    class Spot:
        def outcomes(self) -> list[SpotCheckOutcome]:
            return [
                SpotCheckOutcome(
                    spot_check_id=1,
                    run_id=shipped,
                    round_no=1,
                    rubric_name="general",
                    rubric_version=1,
                    domain="general",
                    reviewer_b="b",
                    reviewer_c="c",
                    submitted_at=at,
                    judged=("factual_accuracy",),
                )
            ]

        def labels(self) -> list[PersonLabel]:
            return []

    doc = figures(repo, Spot())
    rows = {(r.model, r.criterion): r for r in doc.calibration.rows}
    for model in ("b", "c"):
        row = rows[(model, "factual_accuracy")]
        assert (row.recall.k, row.recall.n, row.false_alarm.k, row.false_alarm.n) == (1, 1, 0, 0)
    assert doc.calibration.labels == {"escalation": 1}
    assert (doc.spot_check_escape_rate.overall.k, doc.spot_check_escape_rate.overall.n) == (0, 1)
    assert figures(repo).spot_check_escape_rate.overall.n == 0  # the desk's own store: no spot-check yet
