"""Runs for the people and audit tests in storage: the fixtures `engine` (migrated, the built-in
rubrics seeded) and `repo` (a `RunStore` whose test people have their roles), and helpers that
arrange what people act on: a new run, the runner (both reviewers FAIL until the fixer corrects
the year), an escalation, a fix awaiting approval, the audit events and a passing review.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from weakref import WeakKeyDictionary

import pytest
from sqlalchemy import Engine, func
from sqlmodel import Session, SQLModel, select

from santa_core.models import EscalationReason, RunState, RunStatus
from santa_core.reviewers.base import ReviewRequest
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer, passing
from santa_core.run.runner import Runner
from storage.db import make_engine, migrate
from storage.rubrics import RubricStore
from storage.runs import RunStore
from tests.conftest import grant, granted_by_copy
from tests.core.run.test_runner import BAD, GOOD, RUBRIC, SPEC, strict, year_fixer
from tests.support.people import EDITOR

S = RunStatus


# --- fixtures and helpers -------------------------------------------------------------------


@pytest.fixture
def engine(db_url: str, request: pytest.FixtureRequest) -> Iterator[Engine]:
    """A migrated engine with the built-in rubrics seeded. Where the test takes `repo` too, a SQLite database is a
    copy of the template whose test people already have their roles (`repo` would grant them first thing: the
    same rows, audit events and seals, made once per process instead of eight write transactions a test)."""
    granted = "repo" in request.fixturenames and granted_by_copy(db_url)
    eng = make_engine(db_url)
    migrate(eng)
    RubricStore(eng).seed_builtins()
    _GRANTED[eng] = granted
    yield eng
    eng.dispose()


_GRANTED: WeakKeyDictionary[Engine, bool] = WeakKeyDictionary()
"""Per `engine` fixture: whether its database came with the test people granted."""


@pytest.fixture
def repo(engine: Engine) -> RunStore:
    """A RunStore whose test people (conftest.TEST_PEOPLE) have their roles (on SQLite, from the template)."""
    return RunStore(engine) if _GRANTED.get(engine) else grant(RunStore(engine))


def count(engine: Engine, model: type[SQLModel], **where: object) -> int:
    stmt = select(func.count()).select_from(model)
    for key, value in where.items():
        stmt = stmt.where(getattr(model, key) == value)
    with Session(engine) as s:
        return int(s.exec(stmt).one())


def new_run(repo: RunStore, output: str = GOOD, created_by: str = EDITOR, **kw: Any) -> int:
    args = {"reviewer_b": "b", "reviewer_c": "c", "fixer": "fixer", **kw}
    return repo.create_run(spec=SPEC, output=output, rubric=RUBRIC, created_by=created_by, **args)


def make_runner(repo: RunStore) -> Runner:
    """Both reviewers FAIL while the output says 2019; the fixer corrects the year."""
    reviewers = {"b": FunctionReviewer("b", strict), "c": FunctionReviewer("c", strict)}
    fixer = FunctionFixer("fixer", year_fixer)
    return Runner(repo, lambda name: reviewers[name], lambda name: fixer, workers=1)


def escalate(repo: RunStore, run_id: int, reason: EscalationReason = EscalationReason.ROUND_CAP) -> None:
    assert repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    state = RunState(status=S.ESCALATED, escalation_reason=reason, note="escalated")
    assert repo.transition(run_id, {S.RUNNING}, state, "gate")


def awaiting_approval(repo: RunStore) -> int:
    run_id = new_run(repo, BAD)
    assert make_runner(repo).execute(run_id).status == S.AWAITING_APPROVAL
    return run_id


def events(repo: RunStore, **kw: Any) -> list[tuple[str, str]]:
    return [(e.actor, e.action) for e in repo.audit.events(newest_first=False, limit=10_000, **kw)]


def _review() -> Any:
    return passing(ReviewRequest(rubric=RUBRIC, spec=SPEC, output=GOOD))
