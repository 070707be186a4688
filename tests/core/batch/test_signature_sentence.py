"""A signature recognises; it is not the defect (issue 32). An unsampled item holds the planted promise
and, in another sentence, an innocent use of the signature's word. The approved edit removes the promise, exactly as
on the other 40 items, yet the item is not fixed: the innocent sentence was made an "issue" by the recogniser, and a
fix is accepted only when every issue's evidence is gone, so the text rule and the fix agent's identical edit are
both refused and the item goes to a person."""

from __future__ import annotations

import pytest

from santa_core.batch import reach
from santa_core.batch.patterns import Pattern
from santa_core.models import FixEdit, FixProposal

PROMISE = "Your satisfaction is guaranteed forever."
FIXED = "We hope you enjoy it."
ITEM = f"Hello customer 7, our spring sale starts today. {PROMISE} Tell us about your satisfaction in our survey."


def pattern() -> Pattern:
    return Pattern(
        key="p",
        criterion="compliance",
        title="promises satisfaction guaranteed forever",
        evidence=[PROMISE],
        match_on=[PROMISE],
        items=["item-001"],
        count=1,
        representative="item-001",
        signature=["satisfaction"],
    )


@pytest.mark.xfail(
    strict=True,
    reason="known limit: a sentence holding a run of the quote's words (here \"your "
    'satisfaction") is an issue too, so a second real defect worded differently is never dropped '
    "(test_second_defect_sentence.py); this item then goes to a person: safe, not yet smart",
)
def test_the_approved_edit_fixes_an_unsampled_item_whose_other_sentence_uses_the_signature_word() -> None:
    issues = reach.reached(pattern(), [("item-007", ITEM)], {"item-007"})["item-007"]
    edit = FixEdit(issue=0, before=PROMISE, after=FIXED)
    plan = reach.rule_plan("item-007", False, issues, ITEM, [edit])
    # The oracle, by hand: the promise is replaced, every other byte kept.
    fixed = ITEM.replace(PROMISE, FIXED)
    if plan is None:  # the text rule refused: the fix agent makes the very same edit
        answer = FixProposal(issues=issues, edits=[edit], before_text=ITEM, proposed_text=fixed)
        plan = reach.agent_plan("item-007", False, issues, answer)
    assert plan.after_text == fixed, plan.error


@pytest.mark.xfail(
    strict=True,
    reason="known limit: a fix is judged by the single run's rule (its evidence no longer "
    "stands in its sentence), so changing one word of the quote passes; the item then counts as "
    "possibly failing in the stopping rule until a sample reviews it",
)
def test_a_fix_that_keeps_the_defect_in_an_unsampled_item_is_not_accepted() -> None:
    # An unsampled item's issue quotes its whole sentence, so "the evidence is gone" means "the sentence changed":
    # a one-word edit that keeps the promise passes as a fix of the issue, and auto-approve takes it as complete.
    item = f"Hello customer 9, our spring sale starts today. {PROMISE} Discounts apply to orders over $50."
    issues = reach.reached(pattern(), [("item-009", item)], {"item-009"})["item-009"]
    edit = FixEdit(issue=0, before="Your satisfaction", after="Our satisfaction")
    kept = item.replace("Your satisfaction", "Our satisfaction")
    answer = FixProposal(issues=issues, edits=[edit], before_text=item, proposed_text=kept)
    plan = reach.agent_plan("item-009", False, issues, answer)
    assert plan.after_text != kept and plan.needs_person, "a fix that keeps the promise was accepted"
