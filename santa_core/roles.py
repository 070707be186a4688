"""People's roles and what each role may do. Pure: the app and the storage layer both ask `can`.

Roles add up: a person with several roles may do what any of them may. `admin` may do
everything. Code paths that act on their own (the runner, the gate, auto-approve, the command
line run by whoever holds the database) are `SYSTEM_ACTORS`, not people.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from enum import StrEnum


class Role(StrEnum):
    EDITOR = "editor"
    COMPLIANCE_OFFICER = "compliance_officer"
    RUBRIC_AUTHOR = "rubric_author"
    VIEWER = "viewer"
    ADMIN = "admin"


class Permission(StrEnum):
    START_RUN = "start_run"
    DECIDE_FIX = "decide_fix"
    PERSON_REVIEW = "person_review"
    RESUME_RUN = "resume_run"
    RETRY_RUN = "retry_run"
    RESOLVE_ESCALATION = "resolve_escalation"
    ASSIGN = "assign"
    EDIT_RUBRIC = "edit_rubric"
    TRY_RUBRIC = "try_rubric"
    REPORT_ESCAPE = "report_escape"
    MANAGE_PEOPLE = "manage_people"
    EDIT_SETTINGS = "edit_settings"
    TEST_PROVIDERS = "test_providers"
    SPOT_CHECK = "spot_check"
    MANAGE_SPOT_CHECKS = "manage_spot_checks"


ROLE_LABEL: dict[Role, str] = {
    Role.EDITOR: "editor",
    Role.COMPLIANCE_OFFICER: "compliance officer",
    Role.RUBRIC_AUTHOR: "rubric author",
    Role.VIEWER: "viewer",
    Role.ADMIN: "admin",
}

DOING: dict[Permission, str] = {
    Permission.START_RUN: "start a run",
    Permission.DECIDE_FIX: "approve, edit or reject a fix",
    Permission.PERSON_REVIEW: "fill a person reviewer slot",
    Permission.RESUME_RUN: "resume an interrupted run",
    Permission.RETRY_RUN: "try a review again after the model provider failed",
    Permission.RESOLVE_ESCALATION: "resolve an escalation",
    Permission.ASSIGN: "assign escalations and reviewer slots or change due dates",
    Permission.EDIT_RUBRIC: "change rubrics",
    Permission.TRY_RUBRIC: "try a rubric with a reviewer",
    Permission.REPORT_ESCAPE: "report an escape",
    Permission.MANAGE_PEOPLE: "change people's roles",
    Permission.EDIT_SETTINGS: "change the settings",
    Permission.TEST_PROVIDERS: "test a model provider's connection",
    Permission.SPOT_CHECK: "judge a spot-check",
    Permission.MANAGE_SPOT_CHECKS: "change spot-check rules",
}
"""What each permission lets a person do, as the refusal message says it."""

_P = Permission
GRANTS: dict[Role, frozenset[Permission]] = {
    Role.VIEWER: frozenset({_P.REPORT_ESCAPE}),
    Role.EDITOR: frozenset(
        {_P.START_RUN, _P.DECIDE_FIX, _P.PERSON_REVIEW, _P.RESUME_RUN, _P.RETRY_RUN, _P.REPORT_ESCAPE, _P.SPOT_CHECK}
    ),
    # Why the officer too: Try again only asks the same question again, and the officer owns the escalation.
    Role.COMPLIANCE_OFFICER: frozenset(
        {_P.RESOLVE_ESCALATION, _P.ASSIGN, _P.PERSON_REVIEW, _P.RETRY_RUN, _P.REPORT_ESCAPE, _P.SPOT_CHECK}
    ),
    Role.RUBRIC_AUTHOR: frozenset({_P.EDIT_RUBRIC, _P.TRY_RUBRIC, _P.REPORT_ESCAPE, _P.MANAGE_SPOT_CHECKS}),
    Role.ADMIN: frozenset(Permission),
}
"""Every role may read everything; these are the actions on top."""

LOCAL = "local"
"""The one person of an install without sign-in; an admin, named in Settings. Where sign-in is configured it does
not act at all (`NotSignedIn`): nobody signed in is nobody, not an admin."""

SYSTEM_ACTORS = frozenset({"system", "worker", "gate", "auto-approve", "cli", "builtin"})
"""Actors that are code, not people. The app never acts as one of them: its actor is the
signed-in e-mail or `local`. The command line runs as `cli`: whoever can run it can open the
database file anyway, so roles would protect nothing there."""


def must_differ(person: str) -> bool:
    """Whether this person may fill only one of a round's two reviewer slots.

    Two reviews by one person are not independent, so normally the second slot needs someone
    else. The exception is `local`: an install without sign-in has exactly one person, and with
    no API key both slots are person slots; refusing would make such an install unusable. The
    run page and the verification record say so when one person filled both.
    """
    return person != LOCAL


DEFAULT_ROLES = frozenset({Role.VIEWER})
"""What a newly signed-in person gets when no e-mail pattern in the config matches them."""


class PermissionDenied(PermissionError):
    """The actor's roles do not allow the action. The message names who, what and which roles may."""

    def __init__(self, actor: str, permission: Permission, roles: Iterable[Role]) -> None:
        have = ", ".join(ROLE_LABEL[r] for r in sorted(roles)) or "no role"
        super().__init__(f"{actor} ({have}) may not {DOING[permission]}; {who_may(permission)} may.")
        self.actor = actor
        self.permission: Permission | None = permission  # None for NotSignedIn with no action named


class NotSignedIn(PermissionDenied):
    """Nobody is signed in where sign-in is configured. The local user acts only on a desk without sign-in, so
    there it is refused like anyone without a role: an anonymous visitor can do nothing."""

    def __init__(self, permission: Permission | None = None) -> None:
        doing = DOING[permission] if permission is not None else "use the desk"
        PermissionError.__init__(
            self,
            f"Nobody is signed in: sign in to {doing}. Sign-in is configured, so the local user does not act here.",
        )
        self.actor, self.permission = LOCAL, permission


def permissions(roles: Iterable[Role | str]) -> frozenset[Permission]:
    """Everything a person with these roles may do."""
    out: set[Permission] = set()
    for role in roles:
        out |= GRANTS.get(Role(role), frozenset())
    return frozenset(out)


def can(roles: Iterable[Role | str], permission: Permission) -> bool:
    """Whether any of the roles grants the permission."""
    return permission in permissions(roles)


def holders(permission: Permission) -> list[Role]:
    """The roles that grant a permission (admin last)."""
    return sorted((r for r, grants in GRANTS.items() if permission in grants), key=lambda r: r == Role.ADMIN)


def who_may(permission: Permission) -> str:
    """The roles that may, in words: "an editor or an admin"."""
    return " or ".join(("an " if ROLE_LABEL[r][0] in "aeiou" else "a ") + ROLE_LABEL[r] for r in holders(permission))


def parse_roles(values: Iterable[str]) -> frozenset[Role]:
    """Role names (as in the config or a form) to roles; ValueError names an unknown one."""
    out: set[Role] = set()
    for value in values:
        name = str(value).strip().lower().replace(" ", "_")
        if name not in Role.__members__.values():
            known = ", ".join(r.value for r in Role)
            raise ValueError(f"unknown role {value!r}; the roles are {known}")
        out.add(Role(name))
    return frozenset(out)


def role_patterns_problem(patterns: object) -> str | None:
    """Why `[santa.roles]` cannot be used ("unknown role 'administrator'…", "`admin` must be …"), else None: a table
    of known role names, each a pattern or a list of patterns (strings)."""
    if not isinstance(patterns, Mapping):
        return "must be a table of role = [e-mail patterns]"
    for role, globs in patterns.items():
        try:
            parse_roles([role])
        except ValueError as exc:
            return str(exc)
        if not isinstance(globs, str) and not (isinstance(globs, list) and all(isinstance(g, str) for g in globs)):
            return f'{role} must be an e-mail pattern or a list of them in quotes, e.g. ["*@example.com"]'
    return None


def roles_for_email(email: str, patterns: Mapping[str, Iterable[str]]) -> frozenset[Role]:
    """Roles whose e-mail patterns (shell-style, case-insensitive, e.g. `*@legal.example.com`) match."""
    address = email.strip().casefold()
    matched: set[Role] = set()
    for role, globs in patterns.items():
        if isinstance(globs, str):
            globs = [globs]
        if any(fnmatch.fnmatchcase(address, str(g).strip().casefold()) for g in globs):
            matched |= parse_roles([role])
    return frozenset(matched)
