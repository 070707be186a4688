"""The fix agent's side of the method: fix ONLY the merged critical issues.

A fix is a list of exact-text edits (issue, before, after). Edits are applied by position to
the original text, so every byte outside the replaced spans stays identical by construction.
An edit whose "before" text is missing, ambiguous or overlapping another edit is rejected and
shown, never guessed at.
"""

from __future__ import annotations

from santa_core.models import FixEdit, FixPlan, FixProposal, MergedIssue, RejectedEdit
from santa_core.reviewers.base import FixAnswer, Fixer, FixRequest

REACH = 300
"""How many characters an edit may span beyond the flagged evidence (or at all, without evidence)."""
GROWTH = 1000
"""How many characters longer than the text it replaces an edit may be."""
EDITS_PER_ISSUE = 3
"""A flagged issue is one problem; more edits than this for one issue is a rewrite."""


def occurrences(text: str, sub: str) -> list[int]:
    """Start offsets of every occurrence of sub, overlapping ones included ('aa' in 'aaa' → 2)."""
    found, i = [], text.find(sub)
    while sub and i != -1:
        found.append(i)
        i = text.find(sub, i + 1)
    return found


def _out_of_scope(text: str, start: int, edit: FixEdit, issue: MergedIssue) -> str | None:
    """Why the edit reaches beyond its flagged issue, or None when it stays in scope."""
    end = start + len(edit.before)
    anchors = occurrences(text, issue.evidence) if issue.evidence else []
    if not anchors:
        return f"replaces {len(edit.before)} characters; without quoted evidence an edit may replace at most {REACH}" \
            if len(edit.before) > REACH else None
    if not any(a < end and start < a + len(issue.evidence) for a in anchors):
        return "does not touch the text the issue quotes as evidence"
    if len(edit.before) > len(issue.evidence) + REACH:
        return f"replaces {len(edit.before)} characters, far beyond the {len(issue.evidence)} the issue quotes"
    return None


def _locate(text: str, edit: FixEdit, issues: list[MergedIssue]) -> tuple[int, str | None]:
    """Start offset of the edit's span, or an error saying why it cannot be applied."""
    if not 0 <= edit.issue < len(issues):
        return -1, f"names issue [{edit.issue}], which is not one of the flagged issues"
    if not edit.before:
        return -1, "has an empty 'before' text"
    found = occurrences(text, edit.before)
    if not found:
        return -1, "'before' text was not found in the output"
    if len(found) > 1:
        return -1, f"'before' text occurs {len(found)} times; it must be unique"
    # Why a scope check: "fix only what was flagged" must hold even if the fix agent tries to
    # rewrite more, and with auto-approve no person would notice.
    return found[0], _out_of_scope(text, found[0], edit, issues[edit.issue])


def _plan_limits(edit: FixEdit, spans: list[tuple[int, int, FixEdit]], start: int, end: int, budget: int) -> str | None:
    """Why the edit breaks a limit of the plan as a whole, or None."""
    if any(s < end and start < e for s, e, _ in spans):
        return "overlaps another edit"
    if len(edit.after) > len(edit.before) + GROWTH:
        return f"adds {len(edit.after) - len(edit.before):,} characters; a fix may add at most {GROWTH:,}"
    if sum(1 for *_, e in spans if e.issue == edit.issue) >= EDITS_PER_ISSUE:
        return f"is more than {EDITS_PER_ISSUE} edits for one issue"
    if sum(e - s for s, e, _ in spans) + (end - start) > budget:
        return f"would bring the replaced text over {budget:,} characters (half the output)"
    return None


def apply_plan(text: str, plan: FixPlan, issues: list[MergedIssue]) -> tuple[str, list[FixEdit], list[RejectedEdit]]:
    """Apply the plan's valid edits to text; return (new text, applied, rejected)."""
    spans: list[tuple[int, int, FixEdit]] = []
    rejected: list[RejectedEdit] = []
    # Why a budget for the whole plan: each edit may look local, yet many of them together
    # could replace most of the output; "fix only what was flagged" is about the sum.
    budget = max(REACH, len(text) // 2)
    for edit in plan.edits:
        start, error = _locate(text, edit, issues)
        end = start + len(edit.before)
        error = error or _plan_limits(edit, spans, start, end, budget)
        if error is None and edit.before == edit.after:
            error = "changes nothing"
        if error:
            rejected.append(RejectedEdit(edit=edit, reason=f"edit for issue [{edit.issue}] {error}"))
        else:
            spans.append((start, end, edit))
    spans.sort(key=lambda s: s[0])
    pieces, cursor = [], 0
    for start, end, edit in spans:
        pieces += [text[cursor:start], edit.after]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), [s[2] for s in spans], rejected


def propose_fix(fixer: Fixer, spec: str, output: str, issues: list[MergedIssue]) -> FixProposal:
    """Ask the fix agent for edits and apply them; the result is a proposal for a person."""
    answer: FixAnswer = fixer.propose(FixRequest(spec=spec, output=output, issues=issues))
    plan = answer.plan or FixPlan(edits=[])
    proposed, applied, rejected = apply_plan(output, plan, issues)
    return FixProposal(
        issues=issues,
        edits=applied,
        rejected=rejected,
        before_text=output,
        proposed_text=proposed,
        usage=answer.usage,
        cost_usd=answer.cost_usd,
        calls=answer.calls,
        error=answer.error,
    )


def person_fix(output: str, issues: list[MergedIssue]) -> FixProposal:
    """A proposal for a person to write: the flagged issues and the output, unchanged so far."""
    return FixProposal(issues=issues, edits=[], before_text=output, proposed_text=output)
