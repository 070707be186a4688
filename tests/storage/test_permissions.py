"""Who may do what, across the stores: each action refused to people without its role writes
nothing (not even an audit event), fixes are approved by editors and admins, escalations
resolved by compliance officers and admins, interrupted runs resumed by editors; and the moves
no person makes whatever their roles (claim, gate, ship, skip an approval, leave escalated any
way but resolving it), checked on SQLite and, with SANTA_TEST_POSTGRES_URL, on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Engine
from sqlmodel import SQLModel

from santa_core.models import EscalationReason, RunState, RunStatus
from santa_core.reviewers.base import PERSON
from santa_core.roles import PermissionDenied
from santa_core.run import actions
from santa_core.run.engine import HumanReviewSubmitted, Resume, advance
from santa_core.run.store import DecisionIn
from storage.errors import MoveRefused
from storage.runs import RunStore
from storage.tables import (
    AuditEventRow,
    DecisionRow,
    EscalationRow,
    PersonRow,
    RubricVersionRow,
    RunRow,
    SettingsRow,
    TrialRow,
)
from tests.core.run.test_runner import RUBRIC
from tests.storage.test_rubric_store import acme
from tests.support import people_runs
from tests.support.people import ADMIN, AUTHOR, EDITOR, OFFICER, PEOPLE, STRANGER, VIEWER
from tests.support.people_runs import S, _review, awaiting_approval, count, escalate, events, make_runner, new_run

engine, repo = people_runs.engine, people_runs.repo  # the fixtures (an imported name would trip ruff's F811)


# --- the permission matrix: who may do what, and a refusal writes nothing ---------------------


def _trial(repo: RunStore, actor: str) -> None:
    repo.rubrics.record_trial("try", RUBRIC, "An output.", [], None, actor, stored_version=1)


STORE_ACTIONS: dict[str, tuple[Callable[[RunStore, str], object], type[SQLModel], set[str]]] = {
    "start-run": (lambda repo, a: new_run(repo, created_by=a), RunRow, {EDITOR, ADMIN}),
    "save-settings": (lambda repo, a: repo.save_settings({"max_rounds": 2}, actor=a), SettingsRow, {ADMIN}),
    "save-rubric": (lambda repo, a: repo.rubrics.save(acme(), a, "first", None), RubricVersionRow, {AUTHOR, ADMIN}),
    "try-rubric": (_trial, TrialRow, {AUTHOR, ADMIN}),
    "set-roles": (lambda repo, a: repo.people.set_roles("new@example.com", ["viewer"], actor=a), PersonRow, {ADMIN}),
}
"""action -> (do it as actor, the table it adds a row to, who may). Written out, not derived from GRANTS."""


@pytest.mark.parametrize("actor", [pytest.param(p, id=p.split("@")[0]) for p in PEOPLE])
@pytest.mark.parametrize("action", list(STORE_ACTIONS))
def test_storage_refuses_people_without_the_role_and_writes_nothing(
    repo: RunStore, engine: Engine, action: str, actor: str
) -> None:
    do, table, allowed = STORE_ACTIONS[action]
    rows, audited = count(engine, table), count(engine, AuditEventRow)
    if actor in allowed:
        do(repo, actor)
        assert count(engine, table) == rows + 1
        assert count(engine, AuditEventRow, actor=actor) >= 1  # the action is on the record, by its actor
    else:
        with pytest.raises(PermissionDenied, match=f"^{actor} \\("):
            do(repo, actor)
        assert (count(engine, table), count(engine, AuditEventRow)) == (rows, audited)


@pytest.mark.parametrize(
    ("actor", "allowed"),
    [
        pytest.param(VIEWER, False, id="viewer"),
        pytest.param(OFFICER, False, id="officer"),
        pytest.param(AUTHOR, False, id="author"),
        pytest.param(STRANGER, False, id="stranger"),
        pytest.param(EDITOR, True, id="editor"),
        pytest.param(ADMIN, True, id="admin"),
    ],
)
def test_only_editors_and_admins_approve_a_fix(repo: RunStore, engine: Engine, actor: str, allowed: bool) -> None:
    run_id = awaiting_approval(repo)
    audited = count(engine, AuditEventRow)
    if not allowed:
        with pytest.raises(PermissionDenied, match="may not approve, edit or reject a fix; an editor or an admin may"):
            actions.approve_fix(repo, run_id, actor)
        assert count(engine, DecisionRow) == 0 and count(engine, AuditEventRow) == audited
        assert repo.load_run(run_id).state.status == S.AWAITING_APPROVAL
        assert repo.load_round(run_id, 2) is None  # no next round either
        return
    assert actions.approve_fix(repo, run_id, actor).status == S.QUEUED
    assert [(d.actor, d.action) for d in repo.get_run_view(run_id).rounds[0].decisions] == [(actor, "approve")]
    assert events(repo, run_id=run_id)[-2:] == [(actor, "decision.approve"), (actor, "run.state")]


@pytest.mark.parametrize(
    ("actor", "allowed"),
    [
        pytest.param(EDITOR, False, id="editor"),
        pytest.param(VIEWER, False, id="viewer"),
        pytest.param(AUTHOR, False, id="author"),
        pytest.param(OFFICER, True, id="officer"),
        pytest.param(ADMIN, True, id="admin"),
    ],
)
def test_only_compliance_officers_and_admins_resolve_escalations(
    repo: RunStore, engine: Engine, actor: str, allowed: bool
) -> None:
    run_id = new_run(repo)
    escalate(repo, run_id)
    audited = count(engine, AuditEventRow)
    if not allowed:
        with pytest.raises(PermissionDenied, match="may not resolve an escalation; a compliance officer or an admin"):
            repo.resolve_escalation(run_id, "ship_as_is", actor, "looks fine to me")
        [esc] = repo.list_escalations()
        assert (esc.status, esc.resolved_by) == ("open", None)
        assert count(engine, DecisionRow) == 0 and count(engine, AuditEventRow) == audited
        assert repo.load_run(run_id).state.status == S.ESCALATED
        return
    assert repo.resolve_escalation(run_id, "ship_as_is", actor, "checked by hand").status == S.RESOLVED_SHIPPED
    [esc] = repo.list_escalations(status=None)
    assert (esc.status, esc.resolution, esc.resolved_by) == ("resolved", "ship_as_is", actor)
    assert events(repo, run_id=run_id)[-3:] == [
        (actor, "decision.ship_as_is"),
        (actor, "run.state"),
        (actor, "escalation.resolved"),
    ]


@pytest.mark.parametrize(
    ("actor", "allowed"),
    [
        pytest.param(VIEWER, False, id="viewer"),
        pytest.param(OFFICER, False, id="officer"),
        pytest.param(EDITOR, True, id="editor"),
    ],
)
def test_resuming_an_interrupted_run_needs_an_editor(repo: RunStore, engine: Engine, actor: str, allowed: bool) -> None:
    run_id = new_run(repo)
    assert repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    assert repo.transition(run_id, {S.RUNNING}, RunState(status=S.INTERRUPTED, note="worker died"), "system")
    audited = count(engine, AuditEventRow)
    if allowed:
        assert actions.resume(repo, run_id, actor).status == S.QUEUED
        assert events(repo, run_id=run_id)[-1] == (actor, "run.state")
    else:
        with pytest.raises(PermissionDenied, match="may not resume an interrupted run"):
            actions.resume(repo, run_id, actor)
        assert repo.load_run(run_id).state.status == S.INTERRUPTED and count(engine, AuditEventRow) == audited


# --- moves no person makes ---------------------------------------------------------------------


def _interrupted(repo: RunStore, run_id: int) -> None:
    assert repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    assert repo.transition(run_id, {S.RUNNING}, RunState(status=S.INTERRUPTED, note="worker died"), "system")


def _awaiting_review(repo: RunStore, run_id: int) -> None:
    assert repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    assert repo.transition(run_id, {S.RUNNING}, RunState(status=S.AWAITING_HUMAN_REVIEW), "worker")


PERSON_MOVES_REFUSED: dict[str, tuple[Callable[[RunStore, int], None], RunState]] = {
    "claim": (lambda repo, r: None, RunState(status=S.RUNNING, note="reviewing")),
    "queued-to-shipped": (lambda repo, r: None, RunState(status=S.SHIPPED)),
    "gate-ships": (
        lambda repo, r: repo.transition(r, {S.QUEUED}, RunState(status=S.RUNNING), "worker"),
        RunState(status=S.SHIPPED, note="both PASS"),
    ),
    "skip-approval": (
        lambda repo, r: (
            repo.transition(r, {S.QUEUED}, RunState(status=S.RUNNING), "worker"),
            repo.transition(r, {S.RUNNING}, RunState(status=S.AWAITING_APPROVAL), "worker"),
        ),
        RunState(status=S.QUEUED, round=2),
    ),
    "interrupted-to-shipped": (_interrupted, RunState(status=S.SHIPPED)),
    "interrupted-to-running": (_interrupted, RunState(status=S.RUNNING)),
    "awaiting-review-to-shipped": (_awaiting_review, RunState(status=S.SHIPPED)),
}
"""Moves no person makes through `transition`, whatever their roles: (arrange the run, the new state)."""


@pytest.mark.parametrize("actor", [pytest.param(ADMIN, id="admin"), pytest.param(EDITOR, id="editor")])
@pytest.mark.parametrize("move", list(PERSON_MOVES_REFUSED))
def test_people_never_move_runs_the_engine_moves(repo: RunStore, engine: Engine, move: str, actor: str) -> None:
    """Claiming, gating, shipping, skipping the approval: system code only, whatever the person's roles."""
    run_id = new_run(repo)
    arrange, new = PERSON_MOVES_REFUSED[move]
    arrange(repo, run_id)
    before, audited = repo.load_run(run_id).state, count(engine, AuditEventRow)
    with pytest.raises(
        MoveRefused,
        match=f"^{actor} may not move run {run_id} from {before.status.value} to "
        f"{new.status.value}: a person only resumes an interrupted run",
    ):
        repo.transition(run_id, {before.status}, new, actor)
    assert repo.load_run(run_id).state == before and count(engine, AuditEventRow) == audited


@pytest.mark.parametrize(
    "actor",
    [
        pytest.param(OFFICER, id="officer"),
        pytest.param(ADMIN, id="admin"),
        pytest.param(EDITOR, id="editor"),
        pytest.param(VIEWER, id="viewer"),
    ],
)
@pytest.mark.parametrize(
    "new",
    [
        pytest.param(RunState(status=S.RESOLVED_REJECTED, note="rejected by a person"), id="reject"),
        pytest.param(RunState(status=S.RESOLVED_SHIPPED, note="shipped as is by a person"), id="ship-as-is"),
        pytest.param(RunState(status=S.QUEUED, round=2, round_cap=2, note="re-review"), id="rereview"),
        pytest.param(RunState(status=S.SHIPPED), id="shipped"),
    ],
)
def test_no_person_leaves_escalated_through_transition(
    repo: RunStore, engine: Engine, actor: str, new: RunState
) -> None:
    """Even a compliance officer or an admin: an escalation is left only through resolve_escalation,
    which records the decision and its justification in the same transaction."""
    run_id = new_run(repo)
    escalate(repo, run_id)
    audited = count(engine, AuditEventRow)
    with pytest.raises(
        MoveRefused,
        match=f"^{actor} may not move run {run_id} out of escalated this way: an "
        "escalation is resolved only by resolving it",
    ):
        repo.transition(run_id, {S.ESCALATED}, new, actor)
    assert repo.load_run(run_id).state.status == S.ESCALATED
    [esc] = repo.list_escalations(status=None)
    assert (esc.status, esc.resolved_by) == ("open", None)
    assert count(engine, AuditEventRow) == audited and count(engine, DecisionRow) == 0
    repo.resolve_escalation(run_id, "reject", OFFICER, "the text cannot be saved")  # the way out
    assert repo.list_escalations(status=None)[0].justification == "the text cannot be saved"


@pytest.mark.parametrize(
    "new",
    [
        pytest.param(RunState(status=S.QUEUED, round=3, round_cap=3, note="resumed"), id="jump-rounds"),
        pytest.param(RunState(status=S.QUEUED, max_rounds=99, round_cap=99, note="resumed"), id="raise-the-cap"),
        pytest.param(RunState(status=S.QUEUED, note="resumed", escalation_reason=EscalationReason.BUDGET), id="reason"),
    ],
)
def test_a_person_resumes_only_into_the_engines_state(repo: RunStore, engine: Engine, new: RunState) -> None:
    run_id = new_run(repo)
    _interrupted(repo, run_id)
    audited = count(engine, AuditEventRow)
    with pytest.raises(MoveRefused, match=f"{EDITOR} may not set run {run_id} to"):
        repo.transition(run_id, {S.INTERRUPTED}, new, EDITOR)
    assert repo.load_run(run_id).state.status == S.INTERRUPTED and count(engine, AuditEventRow) == audited
    assert repo.transition(run_id, {S.INTERRUPTED}, advance(repo.load_run(run_id).state, Resume()), EDITOR)


def test_a_person_hands_back_a_run_only_when_both_reviews_are_in(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo, reviewer_b=PERSON, reviewer_c=PERSON)
    assert make_runner(repo).execute(run_id).status == S.AWAITING_HUMAN_REVIEW
    back = advance(repo.load_run(run_id).state, HumanReviewSubmitted())
    with pytest.raises(MoveRefused, match=f"run {run_id} still waits for a review in slot B and C of round 1"):
        repo.transition(run_id, {S.AWAITING_HUMAN_REVIEW}, back, EDITOR)
    actions.submit_person_review(repo, run_id, "B", _review(), EDITOR)
    audited = count(engine, AuditEventRow)
    with pytest.raises(MoveRefused, match="still waits for a review in slot C of round 1"):
        repo.transition(run_id, {S.AWAITING_HUMAN_REVIEW}, back, EDITOR)
    with pytest.raises(PermissionDenied, match="may not fill a person reviewer slot"):  # and it needs the role
        repo.transition(run_id, {S.AWAITING_HUMAN_REVIEW}, back, VIEWER)
    assert repo.load_run(run_id).state.status == S.AWAITING_HUMAN_REVIEW and count(engine, AuditEventRow) == audited
    assert actions.submit_person_review(repo, run_id, "C", _review(), OFFICER).status == S.QUEUED
    assert events(repo, run_id=run_id)[-1] == (OFFICER, "run.state")


def test_only_system_code_records_an_auto_approval(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    with pytest.raises(PermissionDenied):
        repo.record_decision(run_id, 1, "auto_approve", "ann", "pretending to be auto-approve", "a", "b")
    assert count(engine, DecisionRow) == 0
    repo.record_decision(run_id, 1, "auto_approve", "auto-approve", "run set to auto-approve", "a", "b")
    assert count(engine, DecisionRow, actor="auto-approve") == 1


def test_roles_are_read_from_storage_when_the_action_happens(repo: RunStore) -> None:
    """Taking a role away takes effect at once: nothing is cached with the person."""
    repo.people.set_roles("kim@example.com", ["editor"], actor=ADMIN)
    new_run(repo, created_by="kim@example.com")
    repo.people.set_roles("kim@example.com", ["viewer"], actor=ADMIN)
    with pytest.raises(PermissionDenied, match=r"kim@example.com \(viewer\)"):
        new_run(repo, created_by="kim@example.com")


def test_a_person_cannot_leave_escalated_through_a_fix_decision(repo: RunStore, engine: Engine) -> None:
    """commit_decision is for decisions on a fix proposal: an editor's "approve" on an escalated run is
    refused and writes nothing (only resolve_escalation leaves escalated)."""
    run_id = new_run(repo)
    escalate(repo, run_id)
    run = repo.load_run(run_id)
    shipped = run.state.model_copy(update={"status": RunStatus.SHIPPED})
    before = count(engine, AuditEventRow)
    text = repo.get_run_view(run_id).current_output
    for actor in (EDITOR, OFFICER, ADMIN):
        with pytest.raises(MoveRefused, match="on a fix waiting for approval"):
            repo.commit_decision(
                run_id,
                run.state,
                shipped,
                DecisionIn(action="approve", actor=actor, reason="", before_text=text, after_text=text),
            )
    assert repo.load_run(run_id).state.status == RunStatus.ESCALATED
    assert count(engine, AuditEventRow) == before and count(engine, EscalationRow, status="open") == 1
