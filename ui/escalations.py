"""The escalation queue and the resolution form."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from santa_core.engine import InvalidTransition
from santa_core.models import RunStatus
from storage.repo import EscalationView
from ui import components, services
from ui.run_view import round_panel
from ui.safe import md

REASON_HELP = {
    "round_cap": "Still NAUGHTY after the last allowed round.",
    "reviewer_error": "A reviewer failed (error, timeout, refusal or invalid answer) after retries.",
    "budget": "The run spent its budget.",
    "rejected_fix": "A person rejected the fix proposal.",
    "injection": "The output contains text addressed to the reviewers.",
    "fix_failed": "The fix agent produced no edit that could be applied.",
}

RESOLUTIONS = {"ship_as_is": "Ship as is", "rereview": "Edit and send for fresh review", "reject": "Reject"}


def queue_table(items: list[EscalationView]) -> None:
    """Open escalations, oldest first."""
    rows = [{"run": e.run_id, "reason": e.reason.value, "why": REASON_HELP.get(e.reason.value, ""),
             "since": e.created_at, "round": e.round, "rubric": e.rubric_name} for e in items]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def resolution_form(item: EscalationView) -> None:
    """Show the run's evidence and record a person's resolution."""
    view = services.desk().repo.get_run_view(item.run_id)
    st.markdown(f"### Run #{view.id} · {md(item.reason.value)}")
    st.caption(REASON_HELP.get(item.reason.value, ""))
    st.page_link("pages/review.py", label=f"Open run #{view.id} with every round", icon="📜",
                 query_params={"run": str(view.id)})
    rnd = view.current_round
    if rnd is not None:
        with st.expander("Spec"):
            st.text(view.spec)
        st.markdown("**Output under decision** (what *Ship as is* ships)")
        st.code(rnd.output_text, language=None, wrap_lines=True)
        round_panel(view, rnd)
    choice = st.radio("Resolution", list(RESOLUTIONS), format_func=RESOLUTIONS.get, key=f"res_{item.id}",
                      horizontal=True)
    edited = None
    if choice == "rereview":
        edited = st.text_area("Output to send for fresh review", rnd.output_text if rnd else "",
                              height=240, key=f"res_text_{item.id}")
    why = st.text_area("Justification (required)", key=f"res_why_{item.id}")
    if st.button("Record resolution", type="primary", key=f"res_go_{item.id}"):
        _resolve(item, choice, why, edited)


def _resolve(item: EscalationView, choice: str, why: str, edited: str | None) -> None:
    if not why.strip():
        st.error("A justification is required: say why you decided this.")
        return
    desk = services.desk()
    try:
        state = desk.repo.resolve_escalation(item.run_id, choice, services.actor(), why, edited)
    except (ValueError, InvalidTransition) as exc:
        st.error(str(exc))
        return
    if state.status == RunStatus.QUEUED:
        desk.runner.submit(item.run_id)
    st.session_state["escalation_flash"] = f"Run #{item.run_id}: {components.status_label(state.status)}"
    st.rerun()
