"""What the Approve button says is true of the text in the box; refused edits are never "no edit was proposed".

The oracle of the label judgement is plain: an issue whose quoted text still stands word for word in the box
stays unfixed; the expected lists are written by hand.
"""

from __future__ import annotations

from santa_core.models import FixEdit, FixPlan, MergedIssue
from santa_core.reviewers.doubles import FunctionFixer
from santa_core.run.fixer import issue_fixes, judge_text, propose_fix, take_edit

TEXT = (
    "Studies show freelancers who budget weekly save more. With Brightline you are guaranteed to never miss a "
    "tax payment again. Try it free for 30 days - it's completely risk-free."
)
ISSUES = [
    MergedIssue(criterion="facts", description="appeal to studies", evidence="Studies show", flagged_by="both"),
    MergedIssue(criterion="facts", description="guarantee", evidence="guaranteed to never miss", flagged_by="both"),
    MergedIssue(criterion="facts", description="risk-free claim", evidence="completely risk-free", flagged_by="both"),
    MergedIssue(criterion="tone", description="too pushy", evidence="", flagged_by="B"),
]


def proposal(*edits: FixEdit):
    return propose_fix(FunctionFixer("m", lambda r: FixPlan(edits=list(edits))), "spec", TEXT, ISSUES)


def numbers(fixes) -> list[int]:
    return [f.number for f in fixes]


def test_the_proposals_own_text_is_judged_as_the_fix_table_judges_it() -> None:
    p = proposal(FixEdit(issue=0, before="Studies show", after="Some sources suggest"))
    left, unsure = judge_text(p, p.proposed_text)
    assert numbers(left) == [2, 3, 4] and unsure == []


def test_after_a_hand_edit_an_issue_whose_quote_is_still_there_stays_unfixed() -> None:
    p = proposal(FixEdit(issue=0, before="Studies show", after="Some sources suggest"))
    typed = p.proposed_text.replace("guaranteed to never miss", "less likely to miss")  # issue 2 by hand
    left, unsure = judge_text(p, typed)
    assert "completely risk-free" in typed and "guaranteed to never miss" not in typed  # the oracle
    assert numbers(left) == [3]  # "risk-free" is still in the box
    assert numbers(unsure) == [4]  # it quotes nothing: the desk cannot check it


def test_a_hand_edit_that_puts_a_quote_back_is_judged_unfixed_again() -> None:
    p = proposal(
        FixEdit(issue=0, before="Studies show", after="Some sources suggest"),
        FixEdit(issue=2, before="completely risk-free", after="easy to cancel"),
    )
    typed = p.proposed_text.replace("Some sources suggest", "Studies show") + " Really."
    assert numbers(judge_text(p, typed)[0]) == [1, 2]


def test_a_refused_edit_labelled_with_another_issue_is_named_as_refused_on_the_issue_it_touched() -> None:
    # The fix agent labels its edit of issue 3's sentence as issue 1's: refused (outside issue 1's sentence).
    p = proposal(FixEdit(issue=0, before="it's completely risk-free", after="cancel any time"))
    assert p.edits == [] and len(p.rejected) == 1
    fixes = {f.number: f for f in issue_fixes(p)}
    assert fixes[3].state == "failed" and "refused" in fixes[3].reason
    assert fixes[2].reason == "no edit was proposed for it"  # nothing touched issue 2's quote


def test_taking_a_refused_edit_applies_it_to_the_box_once() -> None:
    edit = FixEdit(issue=0, before="it's completely risk-free", after="cancel any time")
    assert take_edit(TEXT, edit)[0] == TEXT.replace("it's completely risk-free", "cancel any time")
    assert take_edit("nothing here", edit) == (None, "its 'before' text is not in the box")
    assert take_edit(TEXT + " " + TEXT, edit)[1] == "its 'before' text stands 2 times in the box"


def test_a_sentence_reworded_around_the_flagged_words_leaves_its_issue_unfixed() -> None:
    """Review B of issue 34: reviewers quote the whole sentence, so any hand edit of another word made the quote go
    away and the label said plain "Approve" with "risk-free" still in the box. The words the complaint flags (in
    quotes, standing in the evidence) still there: the issue stays unfixed; gone: fixed."""
    text = "Our savings plan is risk-free for everyone who joins. Sign up today."
    issue = MergedIssue(
        criterion="facts",
        description="The text contains a 'risk-free' claim.",
        evidence="Our savings plan is risk-free for everyone who joins.",
        flagged_by="both",
    )
    p = propose_fix(FunctionFixer("m", lambda r: FixPlan(edits=[])), "spec", text, [issue])
    for typed in (
        text.replace("everyone who joins", "all who join"),
        text.replace("Our", "The"),
        text.replace("joins.", "joins!"),
    ):
        left, _ = judge_text(p, typed)
        assert numbers(left) == [1], typed
    left, unsure = judge_text(p, text.replace("is risk-free for", "carries a low risk for"))
    assert left == [] and unsure == []
