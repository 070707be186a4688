"""Roles and permissions (santa_core.roles): pure, no database."""

from __future__ import annotations

import pytest

from santa_core.roles import (
    GRANTS,
    SYSTEM_ACTORS,
    Permission,
    PermissionDenied,
    Role,
    can,
    holders,
    parse_roles,
    permissions,
    roles_for_email,
    who_may,
)

P = Permission

EXPECTED_GRANTS: dict[Role, set[Permission]] = {
    Role.VIEWER: {P.REPORT_ESCAPE},
    Role.EDITOR: {P.START_RUN, P.DECIDE_FIX, P.PERSON_REVIEW, P.RESUME_RUN, P.RETRY_RUN, P.REPORT_ESCAPE, P.SPOT_CHECK},
    Role.COMPLIANCE_OFFICER: {
        P.RESOLVE_ESCALATION,
        P.ASSIGN,
        P.PERSON_REVIEW,
        P.RETRY_RUN,
        P.REPORT_ESCAPE,
        P.SPOT_CHECK,
    },
    Role.RUBRIC_AUTHOR: {P.EDIT_RUBRIC, P.TRY_RUBRIC, P.REPORT_ESCAPE, P.MANAGE_SPOT_CHECKS},
    Role.ADMIN: set(Permission),
}
"""Written out by hand (not derived from GRANTS), so a change to a grant fails here."""


@pytest.mark.parametrize("role", [pytest.param(r, id=r.value) for r in Role])
def test_grants_per_role(role: Role) -> None:
    assert set(GRANTS[role]) == EXPECTED_GRANTS[role]
    assert permissions([role]) == GRANTS[role]
    assert permissions([role.value]) == GRANTS[role]  # the stored form: plain strings


@pytest.mark.parametrize("permission", [pytest.param(p, id=p.value) for p in Permission])
def test_admin_may_do_everything_and_every_permission_has_an_admin(permission: Permission) -> None:
    assert can([Role.ADMIN], permission)
    assert holders(permission)[-1] == Role.ADMIN  # admin listed last in "who may"


@pytest.mark.parametrize("permission", [pytest.param(p, id=p.value) for p in Permission])
def test_viewer_may_only_report_escapes(permission: Permission) -> None:
    assert can([Role.VIEWER], permission) is (permission == P.REPORT_ESCAPE)


@pytest.mark.parametrize(
    ("roles", "permission", "allowed"),
    [
        pytest.param([], P.REPORT_ESCAPE, False, id="no-role-may-nothing"),
        pytest.param(["editor"], P.RESOLVE_ESCALATION, False, id="editor-cannot-resolve"),
        pytest.param(["compliance_officer"], P.START_RUN, False, id="officer-cannot-start"),
        pytest.param(["rubric_author"], P.DECIDE_FIX, False, id="author-cannot-decide"),
        pytest.param(["editor", "rubric_author"], P.EDIT_RUBRIC, True, id="roles-add-up-rubric"),
        pytest.param(["editor", "rubric_author"], P.START_RUN, True, id="roles-add-up-run"),
        pytest.param(["editor", "rubric_author"], P.ASSIGN, False, id="roles-add-up-no-more"),
        pytest.param(["viewer", "compliance_officer"], P.ASSIGN, True, id="viewer-plus-officer"),
        pytest.param(["admin", "viewer"], P.MANAGE_PEOPLE, True, id="viewer-does-not-subtract"),
    ],
)
def test_can_adds_roles_up(roles: list[str], permission: Permission, allowed: bool) -> None:
    assert can(roles, permission) is allowed


def test_system_actors_are_code_and_local_is_not_one() -> None:
    assert {"system", "worker", "gate", "auto-approve", "cli", "builtin"} == SYSTEM_ACTORS
    assert "local" not in SYSTEM_ACTORS


PATTERNS = {
    "compliance_officer": ["*@legal.example.com", "cfo@example.com"],
    "editor": "*@example.com",
    "rubric_author": ["*@legal.example.com"],
    "viewer": [],
}


@pytest.mark.parametrize(
    ("email", "expected"),
    [
        pytest.param("ann@example.com", {Role.EDITOR}, id="string-not-list"),
        pytest.param("ANN@Example.COM", {Role.EDITOR}, id="case-insensitive-address"),
        pytest.param("  ann@example.com ", {Role.EDITOR}, id="surrounding-space"),
        pytest.param("lee@legal.example.com", {Role.COMPLIANCE_OFFICER, Role.RUBRIC_AUTHOR}, id="several-roles"),
        pytest.param("cfo@example.com", {Role.COMPLIANCE_OFFICER, Role.EDITOR}, id="exact-and-glob"),
        pytest.param("ann@example.com.evil.org", set(), id="glob-is-anchored"),
        pytest.param("ann@legal.example.org", set(), id="other-domain"),
        pytest.param("", set(), id="empty"),
    ],
)
def test_roles_for_email(email: str, expected: set[Role]) -> None:
    assert roles_for_email(email, PATTERNS) == expected


def test_roles_for_email_pattern_case_is_ignored_too() -> None:
    assert roles_for_email("ann@legal.example.com", {"Compliance Officer": ["*@LEGAL.Example.com"]}) == {
        Role.COMPLIANCE_OFFICER
    }


def test_roles_for_email_unknown_role_is_named() -> None:
    with pytest.raises(ValueError, match="unknown role 'auditor'") as info:
        roles_for_email("ann@example.com", {"editor": "*", "auditor": "*"})
    assert "compliance_officer" in str(info.value)  # and it lists the roles there are


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(["Editor"], {Role.EDITOR}, id="case"),
        pytest.param(["compliance officer"], {Role.COMPLIANCE_OFFICER}, id="label-with-space"),
        pytest.param([" admin ", "admin"], {Role.ADMIN}, id="duplicates-and-space"),
        pytest.param([], set(), id="none"),
    ],
)
def test_parse_roles(values: list[str], expected: set[Role]) -> None:
    assert parse_roles(values) == expected


@pytest.mark.parametrize("bad", [pytest.param("superuser", id="unknown"), pytest.param("", id="empty")])
def test_parse_roles_refuses_an_unknown_role(bad: str) -> None:
    with pytest.raises(ValueError, match="unknown role"):
        parse_roles([bad])


@pytest.mark.parametrize(
    ("actor", "permission", "roles", "have", "may"),
    [
        pytest.param(
            "viewer@example.com", P.DECIDE_FIX, [Role.VIEWER], "(viewer)", "an editor or an admin", id="viewer-approves"
        ),
        pytest.param(
            "ed@example.com",
            P.RESOLVE_ESCALATION,
            [Role.EDITOR, Role.RUBRIC_AUTHOR],
            "(editor, rubric author)",
            "a compliance officer or an admin",
            id="two-roles",
        ),
        pytest.param("nobody", P.MANAGE_PEOPLE, [], "(no role)", "an admin", id="no-role"),
        pytest.param(
            "ann",
            P.PERSON_REVIEW,
            [Role.RUBRIC_AUTHOR],
            "(rubric author)",
            "an editor or a compliance officer or an admin",
            id="three-holders",
        ),
    ],
)
def test_permission_denied_names_actor_roles_and_who_may(
    actor: str, permission: Permission, roles: list[Role], have: str, may: str
) -> None:
    err = PermissionDenied(actor, permission, roles)
    text = str(err)
    assert text.startswith(f"{actor} {have} may not ")
    assert text.endswith(f"; {may} may.")
    assert who_may(permission) == may
    assert (err.actor, err.permission) == (actor, permission)
    assert isinstance(err, PermissionError)
