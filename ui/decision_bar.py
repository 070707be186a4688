"""The run page's decision bar: right under the run's title, what the run needs now and from whom, with the way to
the action (a link down to it on this page, or the page that holds it) one click away.

The bar says only what the page shows below it: while a person reviewer's slot is open it counts no review (the
other verdict stays blind), and an action this person may not take is named with who may take it, never linked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import streamlit as st

from santa_core import words
from santa_core.models import EscalationReason, RunStatus
from santa_core.reviewers.base import PERSON
from santa_core.roles import Permission, who_may
from santa_core.run.actions import budget_spent
from santa_core.run.fixer import fixed_by_person, issue_fixes
from santa_core.run.runner import open_person_slots, panel_slots
from storage.views import RunView
from ui import identity
from ui.person_review import slot_refusal
from ui.review_cards import reviews_in
from ui.safe import escape_markdown

DECIDE_ANCHOR = "decide"
"""The id of the place just above the run's actions (`anchor`), where the bar's link lands."""

Tone = Literal["info", "success", "warning", "error"]
Refusal = Callable[[str], str | None]


@dataclass(frozen=True)
class Need:
    """What a run needs now: a sentence, its tone, and the way to the action (a jump down, or a page)."""

    tone: Tone
    text: str
    jump: str | None = None
    """Label of the link down to the actions on this page (None: nothing to do here)."""
    page: tuple[str, str] | None = None
    """(page file, label) of the page that holds the action."""


def _slots(names: list[str]) -> str:
    """ "slot B" / "slots B and C"."""
    return f"slot {names[0]}" if len(names) == 1 else "slots " + " and ".join(names)


def _issues(fixed: int, total: int) -> str:
    """ "2 of 3 issues fixed" / "all 3 issues fixed" / "the issue is fixed"."""
    if total == 0:
        return "no issue to fix"
    if fixed == total:
        return "the issue is fixed" if total == 1 else f"all {total} issues fixed"
    return f"{fixed} of {total} {'issue' if total == 1 else 'issues'} fixed"


def _approval(view: RunView, can: Callable[[Permission], bool]) -> Need:
    """A fix waits for a person: their decision, or their own edit when nothing could be proposed."""
    rnd = view.current_round
    issues = rnd.gate.issues if rnd is not None and rnd.gate is not None else []
    if rnd is None or rnd.proposal is None:
        return Need("warning", "A decision on the fix is needed, but this round's proposal is not stored yet.")
    by_hand = view.fixer == PERSON or fixed_by_person(view.fixer, rnd.output_text, issues)
    if by_hand:
        n = len(issues)
        text = f"A person's fix is needed: {n} flagged issue{'s' if n != 1 else ''} to fix by hand"
    else:
        fixes = issue_fixes(rnd.proposal)
        text = "Your decision on the fix is needed — " + _issues(sum(f.state == "fixed" for f in fixes), len(fixes))
    if can(Permission.DECIDE_FIX):
        return Need("warning", text + ".", jump="Fix it ↓" if by_hand else "Decide ↓")
    return Need("info", text.replace("Your decision", "A decision", 1) + f"; {who_may(Permission.DECIDE_FIX)} decides.")


def _reviewing(view: RunView, can: Callable[[Permission], bool], refusal: Refusal) -> Need:
    """Reviewers at work, or a person reviewer's slot open (then nothing of the other review is told)."""
    rnd = view.current_round
    reviews = {} if rnd is None else reviews_in(rnd.reviews)
    slots = open_person_slots(view, reviews)
    if slots and (rnd is None or rnd.gate is None):
        text = f"Person review needed from {_slots(slots)}"
        if not can(Permission.PERSON_REVIEW):
            return Need("info", f"{text}; {who_may(Permission.PERSON_REVIEW)} fills it.")
        if any(refusal(slot) is None for slot in slots):
            return Need("warning", text + ".", jump="Review ↓")
        return Need("info", f"{text}. {refusal(slots[0])}")
    if view.status == RunStatus.QUEUED:
        return Need("info", "Waiting for a worker to start the review.")
    if rnd is not None and rnd.gate is not None:
        return Need("info", "The fix agent is proposing edits for the flagged issues.")
    done = len(reviews)
    return Need("info", f"Waiting for reviewers ({done} of {len(panel_slots(view))} in).")


def need(view: RunView, can: Callable[[Permission], bool], refusal: Refusal = lambda slot: None) -> Need:
    """What `view`'s run needs now and from whom; `can` tells what the acting person may do, `refusal` why they may
    not fill a person reviewer's slot (None: they may)."""
    status = view.status
    if status in (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.AWAITING_HUMAN_REVIEW):
        return _reviewing(view, can, refusal)
    if status == RunStatus.AWAITING_APPROVAL:
        return _approval(view, can)
    if status == RunStatus.ESCALATED and view.state.escalation_reason == EscalationReason.PROVIDER_FAILED:
        text = "Could not be reviewed: the model provider failed, so nobody judged the output"
        if budget_spent(view.budget_usd, view.total_cost_usd):
            return Need(
                "warning",
                f"{text}. The run's budget is spent, so it cannot be tried again: "
                f"{who_may(Permission.RESOLVE_ESCALATION)} decides on the Escalations page.",
                page=("pages/escalations.py", "Open this escalation"),
            )
        if can(Permission.RETRY_RUN):
            return Need("warning", text + ". Try again once the provider answers.", jump="Try again ↓")
        return Need("info", f"{text}; {who_may(Permission.RETRY_RUN)} tries again.")
    if status == RunStatus.ESCALATED:
        reason = f" ({words.reason(view.escalation.reason)})" if view.escalation else ""
        return Need(
            "error",
            f"Escalated{reason}: {who_may(Permission.RESOLVE_ESCALATION)} decides on the Escalations page.",
            page=("pages/escalations.py", "Open this escalation"),
        )
    if status == RunStatus.INTERRUPTED:
        if can(Permission.RESUME_RUN):
            return Need("warning", "Interrupted: resume it from the last committed step.", jump="Resume ↓")
        return Need("info", f"Interrupted: {who_may(Permission.RESUME_RUN)} resumes it.")
    if status == RunStatus.SHIPPED:
        who = "all three reviewers" if "D" in panel_slots(view) else "both reviewers"
        return Need("success", f"Shipped: {who} passed it in round {view.state.round}.", jump="Final output ↓")
    if status == RunStatus.RESOLVED_SHIPPED:
        return Need("success", "Shipped by a person after its escalation.", jump="Final output ↓")
    if status == RunStatus.RESOLVED_REJECTED:
        return Need("info", "Rejected by a person after its escalation: nothing ships.")
    if status == RunStatus.SAMPLED and view.batch_id is not None:
        return Need(
            "info",
            f"Reviewed in a sample of batch #{view.batch_id}: the batch fixes it by pattern.",
            page=("pages/batch.py", f"Open batch #{view.batch_id}"),
        )
    return Need("info", words.status(status).capitalize() + ".")


def acting_need(view: RunView) -> Need:
    """What the run needs, for the person acting on this page."""
    return need(view, identity.can, lambda slot: slot_refusal(view, slot, identity.actor()))


def decision_bar(view: RunView) -> None:
    """The bar itself: the sentence, and the link to the action (down this page, or the page that holds it)."""
    said = acting_need(view)
    body = escape_markdown(said.text)
    if said.jump:
        body += f" **[{said.jump}](#{DECIDE_ANCHOR})**"
    getattr(st, said.tone)(body)
    if said.page:
        page, label = said.page
        # The page opens on this run's batch or escalation, not on whichever its list shows first.
        params = (
            {"batch": str(view.batch_id)}
            if page == "pages/batch.py"
            else {"run": str(view.id)}
            if page == "pages/escalations.py"
            else None
        )
        st.page_link(page, label=label, icon=":material/arrow_forward:", query_params=params)


def anchor(view: RunView) -> None:
    """Where the bar's link lands, just above the run's actions: a rule that parts the run's history from what to
    do now (a heading with no words: Streamlit gives only headings an id; no HTML of our own on a page)."""
    if acting_need(view).jump:
        st.subheader("", anchor=DECIDE_ANCHOR, divider="gray")
