"""Runs for the storage tests: the fixtures `engine` (a migrated engine) and `repo` (a `RunStore`
over it), the rubric, a queued run, an escalated state and a row count; what the rounds of a run
hold is built by tests/support/records.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, func
from sqlmodel import Session, SQLModel, select

from santa_core.models import Criterion, EscalationReason, Rubric, RunState, RunStatus
from storage.db import make_engine, migrate
from storage.runs import RunStore
from tests.conftest import grant

S = RunStatus


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """A migrated engine (the migration is what is tested, never create_all)."""
    eng = make_engine(db_url)
    migrate(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def repo(engine: Engine) -> RunStore:
    """A RunStore over the migrated engine, its test people granted their roles."""
    return grant(RunStore(engine))


# --- builders -------------------------------------------------------------------------------


def make_rubric() -> Rubric:
    """Two criteria, one with a deterministic check."""
    return Rubric(
        name="house-style",
        version=2,
        domain="docs",
        criteria=[
            Criterion(
                id="facts",
                name="Facts",
                category="factual accuracy",
                pass_condition="every claim is in the spec",
                fail_signal="a claim not in the spec",
            ),
            Criterion(
                id="terms",
                name="Terms",
                category="compliance",
                pass_condition="no forbidden term",
                fail_signal="a forbidden term",
                severity="suggestion",
                check={"type": "forbidden_terms", "terms": ["guarantee"]},
            ),
        ],
    )


def new_run(repo: RunStore, output: str = "The output.", **kw: object) -> int:
    """A queued run with round 1."""
    return repo.create_run("The spec.", output, make_rubric(), "claude-a", "gpt-b", "fixer", **kw)


def count(engine: Engine, model: type[SQLModel], **where: object) -> int:
    """Rows of a table matching equality filters."""
    stmt = select(func.count()).select_from(model)
    for key, value in where.items():
        stmt = stmt.where(getattr(model, key) == value)
    with Session(engine) as s:
        return s.exec(stmt).one()


def escalated(reason: EscalationReason, round_no: int = 1) -> RunState:
    """An escalated state."""
    return RunState(status=S.ESCALATED, round=round_no, escalation_reason=reason, note="x")
