"""The escalation queue: filters, the table, one escalation's evidence, assignment and resolution.

Every control is shown only to people whose roles allow it (identity.can); the storage layer
refuses the rest anyway, and its refusals are shown, never swallowed. Due times are compared
with clock.now() so tests can move the clock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
import streamlit as st

from santa_core import words
from santa_core.models import EscalationReason, RunStatus
from santa_core.roles import Permission, PermissionDenied
from santa_core.run import actions
from santa_core.run.engine import InvalidTransition
from storage.errors import EscalationNotOpen
from storage.views import EscalationView, RoundView, RunView
from ui import app_desk, components, identity, table_fit
from ui.run_view import round_panel, timeline
from ui.safe import escape_markdown

REASON_HELP: dict[str, str] = {r.value: words.reason_help(r) for r in EscalationReason}
"""Why a run escalated, as a sentence, by reason code (santa_core.words holds the words)."""
RESOLUTIONS = words.RESOLUTION
REASON_COLUMN = "Why the run escalated. The stored codes (JSON record, command line):  \n" + words.legend(words.REASON)
QUEUE_REASON_HELP = (
    "Why the run escalated; the escalation a row opens says it in full. Each reason, with its "
    "stored code (JSON record, command line):  \n"
    + "  \n".join(f"**{words.reason(r)}** (`{r.value}`): {words.reason_help(r)}" for r in EscalationReason)
)
PICK, NONCE = "esc_pick", "esc_queue_nonce"
"""The open escalation's run (the select box's key), and a counter that redraws the queue's selection."""

OWNER_ANYONE, OWNER_ME, OWNER_NOBODY = "anyone", "me", "unassigned"
ALL_RUBRICS = "all rubrics"

ANY_AGE = "any"
OLDER_THAN: dict[str, timedelta | None] = {
    ANY_AGE: None,
    "1 h": timedelta(hours=1),
    "4 h": timedelta(hours=4),
    "1 day": timedelta(days=1),
    "3 days": timedelta(days=3),
    "1 week": timedelta(weeks=1),
}
"""The queue's age filter: escalations at least this old (measured with clock.now())."""

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
REMEDY = (
    f'to fix it, pick "{RESOLUTIONS["rereview"]}" under Resolve below (a box with the text opens), or '
    f'"{RESOLUTIONS["reject"]}"'
)
"""What a partial proposal's warning tells the person to do here: this page has no approval box."""


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


def matches(
    item: EscalationView,
    reasons: list[str],
    owner: str,
    me: str,
    rubric: str,
    older_than: timedelta | None = None,
    now: datetime | None = None,
) -> bool:
    """Whether an escalation passes the queue's filters (empty reasons: every reason; no age: any age)."""
    if reasons and item.reason.value not in reasons:
        return False
    if older_than is not None and now is not None and now - item.created_at < older_than:
        return False
    if owner == OWNER_ME and item.owner != me:
        return False
    if owner == OWNER_NOBODY and item.owner is not None:
        return False
    if owner not in (OWNER_ANYONE, OWNER_ME, OWNER_NOBODY) and item.owner != owner:
        return False
    return rubric == ALL_RUBRICS or item.rubric_name == rubric


def queue_frame(items: list[EscalationView], now: datetime) -> pd.DataFrame:
    """One row per open escalation, in the given order. Why each reason escalates, as a sentence, is in the
    reason column's help and atop the escalation a row opens (a column of it did not fit the page)."""
    rows = [
        {
            "run": e.run_id,
            "reason": words.reason(e.reason),
            "age": age(e.created_at, now),
            "owner": identity.display(e.owner) if e.owner else "unassigned",
            "due": "—" if e.due_at is None else f"{e.due_at.astimezone(UTC):%Y-%m-%d %H:%M}",
            "overdue": "overdue" if e.overdue(now) else "",
            "rubric": table_fit.unbroken(f"{e.rubric_name} v{e.rubric_version},")
            + " "
            + table_fit.unbroken(f"round {e.round}"),
        }
        for e in items
    ]
    columns = ["run", "reason", "age", "owner", "due", "overdue", "rubric"]
    return pd.DataFrame(rows, columns=columns)


QUEUE_COLUMNS = {
    "run": st.column_config.NumberColumn("run", format="#%d"),
    "reason": st.column_config.TextColumn("reason", help=QUEUE_REASON_HELP),
    "age": st.column_config.TextColumn("age", help="How long the escalation has been waiting."),
    "due": st.column_config.TextColumn(
        "due (UTC)", help="When a decision is due (set it below, under Owner and due time)."
    ),
    "rubric": st.column_config.TextColumn("rubric", help="The run's rubric version, and the round it escalated in."),
}


def _highlight_overdue(row: pd.Series) -> list[str]:
    style = "background-color: #ffd9d9; color: #7a0000" if row["overdue"] else ""
    return [style] * len(row)


# --- the queue ---------------------------------------------------------------------------------


def counts(items: list[EscalationView], now: datetime) -> None:
    """ "N open, M overdue" above the queue."""
    overdue = sum(e.overdue(now) for e in items)
    (st.error if overdue else st.markdown)(f":material/priority_high: {len(items)} open, {overdue} overdue")


def filtered(items: list[EscalationView], now: datetime) -> list[EscalationView]:
    """The filter and sort controls; the escalations they select, in their order."""
    me = identity.actor()
    owners = sorted({e.owner for e in items if e.owner and e.owner != me})
    rubrics = sorted({e.rubric_name for e in items})
    # Two rows, so each box is wide enough for its longest choice at 1,024 px ("age (oldest first)").
    c1, c2, c3 = st.columns([2, 1, 1])
    c4, c5 = st.columns(2)
    reasons = c1.multiselect(
        "Reason",
        [r.value for r in EscalationReason],
        key="esc_f_reason",
        placeholder="every reason",
        format_func=words.reason,
        help=REASON_COLUMN,
    )
    owner = c2.selectbox(
        "Owner",
        [OWNER_ANYONE, OWNER_ME, OWNER_NOBODY, *owners],
        key="esc_f_owner",
        format_func=lambda o: o if o in (OWNER_ANYONE, OWNER_ME, OWNER_NOBODY) else identity.display(o),
    )
    rubric = c3.selectbox("Rubric", [ALL_RUBRICS, *rubrics], key="esc_f_rubric")
    older = c4.selectbox(
        "Older than",
        list(OLDER_THAN),
        key="esc_f_age",
        help="Only escalations that have been waiting at least this long.",
    )
    order = c5.selectbox("Sort by", list(SORTS), key="esc_sort")
    chosen = [e for e in items if matches(e, reasons, owner, me, rubric, OLDER_THAN[older], now)]
    return sorted(chosen, key=SORTS[order])


def queue_table(items: list[EscalationView], now: datetime, key: str | None = None, row: int = 0) -> Any:
    """The queue, overdue rows highlighted (and flagged in their own column). With a `key`, one row is
    always selected (`row` at first) and the selection is returned."""
    frame = queue_frame(items, now)
    select: dict[str, Any] = (
        {}
        if key is None
        else {
            "key": key,
            "on_select": "rerun",
            "selection_mode": "single-row-required",
            "selection_default": {"selection": {"rows": [row]}},
        }
    )
    room = table_fit.PAGE_PX - (table_fit.MARKER_PX if key is not None else 0)
    fitted = table_fit.fit(frame, room, labels=components.labels_of(QUEUE_COLUMNS), breakable=("owner",))
    return st.dataframe(
        frame.style.apply(_highlight_overdue, axis=1),
        hide_index=True,
        width="stretch",
        row_height=fitted.row_height,
        column_config=components.fitted_config(fitted, QUEUE_COLUMNS),
        **select,
    )


def _redraw_selection() -> None:
    st.session_state[NONCE] = st.session_state.get(NONCE, 0) + 1


def pick(items: list[EscalationView], now: datetime) -> EscalationView:
    """The queue, where clicking a row opens that escalation; the select box below picks the same (for
    keyboards and screen readers), and the queue's selection follows it.

    The queue's key carries the listed runs: when filters change the rows, a row number selected on the
    old list never opens an escalation from the new one.
    """
    ids = [e.run_id for e in items]
    asked = st.query_params.get("run")  # a run page's link: open that run's escalation, once
    if asked is not None:
        del st.query_params["run"]
        if asked.isdigit() and int(asked) in ids:
            st.session_state[PICK] = int(asked)
    current = st.session_state.get(PICK)
    if current not in ids:  # resolved meanwhile, or filtered out: the first listed opens
        current = ids[0]
    listed = hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()[:12]
    event = queue_table(items, now, key=f"esc_queue_{listed}_{st.session_state.get(NONCE, 0)}", row=ids.index(current))
    rows = event.selection.rows
    if rows and rows[0] < len(ids) and ids[rows[0]] != current:  # a click on another row
        current = ids[rows[0]]
    # Always set, before the select box is drawn: only a value set this way is sent to the browser, which
    # otherwise keeps showing its last choice (a resolved run's) above another run's detail.
    st.session_state[PICK] = current
    st.caption("Pick a row (the circle at its start) to open its escalation below.")
    st.selectbox(
        "Escalated run",
        ids,
        key=PICK,
        on_change=_redraw_selection,
        format_func=lambda i: f"Run #{i} · {words.reason(next(e.reason for e in items if e.run_id == i))}",
    )
    return next(e for e in items if e.run_id == current)


def resolved_table(items: list[EscalationView]) -> None:
    """Resolved escalations, newest first: resolution, by whom, when, justification.

    Runs whose reviews are still blind are left out: an earlier escalation's justification would
    tell a person reviewer what was wrong with an earlier round before they give their review.
    """
    blind = app_desk.desk().runs.blind_run_ids()
    hidden = sum(e.run_id in blind for e in items)
    items = [e for e in items if e.run_id not in blind]
    if hidden:
        st.caption(
            f"{hidden} resolved escalation{'s' if hidden != 1 else ''} of runs waiting for a person "
            "reviewer " + ("are" if hidden != 1 else "is") + " hidden until the reviews are in."
        )
    if not items:
        st.caption("Nothing resolved yet.")
        return
    rows = [
        {
            "run": e.run_id,
            "reason": words.reason(e.reason),
            "resolution": words.resolution(e.resolution),
            "by": identity.display(e.resolved_by) if e.resolved_by else "",
            "when": when(e.resolved_at),
            "justification": e.justification or "",
            "owner": identity.display(e.owner) if e.owner else "",
        }
        for e in sorted(items, key=lambda e: e.resolved_at or e.created_at, reverse=True)
    ]
    frame = pd.DataFrame(rows, columns=["run", "reason", "resolution", "by", "when", "justification", "owner"])
    config = {
        "run": st.column_config.NumberColumn("run", format="#%d"),
        "reason": st.column_config.TextColumn("reason", help=REASON_COLUMN),
        "resolution": st.column_config.TextColumn("resolution", help=words.legend(words.RESOLUTION)),
    }
    fitted = table_fit.fit(
        frame,
        table_fit.PAGE_PX,
        wide=("justification",),
        labels=components.labels_of(config),
        breakable=("by", "owner"),
    )
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        row_height=fitted.row_height,
        column_config=components.fitted_config(fitted, config),
    )


# --- one escalation ----------------------------------------------------------------------------


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
    left, right = st.columns(2)
    with left:
        owner = st.selectbox(
            "Owner (someone who may resolve)",
            options,
            index=options.index(item.owner or ""),
            format_func=lambda o: identity.display(o) if o else "— unassigned —",
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
