"""Runs: the history of every run, newest first; open any run."""

import streamlit as st

from ui import navigation, run_list
from ui.navigation import ensure_navigation

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

navigation.title("runs", "Runs")
st.caption("Every run from the app and the command line. Open one to see its rounds, reviews and decisions.")
chosen = run_list.filters()
runs = run_list.runs(chosen)
if runs:
    run_list.table(runs)
else:
    run_list.nothing_listed(chosen)
