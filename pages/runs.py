"""Runs: the history of every run, newest first; open any run."""

import pandas as pd
import streamlit as st

from ui import app_desk, components
from ui.navigation import ensure_navigation

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

st.title("📜 Runs")
st.caption("Every run from the app and the command line. Open one to see its rounds, reviews and decisions.")
status = st.selectbox("Status", ["all", *components.STATUS_LABEL], format_func=lambda s: "all" if s == "all"
                      else components.status_label(s), key="runs_status")
runs = app_desk.desk().runs.list_runs(limit=500, status=None if status == "all" else status)
if not runs:
    st.info("No runs yet. Start one on the Review page or with `python -m santa_core review`.")
else:
    # A run waiting for a person reviewer shows no spend: it would tell them the other reviewer answered.
    blind = app_desk.desk().runs.blind_run_ids()
    table = pd.DataFrame([{
        "run": r.id, "status": components.status_label(r.status), "rubric": f"{r.rubric_name} v{r.rubric_version}",
        "rounds": r.rounds, "cost (USD)": None if r.id in blind else round(r.cost_usd, 6),
        "created": r.created_at, "by": r.created_by,
        "source": r.source, "escalation": r.escalation_reason.value if r.escalation_reason else "",
        "open": f"./review?run={r.id}",
    } for r in runs])
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={"open": st.column_config.LinkColumn("open", display_text="open run")})
    if blind & {r.id for r in runs}:
        st.caption("No cost is shown for runs waiting for a person reviewer until the reviews are in.")
    choice = st.selectbox("Open run", [r.id for r in runs], format_func=lambda i: f"#{i}", key="runs_open_id")
    if st.button("Open", key="runs_open"):
        st.switch_page("pages/review.py", query_params={"run": str(choice)})
