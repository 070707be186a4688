"""Who is acting: sign-in through the OIDC provider (or the local user), their stored roles, what
they may do, and how a recorded actor is named on a page.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import streamlit as st

from santa_core import people as people_actions
from santa_core.people import PeopleError, PersonView
from santa_core.roles import DOING, LOCAL, ROLE_LABEL, NotSignedIn, Permission, Role, roles_for_email, who_may
from santa_core.roles import can as roles_can
from storage.db import database_url
from ui import access
from ui.access import auth_configured
from ui.app_desk import desk, desk_for
from ui.safe import escape_markdown


def role_patterns() -> dict:
    """E-mail patterns per role from the config (`[santa.roles]` in secrets.toml), e.g.
    `compliance_officer = ["*@legal.example.com"]`; applied when someone first signs in. A secrets file that
    cannot be read raises (`access.SecretsUnreadable`): it never reads as "no patterns"."""
    santa = access.secrets().get("santa", {})
    roles = santa.get("roles", {}) if isinstance(santa, Mapping) else {}
    return dict(roles) if isinstance(roles, Mapping) else {}


def signed_in() -> bool:
    """Whether a person signed in through the OIDC provider (st.user)."""
    return bool(st.user.get("is_logged_in", False))


def current_person() -> PersonView:
    """Who is acting: the signed-in person (registered on first sight, roles from the config's
    e-mail patterns), else, only where sign-in is not configured, the local user. Roles always come from the
    database. With sign-in configured and nobody signed in: NotSignedIn (nobody is not the local admin)."""
    people = desk().people
    if not signed_in():
        if auth_configured():
            raise NotSignedIn()
        person = people.get(LOCAL)
        if person is None:  # a database from before people existed cannot happen after migrate
            raise RuntimeError("the local user is missing; run the migrations")
        return person
    pid = signed_in_id()
    name = str(st.user.get("name") or pid)
    known = people.get(pid) if st.session_state.get("_santa_person") == pid else None
    if known is not None:  # one write per sign-in, not per rerun
        return known
    try:
        person = people_actions.sign_in(people, pid, name, pattern_roles(pid))
    except PeopleError as exc:
        st.error(f"You cannot use the desk with this sign-in: {escape_markdown(str(exc))}")
        st.stop()
    st.session_state["_santa_person"] = pid
    return person


def signed_in_id() -> str:
    """The id of the signed-in person: their e-mail address, lower-cased (so `Kim@` and `kim@` are
    one person), else `sub:<subject>` (prefixed, so no subject can pass for `local` or `cli`)."""
    email = str(st.user.get("email") or "").strip().casefold()
    if email:
        return email
    sub = str(st.user.get("sub") or "").strip()
    return f"sub:{sub}" if sub else ""


def pattern_roles(person_id: str) -> frozenset[Role]:
    """Roles from the config's e-mail patterns, only for an address the provider verified: where
    anyone may register any address, a pattern would otherwise hand out roles to strangers."""
    if st.user.get("email_verified") is not True:
        return frozenset()
    return roles_for_email(person_id, role_patterns())


def actor() -> str:
    """The id recorded on everything this person does: their e-mail, or `local` (only without sign-in)."""
    return current_person().id


def can(permission: Permission) -> bool:
    """Whether the acting person's roles allow the permission (pages hide what they may not do;
    the storage layer refuses it anyway)."""
    return roles_can(current_person().roles, permission)


def refusal(permission: Permission) -> str:
    """A sentence for a page section the acting person may not use."""
    person = current_person()
    have = ", ".join(ROLE_LABEL[r] for r in person.roles) or "no role"
    return f"You are acting as {person.label} ({have}). To {DOING[permission]} you need to be {who_may(permission)}."


def _label(person_id: str, name: str) -> str:
    """`Name <e-mail>` (just the id when the name is empty or the id), the local user as `Name (local)`."""
    if person_id == LOCAL:
        return f"{name} (local)"
    return person_id if not name or name == person_id else f"{name} <{person_id}>"


@st.cache_data(ttl=2, show_spinner=False)
def _labels(url: str) -> dict[str, str]:
    """Every person's label, read once per couple of seconds (pages name many actors per rerun)."""
    return {p.id: _label(p.id, p.name) for p in desk_for(url).people.all()}


@st.cache_data(ttl=2, show_spinner=False)
def _earlier_names(url: str) -> dict[str, list[tuple[datetime, str]]]:
    """Every renamed person's earlier names with the time each ended (from the audit trail's renames)."""
    return desk_for(url).people.earlier_names()


def display(actor_id: str) -> str:
    """A recorded actor as a person reads it: `Name <e-mail>`, the local user by their Settings
    name; system code and unknown ids as they are."""
    return _labels(database_url()).get(actor_id, actor_id)


def display_at(actor_id: str, when: datetime) -> str:
    """`display` with the name the actor had at `when` (a run's starter as they were named when it started):
    a later rename does not rewrite the record."""
    when = when if when.tzinfo else when.replace(tzinfo=UTC)  # stored times are UTC
    for until, name in _earlier_names(database_url()).get(actor_id, []):
        if when < until:
            # A person first named after the run started had no name to keep: their name now reads better.
            return _label(actor_id, name) if name else display(actor_id)
    return display(actor_id)


def forget_names() -> None:
    """After a rename on this page: the next name shown anywhere is the new one, not a cached one."""
    _labels.clear()
    _earlier_names.clear()


def require_sign_in() -> None:
    """With sign-in configured, nobody gets further than the sign-in button without signing in."""
    if auth_configured() and not signed_in():
        st.title(":material/rate_review: Santa — review desk")
        st.info("Sign in to review, decide and resolve. Your identity is recorded on everything you do.")
        st.button("Sign in", type="primary", on_click=st.login, key="sign_in")
        st.stop()


def identity_widget() -> None:
    """Sidebar: who is acting, with which roles; sign out when signed in."""
    person = current_person()
    roles = ", ".join(ROLE_LABEL[r] for r in person.roles) or "no role"
    if signed_in():
        st.caption(f"Signed in as **{escape_markdown(person.label)}** · {roles}")
        st.button("Sign out", on_click=st.logout, key="sign_out")
    else:
        st.caption(
            f"Acting as **{escape_markdown(person.name)}** (local user, {roles}). Set the name in Settings; "
            "configure sign-in for several people."
        )
