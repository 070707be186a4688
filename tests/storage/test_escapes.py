"""Escapes in storage (`storage.escapes`): a defect found after shipping is reported on a shipped
(or shipped-as-is) run only, with its criterion, description, severity and reporter on the run
view, in the run's JSON and on the record; a bad report is refused and writes nothing. On
SQLite and, when SANTA_TEST_POSTGRES_URL is set, on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Engine

from santa_core.models import RunState
from santa_core.roles import PermissionDenied
from storage.runs import RunStore
from storage.tables import EscapeRow
from tests.support import people_runs
from tests.support.people import OFFICER, STRANGER, VIEWER
from tests.support.people_runs import S, count, escalate, new_run

engine, repo = people_runs.engine, people_runs.repo  # the fixtures (an imported name would trip ruff's F811)


# --- escapes -------------------------------------------------------------------------------------


def ship(repo: RunStore, run_id: int) -> None:
    assert repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    assert repo.transition(run_id, {S.RUNNING}, RunState(status=S.SHIPPED, note="both PASS"), "gate")


def _resolved(repo: RunStore, run_id: int, resolution: str) -> None:
    escalate(repo, run_id)
    repo.resolve_escalation(run_id, resolution, OFFICER, "decided by hand")


@pytest.mark.parametrize(
    ("arrange", "allowed"),
    [
        pytest.param(ship, True, id="shipped"),
        pytest.param(lambda repo, r: _resolved(repo, r, "ship_as_is"), True, id="resolved-shipped"),
        pytest.param(lambda repo, r: None, False, id="queued"),
        pytest.param(escalate, False, id="escalated"),
        pytest.param(lambda repo, r: _resolved(repo, r, "reject"), False, id="resolved-rejected"),
    ],
)
def test_escapes_are_reported_on_shipped_runs_only(
    repo: RunStore, engine: Engine, arrange: Callable, allowed: bool
) -> None:
    run_id = new_run(repo)
    arrange(repo, run_id)
    if not allowed:
        with pytest.raises(ValueError, match="shipped runs only"):
            repo.report_escape(run_id, "factual_accuracy", "the year was wrong", "major", actor=VIEWER)
        assert count(engine, EscapeRow) == 0 and repo.audit.events(action="escape.") == []
        return
    escape_id = repo.report_escape(run_id, " factual_accuracy ", " the year was wrong ", "major", actor=VIEWER)
    [escape] = repo.escapes(run_id)
    assert (escape.id, escape.criterion, escape.description, escape.severity, escape.reported_by) == (
        escape_id,
        "factual_accuracy",
        "the year was wrong",
        "major",
        VIEWER,
    )
    assert repo.get_run_view(run_id).escapes == [escape]
    assert repo.run_json(run_id)["escapes"][0]["severity"] == "major"
    [event] = repo.audit.events(action="escape.reported")
    assert (event.actor, event.run_id, event.entity_id) == (VIEWER, run_id, str(escape_id))


@pytest.mark.parametrize(
    ("criterion", "description", "severity", "actor", "error"),
    [
        pytest.param("facts", "wrong", "catastrophic", VIEWER, ValueError, id="bad-severity"),
        pytest.param("facts", "wrong", "", VIEWER, ValueError, id="no-severity"),
        pytest.param("  ", "wrong", "minor", VIEWER, ValueError, id="no-criterion"),
        pytest.param("facts", "   ", "minor", VIEWER, ValueError, id="no-description"),
        pytest.param("facts", "wrong", "minor", STRANGER, PermissionDenied, id="no-role"),
    ],
)
def test_a_bad_escape_is_refused(
    repo: RunStore, engine: Engine, criterion: str, description: str, severity: str, actor: str, error: type
) -> None:
    run_id = new_run(repo)
    ship(repo, run_id)
    with pytest.raises(error):
        repo.report_escape(run_id, criterion, description, severity, actor=actor)
    assert count(engine, EscapeRow) == 0 and repo.audit.events(action="escape.") == []
