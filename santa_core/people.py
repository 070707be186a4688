"""People: who may act on the desk, and the one door through which their roles and names change.

`storage.people.PeopleStore` implements `Store`; roles always come from what it stored, never from
what a caller claims (`santa_core.roles` says what each role may do).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel

from santa_core.roles import Permission, Role


class PersonView(BaseModel):
    """A person as the pages show them."""

    id: str
    name: str
    roles: list[Role]
    created_at: datetime
    updated_at: datetime
    updated_by: str

    @property
    def label(self) -> str:
        """Name and id, e.g. `Ann Lee <ann@example.com>` (just the id when they are the same)."""
        return self.id if not self.name or self.name == self.id else f"{self.name} <{self.id}>"


class PeopleError(ValueError):
    """A change to people that cannot be made (unknown role, the last admin, an empty id)."""


class Store(Protocol):
    """What the people pages and actions read and write through."""

    def get(self, person_id: str) -> PersonView | None:
        """The person, or None."""
        ...

    def all(self) -> list[PersonView]:
        """Everyone, `local` first."""
        ...

    def with_permission(self, permission: Permission) -> list[PersonView]:
        """People whose roles allow the permission."""
        ...

    def require(self, actor: str, permission: Permission) -> None:
        """Refuse (PermissionDenied) an actor whose stored roles do not allow the permission; writes nothing."""
        ...

    def sign_in(self, person_id: str, name: str, pattern_roles: Iterable[Role] = ()) -> PersonView:
        """Register a signed-in person on first sight; later, refresh the name."""
        ...

    def set_roles(self, person_id: str, roles: Iterable[Role | str], actor: str, name: str | None = None) -> PersonView:
        """An admin sets a person's roles (adding the person when new)."""
        ...

    def rename_local(self, name: str, actor: str) -> None:
        """Rename the local user of an install without sign-in."""
        ...


def sign_in(store: Store, person_id: str, name: str, pattern_roles: Iterable[Role] = ()) -> PersonView:
    """A person signed in through the identity provider: registered on first sight (roles from the e-mail
    patterns, else viewer), their name refreshed later."""
    return store.sign_in(person_id, name, pattern_roles)


def set_roles(
    store: Store, person_id: str, roles: Iterable[Role | str], actor: str, name: str | None = None
) -> PersonView:
    """An admin gives a person these roles (adding the person when new); the last admin keeps admin."""
    return store.set_roles(person_id, roles, actor, name=name)


def rename_local(store: Store, name: str, actor: str) -> None:
    """The local user's display name (an install without sign-in)."""
    store.rename_local(name, actor=actor)
