"""The Spot-checks page's rules editor and the queue's owner and due time."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from santa_core.roles import Permission
from santa_core.spotchecks import actions
from santa_core.spotchecks.model import RuleDraft, SpotCheck
from ui import app_desk, clock, identity
from ui.safe import escape_markdown
from ui.spot_checks import report


def assignment(check: SpotCheck) -> None:
    """Owner and due time of an open spot-check, for people who may assign."""
    if check.status != "open" or not identity.can(Permission.ASSIGN):
        return
    store = app_desk.desk().runs.spot_checks
    people = [p.id for p in app_desk.desk().people.with_permission(Permission.SPOT_CHECK)]
    options = ["", *people] if check.owner in (None, *people) else ["", check.owner, *people]
    left, right = st.columns(2)
    with left:
        owner = st.selectbox(
            "Owner (someone who may judge spot-checks)",
            options,
            index=options.index(check.owner or ""),
            key=f"spot_owner_{check.id}",
            format_func=lambda o: identity.display(o) if o else "— anyone —",
        )
        if st.button("Assign", key=f"spot_assign_{check.id}"):
            report(
                lambda: actions.assign(store, check.id, owner or None, identity.actor()),
                f"Spot-check #{check.id}: owner {identity.display(owner) if owner else 'removed'}",
            )
    with right:
        due = (check.due_at or clock.now()).astimezone(UTC)
        day = st.date_input("Due date (UTC)", due.date(), key=f"spot_due_date_{check.id}")
        hour = st.time_input(
            "Due time (UTC)", due.time().replace(second=0, microsecond=0), key=f"spot_due_time_{check.id}"
        )
        if st.button("Set due time", key=f"spot_due_go_{check.id}"):
            at = datetime.combine(day, hour, tzinfo=UTC)
            report(
                lambda: actions.set_due(store, check.id, at, identity.actor()),
                f"Spot-check #{check.id}: due {at:%Y-%m-%d %H:%M} UTC",
            )


def rules_editor() -> None:
    """The active rules, a new rule (a change is a new rule: the old one retires, the new one gets a new seed),
    and Draw now (the sweep the periodic job runs)."""
    store = app_desk.desk().runs.spot_checks
    rules = store.rules()
    if rules:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "#": r.id,
                        "rule": r.label,
                        "saved by": identity.display(r.created_by),
                        "since (UTC)": r.created_at,
                    }
                    for r in rules
                ]
            ),
            hide_index=True,
            width="stretch",
        )
    else:
        st.caption("No rule: nothing is drawn for spot-checks yet.")
    if not identity.can(Permission.MANAGE_SPOT_CHECKS):
        st.info(escape_markdown(identity.refusal(Permission.MANAGE_SPOT_CHECKS)))
        return
    names = app_desk.desk().rubrics.names()
    with st.form("spot_rule_form"):
        replaces = st.selectbox(
            "Replaces",
            [None, *(r.id for r in rules)],
            key="spot_rule_replaces",
            format_func=lambda i: "— a new rule —" if i is None else f"rule #{i}",
        )
        rubric = st.selectbox("Rubric", names, key="spot_rule_rubric")
        left, right = st.columns(2)
        share = left.number_input("Share of shipped runs (%)", 0.1, 100.0, 5.0, step=0.5, key="spot_rule_share")
        floor = right.number_input("At least this many a week", 0, 1000, 0, key="spot_rule_floor")
        panel = left.text_input("Panel (optional): two families or reviewers, e.g. Claude + GPT", key="spot_rule_panel")
        domain = right.text_input("Domain (optional)", key="spot_rule_domain")
        saved = st.form_submit_button("Save rule", type="primary")
    if saved:
        draft = RuleDraft(rubric_name=rubric or "", share_percent=share, floor=int(floor), panel=panel, domain=domain)
        report(
            lambda: actions.save_rule(store, draft, identity.actor(), names, replaces),
            f"Rule saved: {draft.share_percent:g} % of {draft.rubric_name}.",
        )
    left, right = st.columns(2)
    if rules:
        retire = left.selectbox(
            "Retire rule", [r.id for r in rules], key="spot_rule_retire", format_func=lambda i: f"rule #{i}"
        )
        if left.button("Retire", key="spot_rule_retire_go"):
            report(lambda: actions.retire_rule(store, retire, identity.actor()), f"Rule #{retire} retired.")
    if right.button(
        "Draw now",
        key="spot_draw_now",
        help="Runs the sweep a periodic job runs: every shipped run not yet drawn enters the draw once, "
        "and weeks that ended are topped up to their floor. The same runs whoever clicks.",
    ):
        report(lambda: actions.draw_spot_checks(store, clock.now()), "Draw done.")
