"""The fix agent touches only the flagged spans; bad edits are rejected and shown."""

from __future__ import annotations

import random

import pytest

from santa_core.models import FixEdit, FixPlan, MergedIssue
from santa_core.reviewers.doubles import FunctionFixer
from santa_core.run.fixer import apply_plan, propose_fix

ISSUES = [MergedIssue(criterion="facts", description="wrong year", flagged_by="both"),
          MergedIssue(criterion="cta", description="no link", flagged_by="B")]
TEXT = "Founded in 2019, Acme sells rockets.\nBuy now!\n"


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        pytest.param(FixEdit(issue=0, before="in 2020", after="in 2018"), "not found", id="before-not-found"),
        pytest.param(FixEdit(issue=0, before="", after="x"), "empty", id="empty-before"),
        pytest.param(FixEdit(issue=0, before="o", after="0"), "occurs", id="ambiguous-before"),
        pytest.param(FixEdit(issue=7, before="2019", after="2018"), "not one of the flagged", id="unknown-issue"),
        pytest.param(FixEdit(issue=0, before="2019", after="2019"), "changes nothing", id="no-op"),
    ],
)
def test_bad_edits_are_rejected_and_text_unchanged(edit: FixEdit, reason: str) -> None:
    new, applied, rejected = apply_plan(TEXT, FixPlan(edits=[edit]), ISSUES)
    assert new == TEXT and applied == []
    assert reason in rejected[0].reason


def test_good_edits_apply_and_overlaps_are_rejected() -> None:
    plan = FixPlan(edits=[
        FixEdit(issue=1, before="Buy now!", after="Buy now at https://acme.example!"),
        FixEdit(issue=0, before="in 2019", after="in 2018"),
        FixEdit(issue=0, before="2019, Acme", after="2017, Acme"),
    ])
    new, applied, rejected = apply_plan(TEXT, plan, ISSUES)
    assert new == "Founded in 2018, Acme sells rockets.\nBuy now at https://acme.example!\n"
    assert len(applied) == 2 and "overlaps" in rejected[0].reason


def test_bytes_outside_flagged_spans_stay_identical_property() -> None:
    rng = random.Random(7)
    for _ in range(200):
        words = [f"w{rng.randrange(10_000)}x" for _ in range(rng.randint(20, 60))]
        text = " ".join(words) + rng.choice(["", "\n", "\r\n", "  "])
        targets = rng.sample(sorted(set(words)), k=min(rng.randint(1, 5), len(set(words))))
        plan = FixPlan(edits=[FixEdit(issue=0, before=f" {w} ", after=f" <{w}> ") for w in targets])
        new, applied, _ = apply_plan(" " + text + " ", plan, ISSUES[:1])
        # undo exactly the applied spans: what remains must be the original, byte for byte
        restored = new
        for edit in applied:
            restored = restored.replace(edit.after, edit.before, 1)
        assert restored == " " + text + " "


def test_propose_fix_records_rejections_and_errors() -> None:
    fixer = FunctionFixer("f", lambda req: FixPlan(edits=[FixEdit(issue=0, before="nope", after="x")]))
    proposal = propose_fix(fixer, "spec", TEXT, ISSUES)
    assert proposal.proposed_text == TEXT and len(proposal.rejected) == 1
    broken = FunctionFixer("f", lambda req: 1 / 0)
    proposal = propose_fix(broken, "spec", TEXT, ISSUES)
    assert proposal.error and "ZeroDivisionError" in proposal.error and proposal.edits == []


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        pytest.param(FixEdit(issue=0, before="Buy now!", after="Completely rewritten."),
                     "does not touch", id="rewrite-another-sentence"),
        pytest.param(FixEdit(issue=0, before="sells rockets", after="sells cars"),
                     "does not touch", id="edit-elsewhere-than-the-evidence"),
    ],
)
def test_edits_must_stay_on_the_flagged_evidence(edit: FixEdit, reason: str) -> None:
    issues = [MergedIssue(criterion="facts", description="wrong year", evidence="in 2019", flagged_by="both")]
    new, applied, rejected = apply_plan(TEXT, FixPlan(edits=[edit]), issues)
    assert new == TEXT and applied == [] and reason in rejected[0].reason


def test_edit_far_larger_than_its_evidence_is_rejected() -> None:
    long_text = "x" * 500 + " in 2019 " + "y" * 500
    issues = [MergedIssue(criterion="facts", description="wrong year", evidence="in 2019", flagged_by="B")]
    edit = FixEdit(issue=0, before=long_text.strip(), after="in 2018")
    _, applied, rejected = apply_plan(long_text, FixPlan(edits=[edit]), issues)
    assert applied == [] and "far beyond" in rejected[0].reason
    unanchored = [MergedIssue(criterion="cta", description="no call to action", flagged_by="B")]
    _, applied, rejected = apply_plan(long_text, FixPlan(edits=[FixEdit(issue=0, before=long_text, after="z")]),
                                      unanchored)
    assert applied == [] and "at most 300" in rejected[0].reason


def test_overlapping_occurrences_count_as_ambiguous() -> None:
    _, applied, rejected = apply_plan("aaa", FixPlan(edits=[FixEdit(issue=0, before="aa", after="b")]), ISSUES)
    assert applied == [] and "occurs 2 times" in rejected[0].reason


def test_many_small_edits_cannot_add_up_to_a_rewrite() -> None:
    text = "\n".join(f"Paragraph {i}: " + "filler words here. " * 10 for i in range(10))
    issues = [MergedIssue(criterion="tone", description="too flat", flagged_by="B")]  # no evidence
    plan = FixPlan(edits=[FixEdit(issue=0, before=line, after="Rewritten.") for line in text.splitlines()])
    new, applied, rejected = apply_plan(text, plan, issues)
    assert len(applied) == 3 and len(rejected) == 7
    assert "more than 3 edits for one issue" in rejected[0].reason


def test_half_the_output_is_the_most_a_plan_may_replace() -> None:
    text = "".join(f"<{i:02d}>" + "x" * 46 for i in range(20))  # 1,000 characters
    issues = [MergedIssue(criterion=f"c{i}", description=f"problem {i}", flagged_by="B") for i in range(20)]
    plan = FixPlan(edits=[FixEdit(issue=i, before=f"<{i:02d}>" + "x" * 46, after="y") for i in range(20)])
    _, applied, rejected = apply_plan(text, plan, issues)
    assert len(applied) == 10 and "over 500 characters" in rejected[0].reason


def test_an_edit_may_not_balloon() -> None:
    issues = [MergedIssue(criterion="facts", description="wrong year", evidence="in 2019", flagged_by="B")]
    edit = FixEdit(issue=0, before="in 2019", after="in 2018" + "!" * 2000)
    _, applied, rejected = apply_plan(TEXT, FixPlan(edits=[edit]), issues)
    assert applied == [] and "a fix may add at most 1,000" in rejected[0].reason
