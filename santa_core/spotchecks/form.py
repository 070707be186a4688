"""The blind form's rules, shared by the page, the command line and the action: every criterion judged, none
unknown, evidence for every FAIL; and what a rule must hold."""

from __future__ import annotations

from collections.abc import Iterable

from santa_core.models import Criterion
from santa_core.spotchecks.model import Judgement, RuleDraft, panel_pair

MAX_EVIDENCE_CHARS = 4_000


def judged_criteria(criteria: Iterable[Criterion]) -> list[Criterion]:
    """The criteria a person judges: every criterion of the snapshot that is not retired."""
    return [c for c in criteria if not c.retired]


def judgement_problems(criteria: Iterable[Criterion], judgements: Iterable[Judgement]) -> list[str]:
    """Why these judgements cannot be submitted, one sentence each (empty: they can)."""
    wanted = [c.id for c in judged_criteria(criteria)]
    problems, seen = [], set()
    for j in judgements:
        if j.criterion not in wanted:
            problems.append(f"unknown criterion {j.criterion!r}: this run's rubric has {', '.join(wanted)}")
        elif j.criterion in seen:
            problems.append(f"criterion {j.criterion!r} is judged twice")
        elif j.verdict == "FAIL" and not j.evidence.strip():
            problems.append(f"criterion {j.criterion!r} FAILs without evidence: quote or describe what fails")
        elif len(j.evidence) > MAX_EVIDENCE_CHARS:
            problems.append(f"the evidence for {j.criterion!r} is over {MAX_EVIDENCE_CHARS} characters")
        seen.add(j.criterion)
    if missing := [c for c in wanted if c not in seen]:
        problems.append(f"not judged yet: {', '.join(missing)} (every criterion needs PASS or FAIL)")
    return problems


def escaped_criteria(criteria: Iterable[Criterion], judgements: Iterable[Judgement]) -> list[Judgement]:
    """The FAILed criteria that count as escapes: blocking ones (a failed suggestion never stopped a run)."""
    blocking = {c.id for c in criteria if c.severity != "suggestion"}
    return [j for j in judgements if j.verdict == "FAIL" and j.criterion in blocking]


def escapes_past(failed: Iterable[Judgement], reviews: Iterable[dict[str, str]]) -> list[Judgement]:
    """The escaped FAILs that went past the reviewers: some reviewer of the shipped round PASSed the criterion. A
    criterion every reviewer failed shipped because a person overrode them (ship as is): not a reviewers' miss."""
    passed = {criterion for checks in reviews for criterion, verdict in checks.items() if verdict == "PASS"}
    return [j for j in failed if j.criterion in passed]


def rule_problems(draft: RuleDraft, rubric_names: Iterable[str]) -> list[str]:
    """Why a rule cannot be saved, one sentence each (empty: it can)."""
    problems = []
    if draft.rubric_name not in set(rubric_names):
        problems.append(f"no rubric named {draft.rubric_name!r}")
    if not 0 < draft.share_percent <= 100:
        problems.append("the share is a percentage above 0 and at most 100")
    if draft.floor < 0:
        problems.append("the weekly floor is 0 or more")
    if draft.panel.strip():
        try:
            panel_pair(draft.panel)
        except ValueError as exc:
            problems.append(str(exc))
    if len(draft.domain) > 64:
        problems.append("the domain is longer than 64 characters")
    return problems
