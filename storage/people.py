"""People and their roles, and the check every refusing store method makes.

`require(session, actor, permission)` is called inside the write transaction of each human
action (approve a fix, resolve an escalation, save a rubric, ...), so the refusal does not
depend on the page having hidden the button: a viewer calling the storage directly is refused
too. The roles read are the stored ones, never what the caller claims; the local user acts only
on a database opened without sign-in.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlmodel import Session, col, select

from santa_core.people import PeopleError, PersonView
from santa_core.roles import (
    DEFAULT_ROLES,
    LOCAL,
    SYSTEM_ACTORS,
    NotSignedIn,
    Permission,
    PermissionDenied,
    Role,
    can,
    parse_roles,
)
from storage import audit
from storage.hashing import json_hash
from storage.tables import AuditEventRow, PersonRow
from storage.times import utc, utcnow
from storage.transactions import LOCAL_USER_ACTS, StoreBase

MAX_NAME_CHARS = 200
RENAMED = "person.renamed"
"""The audit action of a name change, with the name before and after: what `earlier_names` reads."""

RESERVED_IDS = frozenset(a.casefold() for a in (*SYSTEM_ACTORS, LOCAL))
"""Ids no signed-in person may have: acting as one would pass for system code or the local admin."""


def normal_id(person_id: str) -> str:
    """A person id as stored: an e-mail address lower-cased (so `Kim@` and `kim@` are one person);
    a `sub:<subject>` id kept as it is (subjects are case-sensitive)."""
    person_id = person_id.strip()
    return person_id if person_id.startswith("sub:") else person_id.casefold()


def _view(row: PersonRow) -> PersonView:
    return PersonView(
        id=row.id,
        name=row.name,
        roles=sorted(parse_roles(row.roles)),
        created_at=utc(row.created_at),
        updated_at=utc(row.updated_at),
        updated_by=row.updated_by,
    )


def roles_of(s: Session, actor: str) -> frozenset[Role]:
    """The stored roles of a person (empty for someone unknown)."""
    row = s.get(PersonRow, actor)
    return frozenset() if row is None else parse_roles(row.roles)


def require(s: Session, actor: str, permission: Permission) -> None:
    """Refuse (PermissionDenied) unless the actor is system code or a person whose roles allow it. The local user
    is refused (NotSignedIn) where the database was opened with sign-in (`Database.local_user` False): an
    anonymous visitor of such a desk must never act as its local admin, whatever the page hands down."""
    if actor in SYSTEM_ACTORS:
        return
    if actor == LOCAL and not s.info.get(LOCAL_USER_ACTS, False):  # a session of unknown origin: refused too
        raise NotSignedIn(permission)
    roles = roles_of(s, actor)
    if not can(roles, permission):
        raise PermissionDenied(actor, permission, roles)


class RoleCheck(StoreBase):
    """A store whose actions may be refused before their work starts: an action that pays for a model call asks
    `require` first, so a refusal comes before the request leaves, not when its answer is kept."""

    def require(self, actor: str, permission: Permission) -> None:
        """Refuse (PermissionDenied) unless the actor is system code or a person whose stored roles allow it."""
        with self._read() as s:
            require(s, actor, permission)


class PeopleStore(RoleCheck):
    """Who may act, with which roles (implements `santa_core.people.Store`)."""

    def get(self, person_id: str) -> PersonView | None:
        """The person, or None."""
        with self._read() as s:
            row = s.get(PersonRow, person_id)
            return None if row is None else _view(row)

    def all(self) -> list[PersonView]:
        """Everyone, `local` first, then by id."""
        with self._read() as s:
            rows = s.exec(select(PersonRow)).all()
            return sorted((_view(r) for r in rows), key=lambda p: (p.id != LOCAL, p.id))

    def with_permission(self, permission: Permission) -> list[PersonView]:
        """People whose roles allow the permission (for owner and reviewer pickers)."""
        return [p for p in self.all() if can(p.roles, permission)]

    def earlier_names(self) -> dict[str, list[tuple[datetime, str]]]:
        """Per person who was renamed: (until, name), oldest first: the name they had until that time.

        Why from the audit trail: a record keeps who acted as they were named then (a run's "started by"
        stays as it was when the run started, whatever the person is called now); every rename is audited.
        """
        stmt = (
            select(AuditEventRow.entity_id, AuditEventRow.created_at, AuditEventRow.detail)
            .where(AuditEventRow.action == RENAMED)
            .order_by(col(AuditEventRow.seq))
        )
        names: dict[str, list[tuple[datetime, str]]] = {}
        with self._read() as s:
            for person_id, at, detail in s.exec(stmt).all():
                before = (detail or {}).get("before")
                if isinstance(before, str):
                    names.setdefault(person_id, []).append((utc(at), before))
        return names

    def sign_in(self, person_id: str, name: str, pattern_roles: Iterable[Role] = ()) -> PersonView:
        """Register a signed-in person on first sight (roles from the config's e-mail patterns,
        else viewer); later sign-ins only refresh the name (audited). Roles an admin set are never
        overwritten. The id is stored as given (the caller casefolds e-mail addresses); the ids of
        system code and `local` are refused."""
        person_id, name = normal_id(person_id), name.strip()[:MAX_NAME_CHARS]
        if not person_id:
            raise PeopleError("a signed-in person needs an e-mail address or subject")
        if person_id.casefold() in RESERVED_IDS:
            raise PeopleError(
                f"{person_id!r} is reserved for the desk itself (the local user or system code); "
                "sign in with an account whose e-mail address or subject is not one of "
                + ", ".join(sorted(RESERVED_IDS))
            )
        with self._tx() as s:
            row = s.get(PersonRow, person_id)
            if row is None:
                roles = sorted(frozenset(pattern_roles) or DEFAULT_ROLES)
                row = PersonRow(id=person_id, name=name, roles=[r.value for r in roles], updated_by="system")
                s.add(row)
                audit.append(
                    s,
                    person_id,
                    "person.signed_in_first",
                    "person",
                    person_id,
                    after=json_hash(row.roles),
                    detail={"name": name, "roles": row.roles},
                )
            elif name and row.name != name:
                before, row.name, row.updated_at = row.name, name, utcnow()
                s.add(row)
                audit.append(s, person_id, RENAMED, "person", person_id, detail={"before": before, "after": name})
            s.flush()
            return _view(row)

    def set_roles(self, person_id: str, roles: Iterable[Role | str], actor: str, name: str | None = None) -> PersonView:
        """An admin sets a person's roles (adding the person when new); the last admin cannot lose admin."""
        wanted = sorted(parse_roles(roles))
        person_id = normal_id(person_id)
        if not person_id:
            raise PeopleError("say whose roles to set (an e-mail address)")
        if person_id in RESERVED_IDS - {LOCAL}:
            raise PeopleError(f"{person_id!r} is system code, not a person; it has no roles")
        if person_id == LOCAL and Role.ADMIN not in wanted:
            # Why: `local` acts only where there is no sign-in, and there it is the only person; an
            # admin elsewhere (an e-mail that cannot sign in) could never give admin back.
            raise PeopleError("the local user stays an admin: without sign-in it is the only person who can act")
        with self._tx() as s:
            require(s, actor, Permission.MANAGE_PEOPLE)
            row = s.get(PersonRow, person_id)
            before = None if row is None else sorted(row.roles)
            if row is None:
                row = PersonRow(id=person_id, name=(name or "").strip()[:MAX_NAME_CHARS], roles=[])
            if Role.ADMIN in parse_roles(row.roles) and Role.ADMIN not in wanted and self._admins(s) <= 1:
                raise PeopleError(f"{person_id} is the only admin; make someone else admin first")
            row.roles, row.updated_at, row.updated_by = [r.value for r in wanted], utcnow(), actor
            if name is not None and name.strip() and row.name != name.strip()[:MAX_NAME_CHARS]:
                if before is not None and row.name:  # a known person's new name: audited like every rename
                    audit.append(
                        s,
                        actor,
                        RENAMED,
                        "person",
                        person_id,
                        detail={"before": row.name, "after": name.strip()[:MAX_NAME_CHARS]},
                    )
                row.name = name.strip()[:MAX_NAME_CHARS]
            s.add(row)
            audit.append(
                s,
                actor,
                "person.roles_set",
                "person",
                person_id,
                before=None if before is None else json_hash(before),
                after=json_hash(row.roles),
                detail={"before": before, "after": row.roles},
            )
            s.flush()
            return _view(row)

    def rename_local(self, name: str, actor: str) -> None:
        """The local user's display name (Settings)."""
        name = name.strip()[:MAX_NAME_CHARS]
        if not name:
            raise PeopleError("the display name is empty")
        with self._tx() as s:
            require(s, actor, Permission.EDIT_SETTINGS)
            row = s.get(PersonRow, LOCAL)
            if row is None or row.name == name:
                return
            before, row.name, row.updated_at, row.updated_by = row.name, name, utcnow(), actor
            s.add(row)
            audit.append(s, actor, RENAMED, "person", LOCAL, detail={"before": before, "after": name})

    @staticmethod
    def _admins(s: Session) -> int:
        return sum(Role.ADMIN.value in r.roles for r in s.exec(select(PersonRow)).all())
