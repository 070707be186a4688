"""People, roles and the audit trail in storage: refusals, the last admin, sign-in, escalation owners
and due times, escapes, person reviewer slots, and the hash chain (verify, tampering, concurrency).

Every test runs on SQLite and, when SANTA_TEST_POSTGRES_URL is set (scripts/pg_test_server.sh),
on PostgreSQL too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import Engine, bindparam, func, text
from sqlmodel import Session, SQLModel, col, select

from santa_core.config import DEFAULT_DUE_HOURS
from santa_core.models import EscalationReason, ReviewOutcome, ReviewStatus, RunState, RunStatus
from santa_core.people import PeopleError
from santa_core.reviewers.base import PERSON, ReviewRequest
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer, passing
from santa_core.roles import LOCAL, SYSTEM_ACTORS, Permission, PermissionDenied, Role
from santa_core.run import actions
from santa_core.run.engine import HumanReviewSubmitted, InvalidTransition, Resume, advance
from santa_core.run.runner import Runner
from santa_core.run.store import DecisionIn
from storage.audit import GENESIS, AuditStore, event_hash
from storage.db import make_engine, migrate
from storage.errors import EscalationNotOpen, MoveRefused, RoundConflict, SlotAssigned
from storage.hashing import sha256_text
from storage.rubrics import RubricStore
from storage.runs import RunStore
from storage.tables import (
    AuditEventRow,
    AuditHeadRow,
    DecisionRow,
    EscalationRow,
    EscapeRow,
    PersonRow,
    ReviewRow,
    RubricVersionRow,
    RunRow,
    SettingsRow,
    TrialRow,
)
from tests.conftest import grant
from tests.core.run.test_runner import BAD, GOOD, RUBRIC, SPEC, strict, year_fixer
from tests.storage.test_rubric_store import acme

S = RunStatus
EDITOR, OFFICER, AUTHOR, VIEWER, ADMIN = (
    "editor@example.com", "officer@example.com", "author@example.com", "viewer@example.com", "admin@example.com")
STRANGER = "stranger@example.com"
"""Never registered: no person row, no role."""
PEOPLE = (EDITOR, OFFICER, AUTHOR, VIEWER, ADMIN, STRANGER)


# --- fixtures and helpers -------------------------------------------------------------------


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """A migrated engine with the built-in rubrics seeded."""
    eng = make_engine(db_url)
    migrate(eng)
    RubricStore(eng).seed_builtins()
    yield eng
    eng.dispose()


@pytest.fixture
def repo(engine: Engine) -> RunStore:
    """A RunStore whose test people (conftest.TEST_PEOPLE) have their roles."""
    return grant(RunStore(engine))


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


def ship(repo: RunStore, run_id: int) -> None:
    assert repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    assert repo.transition(run_id, {S.RUNNING}, RunState(status=S.SHIPPED, note="both PASS"), "gate")


def awaiting_approval(repo: RunStore) -> int:
    run_id = new_run(repo, BAD)
    assert make_runner(repo).execute(run_id).status == S.AWAITING_APPROVAL
    return run_id


def events(repo: RunStore, **kw: Any) -> list[tuple[str, str]]:
    return [(e.actor, e.action) for e in repo.audit.events(newest_first=False, limit=10_000, **kw)]


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
    [pytest.param(VIEWER, False, id="viewer"), pytest.param(OFFICER, False, id="officer"),
     pytest.param(AUTHOR, False, id="author"), pytest.param(STRANGER, False, id="stranger"),
     pytest.param(EDITOR, True, id="editor"), pytest.param(ADMIN, True, id="admin")],
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
    [pytest.param(EDITOR, False, id="editor"), pytest.param(VIEWER, False, id="viewer"),
     pytest.param(AUTHOR, False, id="author"), pytest.param(OFFICER, True, id="officer"),
     pytest.param(ADMIN, True, id="admin")],
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
        (actor, "decision.ship_as_is"), (actor, "run.state"), (actor, "escalation.resolved")]


@pytest.mark.parametrize(
    ("actor", "allowed"),
    [pytest.param(VIEWER, False, id="viewer"), pytest.param(OFFICER, False, id="officer"),
     pytest.param(EDITOR, True, id="editor")],
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


def _interrupted(repo: RunStore, run_id: int) -> None:
    assert repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    assert repo.transition(run_id, {S.RUNNING}, RunState(status=S.INTERRUPTED, note="worker died"), "system")


def _awaiting_review(repo: RunStore, run_id: int) -> None:
    assert repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    assert repo.transition(run_id, {S.RUNNING}, RunState(status=S.AWAITING_HUMAN_REVIEW), "worker")


PERSON_MOVES_REFUSED: dict[str, tuple[Callable[[RunStore, int], None], RunState]] = {
    "claim": (lambda repo, r: None, RunState(status=S.RUNNING, note="reviewing")),
    "queued-to-shipped": (lambda repo, r: None, RunState(status=S.SHIPPED)),
    "gate-ships": (lambda repo, r: repo.transition(r, {S.QUEUED}, RunState(status=S.RUNNING), "worker"),
                   RunState(status=S.SHIPPED, note="both PASS")),
    "skip-approval": (lambda repo, r: (repo.transition(r, {S.QUEUED}, RunState(status=S.RUNNING), "worker"),
                                       repo.transition(r, {S.RUNNING}, RunState(status=S.AWAITING_APPROVAL),
                                                       "worker")),
                      RunState(status=S.QUEUED, round=2)),
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
    with pytest.raises(MoveRefused, match=f"^{actor} may not move run {run_id} from {before.status.value} to "
                                          f"{new.status.value}: a person only resumes an interrupted run"):
        repo.transition(run_id, {before.status}, new, actor)
    assert repo.load_run(run_id).state == before and count(engine, AuditEventRow) == audited


@pytest.mark.parametrize("actor", [pytest.param(OFFICER, id="officer"), pytest.param(ADMIN, id="admin"),
                                   pytest.param(EDITOR, id="editor"), pytest.param(VIEWER, id="viewer")])
@pytest.mark.parametrize("new", [
    pytest.param(RunState(status=S.RESOLVED_REJECTED, note="rejected by a person"), id="reject"),
    pytest.param(RunState(status=S.RESOLVED_SHIPPED, note="shipped as is by a person"), id="ship-as-is"),
    pytest.param(RunState(status=S.QUEUED, round=2, round_cap=2, note="re-review"), id="rereview"),
    pytest.param(RunState(status=S.SHIPPED), id="shipped")])
def test_no_person_leaves_escalated_through_transition(repo: RunStore, engine: Engine, actor: str, new: RunState) -> None:
    """Even a compliance officer or an admin: an escalation is left only through resolve_escalation,
    which records the decision and its justification in the same transaction."""
    run_id = new_run(repo)
    escalate(repo, run_id)
    audited = count(engine, AuditEventRow)
    with pytest.raises(MoveRefused, match=f"^{actor} may not move run {run_id} out of escalated this way: an "
                                          "escalation is resolved only by resolving it"):
        repo.transition(run_id, {S.ESCALATED}, new, actor)
    assert repo.load_run(run_id).state.status == S.ESCALATED
    [esc] = repo.list_escalations(status=None)
    assert (esc.status, esc.resolved_by) == ("open", None)
    assert count(engine, AuditEventRow) == audited and count(engine, DecisionRow) == 0
    repo.resolve_escalation(run_id, "reject", OFFICER, "the text cannot be saved")  # the way out
    assert repo.list_escalations(status=None)[0].justification == "the text cannot be saved"


@pytest.mark.parametrize("new", [
    pytest.param(RunState(status=S.QUEUED, round=3, round_cap=3, note="resumed"), id="jump-rounds"),
    pytest.param(RunState(status=S.QUEUED, max_rounds=99, round_cap=99, note="resumed"), id="raise-the-cap"),
    pytest.param(RunState(status=S.QUEUED, note="resumed", escalation_reason=EscalationReason.BUDGET),
                 id="reason")])
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


# --- people: the last admin, sign-in -------------------------------------------------------------


def test_there_is_always_an_admin_the_local_user(engine: Engine) -> None:
    """Out of the box `local` is the only person, an admin, and it stays one: without sign-in it is the
    only person who can act, so nobody can lock the install by taking admin away from it."""
    repo = RunStore(engine)
    audited = count(engine, AuditEventRow)
    with pytest.raises(PeopleError, match="the local user stays an admin"):
        repo.people.set_roles("local", ["editor"], actor="local")
    assert repo.people.get("local").roles == [Role.ADMIN] and count(engine, AuditEventRow) == audited
    repo.people.set_roles("kim@example.com", ["admin"], actor="local", name="Kim")
    with pytest.raises(PeopleError, match="the local user stays an admin"):
        repo.people.set_roles("local", ["editor", "viewer"], actor="kim@example.com")
    repo.people.set_roles("kim@example.com", ["compliance_officer"], actor="kim@example.com")  # local is admin
    assert [p.id for p in repo.people.with_permission(Permission.MANAGE_PEOPLE)] == ["local"]
    assert events(repo, action="person.")[-2:] == [("local", "person.roles_set"),
                                                   ("kim@example.com", "person.roles_set")]


@pytest.mark.parametrize(
    ("who", "roles", "error"),
    [pytest.param("", ["viewer"], PeopleError, id="empty-id"),
     pytest.param("kim@example.com", ["superuser"], ValueError, id="unknown-role")],
)
def test_set_roles_refuses_bad_input(repo: RunStore, engine: Engine, who: str, roles: list[str], error: type) -> None:
    people = count(engine, PersonRow)
    with pytest.raises(error):
        repo.people.set_roles(who, roles, actor=ADMIN)
    assert count(engine, PersonRow) == people


@pytest.mark.parametrize(
    ("pattern_roles", "expected"),
    [pytest.param([Role.COMPLIANCE_OFFICER, Role.EDITOR], [Role.COMPLIANCE_OFFICER, Role.EDITOR], id="pattern-roles"),
     pytest.param([], [Role.VIEWER], id="no-pattern-viewer")],
)
def test_sign_in_registers_a_newcomer(repo: RunStore, pattern_roles: list[Role], expected: list[Role]) -> None:
    person = repo.people.sign_in(" kim@example.com ", "Kim Lee", pattern_roles)
    assert (person.id, person.name, person.roles, person.updated_by) == ("kim@example.com", "Kim Lee", expected,
                                                                          "system")
    assert person.label == "Kim Lee <kim@example.com>"
    [event] = repo.audit.events(action="person.signed_in_first")
    assert (event.actor, event.entity_id, event.detail["roles"]) == ("kim@example.com", "kim@example.com",
                                                                     [r.value for r in expected])


def test_sign_in_never_overwrites_roles(repo: RunStore) -> None:
    repo.people.sign_in("kim@example.com", "Kim", [Role.EDITOR])
    repo.people.set_roles("kim@example.com", ["compliance_officer"], actor=ADMIN)
    again = repo.people.sign_in("kim@example.com", "Kim Lee", [Role.EDITOR, Role.RUBRIC_AUTHOR])
    assert (again.roles, again.name, again.updated_by) == ([Role.COMPLIANCE_OFFICER], "Kim Lee", ADMIN)
    # and an admin's test person keeps admin even when the patterns would make them a viewer
    assert repo.people.sign_in(ADMIN, "Ada", []).roles == [Role.ADMIN]
    assert len(repo.audit.events(action="person.signed_in_first")) == 1


def test_sign_in_needs_an_id(repo: RunStore, engine: Engine) -> None:
    people = count(engine, PersonRow)
    with pytest.raises(PeopleError):
        repo.people.sign_in("   ", "Nobody")
    assert count(engine, PersonRow) == people


def test_sign_in_audits_a_changed_name_only(repo: RunStore, engine: Engine) -> None:
    repo.people.sign_in("kim@example.com", "Kim")
    audited = count(engine, AuditEventRow)
    repo.people.sign_in("kim@example.com", "Kim")  # the same name: nothing changes, nothing is written
    repo.people.sign_in("kim@example.com", "  ")  # no name from the provider: the stored one stays
    assert count(engine, AuditEventRow) == audited
    assert repo.people.sign_in("kim@example.com", "Kim Lee").name == "Kim Lee"
    [renamed] = repo.audit.events(action="person.renamed")
    assert (renamed.actor, renamed.entity_type, renamed.entity_id, renamed.detail) == (
        "kim@example.com", "person", "kim@example.com", {"before": "Kim", "after": "Kim Lee"})
    assert repo.audit.verify().ok


@pytest.mark.parametrize("reserved", [*sorted(SYSTEM_ACTORS), LOCAL, " Worker ", "LOCAL", "Auto-Approve"])
def test_sign_in_refuses_the_ids_of_system_code_and_the_local_user(
    repo: RunStore, engine: Engine, reserved: str
) -> None:
    people, audited = count(engine, PersonRow), count(engine, AuditEventRow)
    local = repo.people.get(LOCAL)
    with pytest.raises(PeopleError, match="is reserved for the desk itself"):
        repo.people.sign_in(reserved, "Mallory", [Role.ADMIN])
    assert (count(engine, PersonRow), count(engine, AuditEventRow)) == (people, audited)
    assert repo.people.get(LOCAL) == local  # not renamed either


def test_ids_are_one_per_address_whoever_writes_them(repo: RunStore) -> None:
    """An admin who types `Kim@Example.com` and Kim who signs in as `kim@example.com` are one person;
    an OIDC subject is case-sensitive and kept as it is."""
    repo.people.set_roles("Kim@Example.com", ["admin"], actor=ADMIN)
    kim = repo.people.sign_in("kim@example.com", "Kim")
    assert kim.id == "kim@example.com" and kim.roles == [Role.ADMIN]
    assert repo.people.get("Kim@Example.com") is None
    assert repo.people.sign_in("sub:AbC", "Sub").id == "sub:AbC"


@pytest.mark.parametrize("target", ["worker", "CLI", "gate"])
def test_system_code_gets_no_roles(repo: RunStore, target: str) -> None:
    with pytest.raises(PeopleError, match="system code"):
        repo.people.set_roles(target, ["admin"], actor=ADMIN)


def test_the_local_user_stays_an_admin(repo: RunStore) -> None:
    with pytest.raises(PeopleError, match="stays an admin"):
        repo.people.set_roles("local", ["viewer"], actor=ADMIN)
    assert repo.people.get("local").roles == [Role.ADMIN]
    assert repo.people.set_roles("local", ["admin", "editor"], actor=ADMIN).roles == [Role.ADMIN, Role.EDITOR]


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
            repo.commit_decision(run_id, run.state, shipped,
                                 DecisionIn(action="approve", actor=actor, reason="", before_text=text,
                                            after_text=text))
    assert repo.load_run(run_id).state.status == RunStatus.ESCALATED
    assert count(engine, AuditEventRow) == before and count(engine, EscalationRow, status="open") == 1


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
        (ADMIN, {"before": None, "owner": OFFICER}), (OFFICER, {"before": OFFICER, "owner": None})]


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


REASONS = [EscalationReason.ROUND_CAP, EscalationReason.INJECTION, EscalationReason.REVIEWER_ERROR,
           EscalationReason.DISAGREEMENT, EscalationReason.BUDGET, EscalationReason.FIX_FAILED]


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


# --- escapes -------------------------------------------------------------------------------------


def _resolved(repo: RunStore, run_id: int, resolution: str) -> None:
    escalate(repo, run_id)
    repo.resolve_escalation(run_id, resolution, OFFICER, "decided by hand")


@pytest.mark.parametrize(
    ("arrange", "allowed"),
    [pytest.param(ship, True, id="shipped"),
     pytest.param(lambda repo, r: _resolved(repo, r, "ship_as_is"), True, id="resolved-shipped"),
     pytest.param(lambda repo, r: None, False, id="queued"),
     pytest.param(escalate, False, id="escalated"),
     pytest.param(lambda repo, r: _resolved(repo, r, "reject"), False, id="resolved-rejected")],
)
def test_escapes_are_reported_on_shipped_runs_only(repo: RunStore, engine: Engine, arrange: Callable, allowed: bool) -> None:
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
        escape_id, "factual_accuracy", "the year was wrong", "major", VIEWER)
    assert repo.get_run_view(run_id).escapes == [escape]
    assert repo.run_json(run_id)["escapes"][0]["severity"] == "major"
    [event] = repo.audit.events(action="escape.reported")
    assert (event.actor, event.run_id, event.entity_id) == (VIEWER, run_id, str(escape_id))


@pytest.mark.parametrize(
    ("criterion", "description", "severity", "actor", "error"),
    [pytest.param("facts", "wrong", "catastrophic", VIEWER, ValueError, id="bad-severity"),
     pytest.param("facts", "wrong", "", VIEWER, ValueError, id="no-severity"),
     pytest.param("  ", "wrong", "minor", VIEWER, ValueError, id="no-criterion"),
     pytest.param("facts", "   ", "minor", VIEWER, ValueError, id="no-description"),
     pytest.param("facts", "wrong", "minor", STRANGER, PermissionDenied, id="no-role")],
)
def test_a_bad_escape_is_refused(
    repo: RunStore, engine: Engine, criterion: str, description: str, severity: str, actor: str, error: type
) -> None:
    run_id = new_run(repo)
    ship(repo, run_id)
    with pytest.raises(error):
        repo.report_escape(run_id, criterion, description, severity, actor=actor)
    assert count(engine, EscapeRow) == 0 and repo.audit.events(action="escape.") == []


# --- person reviewer slots ------------------------------------------------------------------------


def _review() -> Any:
    return passing(ReviewRequest(rubric=RUBRIC, spec=SPEC, output=GOOD))


def test_a_slot_assigned_to_someone_else_is_refused(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo, reviewer_b=PERSON, reviewer_c=PERSON, person_c=OFFICER)
    audited = count(engine, AuditEventRow)
    with pytest.raises(SlotAssigned, match=f"slot C of run {run_id} is assigned to {OFFICER}, not {EDITOR}"):
        actions.submit_person_review(repo, run_id, "C", _review(), EDITOR)
    assert count(engine, ReviewRow) == 0 and count(engine, AuditEventRow) == audited
    actions.submit_person_review(repo, run_id, "C", _review(), OFFICER)
    actions.submit_person_review(repo, run_id, "B", _review(), EDITOR)  # B is anyone's
    assert {s: r.reviewer for s, r in repo.load_round(run_id, 1).reviews.items()} == {
        "B": f"person:{EDITOR}", "C": f"person:{OFFICER}"}
    assert [a for a, action in events(repo, run_id=run_id) if action == "review.saved"] == [OFFICER, EDITOR]


def test_one_person_cannot_fill_both_slots_of_a_round(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo, reviewer_b=PERSON, reviewer_c=PERSON)
    assert make_runner(repo).execute(run_id).status == S.AWAITING_HUMAN_REVIEW
    actions.submit_person_review(repo, run_id, "B", _review(), EDITOR)
    [pending] = repo.pending_human_reviews()
    assert (pending.slot, pending.assignee, pending.filled_other_slot_by) == ("C", None, EDITOR)
    with pytest.raises(SlotAssigned, match="different reviewers"):
        actions.submit_person_review(repo, run_id, "C", _review(), EDITOR)
    assert count(engine, ReviewRow, slot="C") == 0
    assert actions.submit_person_review(repo, run_id, "C", _review(), OFFICER).status == S.QUEUED


@pytest.mark.parametrize("actor", [pytest.param(VIEWER, id="viewer"), pytest.param(AUTHOR, id="author"),
                                   pytest.param(STRANGER, id="stranger")])
def test_people_who_may_not_review_cannot_fill_a_slot(repo: RunStore, engine: Engine, actor: str) -> None:
    run_id = new_run(repo, reviewer_c=PERSON)
    with pytest.raises(PermissionDenied, match="may not fill a person reviewer slot"):
        actions.submit_person_review(repo, run_id, "C", _review(), actor)
    assert count(engine, ReviewRow) == 0


def test_slots_are_assigned_only_to_reviewers_by_assigners(repo: RunStore, engine: Engine) -> None:
    with pytest.raises(PermissionDenied, match=f"{VIEWER}"):  # at creation: only someone who may review
        new_run(repo, reviewer_c=PERSON, person_c=VIEWER)
    assert count(engine, RunRow) == 0
    run_id = new_run(repo, reviewer_c=PERSON)
    with pytest.raises(PermissionDenied, match="may not assign"):
        repo.assign_person_slot(run_id, "C", EDITOR, actor=EDITOR)
    with pytest.raises(PermissionDenied, match="may not fill a person reviewer slot"):
        repo.assign_person_slot(run_id, "C", AUTHOR, actor=OFFICER)
    repo.assign_person_slot(run_id, "C", EDITOR, actor=OFFICER)
    assert repo.get_run_view(run_id).person_c == EDITOR
    with pytest.raises(SlotAssigned):
        actions.submit_person_review(repo, run_id, "C", _review(), OFFICER)
    repo.assign_person_slot(run_id, "C", None, actor=ADMIN)  # anyone again
    actions.submit_person_review(repo, run_id, "C", _review(), OFFICER)
    assert [e.detail for e in repo.audit.events(action="review.assigned", newest_first=False)] == [
        {"slot": "C", "before": None, "person": EDITOR}, {"slot": "C", "before": EDITOR, "person": None}]


def _person_outcome(person: str, slot: str = "C", verdict: str = "PASS") -> ReviewOutcome:
    review = _review().model_copy(update={"verdict": verdict})
    return ReviewOutcome(slot=slot, reviewer=f"person:{person}", status=ReviewStatus.OK, review=review,
                         raw_response=review.model_dump_json())


@pytest.mark.parametrize("filled", [pytest.param(False, id="empty"), pytest.param(True, id="model-reviewed")])
def test_a_person_cannot_fill_a_models_slot(repo: RunStore, engine: Engine, filled: bool) -> None:
    run_id = new_run(repo, reviewer_c=PERSON)  # B is the model "b"
    if filled:
        assert make_runner(repo).execute(run_id).status == S.AWAITING_HUMAN_REVIEW
    reviews, audited = repo.load_round(run_id, 1).reviews, count(engine, AuditEventRow)
    for only_if_empty in (False, True):
        with pytest.raises(SlotAssigned, match=f"slot B of run {run_id} is reviewed by b, not by a person"):
            repo.save_review(run_id, 1, _person_outcome(EDITOR, "B"), only_if_empty=only_if_empty)
    with pytest.raises(SlotAssigned, match="not by a person"):
        actions.submit_person_review(repo, run_id, "B", _review(), EDITOR)
    assert repo.load_round(run_id, 1).reviews == reviews and count(engine, AuditEventRow) == audited


def test_a_person_never_overwrites_a_review(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo, reviewer_c=PERSON)
    assert make_runner(repo).execute(run_id).status == S.AWAITING_HUMAN_REVIEW
    first = _person_outcome(EDITOR)
    assert repo.save_review(run_id, 1, first)
    audited = count(engine, AuditEventRow)
    # someone else, or the same person changing their verdict, even without only_if_empty
    for later in (_person_outcome(OFFICER, verdict="FAIL"), _person_outcome(EDITOR, verdict="FAIL"), first):
        assert repo.save_review(run_id, 1, later) is False
    with pytest.raises(actions.ActionError, match="already has a review \\(someone was faster\\)"):
        actions.submit_person_review(repo, run_id, "C", _review(), OFFICER)
    assert repo.load_round(run_id, 1).reviews["C"] == first
    assert count(engine, ReviewRow, slot="C") == 1 and count(engine, AuditEventRow) == audited


# --- the audit chain -------------------------------------------------------------------------------


@pytest.fixture
def chained(repo: RunStore) -> tuple[RunStore, int]:
    """A full run: NAUGHTY round 1, a fix approved by an editor, NICE round 2."""
    run_id = awaiting_approval(repo)
    actions.approve_fix(repo, run_id, EDITOR)
    assert make_runner(repo).execute(run_id).status == S.SHIPPED
    return repo, run_id


def _pairs_sorted(items: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The two reviews of a round are saved in whichever order they finish: compare them sorted."""
    out = list(items)
    for i in range(len(out) - 1):
        if out[i][1] == out[i + 1][1] == "review.saved":
            out[i], out[i + 1] = sorted((out[i], out[i + 1]))
    return out


def test_a_full_run_is_on_the_record_in_order_with_its_actors(chained: tuple[RunStore, int]) -> None:
    repo, run_id = chained
    got = [(e.actor, e.action, e.detail.get("to") or e.entity_id)
           for e in repo.audit.events(run_id=run_id, newest_first=False)]
    r = str(run_id)
    assert _pairs_sorted(got) == [
        (EDITOR, "run.created", r),
        ("worker", "run.state", "running"),
        ("worker", "review.saved", f"{r}/1/B"),
        ("worker", "review.saved", f"{r}/1/C"),
        ("gate", "round.gate", f"{r}/1"),
        ("gate", "run.state", "running"),  # fixing
        ("worker", "proposal.saved", f"{r}/1"),
        ("worker", "run.state", "awaiting_approval"),
        (EDITOR, "decision.approve", r),
        (EDITOR, "run.state", "queued"),
        ("worker", "run.state", "running"),
        ("worker", "review.saved", f"{r}/2/B"),
        ("worker", "review.saved", f"{r}/2/C"),
        ("gate", "round.gate", f"{r}/2"),
        ("gate", "run.state", "shipped"),
    ]
    everything = repo.audit.events(newest_first=False, limit=10_000)
    assert [e.seq for e in everything] == list(range(1, len(everything) + 1))
    assert [e.prev_hash for e in everything] == [GENESIS] + [e.hash for e in everything[:-1]]
    report = repo.audit.verify()
    assert (report.ok, report.checked, report.broken) == (True, len(everything), None)
    assert "intact" in report.describe()
    # filters: by actor, and an action prefix
    assert [e.action for e in repo.audit.events(actor=EDITOR, newest_first=False)] == [
        "run.created", "decision.approve", "run.state"]
    assert {e.action for e in repo.audit.events(action="run.", run_id=run_id)} == {"run.created", "run.state"}


def test_events_since_and_until_mean_the_same_instant_in_any_zone(chained: tuple[RunStore, int]) -> None:
    repo, run_id = chained
    everything = repo.audit.events(newest_first=False, limit=10_000)
    middle = next(e for e in everything if e.action == "decision.approve")
    later = [e.seq for e in everything if e.created_at >= middle.created_at]
    earlier = [e.seq for e in everything if e.created_at < middle.created_at]
    for zone in (UTC, timezone(timedelta(hours=9)), timezone(timedelta(hours=-7))):
        since = middle.created_at.astimezone(zone)
        assert [e.seq for e in repo.audit.events(since=since, newest_first=False, limit=10_000)] == later
        assert [e.seq for e in repo.audit.events(until=since, newest_first=False, limit=10_000)] == earlier


def _row(engine: Engine, **where: object) -> AuditEventRow:
    stmt = select(AuditEventRow)
    for key, value in where.items():
        stmt = stmt.where(getattr(AuditEventRow, key) == value)
    with Session(engine) as s:
        return s.exec(stmt).one()


def _set(engine: Engine, row_id: int, column: str, value: object) -> None:
    """Change one column of one stored event by hand, as someone with database access could."""
    column_type = AuditEventRow.__table__.c[column].type
    stmt = text(f"UPDATE audit_event SET {column} = :value WHERE id = :id").bindparams(  # noqa: S608 - fixed names
        bindparam("value", type_=column_type))
    with engine.begin() as conn:
        assert conn.execute(stmt, {"value": value, "id": row_id}).rowcount == 1


TAMPERED: dict[str, Callable[[AuditEventRow], object]] = {
    "actor": lambda r: "mallory@example.com",
    "action": lambda r: "decision.reject",
    "entity_type": lambda r: "rubric",
    "entity_id": lambda r: r.entity_id + "0",
    "run_id": lambda r: r.run_id + 1000,
    "before_hash": lambda r: "f" * 64,
    "after_hash": lambda r: None,
    "detail": lambda r: {**r.detail, "reason": "approved after a call"},
    "created_at": lambda r: r.created_at + timedelta(seconds=1),
    "prev_hash": lambda r: "a" * 64,
    "hash": lambda r: "b" * 64,
}
"""A changed value for each hashed column of the middle event (the editor's approval)."""


@pytest.mark.parametrize("column", list(TAMPERED))
def test_changing_any_column_of_a_middle_event_breaks_the_chain_there(
    chained: tuple[RunStore, int], engine: Engine, column: str
) -> None:
    repo, _ = chained
    target = _row(engine, action="decision.approve")
    newest = repo.audit.events(limit=1)[0]
    assert target.seq < newest.seq - 3  # a middle event, not the head
    original = getattr(target, column)
    new = TAMPERED[column](target)
    assert new != original
    _set(engine, target.id, column, new)
    report = repo.audit.verify()
    assert not report.ok and report.broken is not None
    assert (report.broken.id, report.broken.seq, report.checked) == (target.id, target.seq, target.seq - 1)
    assert f"audit event #{target.id}" in report.describe()
    _set(engine, target.id, column, original)  # put back, the chain holds again: the column was the cause
    assert repo.audit.verify().ok


def test_renumbering_a_middle_event_names_that_event(chained: tuple[RunStore, int], engine: Engine) -> None:
    """seq orders the chain: a renumbered event leaves a gap; verify finds the event that still links
    to the last good one under another seq and names it, with its old and new seq."""
    repo, _ = chained
    target = _row(engine, action="decision.approve")
    _set(engine, target.id, "seq", target.seq + 100_000)
    report = repo.audit.verify()
    assert not report.ok and (report.broken.id, report.broken.seq) == (target.id, target.seq + 100_000)
    assert f"changed from {target.seq} to {target.seq + 100_000}" in report.broken.problem


def test_renumbering_the_newest_event_names_it(chained: tuple[RunStore, int], engine: Engine) -> None:
    repo, _ = chained
    newest = repo.audit.events(limit=1)[0]
    _set(engine, newest.id, "seq", newest.seq + 1)
    report = repo.audit.verify()
    assert not report.ok and report.broken.id == newest.id


def test_deleting_a_middle_event_names_the_next_one(chained: tuple[RunStore, int], engine: Engine) -> None:
    repo, _ = chained
    target = _row(engine, action="decision.approve")
    after = _row(engine, seq=target.seq + 1)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM audit_event WHERE id = :id"), {"id": target.id})
    report = repo.audit.verify()
    assert not report.ok and (report.broken.id, report.broken.seq, report.checked) == (after.id, after.seq,
                                                                                          target.seq - 1)
    assert "missing" in report.broken.problem


def test_deleting_the_newest_event_is_caught_by_the_head(chained: tuple[RunStore, int], engine: Engine) -> None:
    repo, _ = chained
    newest = repo.audit.events(limit=1)[0]
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM audit_event WHERE id = :id"), {"id": newest.id})
    report = repo.audit.verify()
    assert not report.ok and report.checked == newest.seq - 1
    assert (report.broken.id, report.broken.seq) == (None, newest.seq)
    assert f"head says {newest.seq}" in report.broken.problem and "BROKEN" in report.describe()


def test_a_forged_event_appended_by_hand_is_caught_by_the_head(chained: tuple[RunStore, int], engine: Engine) -> None:
    """Even a forger who knows the hash recipe is caught unless they also move the head."""
    repo, _ = chained
    newest = repo.audit.events(limit=1)[0]
    fields = {"seq": newest.seq + 1, "created_at": datetime.now(UTC), "actor": ADMIN, "action": "settings.saved",
              "entity_type": "settings", "entity_id": "defaults", "run_id": None, "before_hash": None,
              "after_hash": None, "detail": {}, "prev_hash": newest.hash}
    with Session(engine) as s:
        forged = AuditEventRow(id=newest.seq + 1, **fields, hash=event_hash(fields))
        s.add(forged)
        s.commit()
    report = repo.audit.verify()
    # The forged row is named (not counted as verified), and the problem says it was added, not removed.
    assert not report.ok and report.checked == newest.seq
    assert (report.broken.id, report.broken.seq) == (newest.seq + 1, newest.seq + 1)
    assert "after the chain's head" in report.broken.problem


def test_an_events_id_is_its_seq_and_a_changed_id_is_named(chained: tuple[RunStore, int], engine: Engine) -> None:
    repo, _ = chained
    events = repo.audit.events(newest_first=False, limit=10_000)
    assert all(e.id == e.seq for e in events)
    target = events[len(events) // 2]
    _set(engine, target.id, "id", 999_999)
    report = repo.audit.verify()
    assert not report.ok and (report.broken.id, report.broken.seq) == (999_999, target.seq)
    assert "the id was changed" in report.broken.problem


def test_an_intact_report_gives_the_newest_hash_to_anchor_outside(chained: tuple[RunStore, int]) -> None:
    repo, _ = chained
    report = repo.audit.verify()
    assert report.ok and report.head_hash == repo.audit.events(limit=1)[0].hash
    assert report.head_hash in report.describe()


def test_concurrent_writers_make_one_unforked_chain(repo: RunStore, engine: Engine) -> None:
    threads, runs_each, settings_each = 8, 3, 2
    before = count(engine, AuditEventRow)
    start = threading.Barrier(threads)

    def writer(t: int) -> None:
        start.wait()
        for i in range(max(runs_each, settings_each)):
            if i < runs_each:
                run_id = new_run(repo, f"output {t}/{i}")
                assert repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
            if i < settings_each:
                repo.save_settings({f"thread_{t}": i}, actor=ADMIN)

    pool = [threading.Thread(target=writer, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    expected = before + threads * (runs_each * 2 + settings_each)
    report = repo.audit.verify()
    assert (report.ok, report.checked) == (True, expected), report.describe()
    with Session(engine) as s:
        seqs = s.exec(select(AuditEventRow.seq).order_by(col(AuditEventRow.seq))).all()
        head = s.get(AuditHeadRow, 1)
        newest = s.exec(select(AuditEventRow).where(AuditEventRow.seq == expected)).one()
    assert seqs == list(range(1, expected + 1))
    assert (head.seq, head.hash) == (expected, newest.hash)
    assert count(engine, RunRow) == threads * runs_each
    assert count(engine, SettingsRow) == threads * settings_each


def test_refused_actions_leave_the_chain_intact(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    escalate(repo, run_id)
    for attempt in (lambda: repo.resolve_escalation(run_id, "ship_as_is", VIEWER, "x"),
                    lambda: repo.save_settings({"max_rounds": 9}, actor=EDITOR),
                    lambda: repo.people.set_roles(VIEWER, ["admin"], actor=VIEWER)):
        with pytest.raises(PermissionDenied):
            attempt()
    assert repo.audit.verify().ok
    assert count(engine, EscalationRow, status="open") == 1
    repo.resolve_escalation(run_id, "ship_as_is", OFFICER, "ok")
    audited = count(engine, AuditEventRow)
    with pytest.raises(InvalidTransition):  # a second resolution of a resolved run is refused by the engine
        repo.resolve_escalation(run_id, "ship_as_is", OFFICER, "again")
    assert count(engine, AuditEventRow) == audited and repo.audit.verify().ok


def _forge(engine: Engine, seq: int, prev_hash: str = GENESIS) -> int:
    """Insert a well-formed event by hand (its hash computed by the recipe); its id."""
    fields = {"seq": seq, "created_at": datetime.now(UTC), "actor": ADMIN, "action": "decision.ship_as_is",
              "entity_type": "run", "entity_id": "1", "run_id": None, "before_hash": None, "after_hash": None,
              "detail": {"reason": "approved long ago"}, "prev_hash": prev_hash}
    with Session(engine) as s:
        # An explicit id: the app gives every event its seq as id, so PostgreSQL's own id counter never
        # moves and an insert without an id would collide with event 1 (a forger must pick a free id).
        free = (s.exec(select(func.max(AuditEventRow.id))).one() or 0) + 1000
        row = AuditEventRow(id=free, **fields, hash=event_hash(fields))
        s.add(row)
        s.commit()
        return row.id


@pytest.mark.parametrize("seqs", [pytest.param([0], id="seq-0"), pytest.param([-5], id="negative"),
                                  pytest.param([0, -3], id="two")])
def test_a_row_forged_before_the_chain_is_named(chained: tuple[RunStore, int], engine: Engine, seqs: list[int]) -> None:
    """Rows with seq below 1 are never reached by walking the chain from seq 1; verify still names one."""
    repo, _ = chained
    ids = {seq: _forge(engine, seq) for seq in seqs}
    report = repo.audit.verify()
    first = min(seqs)
    assert not report.ok and (report.broken.id, report.broken.seq) == (ids[first], first)
    assert report.broken.problem == "seq must start at 1: a row was inserted before the chain"
    assert f"BROKEN at audit event #{ids[first]} (seq {first})" in report.describe()


def test_verify_counts_every_stored_row(
    chained: tuple[RunStore, int], engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second guard: the walk must have checked as many events as are stored."""
    repo, _ = chained
    stored = count(engine, AuditEventRow)
    forged = _forge(engine, 0)
    monkeypatch.setattr(AuditStore, "_before_the_chain", staticmethod(lambda s: None))  # as if the first check missed it
    report = repo.audit.verify()
    assert not report.ok and report.checked == stored and (report.broken.id, report.broken.seq) == (forged, 0)
    assert f"{stored + 1} events are stored but the chain holds {stored}" in report.broken.problem


def test_a_changed_and_rehashed_row_is_named_by_the_next_link(chained: tuple[RunStore, int], engine: Engine) -> None:
    """Whoever recomputes the changed row's hash leaves the next row's previous-hash pointing at the
    old one: verify breaks at the next row and names both possibilities."""
    repo, _ = chained
    target = _row(engine, action="decision.approve")
    after = _row(engine, seq=target.seq + 1)
    fields = {**target.model_dump(), "detail": {**target.detail, "reason": "approved after a call"}}
    _set(engine, target.id, "detail", fields["detail"])
    _set(engine, target.id, "hash", event_hash(fields))
    report = repo.audit.verify()
    assert not report.ok and (report.broken.id, report.broken.seq, report.checked) == (after.id, after.seq, target.seq)
    assert report.broken.problem == (
        f"its previous-hash does not match audit event #{target.id} (seq {target.seq}): either #{target.id} was "
        "changed and its hash recomputed, or this row's previous-hash was changed")


def test_start_round_is_audited_when_it_changes_something(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    audited = count(engine, AuditEventRow)
    repo.start_round(run_id, 1, GOOD)  # round 1 already holds this text: nothing to record
    assert count(engine, AuditEventRow) == audited
    repo.start_round(run_id, 2, "v2")
    repo.start_round(run_id, 2, "v2")
    repo.start_round(run_id, 2, "v2, edited")
    started = repo.audit.events(action="round.started", newest_first=False)
    assert [(e.actor, e.entity_id, e.run_id, e.before_hash, e.after_hash, e.detail) for e in started] == [
        ("worker", f"{run_id}/2", run_id, None, sha256_text("v2"), {"round": 2, "replaced": False}),
        ("worker", f"{run_id}/2", run_id, sha256_text("v2"), sha256_text("v2, edited"), {"round": 2, "replaced": True}),
    ]
    repo.save_review(run_id, 2, ReviewOutcome(slot="B", reviewer="b", status=ReviewStatus.ERROR, error="down"))
    audited = count(engine, AuditEventRow)
    with pytest.raises(RoundConflict):
        repo.start_round(run_id, 2, "something else")
    assert count(engine, AuditEventRow) == audited and repo.audit.verify().ok


def test_a_run_is_blind_only_while_a_reviewer_is_waited_for(repo: RunStore) -> None:
    """One rule on every page: blind while a person slot of the current round is open; an escalated or
    settled run waits for no reviewer, so its history and record show again (e.g. a budget stop)."""
    run_id = new_run(repo, reviewer_c=PERSON)
    assert repo.get_run_view(run_id).blind and run_id in repo.blind_run_ids()
    escalate(repo, run_id, EscalationReason.BUDGET)
    assert not repo.get_run_view(run_id).blind and run_id not in repo.blind_run_ids()
    repo.resolve_escalation(run_id, "ship_as_is", OFFICER, "fine as it is")
    assert not repo.get_run_view(run_id).blind and run_id not in repo.blind_run_ids()
    model_only = new_run(repo)
    assert not repo.get_run_view(model_only).blind and model_only not in repo.blind_run_ids()


def test_a_deleted_head_row_breaks_the_chain(chained: tuple[RunStore, int], engine: Engine) -> None:
    repo, _ = chained
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM audit_head"))
    report = repo.audit.verify()
    assert not report.ok and "head row (audit_head) is missing" in report.broken.problem
