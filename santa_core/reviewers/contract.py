"""The terse answer contract, checked: what a reviewer's valid JSON must also say before the desk takes it.

A PASS check needs no prose. A failure must be shown, not asserted: every blocking FAIL is named in
critical_issues, and every critical issue quotes the offending text from the output, unless it says the
problem is something absent (`missing`), where there is nothing to quote. An answer that breaks the contract
is refused like a malformed one (asked again, then a reviewer error), never read as a verdict either way.
The completeness rule (one check per criterion) stays the gate's (`santa_core.run.gate.unchecked`).
"""

from __future__ import annotations

from santa_core.models import Review, Rubric


def _key(criterion: str) -> str:
    return criterion.strip().casefold()


def contract_problem(review: Review, rubric: Rubric) -> str | None:
    """Why a schema-valid review breaks the answer contract, in words for the call log; None when it keeps it."""
    advisory = {_key(c.id) for c in rubric.criteria if c.severity == "suggestion"}
    named = {_key(i.criterion) for i in review.critical_issues}
    for check in review.checks:
        if check.result == "FAIL" and _key(check.criterion) not in advisory and _key(check.criterion) not in named:
            return (f"check {check.criterion!r} is FAIL but no critical issue names it: a failure must quote the "
                    "offending text as evidence (or set missing when something is absent)")
    for issue in review.critical_issues:
        if not issue.evidence.strip() and not issue.missing:
            return (f"critical issue on {issue.criterion!r} quotes no evidence: copy the offending text from the "
                    "OUTPUT, or set missing when the problem is something absent")
    if review.verdict == "FAIL" and not review.critical_issues and not review.failed_checks():
        return "verdict FAIL names no failed check and no critical issue: nothing shows what fails"
    return None
