"""Rubrics: author versioned, objective, testable rubrics (`?rubric=<name>` opens one).

Everyone may read every rubric, its versions, diffs, files and suggestions; saving, importing and accepting or
dismissing a suggestion need the rubric-author role, asking a reviewer (Try it, Re-check) the right to try rubrics.
Storage refuses the same actions, so hiding the controls is for clarity, not for safety.
"""

import streamlit as st

from santa_core.roles import Permission
from ui import app_desk, identity, navigation, rubric_editor, rubric_suggestions, rubric_trials, rubric_versions
from ui.navigation import ensure_navigation
from ui.rubric_studio import draft_rubric, pick_rubric
from ui.safe import escape_markdown

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

navigation.title("rubrics", "Rubrics")
with st.expander("How rubrics work", expanded=False):
    st.markdown(
        "A **rubric** is the list of criteria both reviewers judge by. Each criterion states an objective "
        "**pass condition** and a **fail signal**, a **severity** (critical issues block shipping, suggestions "
        "do not) and optionally a **deterministic check** that runs before the reviewers. A rubric can "
        "**extend** others (a base plus domain extensions). Every save is a new **version** with your name, "
        "the time and a change note; runs keep the version they were judged by. Lint marks vague or broken "
        "criteria: errors block saving, warnings do not. See `docs/rubrics.md`."
    )
desk = app_desk.desk()
store = desk.rubrics
actor = identity.actor()
may_edit = identity.can(Permission.EDIT_RUBRIC)
try_refusal = None if identity.can(Permission.TRY_RUBRIC) else identity.refusal(Permission.TRY_RUBRIC)
name = pick_rubric(store, allow_new=may_edit, default=desk.defaults().rubric)
edit, versions, trial, files, recheck, learned = st.tabs(
    [
        ":material/edit: Edit" if may_edit else ":material/description: Criteria",
        ":material/history: Versions",
        ":material/science: Try it",
        ":material/swap_vert: Import / export",
        ":material/replay: Re-check history",
        ":material/lightbulb: Suggestions",
    ]
)
with edit:
    if may_edit:
        findings = rubric_editor.render(store, actor)
    else:
        findings = rubric_editor.read_only(store, identity.refusal(Permission.EDIT_RUBRIC))
with versions:
    if name:
        rubric_versions.versions_tab(store, name)
    else:
        st.info("Create the rubric first; its versions appear here.")
with trial:
    rubric, problem = draft_rubric(store, findings)
    rubric_trials.try_tab(desk, rubric, problem, actor, refusal=try_refusal)
with files:
    if name:
        rubric_versions.export_panel(store, name)
    st.divider()
    if may_edit:
        rubric_versions.import_panel(store, actor)
    else:
        st.info(escape_markdown(identity.refusal(Permission.EDIT_RUBRIC)))
with recheck:
    if name:
        rubric_trials.recheck_tab(desk, name, actor, refusal=try_refusal)
    else:
        st.info("Create the rubric first, then re-check past runs under it.")
with learned:
    if name:
        rubric_suggestions.suggestions_tab(
            desk, name, actor, refusal=None if may_edit else identity.refusal(Permission.EDIT_RUBRIC)
        )
    else:
        st.info("Create the rubric first; suggestions come from its runs.")
