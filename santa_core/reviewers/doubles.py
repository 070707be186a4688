"""Deterministic reviewer and fix-agent doubles, shipped in the package for tests and benches.

They honour the same contract as the real adapters: they never raise, and an error or a
timeout comes back as an outcome that is not a PASS.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from santa_core.models import CheckResult, FixPlan, Review, ReviewIssue, ReviewOutcome, ReviewStatus, Slot, Usage
from santa_core.reviewers.base import FixAnswer, FixRequest, ReviewRequest

Step = Review | ReviewStatus | Exception
"""A scripted answer: a review, a bare ERROR/TIMEOUT status, or an exception to convert."""


def passing(request: ReviewRequest) -> Review:
    """A PASS review with one PASS check per criterion of the request's rubric."""
    checks = [CheckResult(criterion=i, result="PASS", detail="ok") for i in request.rubric.criterion_ids()]
    return Review(verdict="PASS", checks=checks, critical_issues=[], suggestions=[])


def failing(request: ReviewRequest, criterion: str, description: str, evidence: str = "") -> Review:
    """A FAIL review that fails one criterion with one critical issue."""
    checks = [
        CheckResult(
            criterion=i, result="FAIL" if i == criterion else "PASS", detail=description if i == criterion else "ok"
        )
        for i in request.rubric.criterion_ids()
    ]
    issue = ReviewIssue(criterion=criterion, description=description, evidence=evidence)
    return Review(verdict="FAIL", checks=checks, critical_issues=[issue], suggestions=[])


def _outcome(name: str, slot: Slot, step: Step) -> ReviewOutcome:
    """Turn a scripted step into an outcome; exceptions and statuses fail closed."""
    if isinstance(step, Review):
        return ReviewOutcome(
            slot=slot,
            reviewer=name,
            status=ReviewStatus.OK,
            review=step,
            usage=Usage(input_tokens=100, output_tokens=20),
            raw_response=step.model_dump_json(),
        )
    if isinstance(step, ReviewStatus):
        return ReviewOutcome(slot=slot, reviewer=name, status=step, error=f"scripted {step.value}")
    status = ReviewStatus.TIMEOUT if isinstance(step, TimeoutError) else ReviewStatus.ERROR
    return ReviewOutcome(slot=slot, reviewer=name, status=status, error=f"{type(step).__name__}: {step}")


class FunctionReviewer:
    """A reviewer whose verdict is computed by a plain function of the request."""

    def __init__(self, name: str, fn: Callable[[ReviewRequest], Step]) -> None:
        self.name = name
        self.fn = fn
        self.requests: list[ReviewRequest] = []
        self._lock = threading.Lock()

    def review(self, request: ReviewRequest, slot: Slot) -> ReviewOutcome:
        """Record the request and answer with fn(request)."""
        with self._lock:
            self.requests.append(request)
        try:
            step = self.fn(request)
        except Exception as exc:  # noqa: BLE001 - a double must fail closed like a real adapter
            step = exc
        return _outcome(self.name, slot, step)


class ScriptedReviewer(FunctionReviewer):
    """A reviewer that answers from a fixed script, one step per call (the last repeats)."""

    def __init__(self, name: str, script: Iterable[Step | Callable[[ReviewRequest], Step]]) -> None:
        self.script = list(script)
        super().__init__(name, self._next)

    def _next(self, request: ReviewRequest) -> Step:
        step = self.script[min(len(self.requests), len(self.script)) - 1]
        return step(request) if callable(step) else step


class FunctionFixer:
    """A fix agent whose plan is computed by a plain function of the request."""

    def __init__(self, name: str, fn: Callable[[FixRequest], FixPlan]) -> None:
        self.name = name
        self.fn = fn
        self.requests: list[FixRequest] = []

    def propose(self, request: FixRequest) -> FixAnswer:
        """Record the request and answer with fn(request)."""
        self.requests.append(request)
        try:
            plan = self.fn(request)
        except Exception as exc:  # noqa: BLE001 - fail closed like a real adapter
            return FixAnswer(plan=None, error=f"{type(exc).__name__}: {exc}")
        return FixAnswer(plan=plan, usage=Usage(input_tokens=200, output_tokens=50))


def gullible(request: ReviewRequest) -> Review:
    """What a reviewer that obeys the data answers: a complete, clean PASS, whatever the output says.

    The worst case for the panel: both slots talked into PASS. Only the layers that do not ask the
    reviewers (the pre-checks, the known-answer screen) can stop such an output.
    """
    return passing(request)
