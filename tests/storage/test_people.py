"""People and their roles in storage (`storage.people`): there is always an admin (the local user),
bad roles and ids are refused, a sign-in registers a newcomer with the roles of their pattern
but never overwrites stored roles, a changed name is audited, the ids of system code and of the
local user are reserved, and one address is one person whoever writes it (on SQLite and, when
SANTA_TEST_POSTGRES_URL is set, on PostgreSQL).
"""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from santa_core.people import PeopleError
from santa_core.roles import LOCAL, SYSTEM_ACTORS, Permission, Role
from storage.runs import RunStore
from storage.tables import AuditEventRow, PersonRow
from tests.support import people_runs
from tests.support.people import ADMIN
from tests.support.people_runs import count, events

engine, repo = people_runs.engine, people_runs.repo  # the fixtures (an imported name would trip ruff's F811)


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
    assert events(repo, action="person.")[-2:] == [
        ("local", "person.roles_set"),
        ("kim@example.com", "person.roles_set"),
    ]


@pytest.mark.parametrize(
    ("who", "roles", "error"),
    [
        pytest.param("", ["viewer"], PeopleError, id="empty-id"),
        pytest.param("kim@example.com", ["superuser"], ValueError, id="unknown-role"),
    ],
)
def test_set_roles_refuses_bad_input(repo: RunStore, engine: Engine, who: str, roles: list[str], error: type) -> None:
    people = count(engine, PersonRow)
    with pytest.raises(error):
        repo.people.set_roles(who, roles, actor=ADMIN)
    assert count(engine, PersonRow) == people


@pytest.mark.parametrize(
    ("pattern_roles", "expected"),
    [
        pytest.param(
            [Role.COMPLIANCE_OFFICER, Role.EDITOR], [Role.COMPLIANCE_OFFICER, Role.EDITOR], id="pattern-roles"
        ),
        pytest.param([], [Role.VIEWER], id="no-pattern-viewer"),
    ],
)
def test_sign_in_registers_a_newcomer(repo: RunStore, pattern_roles: list[Role], expected: list[Role]) -> None:
    person = repo.people.sign_in(" kim@example.com ", "Kim Lee", pattern_roles)
    assert (person.id, person.name, person.roles, person.updated_by) == (
        "kim@example.com",
        "Kim Lee",
        expected,
        "system",
    )
    assert person.label == "Kim Lee <kim@example.com>"
    [event] = repo.audit.events(action="person.signed_in_first")
    assert (event.actor, event.entity_id, event.detail["roles"]) == (
        "kim@example.com",
        "kim@example.com",
        [r.value for r in expected],
    )


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
        "kim@example.com",
        "person",
        "kim@example.com",
        {"before": "Kim", "after": "Kim Lee"},
    )
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
