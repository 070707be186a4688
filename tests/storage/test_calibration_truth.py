"""Issue 35's acceptance for calibration: a seeded history where a stand-in reviewer misses one criterion with a
known probability and raises a false alarm on it with another, judged beside a person in the other slot, through
the runner and the stores. The calibration figures count exactly what the test tallied itself, and each true
probability lies within its stated interval. SQLite only: tests/storage/test_labels.py runs the same reads on both.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from desk.calibration import figures
from santa_core.models import Review
from santa_core.reviewers.base import PERSON, ReviewRequest
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer, failing, passing
from santa_core.run import actions
from santa_core.run.runner import Runner
from storage.db import make_engine
from storage.runs import RunStore
from tests.conftest import migrated_sqlite
from tests.core.run.test_runner import BAD, GOOD, RUBRIC, SPEC
from tests.support.people import EDITOR

MISS, FALSE_ALARM = 0.3, 0.15
"""The stand-in's true miss rate on factual_accuracy (a wrong year passed) and its false-alarm rate (a right one
failed)."""
RUNS = 80
MODEL = "stand-in-model"


@pytest.fixture
def repo(tmp_path: Path) -> RunStore:
    return RunStore(make_engine(migrated_sqlite(tmp_path / "santa.db", granted=True)))  # the test people granted


def test_calibration_equals_the_truth_of_a_seeded_history(repo: RunStore) -> None:
    rng = random.Random(35)
    wrong: dict[str, bool] = {}  # each text → whether its year is wrong (the defect)
    says_fail: dict[str, bool] = {}  # each text → what the stand-in will say of it
    for i in range(RUNS):
        text = f"{BAD if i % 2 else GOOD} Reference {i}."
        wrong[text] = bool(i % 2)
        says_fail[text] = rng.random() >= MISS if wrong[text] else rng.random() < FALSE_ALARM

    def stand_in(request: ReviewRequest) -> Review:
        if says_fail[request.output]:
            return failing(request, "factual_accuracy", "wrong year", evidence="in 2019")
        return passing(request)

    reviewer = FunctionReviewer(MODEL, stand_in)
    runner = Runner(
        repo,
        lambda name: reviewer,
        lambda name: FunctionFixer("fixer", lambda r: None),
        workers=1,
        screen_for=lambda: None,
    )
    try:
        for text in wrong:
            run_id = repo.create_run(
                spec=SPEC,
                output=text,
                rubric=RUBRIC,
                created_by=EDITOR,
                reviewer_b=PERSON,
                reviewer_c=MODEL,
                fixer="fixer",
            )
            runner.execute(run_id)  # the stand-in answers; the round waits for the person
            request = ReviewRequest(rubric=RUBRIC, spec=SPEC, output=text)
            person = (
                failing(request, "factual_accuracy", "the launch was in 2018", evidence="in 2019")
                if wrong[text]
                else passing(request)
            )
            actions.submit_person_review(repo, run_id, "B", person, EDITOR)
            runner.execute(run_id)  # the gate: the round's labels count from here
    finally:
        runner.shutdown()

    caught = sum(1 for t in wrong if wrong[t] and says_fail[t])
    defects = sum(wrong.values())
    alarms = sum(1 for t in wrong if not wrong[t] and says_fail[t])
    clean = RUNS - defects
    rows = {(r.model, r.criterion): r for r in figures(repo).calibration.rows}
    row = rows[(MODEL, "factual_accuracy")]
    assert (row.recall.k, row.recall.n) == (caught, defects)
    assert (row.false_alarm.k, row.false_alarm.n) == (alarms, clean)
    assert row.recall.low <= 1 - MISS <= row.recall.high
    assert row.false_alarm.low <= FALSE_ALARM <= row.false_alarm.high
    # Another criterion the stand-in always judged like the person: every label agrees, no miss, no alarm.
    other = rows[(MODEL, "completeness")]
    assert (other.false_alarm.k, other.false_alarm.n) == (0, RUNS) and other.recall.n == 0
