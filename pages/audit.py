"""Audit: every human action and state change, hash-chained; filter, inspect, verify, export."""

import streamlit as st

from ui import app_desk, audit, navigation
from ui.navigation import ensure_navigation

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

navigation.title("audit", "Audit")
st.caption(
    "Each event records who did what to which entity, when, the hashes of the entity before and after, "
    "and the hash of the event before it. Changing, removing, inserting or reordering a stored event "
    "breaks the chain from there on, and *Verify the chain* names the first broken link (also: "
    "`python -m santa_core audit verify`). Someone who rewrites the whole tail and the head together "
    "can only be caught against a hash noted elsewhere: Verify shows the newest hash to copy, and checks "
    "one you paste. Verify also recomputes every run, round, review, proposal, decision and escalation "
    "row against its seal in the chain and names any changed outside the desk."
)
audit.verify()
chosen = audit.filters(app_desk.desk().audit.facets())
if chosen is not None:
    selection = audit.events(chosen)  # leaves out the runs whose reviews are still blind
    audit.hidden_note(selection.hidden)
    audit.table(selection)
    if selection.items:
        with st.expander("One event in full"):
            audit.detail(selection.items)
