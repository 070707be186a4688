"""Saving the Settings page, through the core's actions: the whole page (Save settings, at the bottom), or one
section with the Save under it, which writes that section's settings only (the others keep what is saved)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from santa_core import people
from santa_core.config import Defaults, save_defaults
from santa_core.roles import PermissionDenied
from ui import app_desk, identity
from ui.safe import escape_markdown

SAVED = "set_saved"
"""Which save the last rerun follows (a section's key, or the whole page's), to say it next to its button."""
WHOLE = "set_save"


def save(values: dict[str, Any], defaults: Defaults, key: str) -> None:
    """Save `values` (setting → value) over `defaults`; the local user's name through `people.rename_local`. Reruns
    with a note by the button `key`, or shows the refusal (nothing saved)."""
    name = values.get("display_name")
    if name is not None and not name.strip():
        st.error("The display name is empty; decisions need a name.")
        return
    if name is not None:
        values = {**values, "display_name": name.strip()}
    try:
        new = Defaults.model_validate({**defaults.model_dump(), **values})
        if name is not None:
            people.rename_local(app_desk.desk().people, name, identity.actor())
        save_defaults(app_desk.desk().runs, new, identity.actor(), fields=list(values))
    except (PermissionDenied, ValueError) as exc:
        st.error(escape_markdown(str(exc)))
        return
    # The sidebar (drawn before this page) and every cached name show a new name at once.
    identity.forget_names()
    st.session_state[SAVED] = key
    st.rerun()


def saved_note(key: str) -> None:
    """After a save by the button `key`: say so there."""
    if st.session_state.get(SAVED) == key:
        del st.session_state[SAVED]
        st.success(
            "Saved. New runs and new escalations start from these defaults. A run's page keeps the names its "
            "starter and deciders had at the time."
            if key == WHOLE
            else "Saved; the other sections keep what was saved before."
        )


def section_save(label: str, key: str, values: dict[str, Any], defaults: Defaults, allowed: bool) -> None:
    """The Save under one section (for people who may edit settings): it saves that section's `values` only."""
    if allowed and st.button(f"Save {label}", key=key):
        save(values, defaults, key)
    saved_note(key)
