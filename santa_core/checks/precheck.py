"""What runs before the reviewers: injection hits plus the failed checks of critical criteria.

A hit is an issue flagged by "check": it makes the round NAUGHTY without paying two reviewers
for an injection, and it reaches the fix agent beside the reviewers' issues.
"""

from __future__ import annotations

from santa_core.checks.criteria import run_criterion_checks
from santa_core.checks.injection import detect_injection
from santa_core.checks.signals import context_of
from santa_core.models import CheckOutcome, MergedIssue, Rubric


def precheck_issues(
    rubric: Rubric, output: str, outcomes: list[CheckOutcome] | None = None, spec: str = ""
) -> list[MergedIssue]:
    """Injection hits (in the output and the spec) plus failed checks of critical criteria, as issues flagged by "check".

    Pass `outcomes` (from `run_criterion_checks`) when you have them, so the checks run once and
    the issues agree with the outcomes shown or stored.
    """
    ctx = context_of(rubric)
    return (
        detect_injection(output, ctx=ctx)
        + detect_injection(spec, where="spec", ctx=ctx)
        + critical_failures(rubric, output, outcomes)
    )


def critical_failures(rubric: Rubric, output: str, outcomes: list[CheckOutcome] | None = None) -> list[MergedIssue]:
    """The failed checks of critical criteria, as issues flagged by "check" (each alone decides a round NAUGHTY)."""
    severity = {c.id: c.severity for c in rubric.criteria}
    return [
        MergedIssue(
            criterion=o.criterion,
            description=f"deterministic check {o.check_type} failed: {o.detail}",
            evidence=o.evidence,
            flagged_by="check",
        )
        for o in (run_criterion_checks(rubric, output) if outcomes is None else outcomes)
        if o.result == "FAIL" and severity.get(o.criterion) == "critical"
    ]
