"""The third reviewer's slot (D) is always a model's: a person can neither fill it nor be assigned to it, and
either refusal writes nothing (the doors `storage.slots` guards for B and C); a batch, which reviews with two, is
refused a rubric that asks for D; on SQLite and, when SANTA_TEST_POSTGRES_URL is set, on PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from santa_core.reviewers.base import PERSON
from santa_core.run import actions
from storage.errors import SlotAssigned
from storage.runs import RunStore
from storage.tables import AuditEventRow, ReviewRow
from tests.core.run.test_runner import RUBRIC
from tests.support import people_runs
from tests.support.people import ADMIN, EDITOR
from tests.support.people_runs import _review, count, new_run

engine, repo = people_runs.engine, people_runs.repo  # the fixtures

HIGH_RISK = RUBRIC.model_copy(
    update={"criteria": [c.model_copy(update={"third_reviewer": c.id == "factual_accuracy"}) for c in RUBRIC.criteria]}
)


def d_run(repo: RunStore) -> int:
    return repo.create_run(
        spec="s",
        output="Acme launched its rocket in 2018.",
        rubric=HIGH_RISK,
        created_by=EDITOR,
        reviewer_b=PERSON,
        reviewer_c="c",
        reviewer_d="d",
        fixer="fixer",
    )


def test_a_person_cannot_fill_slot_d(repo: RunStore, engine: Engine) -> None:
    run_id = d_run(repo)
    audited = count(engine, AuditEventRow)
    with pytest.raises(SlotAssigned, match="only B and C may be filled by people"):
        actions.submit_person_review(repo, run_id, "D", _review(), EDITOR)
    assert count(engine, ReviewRow) == 0 and count(engine, AuditEventRow) == audited


def test_nobody_is_assigned_to_slot_d(repo: RunStore, engine: Engine) -> None:
    run_id = d_run(repo)
    audited = count(engine, AuditEventRow)
    with pytest.raises(SlotAssigned, match="only B and C may be filled by people"):
        actions.assign_reviewer(repo, run_id, "D", EDITOR, ADMIN)
    assert repo.get_run_view(run_id).person_c is None and count(engine, AuditEventRow) == audited


def test_a_run_without_high_risk_criteria_keeps_no_d(repo: RunStore) -> None:
    run_id = new_run(repo, reviewer_d="d")
    assert repo.load_run(run_id).reviewer_d is None


def test_a_batch_on_a_high_risk_rubric_is_refused_with_nothing_stored(repo: RunStore, engine: Engine) -> None:
    """A batch sample is reviewed by two reviewers; its gate would fail every item closed for the missing D."""
    from santa_core.batch.store import BatchConfig, ItemIn
    from storage.batches import BatchProblem, BatchStore
    from storage.tables import BatchRow

    config = BatchConfig(
        name="x.csv",
        file_format="csv",
        columns=["id", "output"],
        id_column="id",
        output_column="output",
        spec="Say it.",
        rubric=HIGH_RISK,
        reviewer_b="b",
        reviewer_c="c",
        fixer="f",
    )
    with pytest.raises(BatchProblem, match="asks for a third reviewer on factual_accuracy"):
        BatchStore(repo.engine).create(config, [ItemIn(key="1", output="Launched in 2018.")], EDITOR)
    assert count(engine, BatchRow) == 0
