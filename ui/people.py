"""The People page: everyone with their roles; admins add people and set roles."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from santa_core import people as people_actions
from santa_core.people import PersonView
from santa_core.roles import DOING, GRANTS, LOCAL, ROLE_LABEL, Permission, PermissionDenied, Role
from ui import app_desk, components, identity
from ui.safe import escape_markdown

NEW = "__new__"
FLASH = "people_flash"
RESET = "people_reset"


def people_table(people: list[PersonView]) -> None:
    """Everyone the desk knows, with their roles and who last changed them."""
    rows = [
        {
            "id": p.id,
            "name": p.name,
            "roles": ", ".join(ROLE_LABEL[r] for r in p.roles) or "no role",
            "since": f"{p.created_at:%Y-%m-%d}",
            "changed": f"{p.updated_at:%Y-%m-%d %H:%M} UTC",
            "by": identity.display(p.updated_by) if p.updated_by else "",
        }
        for p in people
    ]
    components.full_table(pd.DataFrame(rows), wide=("name", "roles"), breakable=("id", "by"))  # fits at 1,024 px


def roles_table() -> None:
    """What each role may do (every role may read everything)."""
    rows = [
        {
            "role": ROLE_LABEL[role],
            "may": "everything"
            if role == Role.ADMIN
            else "; ".join(DOING[p] for p in Permission if p in grants) or "read only",
        }
        for role, grants in GRANTS.items()
    ]
    components.full_table(pd.DataFrame(rows), wide=("may",))


def _label(pid: str, people: dict[str, PersonView]) -> str:
    if pid == NEW:
        return "+ someone new (by e-mail)"
    person = people[pid]
    return f"{person.name} (local user)" if pid == LOCAL else person.label


def role_form(people: list[PersonView]) -> None:
    """Add a person by e-mail or change someone's roles; storage refusals are shown as errors."""
    by_id = {p.id: p for p in people}
    if st.session_state.pop(RESET, False):
        # After adding someone, the next "someone new" starts empty: left as it was, the form would
        # hand the previous person's roles to the next address typed. Set to empty, not deleted: a
        # deleted key empties the value on the server only, and the browser kept showing the old address.
        st.session_state.update({"people_email": "", "people_name": "", f"people_roles_{NEW}": []})
    pid = st.selectbox("Person", [NEW, *by_id], format_func=lambda i: _label(i, by_id), key="people_pick")
    if pid == NEW:
        email = st.text_input("E-mail address (what they sign in with)", key="people_email")
        name = st.text_input("Name (optional; their sign-in name replaces it)", key="people_name")
        current: list[Role] = []
    else:
        email, name, current = pid, None, by_id[pid].roles
    # None, not []: a default beside a value set through session state (the reset above) logs a warning
    roles = st.multiselect(
        "Roles",
        list(Role),
        default=current or None,
        format_func=lambda r: ROLE_LABEL[Role(r)],
        key=f"people_roles_{pid}",
    )
    if st.button("Save roles", type="primary", key="people_save"):
        _save(email, roles, name)


def _save(email: str, roles: list[Role], name: str | None) -> None:
    if not email.strip():
        st.error("Say whose roles to set: enter their e-mail address.")
        return
    try:
        person = people_actions.set_roles(app_desk.desk().people, email, roles, identity.actor(), name=name)
    except (PermissionDenied, ValueError) as exc:
        st.error(escape_markdown(str(exc)))
        return
    have = ", ".join(ROLE_LABEL[r] for r in person.roles) or "no role (they may read everything but do nothing)"
    st.session_state[FLASH] = f"{person.label}: {have}"
    st.session_state[RESET] = True
    st.rerun()
