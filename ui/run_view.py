"""The run view of the Review page: timeline, reviews side by side, gate, proposal, actions."""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from desk.wiring import QUEUED_ORPHAN_S, SWEEP_EVERY_S
from santa_core import pricing, words
from santa_core.models import FINAL_STATUSES, EscalationReason, FixEdit, FixProposal, Review, RunStatus
from santa_core.providers import family_known, panel_families, spans_two_families
from santa_core.reviewers.base import PERSON
from santa_core.roles import Permission, PermissionDenied
from santa_core.run import actions
from santa_core.run.engine import InvalidTransition
from santa_core.run.fixer import fixed_by_person, judge_text, take_edit
from santa_core.run.gate import checked_out_first
from santa_core.run.runner import SLOTS, Conflict, open_person_slots, panel_slots, reviewer_of
from santa_core.run.unreviewed import HEADLINE, could_not_review, not_asked
from storage.errors import RunNotFound
from storage.views import RoundView, RunView
from ui import (
    app_desk,
    clock,
    components,
    decision_bar,
    identity,
    navigation,
    proposal_cards,
    review_cards,
    run_record,
    spot_checks,
)
from ui.person_review import person_review_form, slot_refusal
from ui.safe import escape_markdown

ACTIVE = {RunStatus.QUEUED, RunStatus.RUNNING}


def panel_note(view: RunView) -> None:
    """The panel's families (a one-family panel is named as such), and the rule for models with no listed price."""
    if PERSON not in (view.reviewer_b, view.reviewer_c):
        families = panel_families(view.reviewer_b, view.reviewer_c)
        if spans_two_families(view.reviewer_b, view.reviewer_c):
            st.caption(f"Panel: {families}, two model families.")
        elif unknown := [m for m in (view.reviewer_b, view.reviewer_c) if not family_known(m)]:
            st.caption(
                escape_markdown(
                    f"Panel: {families}: the family of {', '.join(unknown)} is unknown, so the "
                    "desk cannot tell whether the reviewers share blind spots."
                )
            )
        else:
            st.caption(
                f"Panel: {families}, one model family: the reviewers share blind spots, so their misses are "
                "not independent."
            )
    unpriced = pricing.unpriced(*paid_models(view))
    if unpriced and not view.blind:
        st.caption(escape_markdown(f"{pricing.PRICE_UNKNOWN} for {', '.join(unpriced)}: {pricing.UNKNOWN_PRICE_RULE}."))


def paid_models(view: RunView) -> list[str]:
    """The models the run pays: its reviewers (the third one too, when it has one) and its fix agent."""
    return [view.reviewer_b, view.reviewer_c, *([view.reviewer_d] if view.reviewer_d else []), view.fixer]


def run_header(view: RunView) -> None:
    """Title line: run number, status, rubric, reviewers, cost."""
    st.subheader(f"Run #{view.id} — {components.status_label(view.status)}")
    decision_bar.decision_bar(view)  # first thing under the title: what the run needs, the way to the action
    # While a person slot is open the spend is hidden too: it would reveal the other reviewer answered.
    # Calls a live process still waits for are shown as in flight, not in "spent": they are counted at their
    # estimate (the budget's figure) only until their answer comes, so "spent" would jump up and fall back.
    waiting = sum(c.estimate_usd for c in view.in_flight)
    spent = "" if view.blind or not view.total_cost_usd else f" · {components.usd(view.total_cost_usd - waiting)} spent"
    if spent and pricing.unpriced(*paid_models(view)):  # an upper bound, not a price: say so where the figure stands
        spent = (
            f" · {components.usd(view.total_cost_usd - waiting)} counted against the budget (includes "
            f"{pricing.PRICE_UNKNOWN})"
        )
    if spent and view.in_flight:
        spent += f" · {len(view.in_flight)} call(s) in flight (up to {components.usd(waiting)} more)"
    third = f"D {view.reviewer_d} (high-risk criteria) · " if view.reviewer_d else ""
    st.caption(
        escape_markdown(
            f"Rubric {view.rubric.name} v{view.rubric.version} · B {view.reviewer_b} · "
            f"C {view.reviewer_c} · {third}fix agent {view.fixer} · round {view.state.round} of "
            f"{view.state.round_cap}{spent} · started by {identity.display_at(view.created_by, view.created_at)}"
        )
    )
    panel_note(view)
    components.rubric_table(view.rubric)
    if view.cut_off and not view.blind:
        counted = sum(c.estimate_usd for c in view.cut_off)
        st.warning(
            escape_markdown(
                f"{len(view.cut_off)} call(s) were cut off before their answer was stored (a crash, a kill or a lost "
                f"connection); the cost above counts them at their estimate, {components.usd(counted)}, the most they may "
                "have cost, and a resume asks them again: " + "; ".join(c.describe() for c in view.cut_off) + "."
            )
        )


def round_panel(view: RunView, rnd: RoundView, remedy: str | None = None) -> None:
    """One round: B and C (and a third reviewer D) side by side, gate, merged issues, proposal and decisions (`remedy`: how this page
    fixes what a partial proposal leaves; by default the approval's box, only where it is shown)."""
    waits = view.status == RunStatus.AWAITING_APPROVAL and rnd.round_no == view.state.round
    if remedy is None:
        remedy = components.BOX_BELOW if waits else ""
    reviews = review_cards.reviews_in(rnd.reviews)
    both_in = all(s in reviews for s in SLOTS)
    unreviewed = could_not_review(rnd)
    slots = panel_slots(view)  # B and C; D beside them when the rubric asks a third reviewer
    cols = st.columns(len(slots))
    for col, slot in zip(cols, slots, strict=True):
        with col:
            outcome = reviews.get(slot)
            # Blind review: a person reviewer must not see the other verdict before giving theirs.
            hide = not both_in and outcome is not None and PERSON in (view.reviewer_b, view.reviewer_c)
            review_cards.review_card(
                outcome,
                slot,
                reviewer_of(view, slot),
                view.rubric,
                hidden=hide,
                missing=not_asked(rnd) if rnd.gate is not None else "No review yet.",
            )
    if (
        both_in
        and rnd.reviews["B"].reviewer.startswith("person:")
        and rnd.reviews["B"].reviewer == rnd.reviews["C"].reviewer
    ):
        st.warning(
            "One person filled both reviewer slots of this round, so the two reviews are not independent. "
            "Only the local user of an install without sign-in may do this; configure sign-in for a team."
        )
    review_cards.screen_line(rnd.screens)
    if unreviewed:  # nobody judged the output: not NAUGHTY, and the words name the calls that failed
        st.warning(escape_markdown(f"{HEADLINE} — {unreviewed} Nothing ships until the output is reviewed."))
    elif rnd.gate is not None:
        if not rnd.reviews and checked_out_first(rnd.gate):
            st.info(
                "The reviewers were not asked: a critical deterministic check failed, so no verdict could ship "
                "this text. The fix agent gets the check's findings; fresh reviewers judge the fixed text."
            )
        elif not rnd.reviews:
            st.info(
                "The reviewers were not asked: a deterministic check or the injection screen stopped this round first."
            )
        components.gate_banner(review_cards.worded_gate(rnd.gate, rnd.reviews), len(slots))  # no raw reviewer error
        components.issues_table(rnd.gate.issues, criterion_names(view))
    if rnd.proposal is not None and rnd.gate is not None:
        by_person = fixed_by_person(view.fixer, rnd.output_text, rnd.gate.issues)
        st.markdown("**Fix (by a person)**" if by_person else "**Fix proposal**")
        # The proposal awaiting this person's decision: its cards stand with the decision, not twice on the page.
        live = waits and identity.can(Permission.DECIDE_FIX)
        components.proposal_view(
            rnd.proposal, by_person=by_person, names=criterion_names(view), decided_below=live, remedy=remedy
        )
    for d in rnd.decisions:
        st.caption(
            escape_markdown(
                f"{d.created_at:%Y-%m-%d %H:%M} · {identity.display_at(d.actor, d.created_at)} · {words.decision(d.action)}"
                + (f": {d.reason}" if d.reason else "")
            )
        )
        if d.action == "edit" and rnd.proposal is not None:  # show the person's own change too
            st.code(
                components.readable_diff(rnd.proposal.proposed_text, d.after_text, "proposal", "as approved"),
                language="diff",
                wrap_lines=True,
            )


def timeline(view: RunView) -> None:
    """All rounds as tabs, the latest open; with the output each round reviewed."""
    if not view.rounds:
        return
    labels = [
        f"Round {r.round_no}"
        + (" · could not be reviewed" if could_not_review(r) else f" · {r.gate.decision.value}" if r.gate else "")
        for r in view.rounds
    ]
    tabs = st.tabs(labels, default=labels[-1])  # open on the latest round
    for tab, rnd in zip(tabs, view.rounds, strict=True):
        with tab:
            with st.expander("Output reviewed in this round"):
                st.text(rnd.output_text)
            components.round_checks(view.rubric, rnd.output_text, rnd.gate)
            round_panel(view, rnd)


def queued_note(view: RunView, now: datetime) -> str:
    """What a queued run waits for, said without touching it: reading a page never writes (the desk picks up runs
    a stopped process left behind on its own: at its start, and every SWEEP_EVERY_S while it runs)."""
    since = f"{view.updated_at:%Y-%m-%d %H:%M} UTC"
    if view.batch_id is not None and view.batch_paused:
        return (
            f"Queued since {since}: a review of batch #{view.batch_id}, which is paused. It starts when the "
            "batch is resumed on the Batch page."
        )
    if view.batch_id is not None:
        return f"Queued since {since}: a review of batch #{view.batch_id}; the batch starts it when it has room."
    if (now - view.updated_at).total_seconds() <= QUEUED_ORPHAN_S:
        return "Queued: a worker will pick this run up in a moment."
    return (
        f"Queued since {since}: waiting for a worker. A run whose process stopped is picked up by the desk "
        f"on its own within about {QUEUED_ORPHAN_S + SWEEP_EVERY_S:g} s, or when it starts again."
    )


def progress(view: RunView) -> None:
    """What is happening now, while reviewers or the fix agent work."""
    rnd = view.current_round
    if view.status == RunStatus.QUEUED:
        st.info(escape_markdown(queued_note(view, clock.now())))
    elif view.status == RunStatus.RUNNING and rnd is not None:
        done = len(rnd.reviews)
        step = "fix agent is proposing edits" if rnd.gate else f"reviewers working ({done} of 2 reviews in)"
        st.progress(min(done, 2) / 2 if not rnd.gate else 1.0, text=f"Round {rnd.round_no}: {step}…")


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
        _act(
            lambda: actions.approve_fix(app_desk.desk().runs, view.id, identity.actor(), text, reason, shown),
            view.id,
            typed,
        )
    if reject.button("Reject and escalate", key="reject_fix", help=REJECT_HELP):
        _act(lambda: actions.reject_fix(app_desk.desk().runs, view.id, identity.actor(), reason, shown), view.id, typed)
    if again and retry.button(
        f"Ask the fix agent again ({rnd.fix_attempts + 1} of {actions.MAX_FIX_ATTEMPTS})",
        key="retry_fix",
        help="Sets this proposal aside and asks the fix agent for a new one "
        "for the same issues: a paid call, counted against the run's budget.",
    ):
        _act(lambda: actions.retry_fix(app_desk.desk().runs, view.id, identity.actor(), reason, shown), view.id, typed)
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


def criterion_names(view: RunView) -> dict[str, str]:
    """Criterion id → the name people read, from the run's own rubric copy."""
    return {c.id: c.name for c in view.rubric.criteria}


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


def _act(do, run_id: int, typed: str | None = None) -> None:
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
            _act(
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
            _act(lambda: actions.resume(app_desk.desk().runs, view.id, identity.actor()), view.id)
    if status in FINAL_STATUSES:
        final_panel(view)


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
        _act(lambda: actions.try_again(app_desk.desk().runs, view.id, identity.actor(), escalation_id=shown), view.id)
    if tries:
        st.caption(f"Tried again {tries} time(s) already.")
    st.page_link(
        "pages/escalations.py",
        label="Or decide on the Escalations page",
        icon=navigation.ICON["escalations"],
        query_params={"run": str(view.id)},
    )


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
