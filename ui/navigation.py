"""Make sure app.py's navigation (and its gates) is in charge, even when a deep link is a process's first request."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from ui import access, identity

APP_RAN = "_santa_app_ran"

ICON = {
    "review": ":material/rate_review:",
    "batch": ":material/inventory_2:",
    "runs": ":material/list_alt:",
    "inbox": ":material/inbox:",
    "escalations": ":material/priority_high:",
    "audit": ":material/receipt_long:",
    "metrics": ":material/monitoring:",
    "rubrics": ":material/checklist:",
    "people": ":material/group:",
    "settings": ":material/settings:",
    "spot_checks": ":material/fact_check:",
}
"""Each page's icon (its url path → a Material icon): the page list and the page's own title show the same one.
Why Material icons: Streamlit bundles their font, so they draw on a machine without an emoji font, where an
emoji icon is an empty box."""


def title(page: str, text: str) -> None:
    """The page's heading, with the icon its entry in the page list has."""
    st.title(f"{ICON[page]} {text}")


def ensure_navigation() -> None:
    """Leave Streamlit's legacy pages/ mode for app.py's st.navigation, and apply app.py's gates to this page.

    Why: with a `pages/` folder, a fresh server process starts in the legacy multipage mode; if
    its first request is a deep link such as `/review?run=3`, Streamlit runs that page file
    directly, skipping app.py (no page config, no navigation, no sidebar). app.py's
    st.navigation switches the mode off for the whole process; here we do the same and rerun,
    so the rerun goes through app.py to the same page.

    The one private touch point of the app, kept here only: Streamlit 1.67 has no supported switch
    (no config option; `st.navigation` is the only public thing that clears the mode, and it runs
    in app.py, which a deep link skips). `tests/e2e/test_browser.py` starts a fresh server whose first
    request is a deep link and fails when an upgrade makes this stop working.
    """
    if PagesManager.uses_pages_directory and not st.session_state.get(APP_RAN):
        PagesManager.uses_pages_directory = False
        st.rerun()
    # app.py's gates hold for the page however it was reached (a page file run on its own, as AppTest's
    # switch_page does, skips app.py): secrets that cannot be read, no sign-in beyond loopback, the sign-in button.
    access.stop_if_refused(access.refusal())
    identity.require_sign_in()


def mark_app_ran() -> None:
    """Called by app.py: this session has been through the real navigation."""
    st.session_state[APP_RAN] = True
