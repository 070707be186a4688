"""Process-wide services for the pages: the desk (repository + runner) and who is acting.

Kept out of `pages/` on purpose: Streamlit would list any module there as a page.
"""

from __future__ import annotations

import streamlit as st

from santa_core.config import Defaults, export_to_env
from storage.db import database_url
from storage.desk import Desk, open_desk
from ui.safe import md


def secrets_to_env() -> None:
    """Root-level secrets become environment variables (Streamlit does this too; done here
    explicitly so the key and DATABASE_URL are found however the app is started)."""
    try:
        values = dict(st.secrets.items())
    except Exception:  # noqa: BLE001 - no secrets file at all is fine
        return
    export_to_env(values)


@st.cache_resource(show_spinner="Opening the review desk…")
def _desk(url: str) -> Desk:
    """One desk per database URL per process; the URL is the cache key so tests can switch."""
    return open_desk(url)


def desk() -> Desk:
    """The desk for the configured database."""
    return _desk(database_url())


def defaults() -> Defaults:
    """Defaults for new runs: what the Settings page saved, else SANTA_* variables, else built-ins."""
    return desk().defaults()


def actor() -> str:
    """Who is acting: the signed-in user when sign-in is configured, else the name this browser
    session gave (self-declared until sign-in is set up), else the default from Settings."""
    if st.user.get("is_logged_in", False):
        return str(st.user.get("email") or st.user.get("name") or "signed-in user")
    return (st.session_state.get("actor_name") or "").strip() or defaults().display_name


def identity_widget() -> None:
    """Without sign-in, each person names themselves once per browser session (sidebar)."""
    if st.user.get("is_logged_in", False):
        return
    if "actor_name" not in st.session_state:  # read the saved default once per session, not per rerun
        st.session_state["actor_name"] = defaults().display_name
    st.text_input("Your name", key="actor_name", help="Recorded on every decision you make in this browser "
                  "session. Without sign-in configured, names are self-declared.")


def run_id_from_url() -> int | None:
    """The `run` query parameter as an int, or None."""
    raw = st.query_params.get("run")
    try:
        return int(raw) if raw else None
    except ValueError:
        st.error(f"{md(raw)} is not a run number.")
        return None
