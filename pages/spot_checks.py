"""Spot-checks: a seeded random share of shipped runs, judged blind by a person; misses become escapes."""

import streamlit as st

from ui import app_desk, clock, navigation, spot_checks, spot_rules
from ui.navigation import ensure_navigation

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

navigation.title("spot_checks", "Spot-checks")
st.caption(
    "Rules draw a share of each rubric's shipped runs at random (seeded, recorded, never chosen by a person). "
    "Judge the shipped text blind, criterion by criterion: the reviewers' verdicts show after you submit, "
    "and each failed criterion becomes an escape traced to the reviewers that passed it. "
    "See `docs/spot-checks.md`."
)
spot_checks.flash()
now = clock.now()
shown = spot_checks.queue(app_desk.desk().runs.spot_checks.spot_checks(), now)
if picked := spot_checks.pick(shown):
    spot_checks.spot_check_panel(picked)
    spot_rules.assignment(picked)
st.subheader("Rules")
spot_rules.rules_editor()
