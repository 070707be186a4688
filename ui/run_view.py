"""The run view of the Review page: the live part (header, progress, rounds) that polls while a worker is busy,
the actions a person can take, and the run's record."""

from __future__ import annotations

import streamlit as st

from santa_core import words
from santa_core.models import FINAL_STATUSES, EscalationReason, RunStatus
from santa_core.roles import Permission
from santa_core.run import actions
from storage.errors import RunNotFound
from storage.views import RunView
from ui import app_desk, decision_bar, identity, navigation, run_record, spot_checks
from ui.run_actions import act, final_panel, person_panel, try_again_panel
from ui.run_approval import approval_panel, stale_decision_notice
from ui.run_rounds import progress, run_header, timeline
from ui.safe import escape_markdown

ACTIVE = {RunStatus.QUEUED, RunStatus.RUNNING}


def actions_panel(view: RunView) -> None:
    """Whatever a person can do in the run's current state."""
    stale_decision_notice(view)
    status = view.status
    if status == RunStatus.AWAITING_APPROVAL:
        approval_panel(view)
    elif status in (RunStatus.AWAITING_HUMAN_REVIEW, RunStatus.RUNNING, RunStatus.QUEUED):
        person_panel(view)
    elif status == RunStatus.ESCALATED and view.state.escalation_reason == EscalationReason.PROVIDER_FAILED:
        try_again_panel(view)
    elif status == RunStatus.ESCALATED and view.escalation:
        st.warning(
            f"Escalated ({escape_markdown(words.reason(view.escalation.reason))}): a person decides on the "
            "Escalations page."
        )
        st.page_link(
            "pages/escalations.py",
            label="Open this escalation",
            icon=":material/priority_high:",
            query_params={"run": str(view.id)},
        )
    elif status == RunStatus.INTERRUPTED:
        st.warning(f"Interrupted: {escape_markdown(view.state.note)}. Nothing committed was lost.")
        if not identity.can(Permission.RESUME_RUN):
            st.info(escape_markdown(identity.refusal(Permission.RESUME_RUN)))
        elif st.button("Resume from the last committed step", key="resume_run"):
            act(lambda: actions.resume(app_desk.desk().runs, view.id, identity.actor()), view.id)
    if status in FINAL_STATUSES:
        final_panel(view)


LIVE_EVERY_S = 0.5
"""How often the page re-reads a run a worker is busy with (queued or running): a review or proposal shows
within about this long of being stored. Only the live part of the page reruns then."""


def poll_interval(status: RunStatus) -> float | None:
    """The live part's rerun interval: LIVE_EVERY_S while a worker is busy with the run, else none (a run
    waiting for a person changes when someone acts, and the page that acted reruns itself)."""
    return LIVE_EVERY_S if status in ACTIVE else None


def _load(run_id: int) -> RunView | None:
    try:
        return app_desk.desk().runs.get_run_view(run_id)
    except RunNotFound:
        st.error(f"Run #{run_id} does not exist.")
        st.page_link("pages/runs.py", label="See all runs", icon=":material/list_alt:")
        return None


def render_run(run_id: int) -> None:
    """The whole run view; its live part polls while a worker is busy with the run (`poll_interval`)."""
    view = _load(run_id)
    if view is None:
        return
    every = poll_interval(view.status)
    spot_check = spot_checks.judging_blind().get(run_id)  # a shipped run drawn for a blind spot-check
    first = [view]  # the full run hands its fresh view to the fragment; fragment reruns reload

    @st.fragment(run_every=every)
    def live() -> None:
        current = first.pop() if first else app_desk.desk().runs.get_run_view(run_id)
        if current.status != view.status and every is not None and current.status not in ACTIVE:
            st.rerun()  # the run stopped: redraw the whole page so the right actions show
        run_header(current)
        progress(current)
        if current.blind:
            # A person reviewer must judge blind: no other verdict, no earlier round, no fix.
            st.info("A person reviewer's slot is open: the run history stays hidden until the review is in.")
        elif spot_check:
            st.info(
                f"Spot-check #{spot_check} of this run is open and yours to judge: the reviewers' verdicts stay "
                "hidden from you until it is judged, so they cannot sway you."
            )
            st.page_link(
                "pages/spot_checks.py", label="Judge it on the Spot-checks page", icon=navigation.ICON["spot_checks"]
            )
        else:
            timeline(current)

    live()
    decision_bar.anchor(view)  # where the bar's link lands: the actions
    actions_panel(view)
    # Outside the fragment: these do not rerun while the run is watched, and the record is built only on a click.
    # Each shows only once it applies (a run that stops reruns the whole page, see `live`).
    shown = run_record.sections(view)
    if shown:
        st.divider()
    if "escapes" in shown:
        run_record.escapes_section(view)
    if "record" in shown and not spot_check:  # the record holds every review
        run_record.record_section(view)
