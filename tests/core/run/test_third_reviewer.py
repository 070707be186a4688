"""A rubric's high-risk criteria get a third reviewer (slot D): three requests reach the model API, the round ships
only when all three pass, D alone failing is NAUGHTY, and a resumed round asks only the reviewer it lacks."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from sqlmodel import Session, select

from desk.wiring import model_fixer, model_reviewer
from santa_core.models import Review, ReviewOutcome, ReviewStatus, Rubric, RunStatus
from santa_core.reports.record_panel import panel_line
from santa_core.reviewers.base import PERSON, ReviewRequest
from santa_core.reviewers.doubles import FunctionReviewer, failing, passing
from santa_core.rubrics.library import load_builtin
from santa_core.run import actions
from santa_core.run.gate import decide
from santa_core.run.runner import Runner
from santa_core.run.third import ThirdReviewerProblem
from storage.records import verification_record
from storage.runs import RunStore
from storage.startup import init_db
from storage.tables import CallSentRow, ReviewRow
from tests.conftest import grant, migrated_sqlite
from tests.support.messages_api import (
    MessagesStub,
    asked_criteria,
    message,
    review_json,
    santa_scenario,
    schema_properties,
)

SPEC = "Announce the Acme rocket. Mention the 2018 launch."
CLEAN = "Acme's rocket launched in 2018."
B, C, D = "claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5"
HIGH_RISK = "factual_accuracy"


def high_risk_rubric() -> Rubric:
    """The built-in general rubric with its factual-accuracy criterion marked for a third reviewer."""
    rubric = load_builtin("general")
    marked = [c.model_copy(update={"third_reviewer": c.id == HIGH_RISK}) for c in rubric.criteria]
    return rubric.model_copy(update={"criteria": marked})


def reviews_asked(stub: MessagesStub) -> list[dict]:
    """The review requests (not screens, not fixes) that reached the loopback Messages API."""
    return [c["body"] for c in stub.message_calls() if "verdict" in schema_properties(c["body"])]


@pytest.fixture
def repo(tmp_path: Path, messages_stub: MessagesStub) -> RunStore:
    messages_stub.handler = santa_scenario
    return grant(RunStore(init_db(migrated_sqlite(tmp_path / "santa.db"), mark_interrupted=False)))


def start(repo: RunStore, rubric: Rubric, reviewer_d: str | None = D) -> int:
    return actions.start_run(repo, SPEC, CLEAN, rubric, B, C, "claude-opus-5-5", "ann", reviewer_d=reviewer_d)


def model_runner(repo: RunStore) -> Runner:
    return Runner(repo, model_reviewer, model_fixer, workers=2, screen_for=lambda: None)


def test_a_high_risk_criterion_runs_three_reviewers_and_ships_when_all_pass(
    repo: RunStore, messages_stub: MessagesStub
) -> None:
    run_id = start(repo, high_risk_rubric())
    assert model_runner(repo).execute(run_id).status == RunStatus.SHIPPED
    asked = reviews_asked(messages_stub)
    assert sorted(b["model"] for b in asked) == sorted([B, C, D])
    # D judges the high-risk criteria only; B and C the whole rubric
    by_model = {b["model"]: asked_criteria(b) for b in asked}
    assert by_model[D] == [HIGH_RISK]
    assert by_model[B] == by_model[C] == load_builtin("general").criterion_ids()
    rnd = repo.get_run_view(run_id).rounds[0]
    assert {s: o.reviewer for s, o in rnd.reviews.items()} == {"B": B, "C": C, "D": D}
    assert rnd.gate.decision == "NICE"
    # D's call went through the write-ahead call log under its own slot, like B's and C's
    with Session(repo.engine) as s:
        sent = s.exec(
            select(CallSentRow.slot).where(CallSentRow.run_id == run_id, CallSentRow.purpose == "review")
        ).all()
    assert sorted(sent) == ["B", "C", "D"]
    # D's PASS counts as a PASS everywhere it is shown: judged on its criteria, not the whole rubric
    with Session(repo.engine) as s:
        stored = dict(s.exec(select(ReviewRow.slot, ReviewRow.verdict).where(ReviewRow.run_id == run_id)).all())
    assert stored == {"B": "PASS", "C": "PASS", "D": "PASS"}
    answer = repo.run_json(run_id)
    assert answer["reviewer_d"] == D and answer["rounds"][0]["reviews"]["D"]["verdict"] == "PASS"
    record = verification_record(repo, run_id)
    assert record.reviewer_d == D and [r.verdict for r in record.rounds[0].reviews if r.slot == "D"] == ["PASS"]
    assert f"third reviewer D {D}" in panel_line(record)
    # Metrics: D's calls are review cost; agreement and kappa stay B against C (the pair the method measures)
    with repo.engine.connect() as conn:
        paid = conn.exec_driver_sql(
            f"SELECT SUM(cost_usd) FROM llm_call WHERE run_id = {run_id} AND purpose = 'review'"
        ).scalar()
        d_paid = conn.exec_driver_sql(
            f"SELECT SUM(cost_usd) FROM llm_call WHERE run_id = {run_id} AND model = '{D}'"
        ).scalar()
        fact = conn.exec_driver_sql(f"SELECT review_cost_usd FROM run_metric WHERE run_id = {run_id}").scalar()
        judged = conn.exec_driver_sql(
            f"SELECT b, c FROM criterion_result WHERE run_id = {run_id} AND criterion = '{HIGH_RISK}'"
        ).all()
    assert d_paid > 0 and fact == pytest.approx(paid)
    assert judged == [("PASS", "PASS")]


def test_d_failing_alone_is_naughty_and_its_issue_is_attributed_to_d(
    repo: RunStore, messages_stub: MessagesStub
) -> None:
    def d_fails(body: dict):
        if body.get("model") == D and "verdict" in schema_properties(body):
            issue = (HIGH_RISK, "The launch year is not supported by the spec.", "2018")
            return message(review_json("FAIL", [(HIGH_RISK, "FAIL", "unsupported year")], [issue]), D)
        return santa_scenario(body)

    messages_stub.handler = d_fails
    run_id = start(repo, high_risk_rubric())
    state = model_runner(repo).execute(run_id)
    rnd = repo.get_run_view(run_id).rounds[0]
    assert rnd.reviews["B"].review.verdict == rnd.reviews["C"].review.verdict == "PASS"
    assert rnd.gate.decision == "NAUGHTY" and state.status != RunStatus.SHIPPED
    assert [(i.criterion, i.flagged_by) for i in rnd.gate.issues] == [(HIGH_RISK, "D")]


def test_a_rubric_without_a_high_risk_criterion_runs_two_reviewers(repo: RunStore, messages_stub: MessagesStub) -> None:
    run_id = start(repo, load_builtin("general"))  # a D named for a rubric that asks none is not kept, nor paid
    assert model_runner(repo).execute(run_id).status == RunStatus.SHIPPED
    assert sorted(b["model"] for b in reviews_asked(messages_stub)) == sorted([B, C])
    assert repo.load_run(run_id).reviewer_d is None
    assert set(repo.get_run_view(run_id).rounds[0].reviews) == {"B", "C"}
    # a two-reviewer run's record and rubric dump as before the third reviewer existed (their hashes stand)
    dumped = verification_record(repo, run_id).model_dump(mode="json")
    assert "reviewer_d" not in dumped and all("third_reviewer" not in c for c in dumped["rubric"]["criteria"])


def test_resume_after_a_crash_with_d_missing_asks_only_d(
    repo: RunStore, messages_stub: MessagesStub, tmp_path: Path
) -> None:
    run_id = start(repo, high_risk_rubric())

    def dies_after_b_and_c_are_stored(request: ReviewRequest):
        deadline = time.monotonic() + 20  # a bound, not a timing assertion: B's and C's answers are committed first
        while set(repo.load_round(run_id, 1).reviews) != {"B", "C"} and time.monotonic() < deadline:
            threading.Event().wait(0.02)
        raise SystemExit("process killed")  # not an Exception: escapes like a dying process

    doubles = {
        B: FunctionReviewer(B, passing),
        C: FunctionReviewer(C, passing),
        D: FunctionReviewer(D, dies_after_b_and_c_are_stored),
    }
    with pytest.raises(SystemExit):
        Runner(repo, doubles.__getitem__, model_fixer, workers=2, screen_for=lambda: None).execute(run_id)
    assert set(repo.load_round(run_id, 1).reviews) == {"B", "C"}
    # a new process: the run left `running` by the dead one is interrupted, then resumed by a person
    with repo.engine.begin() as conn:
        conn.exec_driver_sql(f"UPDATE run SET worker = NULL WHERE id = {run_id}")
    assert repo.mark_interrupted() == [run_id]
    actions.resume(repo, run_id, "ann")
    assert model_runner(repo).execute(run_id).status == RunStatus.SHIPPED
    asked = reviews_asked(messages_stub)
    assert [(b["model"], asked_criteria(b)) for b in asked] == [(D, [HIGH_RISK])]


@pytest.mark.parametrize("reviewer_d", [None, "", PERSON], ids=["none", "empty", "person"])
def test_a_run_on_a_high_risk_rubric_needs_a_model_for_d(repo: RunStore, reviewer_d: str | None) -> None:
    with pytest.raises(ThirdReviewerProblem):
        start(repo, high_risk_rubric(), reviewer_d=reviewer_d)
    assert repo.list_runs() == []


def _outcome(slot: str, review: Review) -> ReviewOutcome:
    return ReviewOutcome(slot=slot, reviewer=f"m-{slot}", status=ReviewStatus.OK, review=review)


GENERAL = load_builtin("general")
ALL = GENERAL.criterion_ids()
WHOLE = ReviewRequest(rubric=GENERAL, spec=SPEC, output=CLEAN)
ONLY_HIGH = ReviewRequest(rubric=high_risk_rubric().high_risk(), spec=SPEC, output=CLEAN)


@pytest.mark.parametrize(
    ("d", "third", "nice", "errored"),
    [
        pytest.param(_outcome("D", passing(ONLY_HIGH)), [HIGH_RISK], True, False, id="d-passes-its-criteria"),
        pytest.param(
            _outcome("D", failing(ONLY_HIGH, HIGH_RISK, "wrong year")), [HIGH_RISK], False, False, id="d-fails-alone"
        ),
        pytest.param(None, [HIGH_RISK], False, True, id="d-asked-for-but-absent"),
        pytest.param(
            ReviewOutcome(slot="D", reviewer="m-D", status=ReviewStatus.TIMEOUT),
            [HIGH_RISK],
            False,
            True,
            id="d-timed-out",
        ),
        pytest.param(
            _outcome("D", Review(verdict="PASS", checks=[], critical_issues=[], suggestions=[])),
            [HIGH_RISK],
            False,
            True,
            id="d-pass-without-checking-its-criterion",
        ),
        pytest.param(None, [], True, False, id="no-high-risk-criterion-two-reviewers"),
    ],
)
def test_the_gate_needs_d_on_the_high_risk_criteria(d, third: list[str], nice: bool, errored: bool) -> None:
    gate = decide(_outcome("B", passing(WHOLE)), _outcome("C", passing(WHOLE)), [], ALL, d=d, third=third)
    assert (gate.decision == "NICE", gate.reviewer_error) == (nice, errored)
