"""The AND gate: both reviewers PASS → NICE; anything else → NAUGHTY. No partial credit.

When the rubric asks for a third reviewer (slot D) on its high-risk criteria, D must PASS those too.
Also merges and de-duplicates the reviewers' critical issues with attribution.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from difflib import SequenceMatcher

from santa_core.checks.extraction import extraction_issue, extraction_reason
from santa_core.checks.screen import screen_issue, screen_reason
from santa_core.models import (
    CheckResult,
    GateDecision,
    GateResult,
    MergedIssue,
    Review,
    ReviewIssue,
    ReviewOutcome,
    ReviewStatus,
    Rubric,
    ScreenResult,
    Verdict,
)

SIMILAR = 0.6
"""Description similarity above which two issues on one criterion count as the same issue."""


PRECHECK = "pre-check: "
"""How a gate's reason that comes from a deterministic check (not a reviewer) begins."""


_NOT_WORD = re.compile(r"\W+")


def normalise(text: str) -> str:
    """Text folded for comparison: NFKC, case-folded, punctuation as spaces, spaces collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    # Punctuation and spaces alike become one space a run, in one pass (a substitution per punctuation mark, then
    # one per run of spaces, gave the same text at twice the time on punctuation-heavy text).
    return _NOT_WORD.sub(" ", folded).strip()


_STOPWORDS = frozenset(
    "a an the is are was were be of in on at to and or for it this that with as not no by"
    # words every complaint uses: sharing them says nothing about being the same complaint
    " wrong incorrect inaccurate false missing error issue problem output text claim invalid"
    " unsupported stated states says given".split()
)
SAME_TEXT = 0.9
"""Without quotes on both sides, descriptions must be this close to count as one issue."""


def content_words(text: str) -> set[str]:
    """The normalised words of a text that carry meaning (stop words left out)."""
    return {w for w in normalise(text).split() if w not in _STOPWORDS}


def evidence_overlaps(a: str, b: str) -> bool:
    """Most of the longer quote's words are shared (a short quote inside a long one is not enough)."""
    wa, wb = set(normalise(a).split()), set(normalise(b).split())
    return bool(wa and wb) and len(wa & wb) / max(len(wa), len(wb)) >= 0.5


def same_issue(a: ReviewIssue | MergedIssue, b: ReviewIssue | MergedIssue) -> bool:
    """Same criterion and the same complaint about the same text.

    With quotes on both sides the quotes must overlap and the descriptions agree (similar, or
    sharing a specific word); without, the descriptions must be nearly identical. When unsure,
    two issues stay apart: a duplicate costs the fix agent a line, a wrong merge drops an issue.
    """
    if normalise(a.criterion) != normalise(b.criterion):
        return False
    if normalise(a.evidence) and normalise(b.evidence):
        # The quote check first: it is cheap, and most pairs of issues quote different text.
        return evidence_overlaps(a.evidence, b.evidence) and descriptions_agree(a, b)
    return similar(normalise(a.description), normalise(b.description), SAME_TEXT)


def descriptions_agree(a: ReviewIssue | MergedIssue, b: ReviewIssue | MergedIssue) -> bool:
    """Two quoted issues' descriptions say the same thing: similar wording, or a shared content word."""
    return similar(normalise(a.description), normalise(b.description), SIMILAR) or bool(
        content_words(a.description) & content_words(b.description)
    )


MAX_WORDING_CHARS = 2_000
"""The longest description (normalised) whose wording `similar` compares character by character.

`difflib`'s ratio takes time up to quadratic in the text (random CJK: 4,000 characters 0.03 s, 40,000 about 2 s), and
a description is a model's answer, of any length. A complaint a reviewer writes is a few sentences: 2,000 characters
keep every ordinary one compared as before, at a few hundredths of a second at worst."""


def similar(a: str, b: str, threshold: float) -> bool:
    """Whether two normalised texts' `difflib` ratio reaches `threshold`, in time bounded past MAX_WORDING_CHARS.

    The ratio's upper bounds (linear) decide first, as they would. Past MAX_WORDING_CHARS on either side only an
    equal text is similar: when unsure, two issues stay apart (a duplicate costs the fix agent a line; a wrong merge
    drops an issue, and in a batch joins patterns, so a fix would reach items nobody flagged).
    """
    if a == b:
        return True  # a ratio of 1
    matcher = SequenceMatcher(None, a, b)
    if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
        return False
    return max(len(a), len(b)) <= MAX_WORDING_CHARS and matcher.ratio() >= threshold


def blocking_failed_checks(review: Review, advisory: Collection[str] = ()) -> list[CheckResult]:
    """Failed checks that block shipping: all but those of advisory ("suggestion") criteria.

    Advisory ids match exactly (not loosely, like issues do): a check named "no-risk" must never
    count as the suggestion "no--risk". A near miss blocks: fail closed.
    """
    skip = set(advisory)
    return [c for c in review.failed_checks() if c.criterion not in skip]


def _issues_of(outcome: ReviewOutcome, advisory: Collection[str] = ()) -> list[ReviewIssue]:
    """Critical issues of a review, plus blocking failed checks the reviewer forgot to list as issues."""
    if outcome.review is None:
        return []
    issues = list(outcome.review.critical_issues)
    listed = {normalise(i.criterion) for i in issues}
    for check in blocking_failed_checks(outcome.review, advisory):
        if normalise(check.criterion) not in listed:
            issues.append(ReviewIssue(criterion=check.criterion, description=check.detail))
    return issues


def merge_issues(b: ReviewOutcome, c: ReviewOutcome, advisory: Collection[str] = ()) -> list[MergedIssue]:
    """Union of B's and C's issues; an issue both raised appears once, attributed to both."""
    merged = [MergedIssue(**i.model_dump(), flagged_by="B") for i in _dedupe(_issues_of(b, advisory))]
    for issue in _dedupe(_issues_of(c, advisory)):
        twin = next((m for m in merged if m.flagged_by == "B" and same_issue(m, issue)), None)
        if twin is not None:
            twin.flagged_by = "both"
            twin.evidence = twin.evidence or issue.evidence
        else:
            merged.append(MergedIssue(**issue.model_dump(), flagged_by="C"))
    return merged


def _third_issues(merged: list[MergedIssue], d: ReviewOutcome, advisory: Collection[str]) -> list[MergedIssue]:
    """The third reviewer's issues B and C did not raise, attributed to D; one they raised keeps their attribution
    (agreement stays B against C, and D's own review shows what it saw)."""
    return [
        MergedIssue(**i.model_dump(), flagged_by="D")
        for i in _dedupe(_issues_of(d, advisory))
        if not any(same_issue(m, i) for m in merged)
    ]


def _absent_third() -> ReviewOutcome:
    """What the gate counts for a third reviewer the rubric asks for and the run has none: an error, never a PASS."""
    return ReviewOutcome(
        slot="D",
        reviewer="(none)",
        status=ReviewStatus.ERROR,
        error="the rubric asks for a third reviewer on its high-risk criteria and none was named",
    )


def _dedupe(issues: list[ReviewIssue]) -> list[ReviewIssue]:
    """Drop a reviewer's own repeats of one issue."""
    kept: list[ReviewIssue] = []
    for issue in issues:
        if not any(same_issue(k, issue) for k in kept):
            kept.append(issue)
    return kept


def unchecked(outcome: ReviewOutcome, criteria: list[str]) -> list[str]:
    """Rubric criteria the review has no check for (a PASS must check every one)."""
    if outcome.review is None:
        return list(criteria)
    # Exact up to case and surrounding space, unlike issue matching: "no-risk" must not count as a
    # check of "no--risk" (ids that differ only in punctuation are both valid).
    seen = {c.criterion.strip().casefold() for c in outcome.review.checks}
    return [c for c in criteria if c.strip().casefold() not in seen]


def slot_passes(outcome: ReviewOutcome, criteria: list[str], advisory: Collection[str] = ()) -> bool:
    """A valid PASS with no critical issue, no blocking failed check, covering every criterion.

    A failed check of an advisory ("suggestion") criterion does not block; a FAIL verdict
    always does (fail closed: the reviewer's own verdict is never overruled towards PASS).
    """
    review = outcome.review
    if outcome.status != ReviewStatus.OK or review is None or review.verdict != "PASS":
        return False
    return (
        not review.critical_issues and not blocking_failed_checks(review, advisory) and not unchecked(outcome, criteria)
    )


def judged_criteria(rubric: Rubric, slot: str) -> list[str]:
    """The criteria a slot's review must check: B and C every one of the rubric's, D its high-risk ones only."""
    return rubric.third_reviewer_ids() if slot == "D" else rubric.criterion_ids()


def counted_verdict(outcome: ReviewOutcome, rubric: Rubric) -> Verdict:
    """What a stored slot's answer counts as under its run's rubric (the criteria that slot judges)."""
    return slot_verdict(outcome, judged_criteria(rubric, outcome.slot), rubric.advisory_ids())


def slot_verdict(outcome: ReviewOutcome, criteria: list[str], advisory: Collection[str] = ()) -> Verdict:
    """What a slot's answer counts as, stored and shown: exactly what the gate reads (`slot_passes`)."""
    return "PASS" if slot_passes(outcome, criteria, advisory) else "FAIL"


def why_not_pass(outcome: ReviewOutcome, criteria: list[str], advisory: Collection[str] = ()) -> list[str]:
    """Why one slot did not PASS, in words for the page."""
    who = f"reviewer {outcome.slot} ({outcome.reviewer})"
    if outcome.status != ReviewStatus.OK or outcome.review is None:
        return [f"{who} {outcome.status.value}: {outcome.error or 'no verdict'}"]
    review = outcome.review
    if review.verdict == "FAIL":
        return [f"{who} FAIL"]
    if blocking_failed_checks(review, advisory):
        return [f"{who} said PASS but failed its own checks: counted as FAIL"]
    if review.critical_issues:
        return [f"{who} said PASS but listed critical issues: counted as FAIL"]
    if missing := unchecked(outcome, criteria):
        return [f"{who} said PASS without checking {', '.join(missing)}: counted as FAIL"]
    return []


def _says(outcome: ReviewOutcome, criterion: str) -> str | None:
    """What one valid review says of one criterion: "FAIL", "PASS", or None when it is silent."""
    review = outcome.review
    if outcome.status != ReviewStatus.OK or review is None:
        return None
    key = criterion.strip().casefold()
    failed = any(i.criterion.strip().casefold() == key for i in review.critical_issues) or any(
        c.criterion.strip().casefold() == key and c.result == "FAIL" for c in review.checks
    )
    if failed:
        return "FAIL"
    return "PASS" if any(c.criterion.strip().casefold() == key for c in review.checks) else None


def disagree(b: ReviewOutcome, c: ReviewOutcome, criteria: list[str], advisory: Collection[str] = ()) -> list[str]:
    """Blocking criteria one reviewer PASSed and the other FAILed (a sign the rubric is ambiguous)."""
    exempt = {a.strip().casefold() for a in advisory}
    return [
        k for k in criteria if k.strip().casefold() not in exempt and {_says(b, k), _says(c, k)} == {"PASS", "FAIL"}
    ]


def decide(
    b: ReviewOutcome,
    c: ReviewOutcome,
    prechecks: list[MergedIssue],
    criteria: list[str],
    advisory: Collection[str] = (),
    d: ReviewOutcome | None = None,
    third: list[str] | None = None,
) -> GateResult:
    """The gate for one round. Exactly one combination is NICE: every reviewer a valid, complete PASS, no pre-check hit.

    `criteria` are the rubric's ids, every one of which a PASS must check; there is no default,
    because a gate told of no criteria would take a PASS with no checks at its word.
    `advisory` names the rubric's "suggestion" criteria: their failed checks never block.
    `third` names the high-risk criteria a third reviewer must PASS as well (`d`, judging only those); with
    `third` set and no `d`, the round is NAUGHTY with a reviewer error: the panel never silently shrinks.
    """
    if not criteria:
        raise ValueError("the gate needs the rubric's criteria: a PASS is complete only against them")
    panel = [(b, criteria), (c, criteria)]
    if third:
        panel.append((d if d is not None else _absent_third(), third))
    nice = all(slot_passes(o, ids, advisory) for o, ids in panel) and not prechecks
    issues = list(prechecks) + merge_issues(b, c, advisory)
    if third and d is not None:
        issues += _third_issues(issues, d, advisory)
    # An invalid answer, or a PASS that skipped criteria, is a reviewer failure, not a verdict.
    errored = any(
        o.status != ReviewStatus.OK or o.review is None or (o.review.verdict == "PASS" and unchecked(o, ids))
        for o, ids in panel
    )
    reasons = [r for o, ids in panel for r in why_not_pass(o, ids, advisory)] + [
        f"{PRECHECK}{i.description}" for i in prechecks
    ]
    if not nice and not issues and not errored:
        # The engine escalates this round instead of paying the fix agent for nothing.
        reasons.append("NAUGHTY with no critical issue or failed check named: nothing a fix agent could fix")
    return GateResult(
        decision=GateDecision.NICE if nice else GateDecision.NAUGHTY,
        issues=issues,
        reasons=reasons,
        reviewer_error=errored,
        injection=any(i.criterion == "injection" for i in prechecks),
        disagreement=bool(disagree(b, c, criteria, advisory)),
    )


def screened(results: list[ScreenResult]) -> GateResult | None:
    """NAUGHTY before any reviewer is asked when a known-answer screen caught a text or the extraction check found
    its quotes in it (injection), or either could not tell (fail closed: a reviewer error); None when every model
    check of every screened text is clean."""
    caught = [r for r in results if r.verdict in ("took_over", "quoted")]
    failed = [r for r in results if r.verdict == "error"]
    if not caught and not failed:
        return None
    if caught:
        return GateResult(
            decision=GateDecision.NAUGHTY,
            issues=[_issue(r) for r in caught],
            reasons=[_reason(r) for r in caught],
            injection=True,
        )
    return GateResult(
        decision=GateDecision.NAUGHTY, issues=[], reasons=[_reason(r) for r in failed], reviewer_error=True
    )


def _issue(result: ScreenResult) -> MergedIssue:
    """The gate's issue for a text one of the screen's model checks caught."""
    return extraction_issue(result) if result.check == "extraction" else screen_issue(result)


def _reason(result: ScreenResult) -> str:
    """The gate's reason for a screen's model check that caught the text or failed."""
    return extraction_reason(result) if result.check == "extraction" else screen_reason(result)


CHECKS_FIRST = "a critical deterministic check failed; no reviewer was asked"
"""The reason a round carries when its failed checks decided it before any reviewer was paid (`checked_out`)."""


def checked_out(prechecks: list[MergedIssue]) -> GateResult:
    """NAUGHTY before any reviewer is asked: a critical criterion's deterministic check failed.

    Not an escalation: the round goes to the fix agent with the checks' issues, and fresh reviewers judge the fixed
    text next round. Paying two reviewers first would buy nothing, since no verdict of theirs could ship this text.
    """
    return GateResult(
        decision=GateDecision.NAUGHTY,
        issues=list(prechecks),
        reasons=[f"{PRECHECK}{CHECKS_FIRST}"] + [f"{PRECHECK}{i.description}" for i in prechecks],
    )


def checked_out_first(gate: GateResult | None) -> bool:
    """Whether a stored gate is one a failed check decided before the reviewers (`checked_out`)."""
    return gate is not None and f"{PRECHECK}{CHECKS_FIRST}" in gate.reasons


def blocked(prechecks: list[MergedIssue]) -> GateResult:
    """NAUGHTY before any reviewer is asked: the output tries to instruct the reviewers."""
    return GateResult(
        decision=GateDecision.NAUGHTY,
        issues=list(prechecks),
        reasons=[f"{PRECHECK}the output addresses the reviewers; no reviewer was asked"]
        + [f"{PRECHECK}{i.description}" for i in prechecks],
        injection=True,
    )
