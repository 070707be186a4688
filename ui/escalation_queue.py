"""The escalation queue: the open escalations counted, filtered, sorted and listed (a row opens one), and the
resolved ones.

Due times are compared with clock.now() so tests can move the clock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd
import streamlit as st

from santa_core import words
from santa_core.models import EscalationReason
from storage.views import EscalationView
from ui import app_desk, components, identity, table_fit

REASON_HELP: dict[str, str] = {r.value: words.reason_help(r) for r in EscalationReason}
"""Why a run escalated, as a sentence, by reason code (santa_core.words holds the words)."""
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
