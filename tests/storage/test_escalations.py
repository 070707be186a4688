"""Escalations in storage (`storage.escalations`): an escalated state opens one escalation row (never
two), resolving one (re-review, ship as is) is one transaction, and system code that leaves
escalated through `transition` closes it. Each test runs on SQLite, and on PostgreSQL too when
SANTA_TEST_POSTGRES_URL is set.
"""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from santa_core.models import EscalationReason, RunState
from santa_core.text import sha256_text
from storage.runs import RunStore
from storage.tables import EscalationRow
from tests.support import runs
from tests.support.runs import S, count, escalated, new_run

engine, repo = runs.engine, runs.repo  # the fixtures (an imported name would trip ruff's F811)


def test_escalated_state_opens_an_escalation(repo: RunStore) -> None:
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    assert repo.transition(run_id, {S.RUNNING}, escalated(EscalationReason.BUDGET), "system")
    [esc] = repo.list_escalations()
    assert (esc.run_id, esc.reason, esc.status, esc.run_status) == (
        run_id,
        EscalationReason.BUDGET,
        "open",
        S.ESCALATED,
    )
    with pytest.raises(ValueError, match="escalation_reason"):
        repo.transition(run_id, {S.ESCALATED}, RunState(status=S.ESCALATED), "worker")


def test_resolve_escalation_rereview_is_one_transaction(repo: RunStore) -> None:
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(run_id, {S.RUNNING}, escalated(EscalationReason.ROUND_CAP), "gate")
    new = repo.resolve_escalation(run_id, "rereview", "ann", "fixed the figure", "Edited.")
    assert (new.status, new.round, new.round_cap) == (S.QUEUED, 2, 2)
    view = repo.get_run_view(run_id)
    assert view.state == new
    assert repo.load_round(run_id, 2).output_text == "Edited." == view.current_output
    [decision] = view.rounds[0].decisions
    assert (decision.action, decision.actor, decision.reason) == ("rereview", "ann", "fixed the figure")
    assert decision.before_hash == sha256_text("The output.")
    assert decision.after_hash == sha256_text("Edited.")
    esc = view.escalation
    assert (esc.status, esc.resolution, esc.resolved_by, esc.justification) == (
        "resolved",
        "rereview",
        "ann",
        "fixed the figure",
    )
    assert esc.resolved_at is not None and repo.list_escalations() == []
    with pytest.raises(ValueError):
        repo.resolve_escalation(run_id, "ship_as_is", "ann", "")


def test_resolve_escalation_ship_as_is_sets_the_final_output(repo: RunStore) -> None:
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(run_id, {S.RUNNING}, escalated(EscalationReason.REVIEWER_ERROR), "gate")
    with pytest.raises(ValueError, match="only a re-review"):
        repo.resolve_escalation(run_id, "ship_as_is", "ann", "fine", edited_output="x")
    repo.resolve_escalation(run_id, "ship_as_is", "ann", "reviewer was down; I checked")
    view = repo.get_run_view(run_id)
    assert view.status == S.RESOLVED_SHIPPED and view.final_output == "The output."
    assert repo.list_escalations("resolved")[0].resolution == "ship_as_is"


def test_leaving_escalated_through_transition_closes_the_escalation(repo: RunStore) -> None:
    """The Store-protocol path for system code (the command line acts as `cli`): record_decision,
    then transition; the escalation closes with the latest resolving decision's reason. (A person
    cannot take this path: tests/storage/test_permissions.py; they go through resolve_escalation.)"""
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(run_id, {S.RUNNING}, escalated(EscalationReason.INJECTION), "gate")
    repo.record_decision(run_id, 1, "resolve_reject", "cli", "injected text", "a", "a")
    rejected = RunState(status=S.RESOLVED_REJECTED, note="rejected by a person")
    assert repo.transition(run_id, {S.ESCALATED}, rejected, "cli")
    [esc] = repo.list_escalations(status=None)
    assert (esc.status, esc.resolution, esc.resolved_by, esc.justification) == (
        "resolved",
        "reject",
        "cli",
        "injected text",
    )


def test_escalation_rows_reference_runs(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(run_id, {S.RUNNING}, escalated(EscalationReason.FIX_FAILED), "worker")
    assert count(engine, EscalationRow, run_id=run_id, status="open") == 1
    # Re-entering ESCALATED from ESCALATED would be a bug upstream; it must not duplicate rows.
    repo.transition(run_id, {S.ESCALATED}, escalated(EscalationReason.BUDGET), "worker")
    assert count(engine, EscalationRow, run_id=run_id) == 1
