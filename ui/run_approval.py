"""The decision on a fix proposal: the edits kept or dropped, the refused ones taken as the person's own, the box
Approve takes, Reject and escalate, and Ask the fix agent again; a click that recorded nothing keeps the text."""

from __future__ import annotations

import streamlit as st

from santa_core.models import FixEdit, FixProposal, RunStatus
from santa_core.reviewers.base import PERSON
from santa_core.roles import Permission
from santa_core.run import actions
from santa_core.run.fixer import fixed_by_person, judge_text, take_edit
from storage.views import RoundView, RunView
from ui import app_desk, components, identity, proposal_cards
from ui.run_actions import act
from ui.run_rounds import criterion_names
from ui.safe import escape_markdown


def approval_panel(view: RunView) -> None:
    """Approve the proposal as it stands in the box (edited or not), or reject it."""
    if not identity.can(Permission.DECIDE_FIX):
        st.info(escape_markdown("A fix is waiting for approval. " + identity.refusal(Permission.DECIDE_FIX)))
        _refused_click_notice(view)
        return
    rnd = view.current_round
    proposal = rnd.proposal
    # Which proposal the person was shown on the last render: a click decides on that one, and is
    # refused (with their typed text shown) if someone asked the fix agent again meanwhile.
    seen = st.session_state.get("approval_seen")
    typed_box = st.session_state.get("approval_box", "")
    shown = seen[2] if seen and seen[:2] == (view.id, view.state.round) else rnd.fix_attempts
    st.session_state["approval_seen"] = (view.id, view.state.round, rnd.fix_attempts)
    st.session_state["approval_ctx"] = (view.id, view.state.round)
    by_person = rnd.gate is not None and fixed_by_person(view.fixer, rnd.output_text, rnd.gate.issues)
    if view.fixer == PERSON:
        st.markdown("#### Fix the flagged issues")
        st.caption("You are the fix agent for this run: change only what the issues above flag, then Approve.")
    elif by_person:
        st.markdown("#### Fix the flagged issues")
        st.caption(
            "No flagged issue could be located at one place in the output (its quote is missing, not word for "
            "word, too short or found more than once), so the fix agent was not asked: "
            "change what the issues above describe, then Approve."
        )
    else:
        st.markdown("#### Your decision on the fix")
        if rnd.fix_attempts > 1:
            st.caption(f"Attempt {rnd.fix_attempts} of {actions.MAX_FIX_ATTEMPTS}: the fix agent was asked again.")
        proposal = _chosen_edits(view, proposal)
    kept = [str(i) for i, e in enumerate(rnd.proposal.edits) if e in proposal.edits]
    box_key = f"edit_{view.id}_{view.state.round}{_attempt(rnd)}" + (
        "" if len(kept) == len(rnd.proposal.edits) else "_" + "-".join(kept)
    )
    if not by_person and rnd.proposal.rejected:
        _refused(view, box_key, proposal.proposed_text)
    # A box whose text the person changed (by typing or by taking a refused edit) keeps it: no default then,
    # which Streamlit would otherwise report as set twice.
    edited = (
        st.text_area(
            "Proposed output — edit it here if needed; Approve takes the text as it is in this box",
            None if box_key in st.session_state else proposal.proposed_text,
            height=240,
            key=box_key,
        )
        or ""
    )
    st.session_state["approval_box"] = box_key
    reason = st.text_input(
        "Reason or note (optional to approve or ask again, required to reject and escalate)",
        key=f"reason_{view.id}_{view.state.round}{_attempt(rnd)}",
        help="Recorded with your decision in the run's history and the audit trail.",
    )
    label = components.approve_label(*judge_text(proposal, edited))
    # Said before the click: a text the reviewers already judged is never reviewed again. The button stays
    # enabled, because an edit reaches the page only when the box loses focus, and a disabled button would
    # swallow the click that follows typing; a click on the unchanged text is refused with nothing recorded.
    rounds = [r for r in view.rounds if r.round_no <= view.state.round]
    if unchanged := actions.approval_refusal(view.fixer, rounds, edited):
        label = "Approve — edit the text first"
        st.caption(
            escape_markdown(
                f"Approve will be refused: {unchanged} (The page sees what you type in the box "
                "once you click anywhere outside it.)"
            )
        )
    over_budget = view.budget_usd is not None and view.total_cost_usd >= view.budget_usd
    again = not by_person and not over_budget and rnd.fix_attempts < actions.MAX_FIX_ATTEMPTS
    row = st.container(horizontal=True)  # buttons as wide as their words, wrapping at a narrow window
    approve = reject = retry = row
    typed = None
    if shown != rnd.fix_attempts:
        # The proposal changed under the person (someone asked the fix agent again): whatever made
        # the page redraw, say so, and keep what they had typed for the proposal they were looking at.
        st.warning(
            f"Someone asked the fix agent again while you were deciding: this is proposal "
            f"{rnd.fix_attempts}, not the one you were looking at. Check it before you decide."
        )
        old = st.session_state.get(typed_box)
        if old:
            st.caption("The text you had in the box, so nothing you typed is lost:")
            st.code(old, language=None, wrap_lines=True)
    if approve.button(label, type="primary", key="approve_fix"):
        text = None if edited == rnd.proposal.proposed_text else edited  # an edit is recorded as "edit"
        act(
            lambda: actions.approve_fix(app_desk.desk().runs, view.id, identity.actor(), text, reason, shown),
            view.id,
            typed,
        )
    if reject.button("Reject and escalate", key="reject_fix", help=REJECT_HELP):
        act(lambda: actions.reject_fix(app_desk.desk().runs, view.id, identity.actor(), reason, shown), view.id, typed)
    if again and retry.button(
        f"Ask the fix agent again ({rnd.fix_attempts + 1} of {actions.MAX_FIX_ATTEMPTS})",
        key="retry_fix",
        help="Sets this proposal aside and asks the fix agent for a new one "
        "for the same issues: a paid call, counted against the run's budget.",
    ):
        act(lambda: actions.retry_fix(app_desk.desk().runs, view.id, identity.actor(), reason, shown), view.id, typed)
    elif not again and not by_person:
        retry.caption(escape_markdown(_no_retry(rnd, over_budget)))


REJECT_HELP = (
    "Ends this run's fixing now: the run goes to the Escalations page with your reason, where a person "
    "ships the output as it is, has it re-reviewed or rejects it. Nothing is reviewed again here. To get "
    "another proposal for the same issues instead, ask the fix agent again."
)


def _no_retry(rnd: RoundView, over_budget: bool) -> str:
    """Why the fix agent cannot be asked again for this round's proposal."""
    if over_budget:
        return "The fix agent cannot be asked again: the run's budget is spent."
    return (
        f"The fix agent cannot be asked again: it made {rnd.fix_attempts} proposals in this round, the most a "
        "round allows."
    )


def _attempt(rnd: RoundView) -> str:
    """Widget key suffix of a round's second and later fix proposals (a new proposal starts fresh boxes)."""
    return "" if rnd.fix_attempts <= 1 else f"_a{rnd.fix_attempts}"


def _chosen_edits(view: RunView, proposal: FixProposal) -> FixProposal:
    """One card per edit, each kept or dropped by the person; the box below shows the result."""
    if not proposal.edits:
        return proposal
    st.caption(
        "Each edit of the fix agent, kept unless you turn it off; the box below follows your choice "
        "(a change here starts the box again from the kept edits)."
    )
    return proposal_cards.edit_cards(
        proposal, criterion_names(view), keys=f"{view.id}_{view.state.round}{_attempt(view.current_round)}"
    )


def _refused(view: RunView, box_key: str, default: str) -> None:
    """The refused edits, each of which the person may take into the box as their own edit."""

    def take(edit: FixEdit) -> None:
        text, _ = take_edit(st.session_state.get(box_key) or default, edit)
        if text is not None:
            st.session_state[box_key] = text

    st.caption("Edits the desk refused to apply: each says why. Taking one puts it in the box as your own edit.")
    proposal_cards.refused_cards(
        view.current_round.proposal,
        criterion_names(view),
        st.session_state.get(box_key) or default,
        take,
        keys=f"{view.id}_{view.state.round}{_attempt(view.current_round)}",
    )


def _refused_click_notice(view: RunView) -> None:
    """A click on Approve/Reject after the person's roles were taken away: say so, keep the text."""
    ctx = st.session_state.get("approval_ctx")
    clicked = st.session_state.get("approve_fix") or st.session_state.get("reject_fix")
    if not clicked or ctx != (view.id, view.state.round):
        return
    _keep_typed_text(st.error, "Your decision was not recorded: your roles no longer allow it.", ctx)


def _keep_typed_text(say, why: str, ctx: tuple[int, int]) -> None:
    """A click that recorded nothing: say why, show the text that was in the box, forget the click."""
    say(f"{why} The text you had in the box is below, so nothing you typed is lost.")
    if text := st.session_state.get(st.session_state.get("approval_box", "")):
        st.code(text, language=None, wrap_lines=True)
    st.session_state.pop("approval_ctx", None)


def stale_decision_notice(view: RunView) -> None:
    """A click on Approve/Reject for a proposal someone else decided first: say so, keep the text."""
    ctx = st.session_state.get("approval_ctx")
    clicked = st.session_state.get("approve_fix") or st.session_state.get("reject_fix")
    if not clicked or not ctx or ctx[0] != view.id:
        return
    if view.status == RunStatus.AWAITING_APPROVAL and view.state.round == ctx[1]:
        return
    _keep_typed_text(
        st.warning,
        "This fix was decided by someone else before your click arrived; your decision was not recorded.",
        ctx,
    )
