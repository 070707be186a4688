"""Metrics: is the method working, and what does it cost? Figures over the stored history."""

import streamlit as st

from ui import app_desk, metrics_confidence, metrics_filters, metrics_headline, metrics_tabs, navigation
from ui.navigation import ensure_navigation

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

navigation.title("metrics", "Metrics")
st.caption(
    "First-pass rate, iterations to converge, where checks fail, how far the two reviewers agree, escapes, "
    "cost and latency, from every stored run. Each chart's definition is one click away and its data "
    "downloads as CSV; the filters, the open tab and the drill-down are kept in the URL, so a link shares the "
    "view."
)
store = app_desk.desk().metrics
options = store.options()
if options.first_day is None:
    metrics_filters.empty_history()
else:
    view = metrics_filters.filters(options)
    report = store.report(view.filters, view.grain)  # one report per rerun: every sum is done in SQL
    if report.empty:
        metrics_filters.nothing_matches()
    else:
        metrics_headline.headline(report)
        metrics_headline.warnings(report)
        metrics_headline.export(report, metrics_confidence.figures_for(report))  # one document with `metrics --json`
        metrics_tabs.tabs(report, view.filters)  # the open tab and its drill-down are in the URL too
