"""Review: start a run, then watch the method work on it (`?run=<id>` reopens any run)."""

import streamlit as st

from ui import app_desk, navigation, query
from ui.navigation import ensure_navigation
from ui.new_run import new_run_form
from ui.run_view import render_run

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

navigation.title("review", "Review")
run_id = query.run_id()
if run_id is None:
    with st.expander("How this works", expanded=False):
        st.markdown(
            "Paste the **spec** (what was asked for) and the **output** (what the AI produced), pick a "
            "**rubric** and two **reviewers**. Both review independently; both must PASS for the output to "
            "be **NICE**. Otherwise it is **NAUGHTY**: the fix agent proposes edits for the flagged issues "
            "only, you approve, edit or reject them, and fresh reviewers look again. After the round cap "
            "the run goes to the Escalations page."
        )
    new_id = new_run_form()
    if new_id is not None:
        app_desk.desk().runner.submit(new_id)
        st.query_params["run"] = str(new_id)
        st.rerun()
else:
    if st.button(":material/arrow_back: New review", key="new_review"):
        st.query_params.clear()
        st.rerun()
    render_run(run_id)
