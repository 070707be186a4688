"""The fix agent's side of the method: fix ONLY the merged critical issues.

A fix is a list of exact-text edits (issue, before, after). Edits are applied by position to
the original text, so every byte outside the replaced spans stays identical by construction.
An edit whose "before" text is missing, ambiguous or overlapping another edit is rejected and
shown, never guessed at.
"""

from __future__ import annotations

from santa_core.models import FixEdit, FixPlan, FixProposal, MergedIssue, RejectedEdit
from santa_core.reviewers.base import FixAnswer, Fixer, FixRequest


def _locate(text: str, edit: FixEdit, n_issues: int) -> tuple[int, str | None]:
    """Start offset of the edit's span, or an error saying why it cannot be applied."""
    if not 0 <= edit.issue < n_issues:
        return -1, f"names issue [{edit.issue}], which is not one of the flagged issues"
    if not edit.before:
        return -1, "has an empty 'before' text"
    count = text.count(edit.before)
    if count == 0:
        return -1, "'before' text was not found in the output"
    if count > 1:
        return -1, f"'before' text occurs {count} times; it must be unique"
    return text.index(edit.before), None


def apply_plan(text: str, plan: FixPlan, issues: list[MergedIssue]) -> tuple[str, list[FixEdit], list[RejectedEdit]]:
    """Apply the plan's valid edits to text; return (new text, applied, rejected)."""
    spans: list[tuple[int, int, FixEdit]] = []
    rejected: list[RejectedEdit] = []
    for edit in plan.edits:
        start, error = _locate(text, edit, len(issues))
        end = start + len(edit.before)
        if error is None and any(s < end and start < e for s, e, _ in spans):
            error = "overlaps another edit"
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
