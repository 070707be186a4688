"""revb (adversarial review of issue 32): a batch fix of an unsampled item is "accepted" when it changes any word of
the flagged sentence, since the unsampled item's issue evidence is the whole sentence: the defect stays."""

from __future__ import annotations

from santa_core.batch import reach
from santa_core.batch.patterns import SampledFailure, group_patterns
from santa_core.models import FixEdit, FixPlan, FixProposal, MergedIssue
from santa_core.reviewers.doubles import FunctionFixer
from santa_core.run.fixer import is_complete, propose_fix

REP = "Hello. Your order ships today, satisfaction guaranteed forever. Thanks."
UNSAMPLED = "Hi there. Your parcel leaves now, satisfaction guaranteed forever. Bye."


def _pattern():
    failure = SampledFailure(
        item_key="a",
        output=REP,
        issues=[
            MergedIssue(
                criterion="c", description="an unkeepable promise", evidence="guaranteed forever", flagged_by="both"
            )
        ],
    )
    [pattern] = group_patterns([failure])
    return pattern


def test_an_unsampled_items_fix_that_keeps_the_defect_is_not_accepted() -> None:
    """The fix agent edits "now" -> "soon" in the flagged sentence and leaves "guaranteed forever": not fixed."""
    pattern = _pattern()
    targets = reach.reached(pattern, [("a", REP), ("b", UNSAMPLED)], {"b"})
    issues = targets["b"]
    assert issues, "the unsampled item is reached with its sentence as the issue"
    lazy = FunctionFixer(
        "lazy", lambda req: FixPlan(edits=[FixEdit(issue=0, before="leaves now", after="leaves soon")])
    )
    answer: FixProposal = propose_fix(lazy, "spec", UNSAMPLED, issues)
    plan = reach.agent_plan("b", False, issues, answer)
    assert "guaranteed forever" in plan.after_text
    # The defect (the pattern's quote) still stands: the item must need a person, and the plan must not be complete.
    assert plan.needs_person, f"accepted as fixed although the defect stays: {plan.after_text!r}"


def test_auto_approve_does_not_take_a_fix_that_keeps_the_defect_as_complete() -> None:
    pattern = _pattern()
    issues = reach.reached(pattern, [("b", UNSAMPLED)], {"b"})["b"]
    lazy = FunctionFixer(
        "lazy", lambda req: FixPlan(edits=[FixEdit(issue=0, before="leaves now", after="leaves soon")])
    )
    answer = propose_fix(lazy, "spec", UNSAMPLED, issues)
    assert not is_complete(answer), "a fix that leaves the pattern's quote in place counts as complete"
