"""Every door that ships or escalates a run writes its event: the runner's gate (ships), the runner's budget stop
(`budget.exceeded`), a person's rejected fix (the decision's transaction escalates the run), and a refused
person's decision writes none. (The escalation's own doors are in tests/storage/test_alerts.py.)"""

from __future__ import annotations

import pytest

from santa_core import alerts as core
from santa_core.roles import PermissionDenied
from santa_core.run import actions
from storage.alerts import AlertStore
from storage.runs import RunStore
from tests.support import people_runs
from tests.support.people import EDITOR, VIEWER
from tests.support.people_runs import GOOD, S, awaiting_approval, make_runner, new_run

engine, repo = people_runs.engine, people_runs.repo  # the fixtures


def kinds_of(repo: RunStore, run_id: int) -> list[str]:
    return [a.kind for a in AlertStore(repo).events() if a.run_id == run_id]


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_runner_and_a_persons_decision_write_the_events_of_their_moves(repo: RunStore) -> None:
    shipped = new_run(repo, GOOD)
    assert make_runner(repo).execute(shipped).status == S.SHIPPED
    assert kinds_of(repo, shipped) == [core.RUN_SHIPPED]

    spent = new_run(repo, GOOD, budget_usd=0.0)
    assert make_runner(repo).execute(spent).status == S.ESCALATED
    assert kinds_of(repo, spent) == [core.RUN_ESCALATED, core.BUDGET_EXCEEDED, core.ESCALATION_OPENED]

    waiting = awaiting_approval(repo)
    assert kinds_of(repo, waiting) == []
    with pytest.raises(PermissionDenied):
        actions.reject_fix(repo, waiting, VIEWER, "not good enough")
    assert kinds_of(repo, waiting) == []  # refused: nothing written
    assert actions.reject_fix(repo, waiting, EDITOR, "not good enough").status == S.ESCALATED
    assert kinds_of(repo, waiting) == [core.RUN_ESCALATED, core.ESCALATION_OPENED]
