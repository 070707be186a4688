"""One input rule on every way in: a NUL or another control character (tab, line feed and carriage return
aside) is refused with a message that names it and where it is, and nothing is written. On SQLite and,
when configured, PostgreSQL (which would refuse a NUL with a DataError of its own)."""

from __future__ import annotations

import re

import pytest
from sqlmodel import Session, func, select

from santa_core.rubrics import actions as rubric_actions
from santa_core.run import actions
from santa_core.text import text_problem
from storage.runs import RunStore
from storage.tables import RunRow, TrialRow
from tests.conftest import granted_store
from tests.core.run.test_runner import RUBRIC, SPEC

BAD = [
    pytest.param("Order today.\x00", "a NUL character (\\x00) at character 13", id="nul"),
    pytest.param("\x1b[2JOrder today.", "a control character (\\x1b) at character 1", id="escape"),
    pytest.param("Order\x07 today.", "a control character (\\x07) at character 6", id="bell"),
    pytest.param("Order today.\x7f", "a control character (\\x7f) at character 13", id="delete"),
    pytest.param("Order \x9b today.", "a control character (\\x9b) at character 7", id="c1"),
]


@pytest.fixture
def repo(db_url: str) -> RunStore:
    return granted_store(db_url)


def rows(repo: RunStore, table: type) -> int:
    with Session(repo.engine) as s:
        return s.exec(select(func.count()).select_from(table)).one()


@pytest.mark.parametrize(("text", "named"), BAD)
def test_control_characters_are_refused_everywhere_and_nothing_is_written(
    repo: RunStore, text: str, named: str
) -> None:
    for field in ("spec", "output"):
        texts = {"spec": SPEC, "output": "Order today.", field: text}
        with pytest.raises(ValueError, match=re.escape(f"{field} contains {named}: remove it")):
            actions.start_run(repo, texts["spec"], texts["output"], RUBRIC, "b", "c", "f", "ann")
    assert rows(repo, RunRow) == 0
    with pytest.raises(ValueError, match="The sample output contains"):
        rubric_actions.try_rubric(repo.rubrics, RUBRIC, text, "ann")
    assert rows(repo, TrialRow) == 0


def test_tab_line_ends_and_ordinary_unicode_are_text() -> None:
    assert text_problem("Line one,\ttabbed.\r\nLine two — ünïcode ✓ 🔥\n", "The output") is None


def test_a_reason_or_justification_holding_a_control_character_is_refused(repo: RunStore) -> None:
    from santa_core.models import EscalationReason, RunState, RunStatus

    run_id = actions.start_run(repo, SPEC, "Order today.", RUBRIC, "b", "c", "f", "ann")
    assert repo.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
    assert repo.transition(
        run_id,
        {RunStatus.RUNNING},
        RunState(status=RunStatus.ESCALATED, note="x", escalation_reason=EscalationReason.ROUND_CAP),
        "gate",
    )
    with pytest.raises(actions.ActionError, match=re.escape("The justification contains a NUL character")):
        actions.resolve_escalation(repo, run_id, "reject", "ann", "Refused\x00 by legal.")
    assert repo.load_run(run_id).state.status == RunStatus.ESCALATED
