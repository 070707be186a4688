"""The escalation queue: filters, the table, one escalation's evidence, assignment and resolution.

Every control is shown only to people whose roles allow it (services.can); the storage layer
refuses the rest anyway, and its refusals are shown, never swallowed. Due times are compared
with services.now() so tests can move the clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
import streamlit as st

from santa_core.engine import InvalidTransition
from santa_core.models import EscalationReason, RunStatus
from santa_core.roles import Permission, PermissionDenied
from storage.repo import EscalationNotOpen, EscalationView, RunView
from ui import components, services
from ui.run_view import round_panel, timeline
from ui.safe import md

REASON_HELP = {
    "round_cap": "Still NAUGHTY after the last allowed round.",
    "reviewer_error": "A reviewer failed (error, timeout, refusal or invalid answer) after retries.",
    "budget": "The run spent its budget.",
    "rejected_fix": "A person rejected the fix proposal.",
    "injection": "The output contains text addressed to the reviewers.",
    "fix_failed": "The fix agent produced no edit that could be applied.",
    "disagreement": "Still NAUGHTY at the round cap and the reviewers disagree on a critical criterion: "
                    "the rubric may need tightening.",
}

RESOLUTIONS = {"ship_as_is": "Ship as is", "rereview": "Edit and send for fresh review", "reject": "Reject"}

OWNER_ANYONE, OWNER_ME, OWNER_NOBODY = "anyone", "me", "unassigned"
ALL_RUBRICS = "all rubrics"

SORTS: dict[str, Callable[[EscalationView], Any]] = {
    "age (oldest first)": lambda e: e.created_at,
    "due (soonest first)": lambda e: (e.due_at is None, e.due_at or datetime.max.replace(tzinfo=UTC)),
    "reason": lambda e: (e.reason.value, e.created_at),
    "owner": lambda e: (e.owner is None, e.owner or "", e.created_at),
    "rubric": lambda e: (e.rubric_name, e.rubric_version, e.created_at),
}
"""How the queue can be ordered; each key breaks ties by age."""

STORAGE_ERRORS = (PermissionDenied, ValueError, InvalidTransition, EscalationNotOpen)
"""What a storage call may refuse with; shown to the person, never a traceback."""

FLASH = "escalation_flash"


# --- pure helpers ------------------------------------------------------------------------------

def age(since: datetime, now: datetime) -> str:
    """How long ago, in the largest sensible unit: "45 min", "5 h", "3 d"."""
    minutes = max(0, int((now - since).total_seconds() // 60))
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h" if minutes < 48 * 60 else f"{minutes // (24 * 60)} d"


def when(value: datetime | None) -> str:
    """A time as the queue shows it (UTC), or a dash."""
    return "—" if value is None else f"{value.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def matches(item: EscalationView, reasons: list[str], owner: str, me: str, rubric: str) -> bool:
    """Whether an escalation passes the queue's filters (empty reasons: every reason)."""
    if reasons and item.reason.value not in reasons:
        return False
    if owner == OWNER_ME and item.owner != me:
        return False
    if owner == OWNER_NOBODY and item.owner is not None:
        return False
    if owner not in (OWNER_ANYONE, OWNER_ME, OWNER_NOBODY) and item.owner != owner:
        return False
    return rubric == ALL_RUBRICS or item.rubric_name == rubric


def queue_frame(items: list[EscalationView], now: datetime) -> pd.DataFrame:
    """One row per open escalation, in the given order."""
    rows = [{"run": e.run_id, "reason": e.reason.value, "age": age(e.created_at, now),
             "owner": services.display(e.owner) if e.owner else "unassigned", "due": when(e.due_at),
             "overdue": "⚠ overdue" if e.overdue(now) else "", "rubric": f"{e.rubric_name} v{e.rubric_version}",
             "round": e.round, "why": REASON_HELP.get(e.reason.value, "")} for e in items]
    columns = ["run", "reason", "age", "owner", "due", "overdue", "rubric", "round", "why"]
    return pd.DataFrame(rows, columns=columns)


def _highlight_overdue(row: pd.Series) -> list[str]:
    style = "background-color: #ffd9d9; color: #7a0000" if row["overdue"] else ""
    return [style] * len(row)


# --- the queue ---------------------------------------------------------------------------------

def counts(items: list[EscalationView], now: datetime) -> None:
    """"N open, M overdue" above the queue."""
    overdue = sum(e.overdue(now) for e in items)
    (st.error if overdue else st.markdown)(f"🚨 {len(items)} open, {overdue} overdue")


def filtered(items: list[EscalationView]) -> list[EscalationView]:
    """The filter and sort controls; the escalations they select, in their order."""
    me = services.actor()
    owners = sorted({e.owner for e in items if e.owner and e.owner != me})
    rubrics = sorted({e.rubric_name for e in items})
    c1, c2, c3, c4 = st.columns([3, 2, 2, 2])
    reasons = c1.multiselect("Reason", [r.value for r in EscalationReason], key="esc_f_reason",
                             placeholder="every reason")
    owner = c2.selectbox("Owner", [OWNER_ANYONE, OWNER_ME, OWNER_NOBODY, *owners], key="esc_f_owner",
                         format_func=lambda o: o if o in (OWNER_ANYONE, OWNER_ME, OWNER_NOBODY) else services.display(o))
    rubric = c3.selectbox("Rubric", [ALL_RUBRICS, *rubrics], key="esc_f_rubric")
    order = c4.selectbox("Sort by", list(SORTS), key="esc_sort")
    chosen = [e for e in items if matches(e, reasons, owner, me, rubric)]
    return sorted(chosen, key=SORTS[order])


def queue_table(items: list[EscalationView], now: datetime) -> None:
    """The queue, overdue rows highlighted (and flagged in their own column)."""
    frame = queue_frame(items, now)
    st.dataframe(frame.style.apply(_highlight_overdue, axis=1), hide_index=True, width="stretch")


def resolved_table(items: list[EscalationView]) -> None:
    """Resolved escalations, newest first: resolution, by whom, when, justification."""
    if not items:
        st.caption("Nothing resolved yet.")
        return
    rows = [{"run": e.run_id, "reason": e.reason.value, "resolution": RESOLUTIONS.get(e.resolution or "", e.resolution),
             "by": services.display(e.resolved_by) if e.resolved_by else "", "when": when(e.resolved_at),
             "justification": e.justification or "", "owner": services.display(e.owner) if e.owner else ""}
            for e in sorted(items, key=lambda e: e.resolved_at or e.created_at, reverse=True)]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


# --- one escalation ----------------------------------------------------------------------------

def escalation_panel(item: EscalationView, now: datetime) -> None:
    """One escalation: why, who owns it, the evidence, the run history, and the controls allowed."""
    view = services.desk().repo.get_run_view(item.run_id)
    st.markdown(f"### Run #{view.id} · {md(item.reason.value)}")
    st.caption(md(REASON_HELP.get(item.reason.value, "")))
    owner = services.display(item.owner) if item.owner else "nobody yet"
    due = when(item.due_at) + (" — ⚠ overdue" if item.overdue(now) else "")
    (st.error if item.overdue(now) else st.caption)(md(f"Owner: {owner} · due {due} · escalated {when(item.created_at)}"))
    st.page_link("pages/review.py", label=f"Open run #{view.id} on the Review page", icon="📜",
                 query_params={"run": str(view.id)})
    evidence, history = st.tabs(["Evidence", "Run history"])
    with evidence:
        _evidence(view)
    with history:
        _history(view)
    assignment_form(item, now)
    resolution_form(item, view)


def _evidence(view: RunView) -> None:
    """The output under decision, both last reviews side by side, the gate and the open issues."""
    rnd = view.current_round
    if rnd is None:
        st.info("This run has no stored round.")
        return
    with st.expander("Spec"):
        st.text(view.spec)
    st.markdown("**Output under decision** (what *Ship as is* ships)")
    st.code(rnd.output_text, language=None, wrap_lines=True)
    st.markdown(f"**Round {rnd.round_no}: the last reviews, side by side, and the open issues**")
    round_panel(view, rnd)


def _history(view: RunView) -> None:
    """Every state change (with who made it) and every round."""
    rows = [{"time": when(h.created_at), "from": components.status_label(h.from_status) if h.from_status else "—",
             "to": components.status_label(h.to_status), "by": services.display(h.actor), "note": h.note}
            for h in view.history]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    timeline(view)


def _report(call: Callable[[], object], flash: str) -> bool:
    """Run a storage call; show its refusal as an error (the inputs keep what was typed)."""
    try:
        call()
    except STORAGE_ERRORS as exc:
        st.error(md(str(exc)))
        return False
    st.session_state[FLASH] = flash
    st.rerun()
    return True  # pragma: no cover - st.rerun does not return


def assignment_form(item: EscalationView, now: datetime) -> None:
    """Owner and due time, for people who may assign."""
    st.markdown("#### Owner and due time")
    if not services.can(Permission.ASSIGN):
        st.info(md(services.refusal(Permission.ASSIGN)))
        return
    repo = services.desk().repo
    people = [p.id for p in repo.people.with_permission(Permission.RESOLVE_ESCALATION)]
    options = ["", *people] if item.owner in (None, *people) else ["", item.owner, *people]
    left, right = st.columns(2)
    with left:
        owner = st.selectbox("Owner (someone who may resolve)", options, index=options.index(item.owner or ""),
                             format_func=lambda o: services.display(o) if o else "— unassigned —",
                             key=f"esc_owner_{item.id}")
        if st.button("Assign", key=f"esc_assign_{item.id}"):
            _report(lambda: repo.assign_escalation(item.run_id, owner or None, services.actor()),
                    f"Run #{item.run_id}: owner {services.display(owner) if owner else 'removed'}")
    with right:
        due = (item.due_at or now + timedelta(hours=services.defaults().due_hours_for(item.reason.value)))
        due = due.astimezone(UTC)
        day = st.date_input("Due date (UTC)", due.date(), key=f"esc_due_date_{item.id}")
        hour = st.time_input("Due time (UTC)", due.time().replace(second=0, microsecond=0),
                             key=f"esc_due_time_{item.id}")
        if st.button("Set due time", key=f"esc_due_go_{item.id}"):
            at = datetime.combine(day, hour, tzinfo=UTC)
            _report(lambda: repo.set_due(item.run_id, at, services.actor()),
                    f"Run #{item.run_id}: due {when(at)}")


def resolution_form(item: EscalationView, view: RunView) -> None:
    """Ship as is, edit and re-review, or reject, with a justification; for people who may resolve."""
    st.markdown("#### Resolve")
    if not services.can(Permission.RESOLVE_ESCALATION):
        st.info(md(services.refusal(Permission.RESOLVE_ESCALATION)))
        return
    rnd = view.current_round
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
    except STORAGE_ERRORS as exc:
        st.error(md(str(exc)))
        return
    if state.status == RunStatus.QUEUED:
        desk.runner.submit(item.run_id)
    st.session_state[FLASH] = f"Run #{item.run_id}: {components.status_label(state.status)}"
    st.rerun()
