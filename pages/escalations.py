"""Escalations: runs the method could not settle, waiting for a person's decision."""

import streamlit as st

from ui import app_desk, clock, escalation_panel, escalation_queue, navigation
from ui.navigation import ensure_navigation

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

navigation.title("escalations", "Escalations")
st.caption(
    "A run escalates after the round cap, a reviewer failure, a budget stop, a rejected fix, an injection "
    "hit, a fix that could not be applied, or reviewers who disagree on a critical criterion at the cap. "
    "Ship it as is (with a justification), edit it and send it for fresh review, or reject it. "
    "Every assignment and resolution is recorded in the audit trail."
)
if flash := st.session_state.pop(escalation_panel.FLASH, None):
    st.success(flash)
repo = app_desk.desk().runs
now = clock.now()
open_items = repo.list_escalations(status="open")
escalation_panel.stale_click_notice({e.id for e in open_items})
if not open_items:
    st.info("Nothing is escalated.")
else:
    escalation_queue.counts(open_items, now)
    shown = escalation_queue.filtered(open_items, now)
    if not shown:
        st.info("No open escalation matches these filters.")
    else:
        escalation_panel.escalation_panel(escalation_queue.pick(shown, now), now)  # a click on a queue row opens it
st.subheader("Resolved escalations")
escalation_queue.resolved_table(repo.list_escalations(status="resolved")[-200:])
