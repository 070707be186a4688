"""One escalation: why it escalated, the evidence and the run history, its assignment (owner and due time) and its
resolution.

Every control is shown only to people whose roles allow it (identity.can); the storage layer
refuses the rest anyway, and its refusals are shown, never swallowed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pandas as pd
import streamlit as st

from santa_core import words
from santa_core.models import RunStatus
from santa_core.roles import Permission, PermissionDenied
from santa_core.run import actions
from santa_core.run.engine import InvalidTransition
from storage.errors import EscalationNotOpen
from storage.views import EscalationView, RoundView, RunView
from ui import app_desk, components, identity
from ui.escalation_queue import when
from ui.run_rounds import round_panel, timeline
from ui.safe import escape_markdown

RESOLUTIONS = words.RESOLUTION
STORAGE_ERRORS = (PermissionDenied, ValueError, InvalidTransition, EscalationNotOpen)
"""What a storage call may refuse with; shown to the person, never a traceback."""

FLASH = "escalation_flash"
REMEDY = (
    f'to fix it, pick "{RESOLUTIONS["rereview"]}" under Resolve below (a box with the text opens), or '
    f'"{RESOLUTIONS["reject"]}"'
)
"""What a partial proposal's warning tells the person to do here: this page has no approval box."""


def escalation_panel(item: EscalationView, now: datetime) -> None:
    """One escalation: why, who owns it, the evidence, the run history, and the controls allowed."""
    view = app_desk.desk().runs.get_run_view(item.run_id)
    st.markdown(
        f"### Run #{view.id} · {escape_markdown(words.reason(item.reason))}", help=f"Reason code: `{item.reason.value}`"
    )
    st.caption(escape_markdown(words.reason_help(item.reason)))
    owner = identity.display(item.owner) if item.owner else "nobody yet"
    due = when(item.due_at) + (" — overdue" if item.overdue(now) else "")
    (st.error if item.overdue(now) else st.caption)(
        escape_markdown(f"Owner: {owner} · due {due} · escalated {when(item.created_at)}")
    )
    st.page_link(
        "pages/review.py",
        label=f"Open run #{view.id} on the Review page",
        icon=":material/list_alt:",
        query_params={"run": str(view.id)},
    )
    evidence, history = st.tabs(["Evidence", "Run history"])
    with evidence:
        _evidence(view)
    with history:
        _history(view)
    assignment_form(item, now)
    resolution_form(item, view)


def reviewed_round(view: RunView) -> RoundView | None:
    """The latest round with reviews or a gate.

    Not always the current round: a budget stop after a fix starts the next round and stops it
    before any reviewer is asked, so the last reviews and open issues are a round earlier.
    """
    return next((r for r in reversed(view.rounds) if r.reviews or r.gate is not None), None)


def _evidence(view: RunView) -> None:
    """The output under decision, both last reviews side by side, the gate and the open issues."""
    if not view.rounds:
        st.info("This run has no stored round.")
        return
    with st.expander("Spec"):
        st.text(view.spec)
    st.markdown("**Output under decision** (what *Ship as is* ships)")
    st.code(view.current_output, language=None, wrap_lines=True)
    rnd = reviewed_round(view)
    if rnd is None:
        st.info("No reviewer has seen this run's output yet: there are no reviews or open issues to show.")
        return
    current = view.current_round
    if current is not None and current.round_no != rnd.round_no and current.output_text == rnd.output_text:
        st.caption(
            escape_markdown(
                f"Round {current.round_no} was not reviewed ({view.state.note}); its text is exactly "
                f"the output round {rnd.round_no} reviewed, below."
            )
        )
    elif current is not None and current.round_no != rnd.round_no:
        st.caption(
            escape_markdown(
                f"Round {current.round_no} was not reviewed: the run stopped before its reviewers were "
                f"asked. The last reviews are from round {rnd.round_no}, of the output before the changes "
                "below."
            )
        )
        st.code(
            components.readable_diff(
                rnd.output_text,
                current.output_text,
                f"round {rnd.round_no} (reviewed)",
                f"round {current.round_no} (under decision)",
            ),
            language="diff",
            wrap_lines=True,
        )
    st.markdown(f"**Round {rnd.round_no}: the last reviews, side by side, and the open issues**")
    round_panel(view, rnd, remedy=REMEDY)


def _history(view: RunView) -> None:
    """Every state change (with who made it) and every round."""
    rows = [
        {
            "time": when(h.created_at),
            "from": components.status_label(h.from_status) if h.from_status else "—",
            "to": components.status_label(h.to_status),
            "by": identity.display(h.actor),
            "note": words.note(h.note),
        }
        for h in view.history
    ]
    components.full_table(
        pd.DataFrame(rows, columns=["time", "from", "to", "by", "note"]), wide=("note",), breakable=("by",)
    )
    timeline(view)


def _report(call: Callable[[], object], flash: str) -> bool:
    """Run a storage call; show its refusal as an error (the inputs keep what was typed)."""
    try:
        call()
    except STORAGE_ERRORS as exc:
        st.error(escape_markdown(str(exc)))
        return False
    st.session_state[FLASH] = flash
    st.rerun()
    return True  # pragma: no cover - st.rerun does not return


def assignment_form(item: EscalationView, now: datetime) -> None:
    """Owner and due time, for people who may assign."""
    st.markdown("#### Owner and due time")
    if not identity.can(Permission.ASSIGN):
        st.info(escape_markdown(identity.refusal(Permission.ASSIGN)))
        return
    repo = app_desk.desk().runs
    people = [p.id for p in repo.people.with_permission(Permission.RESOLVE_ESCALATION)]
    options = ["", *people] if item.owner in (None, *people) else ["", item.owner, *people]
    # Every option labelled at once: the labels are cached for two seconds, and a rerun slower than that (a loaded
    # machine) labelled some options before a sign-in named a person and some after, so the choice shown was not
    # among the options (seen in CI: 'Officer <officer@example.com>' is not in list).
    labels = {o: identity.display(o) if o else "— unassigned —" for o in options}
    left, right = st.columns(2)
    with left:
        owner = st.selectbox(
            "Owner (someone who may resolve)",
            options,
            index=options.index(item.owner or ""),
            format_func=labels.__getitem__,
            key=f"esc_owner_{item.id}",
        )
        if st.button("Assign", key=f"esc_assign_{item.id}"):
            _report(
                lambda: actions.assign_escalation(repo, item.run_id, owner or None, identity.actor(), item.id),
                f"Run #{item.run_id}: owner {identity.display(owner) if owner else 'removed'}",
            )
    with right:
        due = item.due_at or now + timedelta(hours=app_desk.defaults().due_hours_for(item.reason.value))
        due = due.astimezone(UTC)
        day = st.date_input("Due date (UTC)", due.date(), key=f"esc_due_date_{item.id}")
        hour = st.time_input(
            "Due time (UTC)", due.time().replace(second=0, microsecond=0), key=f"esc_due_time_{item.id}"
        )
        if st.button("Set due time", key=f"esc_due_go_{item.id}"):
            at = datetime.combine(day, hour, tzinfo=UTC)
            _report(
                lambda: actions.set_due(repo, item.run_id, at, identity.actor(), item.id),
                f"Run #{item.run_id}: due {when(at)}",
            )


def resolution_form(item: EscalationView, view: RunView) -> None:
    """Ship as is, edit and re-review, or reject, with a justification; for people who may resolve."""
    st.markdown("#### Resolve")
    if not identity.can(Permission.RESOLVE_ESCALATION):
        st.info(escape_markdown(identity.refusal(Permission.RESOLVE_ESCALATION)))
        return
    if item.owner and item.owner != identity.actor():
        # Allowed (a compliance officer may step in), but nobody should do it unawares.
        st.warning(
            escape_markdown(
                f"Assigned to {identity.display(item.owner)}; your resolution will be recorded under your name."
            )
        )
    rnd = view.current_round
    # Nothing chosen at first: a default would be a decision nobody made (and the first one ships as is).
    choice = st.radio(
        "Resolution", list(RESOLUTIONS), format_func=RESOLUTIONS.get, key=f"res_{item.id}", horizontal=True, index=None
    )
    edited = None
    if choice == "rereview":
        edited = st.text_area(
            "Output to send for fresh review", rnd.output_text if rnd else "", height=240, key=f"res_text_{item.id}"
        )
        rereview_note(view, edited)
    why = st.text_area("Justification (required)", key=f"res_why_{item.id}")
    if st.button("Record resolution", type="primary", key=f"res_go_{item.id}"):
        _resolve(item, choice, why, edited)


def rereview_note(view: RunView, text: str) -> None:
    """Before the click: whether fresh reviewers can still change the answer for this text. A text both
    reviewers already judged is refused (edit it first); after a reviewer failure, a budget stop or an
    interruption, re-reviewing it unchanged is the way to an answer."""
    rounds = [r for r in view.rounds if r.round_no <= view.state.round]
    if problem := actions.rereview_refusal(rounds, text):
        st.warning(
            escape_markdown(
                f"Sending this text will be refused: {problem} (The page sees what you type in "
                "the box once you click anywhere outside it.)"
            )
        )
    elif rounds and text == rounds[-1].output_text:
        st.caption("No reviewer gave a complete verdict on this text yet, so it may go for fresh review unchanged.")


def stale_click_notice(open_ids: set[int]) -> None:
    """A click on "Record resolution" for an escalation someone else resolved first: say so and show
    the justification typed, instead of silently dropping it (the form's keys carry the escalation id,
    so the click can never land on a newer escalation of the same run)."""
    for key in [k for k in st.session_state if str(k).startswith("res_go_")]:
        esc_id = int(str(key).removeprefix("res_go_"))
        if st.session_state.get(key) and esc_id not in open_ids:
            st.warning(
                f"Escalation #{esc_id} was resolved by someone else before your click arrived; your resolution "
                "was not recorded. Your justification is below, so nothing you typed is lost."
            )
            if why := st.session_state.get(f"res_why_{esc_id}"):
                st.code(why, language=None, wrap_lines=True)


NO_CHOICE = f"Pick a resolution first ({', '.join(RESOLUTIONS.values())}): nothing was recorded."


def _resolve(item: EscalationView, choice: str | None, why: str, edited: str | None) -> None:
    if choice is None:
        st.error(NO_CHOICE)
        return
    if not why.strip():
        st.error("A justification is required: say why you decided this.")
        return
    desk = app_desk.desk()
    try:
        state = actions.resolve_escalation(desk.runs, item.run_id, choice, identity.actor(), why, edited, item.id)
    except STORAGE_ERRORS as exc:
        st.error(escape_markdown(str(exc)))
        return
    if state.status == RunStatus.QUEUED:
        desk.runner.submit(item.run_id)
    st.session_state[FLASH] = f"Run #{item.run_id}: {components.status_label(state.status)}"
    st.rerun()
