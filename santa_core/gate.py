"""The AND gate: both reviewers PASS → NICE; anything else → NAUGHTY. No partial credit.

Also merges and de-duplicates the two reviewers' critical issues with attribution.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher

from santa_core.models import (
    GateDecision,
    GateResult,
    MergedIssue,
    ReviewIssue,
    ReviewOutcome,
    ReviewStatus,
)

SIMILAR = 0.6
"""Description similarity above which two issues on one criterion count as the same issue."""


def _norm(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", folded)).strip()


def same_issue(a: ReviewIssue | MergedIssue, b: ReviewIssue | MergedIssue) -> bool:
    """Same criterion and either overlapping evidence or similar descriptions."""
    if _norm(a.criterion) != _norm(b.criterion):
        return False
    ea, eb = _norm(a.evidence), _norm(b.evidence)
    if ea and eb and (ea in eb or eb in ea):
        return True
    return SequenceMatcher(None, _norm(a.description), _norm(b.description)).ratio() >= SIMILAR


def _issues_of(outcome: ReviewOutcome) -> list[ReviewIssue]:
    """Critical issues of a review, plus failed checks the reviewer forgot to list as issues."""
    if outcome.review is None:
        return []
    issues = list(outcome.review.critical_issues)
    listed = {_norm(i.criterion) for i in issues}
    for check in outcome.review.failed_checks():
        if _norm(check.criterion) not in listed:
            issues.append(ReviewIssue(criterion=check.criterion, description=check.detail))
    return issues


def merge_issues(b: ReviewOutcome, c: ReviewOutcome) -> list[MergedIssue]:
    """Union of B's and C's issues; an issue both raised appears once, attributed to both."""
    merged = [MergedIssue(**i.model_dump(), flagged_by="B") for i in _dedupe(_issues_of(b))]
    for issue in _dedupe(_issues_of(c)):
        twin = next((m for m in merged if m.flagged_by == "B" and same_issue(m, issue)), None)
        if twin is not None:
            twin.flagged_by = "both"
            twin.evidence = twin.evidence or issue.evidence
        else:
            merged.append(MergedIssue(**issue.model_dump(), flagged_by="C"))
    return merged


def _dedupe(issues: list[ReviewIssue]) -> list[ReviewIssue]:
    """Drop a reviewer's own repeats of one issue."""
    kept: list[ReviewIssue] = []
    for issue in issues:
        if not any(same_issue(k, issue) for k in kept):
            kept.append(issue)
    return kept


def _reasons(outcome: ReviewOutcome) -> list[str]:
    """Why one slot did not PASS, in words for the page."""
    if outcome.status != ReviewStatus.OK or outcome.review is None:
        return [f"reviewer {outcome.slot} ({outcome.reviewer}) {outcome.status.value}: "
                f"{outcome.error or 'no verdict'}"]
    if outcome.review.verdict == "PASS" and outcome.review.failed_checks():
        return [f"reviewer {outcome.slot} said PASS but failed its own checks: counted as FAIL"]
    if outcome.review.verdict == "FAIL":
        return [f"reviewer {outcome.slot} ({outcome.reviewer}) FAIL"]
    return []


def decide(b: ReviewOutcome, c: ReviewOutcome, prechecks: list[MergedIssue] | None = None) -> GateResult:
    """The gate for one round. Exactly one combination is NICE: both valid PASS, no pre-check hit."""
    prechecks = prechecks or []
    nice = b.effective_verdict == "PASS" and c.effective_verdict == "PASS" and not prechecks
    issues = list(prechecks) + merge_issues(b, c)
    errored = any(o.status != ReviewStatus.OK or o.review is None for o in (b, c))
    reasons = _reasons(b) + _reasons(c) + [f"pre-check: {i.description}" for i in prechecks]
    return GateResult(
        decision=GateDecision.NICE if nice else GateDecision.NAUGHTY,
        issues=issues,
        reasons=reasons,
        reviewer_error=errored,
        injection=any(i.criterion == "injection" for i in prechecks),
    )
