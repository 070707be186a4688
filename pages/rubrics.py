"""Rubrics: author versioned, objective, testable rubrics (`?rubric=<name>` opens one)."""

import streamlit as st

from ui import rubric_editor, rubric_trials, rubric_versions, services
from ui.bootstrap import ensure_navigation
from ui.rubric_studio import draft_rubric, pick_rubric

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

st.title("📋 Rubrics")
with st.expander("How rubrics work", expanded=False):
    st.markdown(
        "A **rubric** is the list of criteria both reviewers judge by. Each criterion states an objective "
        "**pass condition** and a **fail signal**, a **severity** (critical issues block shipping, suggestions "
        "do not) and optionally a **deterministic check** that runs before the reviewers. A rubric can "
        "**extend** others (a base plus domain extensions). Every save is a new **version** with your name, "
        "the time and a change note; runs keep the version they were judged by. Lint marks vague or broken "
        "criteria: errors block saving, warnings do not. See `docs/rubrics.md`."
    )
desk = services.desk()
store = desk.repo.rubrics
actor = services.actor()
name = pick_rubric(store)
edit, versions, trial, files, recheck = st.tabs(["✏️ Edit", "🕓 Versions", "🧪 Try it", "⇅ Import / export",
                                                 "🔁 Re-check history"])
with edit:
    findings = rubric_editor.render(store, actor)
with versions:
    if name:
        rubric_versions.versions_tab(store, name)
    else:
        st.info("Create the rubric first; its versions appear here.")
with trial:
    rubric, problem = draft_rubric(store, findings)
    rubric_trials.try_tab(desk, rubric, problem, actor)
with files:
    if name:
        rubric_versions.export_panel(store, name)
    st.divider()
    rubric_versions.import_panel(store, actor)
with recheck:
    if name:
        rubric_trials.recheck_tab(desk, name, actor)
    else:
        st.info("Create the rubric first, then re-check past runs under it.")
