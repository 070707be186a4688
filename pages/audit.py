"""Audit: every human action and state change, hash-chained; filter, inspect, verify, export."""

import streamlit as st

from ui import audit, services
from ui.bootstrap import ensure_navigation

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

st.title("📒 Audit")
st.caption("Each event records who did what to which entity, when, the hashes of the entity before and after, "
           "and the hash of the event before it. Changing, removing or reordering any stored event breaks the "
           "chain from there on; *Verify the chain* recomputes it. Also: `python -m santa_core audit verify`.")
audit.verify()
chosen = audit.filters(services.desk().repo.audit.facets())
if chosen is not None:
    items = audit.events(chosen)
    if not items:
        st.info("No audit event matches these filters.")
    else:
        audit.table(items)
        with st.expander("One event in full"):
            audit.detail(items)
