"""Every sentence of an unsampled item that holds the defect's own words is an issue. Before, the tiers of
`signature_issues` kept only the sentences that showed the MOST of the defect. The fix meant to
drop a sentence the signature alone recognises ("tell us about your satisfaction"); it also drops a second real
defect whose wording differs slightly from the quote (a run of its words), so that sentence is neither an issue nor
in scope: the item is marked fixed with a promise still in it."""

from __future__ import annotations

from santa_core.batch import reach
from santa_core.batch.patterns import Pattern

PROMISE = "Your satisfaction is guaranteed forever."
ITEM = f"Hello customer 7. {PROMISE} Every refund is guaranteed, forever, no questions asked."


def test_a_second_defective_sentence_with_a_variant_wording_is_still_an_issue() -> None:
    p = Pattern(
        key="p",
        criterion="compliance",
        title="promises guaranteed forever",
        evidence=[PROMISE],
        match_on=[PROMISE],
        items=["item-001"],
        count=1,
        representative="item-001",
        signature=["guaranteed"],
    )
    issues = reach.reached(p, [("item-007", ITEM)], {"item-007"})["item-007"]
    evidence = [i.evidence for i in issues]
    # One issue per defective sentence: the second one's evidence is the run of the quote's words it holds.
    assert evidence == [PROMISE, "is guaranteed, forever"], evidence
