"""Trying a rubric without a run: on a pasted sample ("Try it") or on past runs' final outputs.

A trial runs the deterministic checks (instant) and, when asked, one reviewer. Its verdict
follows the gate's rules for a single slot: a failed critical check, an injection hit or a
reviewer that does not PASS cleanly is a FAIL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from santa_core.checks import precheck_issues, run_criterion_checks
from santa_core.models import CheckOutcome, MergedIssue, ReviewOutcome, Rubric
from santa_core.reviewers.base import Reviewer, ReviewRequest
from santa_core.run.gate import slot_passes

Effect = Literal[
    "would now be caught",
    "would now pass",
    "no change",
    "checks pass; no reviewer asked",
    "reviewer error: not counted",
]
SHIPPED_STATUSES = frozenset({"shipped", "resolved_shipped"})


@dataclass(frozen=True)
class Trial:
    """What a rubric says about one text."""

    criteria: list[str]
    advisory: list[str]
    checks: list[CheckOutcome]
    blocking: list[MergedIssue]
    outcome: ReviewOutcome | None

    @property
    def reviewer_verdict(self) -> Literal["PASS", "FAIL"] | None:
        """The reviewer's slot verdict by the gate's rules (None when no reviewer ran)."""
        if self.outcome is None:
            return None
        return "PASS" if slot_passes(self.outcome, self.criteria, self.advisory) else "FAIL"

    @property
    def reviewer_failed(self) -> bool:
        """The reviewer ran but gave no valid review (error, timeout, invalid answer) and no check failed."""
        return self.outcome is not None and self.outcome.review is None and not self.blocking

    @property
    def verdict(self) -> Literal["PASS", "FAIL"] | None:
        """FAIL on any blocking check; else the reviewer's slot verdict; None if checks pass and no reviewer ran."""
        return "FAIL" if self.blocking else self.reviewer_verdict


def run_checks(rubric: Rubric, output: str, spec: str = "") -> tuple[list[CheckOutcome], list[MergedIssue]]:
    """Every deterministic check's outcome, and the issues that would block shipping (the spec's injection too)."""
    outcomes = run_criterion_checks(rubric, output)
    return outcomes, precheck_issues(rubric, output, outcomes, spec=spec)


def try_rubric(rubric: Rubric, output: str, spec: str = "", reviewer: Reviewer | None = None) -> Trial:
    """Checks, then (if given) one reviewer on the same rubric, spec and output as a real run.

    The reviewer's call is paid: a person's trial goes through `santa_core.rubrics.actions.try_rubric`, which
    asks their roles first; without a reviewer this is free and stores nothing. As in a run, no reviewer is asked
    about a text that addresses its reviewers (or that the injection check could not finish on): the detector
    already makes it FAIL, and the text is built to take a model over."""
    checks, blocking = run_checks(rubric, output, spec)
    outcome = None
    if reviewer is not None and not injected_in(blocking):
        outcome = reviewer.review(ReviewRequest(rubric=rubric, spec=spec, output=output), "B")
    return Trial(
        criteria=rubric.criterion_ids(),
        advisory=rubric.advisory_ids(),
        checks=checks,
        blocking=blocking,
        outcome=outcome,
    )


def injected_in(blocking: list[MergedIssue]) -> bool:
    """The blocking issues hold the injection detector's: no reviewer may be asked."""
    return any(i.criterion == "injection" for i in blocking)


def effect(past_status: str, verdict: Literal["PASS", "FAIL"] | None, reviewer_failed: bool = False) -> Effect:
    """What the new rubric version would have changed for a finished run.

    A reviewer that errored or timed out is FAIL for shipping (fail closed) but says nothing
    about the rubric, so unless a check already fails, the re-check does not count it.
    """
    if reviewer_failed and verdict == "FAIL":
        return "reviewer error: not counted"
    shipped = past_status in SHIPPED_STATUSES
    if verdict == "FAIL":
        return "would now be caught" if shipped else "no change"
    if verdict == "PASS":
        return "no change" if shipped else "would now pass"
    return "checks pass; no reviewer asked" if not shipped else "no change"
