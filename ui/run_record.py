"""A run's record, below the run: its verification record (JSON, HTML, PDF downloads) and the escapes
reported against it once it shipped.

Rendered outside the polling fragment: nothing here reruns while the run is watched, and the record is
built only when a download button is clicked (Streamlit calls the data callable then). Each section
shows only when it applies (`sections`): escapes once the run shipped, the record once the run is final.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from santa_core.models import FINAL_STATUSES, RunStatus
from santa_core.reports.record import to_json
from santa_core.reports.record_html import to_html
from santa_core.reports.record_pdf import to_pdf
from santa_core.roles import Permission, PermissionDenied
from santa_core.run import actions
from storage.errors import RunNotFound
from storage.escapes import SEVERITIES
from storage.records import RecordSource, verification_record
from storage.views import RunView
from ui import app_desk, components, identity
from ui.safe import escape_markdown

SHIPPED = (RunStatus.SHIPPED, RunStatus.RESOLVED_SHIPPED)
OTHER = "other"
"""The criterion of an escape that no rubric criterion covers."""

FORMATS: dict[str, tuple[str, str, Callable]] = {
    "json": ("JSON (exact, with hashes)", "application/json", to_json),
    "html": ("HTML (readable)", "text/html", to_html),
    "pdf": ("PDF (readable)", "application/pdf", to_pdf),
}


def _builder(repo: RecordSource, run_id: int, render: Callable) -> Callable[[], str | bytes]:
    """The download's data, built on click from the database (never from the page's snapshot).

    It runs on a thread of its own, so it holds the run store itself, not `app_desk`.
    """
    return lambda: render(verification_record(repo, run_id))


def record_section(view: RunView) -> None:
    """Download buttons for the run's verification record."""
    st.markdown("#### Verification record")
    if view.blind:
        # The record holds every review: it would show a person reviewer the other verdict.
        st.caption("Available once the person reviews of this round are in (the record holds every review).")
        return
    st.caption(
        "Everything that shows how this run's output came to be: spec, rubric, each round's output with "
        "its SHA-256, both reviews, diffs, every decision with actor and time, escalations, escapes and "
        "the run's audit events. The JSON is exact; HTML and PDF are readable copies."
    )
    repo = app_desk.desk().runs
    row = st.container(horizontal=True)  # buttons as wide as their words, wrapping at a narrow window
    for fmt, (label, mime, render) in FORMATS.items():
        row.download_button(
            label,
            data=_builder(repo, view.id, render),
            file_name=f"santa-run-{view.id}-record.{fmt}",
            mime=mime,
            key=f"record_{fmt}_{view.id}",
            on_click="ignore",
            icon=":material/download:",
        )


def escapes_list(view: RunView) -> None:
    """The escapes reported on the run."""
    if not view.escapes:
        st.caption("No escapes reported.")
        return
    rows = [
        {
            "reported": e.created_at.strftime("%Y-%m-%d %H:%M"),
            "by": identity.display_at(e.reported_by, e.created_at),
            "criterion": e.criterion,
            "severity": e.severity,
            "description": e.description,
        }
        for e in view.escapes
    ]
    components.full_table(pd.DataFrame(rows), wide=("description",), breakable=("by",))


def _criterion_label(view: RunView) -> Callable[[str], str]:
    names = {c.id: f"{c.name} ({c.id})" for c in view.rubric.criteria}
    return lambda cid: names.get(cid, "other (no criterion of the rubric)")


def escape_form(view: RunView) -> None:
    """Report a defect found after shipping: criterion, description, severity."""
    key = f"escape_{view.id}"
    if st.session_state.pop(f"{key}_done", False):
        st.session_state.pop(f"{key}_description", None)  # reported: start the next one empty
        st.success("Escape reported and recorded on this run; it will count in the escape rate.")
    criterion = st.selectbox(
        "Criterion the defect falls under",
        [*view.rubric.criterion_ids(), OTHER],
        format_func=_criterion_label(view),
        key=f"{key}_criterion",
    )
    description = st.text_area(
        "What is wrong, and where",
        key=f"{key}_description",
        placeholder="e.g. the launch year in the second sentence is wrong",
    )
    severity = st.radio("Severity", SEVERITIES, horizontal=True, key=f"{key}_severity")
    if not st.button("Report escape", key=f"{key}_submit"):
        return
    try:
        actions.report_escape(app_desk.desk().runs, view.id, criterion, description, severity, identity.actor())
    except (PermissionDenied, RunNotFound, ValueError) as exc:
        st.error(escape_markdown(str(exc)))  # the typed description stays in its box
        return
    st.session_state[f"{key}_done"] = True
    st.rerun()


def sections(view: RunView) -> list[str]:
    """Which of the sections below apply to the run as it stands: "escapes" once its output shipped (an escape
    is a defect found after shipping), "record" once it is final (while it is reviewed, fixed or escalated its
    story is still being written; the Escalations page and the audit trail show it meanwhile)."""
    shown = []
    if view.status in SHIPPED or view.escapes:
        shown.append("escapes")
    if view.status in FINAL_STATUSES:
        shown.append("record")
    return shown


def escapes_section(view: RunView) -> None:
    """The run's escapes, and the form to report one once the run shipped."""
    st.markdown(
        "#### Escapes",
        help="An escape is a defect found after the output shipped; each one counts in the escape rate (Metrics).",
    )
    escapes_list(view)
    if view.status not in SHIPPED:
        return
    if not identity.can(Permission.REPORT_ESCAPE):
        st.info(escape_markdown(identity.refusal(Permission.REPORT_ESCAPE)))  # names come from sign-in: escaped
        return
    with st.expander("Report an escape", expanded=False):
        escape_form(view)
