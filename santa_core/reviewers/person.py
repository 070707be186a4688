"""A person in a reviewer slot: the answers they give per criterion, turned into the same typed Review.

Nothing is assumed for them: every criterion must be judged (there is no default result), a FAIL
needs a note or a quote of the offending text, and a quote must stand in the output word for word
(it becomes the issue's evidence, which is what the fix may touch; see `santa_core.scope`).
"""

from __future__ import annotations

from pydantic import BaseModel

from santa_core.models import CheckResult, Review, ReviewIssue, Rubric, Verdict
from santa_core.scope import anchor


class CriterionAnswer(BaseModel):
    """What a person said about one criterion; `result` is None until they choose."""

    result: Verdict | None = None
    note: str = ""
    quote: str = ""


def person_review(
    rubric: Rubric, output: str, answers: dict[str, CriterionAnswer], suggestions: str = ""
) -> tuple[Review | None, list[str]]:
    """(the Review, []) when every answer is complete, else (None, what to fix, one line per problem)."""
    names = {c.id: c.name for c in rubric.criteria}
    unjudged = [c.id for c in rubric.criteria if answers.get(c.id, CriterionAnswer()).result is None]
    problems = []
    if unjudged:
        problems.append(
            "Judge every criterion before submitting; not set yet: " + ", ".join(names[i] for i in unjudged) + "."
        )
    checks: list[CheckResult] = []
    issues: list[ReviewIssue] = []
    unexplained, not_found = [], []
    for c in rubric.criteria:
        answer = answers.get(c.id, CriterionAnswer())
        if answer.result is None:
            continue
        note, quote = answer.note.strip(), answer.quote.strip()
        evidence = ""
        if quote:
            place, why = anchor(output, quote)
            if place is not None:
                evidence = output[place[0] : place[1]]
            else:
                not_found.append(f"{c.name} ({why})")
        if answer.result == "FAIL" and not note and not quote:
            unexplained.append(c.name)
        checks.append(CheckResult(criterion=c.id, result=answer.result, detail=note or answer.result.lower()))
        if answer.result == "FAIL" and c.severity == "critical":
            issues.append(ReviewIssue(criterion=c.id, description=note or f"fails: {c.fail_signal}", evidence=evidence))
    if unexplained:
        problems.append(
            "Say what is wrong for each FAIL, with a note or a quote from the output: " + ", ".join(unexplained) + "."
        )
    if not_found:
        problems.append(
            "A quote must be copied from the output word for word and point at one place: " + "; ".join(not_found) + "."
        )
    if problems:
        return None, problems
    # As the reviewers are told: a failed suggestion is a FAIL check and a suggestion line, never by
    # itself a FAIL verdict (that would make the gate NAUGHTY with nothing for the fix agent).
    advisory = set(rubric.advisory_ids())
    verdict: Verdict = "PASS" if all(c.result == "PASS" for c in checks if c.criterion not in advisory) else "FAIL"
    lines = [s.strip() for s in suggestions.splitlines() if s.strip()]
    quoted = {cid: a.quote.strip() for cid, a in answers.items() if a.quote.strip()}
    lines += [
        f"{names[c.criterion]}: "
        + (c.detail if c.detail != "fail" or c.criterion not in quoted else f"\u201c{quoted[c.criterion]}\u201d")
        for c in checks
        if c.result == "FAIL" and c.criterion in advisory
    ]
    return Review(verdict=verdict, checks=checks, critical_issues=issues, suggestions=lines), []
