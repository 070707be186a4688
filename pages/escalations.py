"""Escalations: runs the method could not settle, waiting for a person's decision."""

import streamlit as st

from ui import services
from ui.bootstrap import ensure_navigation
from ui.escalations import queue_table, resolution_form

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

st.title("🚨 Escalations")
st.caption("A run escalates after the round cap, a reviewer failure, a budget stop, a rejected fix, "
           "an injection hit or a fix that could not be applied. Ship it as is (with a justification), "
           "edit it and send it for fresh review, or reject it. Every resolution is recorded.")
if flash := st.session_state.pop("escalation_flash", None):
    st.success(flash)
desk = services.desk()
open_items = desk.repo.list_escalations(status="open")
if not open_items:
    st.info("Nothing is escalated. 🎄")
else:
    queue_table(open_items)
    ids = [e.run_id for e in open_items]
    picked = st.selectbox("Escalated run", ids, format_func=lambda i: f"Run #{i}", key="esc_pick")
    resolution_form(next(e for e in open_items if e.run_id == picked))
with st.expander("Resolved escalations"):
    done = desk.repo.list_escalations(status="resolved")
    for e in done[:50]:
        st.text(f"Run #{e.run_id} · {e.reason.value} → {e.resolution} by {e.resolved_by}: {e.justification}")
