"""The terse answer contract, checked: what a reviewer's valid JSON must also say before the desk takes it.

A PASS check needs no prose. A failure must be shown, not asserted: every blocking FAIL is named in
critical_issues, and every critical issue quotes the offending text from the output, unless it says the
problem is something absent (`missing`), where there is nothing to quote. An answer that breaks the contract
is refused like a malformed one (asked again, then a reviewer error), never read as a verdict either way.
The completeness rule (one check per criterion) stays the gate's (`santa_core.run.gate.unchecked`).
"""

from __future__ import annotations

from santa_core.models import Review, Rubric
from santa_core.scope import stands_in

MAX_SUGGESTIONS = 3
"""Suggestions the contract asks for at most; more are cut (kept in the raw answer), never asked again for."""


def _key(criterion: str) -> str:
    return criterion.strip().casefold()


def contract_problem(review: Review, rubric: Rubric, output: str | None = None) -> str | None:
    """Why a schema-valid review breaks the answer contract, in words for the call log; None when it keeps it.

    With `output`, a quote must stand in it (as the fix agent finds quotes): a quote the output does not hold
    shows nothing. Advisory ("suggestion") ids match exactly, as the gate matches them (a near miss blocks).
    """
    # Imported here: the run package's modules import the reviewers' (calls → contract), so a module-level import
    # made `import santa_core.reviewers.calls` fail unless `santa_core.run` was imported first (the benches did not).
    from santa_core.run.gate import blocking_failed_checks

    blocking = blocking_failed_checks(review, rubric.advisory_ids())
    named = {_key(i.criterion) for i in review.critical_issues}
    for check in blocking:
        if _key(check.criterion) not in named:
            return (
                f"check {check.criterion!r} is FAIL but no critical issue names it: a failure must quote the "
                "offending text as evidence (or set missing when something is absent)"
            )
    for issue in review.critical_issues:
        if issue.evidence.strip() and issue.missing:
            return (
                f"critical issue on {issue.criterion!r} quotes evidence and says it is missing: a quote shows "
                "text that is there; missing is only for what is absent"
            )
        if not issue.evidence.strip() and not issue.missing:
            return (
                f"critical issue on {issue.criterion!r} quotes no evidence: copy the offending text from the "
                "OUTPUT, or set missing when the problem is something absent"
            )
        # Found as the fix agent finds it (`scope.stands_in`: spacing, case, quote marks, dashes, invisible
        # characters folded), so no quote the fix could anchor is refused here.
        if output is not None and issue.evidence.strip() and not stands_in(output, issue.evidence):
            return (
                f"critical issue on {issue.criterion!r} quotes text the OUTPUT does not hold: {issue.evidence[:80]!r}"
            )
    if review.verdict == "FAIL" and not review.critical_issues and not blocking:
        return "verdict FAIL names no failed critical check and no critical issue: nothing shows what blocks"
    return None
