"""The owner and due time of an escalation (`storage.escalations`): who may assign one and who may
own it, due times set by hand and counted overdue against an explicit now in any zone, and the
due hours per reason from the settings or the defaults; every test on SQLite and, when
SANTA_TEST_POSTGRES_URL is set, on PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import Engine

from santa_core.config import DEFAULT_DUE_HOURS
from santa_core.models import EscalationReason
from santa_core.roles import PermissionDenied
from storage.errors import EscalationNotOpen
from storage.runs import RunStore
from storage.tables import AuditEventRow
from tests.support import people_runs
from tests.support.people import ADMIN, EDITOR, OFFICER, STRANGER, VIEWER
from tests.support.people_runs import count, escalate, new_run

engine, repo = people_runs.engine, people_runs.repo  # the fixtures (an imported name would trip ruff's F811)


# --- escalations: owner and due time -----------------------------------------------------------


def test_assign_escalation(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    with pytest.raises(EscalationNotOpen):
        repo.assign_escalation(run_id, OFFICER, actor=OFFICER)  # not escalated yet
    escalate(repo, run_id)
    audited = count(engine, AuditEventRow)
    with pytest.raises(PermissionDenied, match="may not assign escalations"):
        repo.assign_escalation(run_id, OFFICER, actor=EDITOR)
    for owner in (EDITOR, VIEWER, STRANGER):  # they could not resolve it
        with pytest.raises(ValueError, match=f"{owner} cannot own an escalation"):
            repo.assign_escalation(run_id, owner, actor=OFFICER)
    assert repo.list_escalations()[0].owner is None and count(engine, AuditEventRow) == audited
    repo.assign_escalation(run_id, OFFICER, actor=ADMIN)
    assert repo.list_escalations()[0].owner == OFFICER
    repo.assign_escalation(run_id, None, actor=OFFICER)
    assert repo.list_escalations()[0].owner is None
    assigned = repo.audit.events(action="escalation.assigned", newest_first=False)
    assert [(e.actor, e.detail) for e in assigned] == [
        (ADMIN, {"before": None, "owner": OFFICER}),
        (OFFICER, {"before": OFFICER, "owner": None}),
    ]


def test_set_due_and_overdue_count_with_an_explicit_now(repo: RunStore, engine: Engine) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    first, second, calm = new_run(repo), new_run(repo), new_run(repo)
    for run_id in (first, second):
        escalate(repo, run_id)
    assert repo.overdue_count(now) == 0  # both due in a day (round_cap's default)
    assert repo.overdue_count(now + timedelta(hours=25)) == 2
    repo.set_due(first, now - timedelta(hours=1), actor=OFFICER)
    assert repo.overdue_count(now) == 1
    due = now + timedelta(hours=2)
    repo.set_due(second, due, actor=ADMIN)
    assert repo.overdue_count(due - timedelta(microseconds=1)) == 1
    assert repo.overdue_count(due) == 2  # due at `now` counts as overdue
    tokyo = timezone(timedelta(hours=9))
    assert repo.overdue_count(due.astimezone(tokyo)) == 2  # the same instant in another zone
    assert repo.overdue_count((due - timedelta(seconds=1)).astimezone(tokyo)) == 1
    views = {e.run_id: e for e in repo.list_escalations()}
    assert views[second].due_at == due and views[second].overdue(due) and not views[second].overdue(now)
    with pytest.raises(PermissionDenied):
        repo.set_due(first, now + timedelta(days=1), actor=EDITOR)
    with pytest.raises(EscalationNotOpen):
        repo.set_due(calm, now, actor=OFFICER)
    repo.resolve_escalation(first, "reject", OFFICER, "not fixable")
    assert repo.overdue_count(now + timedelta(days=30)) == 1  # resolved escalations are never overdue
    [event] = repo.audit.events(action="escalation.due_set", run_id=second)
    assert (event.actor, event.detail["due_at"]) == (ADMIN, due.isoformat())


REASONS = [
    EscalationReason.ROUND_CAP,
    EscalationReason.INJECTION,
    EscalationReason.REVIEWER_ERROR,
    EscalationReason.DISAGREEMENT,
    EscalationReason.BUDGET,
    EscalationReason.FIX_FAILED,
]


@pytest.mark.parametrize("reason", [pytest.param(r, id=r.value) for r in REASONS])
def test_escalation_is_due_after_the_settings_hours_for_its_reason(repo: RunStore, reason: EscalationReason) -> None:
    hours = {r.value: 1.5 + i for i, r in enumerate(REASONS)}
    repo.save_settings({"due_hours": hours}, actor=ADMIN)
    run_id = new_run(repo)
    escalate(repo, run_id, reason)
    [esc] = repo.list_escalations()
    assert esc.due_at - esc.created_at == timedelta(hours=hours[reason.value])


@pytest.mark.parametrize("reason", [pytest.param(r, id=r.value) for r in REASONS])
def test_without_settings_the_default_due_hours_apply(repo: RunStore, reason: EscalationReason) -> None:
    repo.save_settings({"due_hours": {"no_such_reason": 99.0}}, actor=ADMIN)  # names none of ours
    run_id = new_run(repo)
    escalate(repo, run_id, reason)
    [esc] = repo.list_escalations()
    assert esc.due_at - esc.created_at == timedelta(hours=DEFAULT_DUE_HOURS[reason.value])
    [opened] = repo.audit.events(action="escalation.opened", run_id=run_id)
    assert (opened.actor, opened.detail["reason"]) == ("system", reason.value)
