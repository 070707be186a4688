"""The run's header, its progress and its rounds: reviews side by side, gate, merged issues, proposal and
decisions, one tab per round."""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from desk.wiring import QUEUED_ORPHAN_S, SWEEP_EVERY_S
from santa_core import pricing, words
from santa_core.models import RunStatus
from santa_core.providers import family_known, panel_families, spans_two_families
from santa_core.reviewers.base import PERSON
from santa_core.roles import Permission
from santa_core.run.fixer import fixed_by_person
from santa_core.run.gate import checked_out_first
from santa_core.run.runner import SLOTS, panel_slots, reviewer_of
from santa_core.run.unreviewed import HEADLINE, could_not_review, not_asked
from storage.views import RoundView, RunView
from ui import clock, components, decision_bar, identity, review_cards
from ui.safe import escape_markdown


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


def criterion_names(view: RunView) -> dict[str, str]:
    """Criterion id → the name people read, from the run's own rubric copy."""
    return {c.id: c.name for c in view.rubric.criteria}
