"""What a person does on a run besides deciding a fix: an action run and its refusal shown, a person reviewer's
slot filled, a run nobody could judge tried again, the shipped text."""

from __future__ import annotations

import streamlit as st

from santa_core.models import Review, RunStatus
from santa_core.roles import Permission, PermissionDenied
from santa_core.run import actions
from santa_core.run.engine import InvalidTransition
from santa_core.run.runner import Conflict, open_person_slots
from santa_core.run.unreviewed import HEADLINE
from storage.views import RunView
from ui import app_desk, identity, navigation
from ui.person_review import person_review_form, slot_refusal
from ui.safe import escape_markdown


def act(do, run_id: int, typed: str | None = None) -> None:
    """Run an action, hand the run back to the runner if it is queued, and refresh.

    `typed`: what the person had in a box that is gone now (the proposal changed); shown on a refusal.
    """
    try:
        state = do()
    # ValueError covers SlotAssigned and the run store's refusals of bad text; what was typed stays.
    except (actions.ActionError, Conflict, InvalidTransition, PermissionDenied, ValueError) as exc:
        st.error(escape_markdown(str(exc)))
        if typed:
            st.caption("The text you had in the box, so nothing you typed is lost:")
            st.code(typed, language=None, wrap_lines=True)
        return
    except LookupError:  # storage.errors.EscalationNotOpen: the escalation shown was closed meanwhile
        st.error(
            "Nothing was recorded: someone else decided this escalation or tried the run again while you were "
            "looking. The page now shows the run as it stands."
        )
        return
    if state.status == RunStatus.QUEUED:
        app_desk.desk().runner.submit(run_id)
    st.rerun()


def person_panel(view: RunView) -> None:
    """The form for each empty person slot of the current round this person may fill."""
    if view.current_round is None:
        return
    slots = open_person_slots(view, view.current_round.reviews)
    if slots and not identity.can(Permission.PERSON_REVIEW):
        st.info(escape_markdown("A person reviewer's slot is waiting. " + identity.refusal(Permission.PERSON_REVIEW)))
        return
    me = identity.actor() if slots else ""
    shown = None
    for slot in slots:
        if why := slot_refusal(view, slot, me):
            st.info(escape_markdown(why))
            continue
        if shown is not None:
            # Blind means one at a time: whoever may fill both slots (the local user of a keyless
            # install) judges the second only after the first is saved, never both forms side by side.
            st.info(f"Slot {slot}'s form opens once the review for slot {shown} is saved: one blind review at a time.")
            continue
        shown = slot
        review: Review | None = person_review_form(view, slot)
        if review is not None:
            act(
                lambda s=slot, r=review: actions.submit_person_review(
                    app_desk.desk().runs, view.id, s, r, identity.actor()
                ),
                view.id,
            )


def final_panel(view: RunView) -> None:
    """The shipped text with a copy button (st.code has one)."""
    if view.final_output is not None:
        st.markdown("#### Final output")
        st.code(view.final_output, language=None, wrap_lines=True)


def try_again_panel(view: RunView) -> None:
    """A run nobody could judge because the model provider failed: Try again, a counted and paid attempt."""
    st.warning(
        f"{HEADLINE} (the round above says which call and why). Nothing ships until the output is reviewed: "
        "try again once the provider answers, or decide on the Escalations page."
    )
    tries = sum(d.action == "try_again" for r in view.rounds for d in r.decisions)
    # The escalation this page showed on its last render: a click acts on that one, so a tab left open while
    # someone else tried again (and the provider failed again) does not start another paid attempt unseen.
    seen = st.session_state.get("try_again_seen")
    current = (view.id, view.escalation.id if view.escalation else None)
    st.session_state["try_again_seen"] = current
    shown = seen[1] if seen and seen[0] == view.id else current[1]
    if actions.budget_spent(view.budget_usd, view.total_cost_usd):
        st.info(
            "Try again is not offered: the run's budget is spent. Ship it as is or reject it on the "
            "Escalations page, with your justification."
        )
    elif not identity.can(Permission.RETRY_RUN):
        st.info(escape_markdown(identity.refusal(Permission.RETRY_RUN)))
    elif st.button(
        "Try again",
        type="primary",
        key="try_again",
        help="Asks the injection screen and both reviewers afresh in a new round of the same text: paid "
        "calls, counted against the run's budget; the escalation closes as tried again.",
    ):
        act(lambda: actions.try_again(app_desk.desk().runs, view.id, identity.actor(), escalation_id=shown), view.id)
    if tries:
        st.caption(f"Tried again {tries} time(s) already.")
    st.page_link(
        "pages/escalations.py",
        label="Or decide on the Escalations page",
        icon=navigation.ICON["escalations"],
        query_params={"run": str(view.id)},
    )
