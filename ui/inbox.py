"""The Inbox page: person reviewer slots waiting for me, assigned to me or open to anyone.

Blind by design: a slot is listed with its run, round, rubric and age only. No verdict, issue
or cost of the run appears here, so a reviewer learns nothing about the other review before
giving theirs (the run page keeps the history hidden too until the slot is filled).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd
import streamlit as st

from santa_core.roles import Permission, PermissionDenied, must_differ
from santa_core.run import actions
from storage.errors import RunNotFound
from storage.views import PendingReview
from ui import app_desk, clock, identity, spot_checks
from ui.safe import escape_markdown

ANYONE = ""
"""The assignee choice that leaves a slot open to anyone who may review."""
ANYONE_LABEL = "anyone who may review"
FLASH = "inbox_flash"
MAX_LISTED = 200
"""Slots shown per list; an inbox longer than this is a staffing problem, not a page problem."""


@dataclass
class MySlots:
    """The waiting slots as one person sees them: the ones they may take, and why others are hidden."""

    takeable: list[PendingReview] = field(default_factory=list)
    assigned_elsewhere: int = 0
    other_slot_mine: int = 0

    @property
    def hidden(self) -> int:
        """How many waiting slots this person may not take."""
        return self.assigned_elsewhere + self.other_slot_mine


def sort_slots(items: list[PendingReview], person_id: str) -> MySlots:
    """Split waiting slots into those the person may take and counts of those they may not."""
    out = MySlots()
    for item in items:
        if item.assignee and item.assignee != person_id:
            out.assigned_elsewhere += 1
        elif item.filled_other_slot_by == person_id and must_differ(person_id):
            out.other_slot_mine += 1  # two slots by one person would not be two independent reviews
        else:
            out.takeable.append(item)
    return out


def age(since: datetime, now: datetime) -> str:
    """How long a slot has waited, in the largest whole unit: "12 min", "3 h", "2 d"."""
    minutes = max(0, int((now - since).total_seconds() // 60))
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 24 * 60:
        return f"{minutes // 60} h"
    return f"{minutes // (24 * 60)} d"


def hidden_note(slots: MySlots, may_assign: bool) -> str | None:
    """Why some waiting slots are not in my list, or None when none are hidden."""
    if not slots.hidden:
        return None
    reasons = []
    if slots.assigned_elsewhere:
        reasons.append(f"{slots.assigned_elsewhere} assigned to someone else")
    if slots.other_slot_mine:
        reasons.append(
            f"{slots.other_slot_mine} the other slot of a round you already reviewed "
            "(the two reviews of a round must come from different reviewers)"
        )
    n = slots.hidden
    where = " They are listed under All waiting slots below." if may_assign else ""
    return f"{n} waiting slot{'s' if n != 1 else ''} hidden: {'; '.join(reasons)}.{where}"


def render_inbox() -> None:
    """The whole inbox for the acting person: my slots, and for assigners every slot with its assignee."""
    may_review, may_assign = identity.can(Permission.PERSON_REVIEW), identity.can(Permission.ASSIGN)
    if flash := st.session_state.pop(FLASH, None):
        st.success(escape_markdown(flash))
    if identity.can(Permission.SPOT_CHECK):
        spot_checks.inbox_section(identity.actor())
    if not may_review:
        st.info(escape_markdown(identity.refusal(Permission.PERSON_REVIEW)))
    if not (may_review or may_assign):
        return
    items = app_desk.desk().runs.pending_human_reviews()
    if may_review:
        my_slots(items, identity.actor(), may_assign)
    if may_assign:
        assign_panel(items)


def my_slots(items: list[PendingReview], person_id: str, may_assign: bool) -> None:
    """The slots I may take, oldest first, each with a button that opens its run's review form."""
    slots = sort_slots(items, person_id)
    st.subheader(f"Waiting for you ({len(slots.takeable)})")
    if not slots.takeable:
        st.info("Nothing waiting for you. Slots assigned to you, or open to anyone, appear here.")
    now = clock.now()
    for item in sorted(slots.takeable, key=lambda p: p.waiting_since)[:MAX_LISTED]:
        _slot_row(item, now)
    if note := hidden_note(slots, may_assign):
        st.caption(note)


def _slot_row(item: PendingReview, now: datetime) -> None:
    whose = "assigned to me" if item.assignee else "open to anyone"
    with st.container(border=True):
        left, right = st.columns([5, 1], vertical_alignment="center")
        left.markdown(escape_markdown(f"Run #{item.run_id} · round {item.round_no} · slot {item.slot} · {whose}"))
        left.caption(
            escape_markdown(
                f"Rubric {item.rubric_name} v{item.rubric_version} · waiting since "
                f"{item.waiting_since:%Y-%m-%d %H:%M} UTC ({age(item.waiting_since, now)})"
            )
        )
        if right.button(
            "Open",
            key=f"inbox_open_{item.run_id}_{item.slot}",
            type="primary",
            help="Opens the run's blind review form: the other review stays hidden until yours is in.",
        ):
            st.switch_page("pages/review.py", query_params={"run": str(item.run_id)})


def _assignee_label(person_id: str | None) -> str:
    return ANYONE_LABEL if not person_id else identity.display(person_id)


def assign_panel(items: list[PendingReview]) -> None:
    """Every waiting slot with its assignee; assign one to a person who may review, or back to anyone."""
    st.subheader(f"All waiting slots ({len(items)})")
    if not items:
        st.caption("No reviewer slot is waiting for a person.")
        return
    now = clock.now()
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "run": i.run_id,
                    "round": i.round_no,
                    "slot": i.slot,
                    "rubric": f"{i.rubric_name} v{i.rubric_version}",
                    "waiting since": i.waiting_since,
                    "waiting": age(i.waiting_since, now),
                    "assigned to": _assignee_label(i.assignee),
                }
                for i in items[:MAX_LISTED]
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    by_key = {f"{i.run_id}:{i.slot}": i for i in items}
    # Labelled once per rerun: a label read again later (names are cached for 2 s) must match the one shown.
    labels = {
        k: f"Run #{i.run_id} · round {i.round_no} · slot {i.slot} ({_assignee_label(i.assignee)})"
        for k, i in by_key.items()
    }
    picked = st.selectbox("Slot", list(by_key), key="inbox_assign_slot", format_func=labels.get)
    _assign_form(by_key[picked])


def _assign_form(item: PendingReview) -> None:
    reviewers = [
        p
        for p in app_desk.desk().people.with_permission(Permission.PERSON_REVIEW)
        if p.id != item.filled_other_slot_by or not must_differ(p.id)
    ]
    labels = {ANYONE: ANYONE_LABEL, **{p.id: p.label for p in reviewers}}
    if item.assignee and item.assignee not in labels:  # assigned before they lost the role
        labels[item.assignee] = f"{item.assignee} (may no longer review)"
    if item.filled_other_slot_by and must_differ(item.filled_other_slot_by):
        st.caption(
            escape_markdown(
                f"{identity.display(item.filled_other_slot_by)} reviewed the other slot of this round, "
                "so cannot take this one."
            )
        )
    options = list(labels)
    # Keyed per slot: the picker starts on the slot's current assignee whenever another slot is picked.
    to = st.selectbox(
        "Assign to",
        options,
        index=options.index(item.assignee or ANYONE),
        key=f"inbox_assign_to_{item.run_id}_{item.slot}",
        format_func=labels.get,
    )
    if not st.button("Assign", key="inbox_assign"):
        return
    try:
        actions.assign_reviewer(app_desk.desk().runs, item.run_id, item.slot, to or None, identity.actor())
    except (PermissionDenied, RunNotFound) as exc:
        st.error(escape_markdown(str(exc)))
        return
    who = labels[to] if to else ANYONE_LABEL
    st.session_state[FLASH] = f"Slot {item.slot} of run #{item.run_id} is now assigned to {who}."
    st.rerun()
