"""Where a pattern's fix reaches: every item that shows the defect, each with a fix of its own.

A person approves a pattern once, on its representative item. The fix then reaches:
- its other **sampled** items, fixed for the issues their own reviewers raised;
- every **unsampled** item that shows its signature (or one of its exact quotes), fixed for one
  issue per sentence that shows it, the sentence as the issue's evidence.

Each reached item gets its own edit, under the same scope rule as a single run: first the approved
edits as a **text rule** (the exact 'before' text, once, where the item shows the pattern), else
the **fix agent** on that item alone, with the approved fix as its example; its edits must lie in
the sentence holding each issue's evidence. An item neither can fix is listed for a person.

Pure: `reached` decides which items and issues, `text_rule` tries the approved edits; the driver
asks the fix agent and stores the plans (`ItemPlan`) until a person approves.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from santa_core.batch import signature as sig
from santa_core.batch.patterns import ItemFix, Pattern, apply_pattern_fix, matches, pattern_fix_issues, quote_spans
from santa_core.models import FixEdit, FixProposal, LLMCall, MergedIssue, RejectedEdit
from santa_core.scope import sentence_spans

MAX_ISSUES_PER_ITEM = 3
"""Sentences of one unsampled item fixed for one pattern; more is a rewrite, for a person."""
Via = Literal["representative", "text rule", "fix agent"]
UNLOCATED = "it shows the pattern's signature, but no sentence of it could be located to give the fix agent"


class ItemPlan(BaseModel):
    """The fix prepared for one reached item, waiting for the pattern's approval."""

    key: str
    sampled: bool
    via: Via
    issues: list[MergedIssue] = Field(default_factory=list)
    before_text: str
    after_text: str
    applied: list[FixEdit] = Field(default_factory=list)
    skipped: list[RejectedEdit] = Field(default_factory=list)
    cost_usd: float = 0.0
    error: str | None = None
    calls: list[LLMCall] = Field(default_factory=list)
    """The fix agent's calls for this item (request, answer, usage), kept with the plan as a proposal keeps its own."""

    @property
    def changed(self) -> bool:
        return self.after_text != self.before_text

    @property
    def needs_person(self) -> bool:
        """Shows the pattern but neither the text rule nor the fix agent changed it (a person fixes or excludes it)."""
        return not self.changed

    def item_fix(self) -> ItemFix:
        return ItemFix(before_text=self.before_text, after_text=self.after_text, applied=self.applied,
                       skipped=self.skipped)

    def outcome(self) -> str:
        """In words, for the page, the export and the command line."""
        if self.changed:
            return f"fixed by the {self.via}" if self.via != "representative" else "fixed (the approved fix)"
        why = self.error or "; ".join(r.reason for r in self.skipped) or "the fix agent made no edit here"
        return f"needs a person: {why}"


def signature_issues(pattern: Pattern, output: str) -> list[MergedIssue]:
    """One issue per sentence of an unsampled item that shows the pattern, the sentence as evidence."""
    spans = sig.raw_spans(output, pattern.signature) + quote_spans(output, [q for q in pattern.match_on if q])
    sentences = sentence_spans(output)
    begins = [s for s, _ in sentences]  # in order and apart: a span's sentence is found by bisection, not a scan
    seen: list[tuple[int, int]] = []
    for start, _ in sorted(spans):
        at = bisect_right(begins, start) - 1
        home = sentences[at] if at >= 0 and start < sentences[at][1] else None
        if home is not None and home not in seen:
            seen.append(home)
            if len(seen) == MAX_ISSUES_PER_ITEM:
                break  # only these are fixed: the rest of the spans need no sentence
    example = f" (recognised by the pattern's signature: {', '.join(pattern.signature)})" if pattern.signature else ""
    return [MergedIssue(criterion=pattern.criterion, description=f"{pattern.title}{example}",
                        evidence=output[s:e].strip(), flagged_by="check")
            for s, e in seen[:MAX_ISSUES_PER_ITEM] if output[s:e].strip()]


def reached(pattern: Pattern, items: Iterable[tuple[str, str]], unsampled: set[str]) -> dict[str, list[MergedIssue]]:
    """Item key → the issues its fix addresses, for every item the pattern reaches (in the order given).

    Sampled items the pattern was found in keep their reviewers' issues; an unsampled item is reached
    when it shows the signature or an exact quote (with no issue when no sentence could be located: the
    fix agent cannot be given one, so it is for a person). Items sampled without the pattern are never reached:
    their reviewers saw them.
    """
    if pattern.kind != "issue":
        return {}
    members = set(pattern.items)
    out: dict[str, list[MergedIssue]] = {}
    for key, output in items:
        if key in members:
            out[key] = pattern_fix_issues(pattern, key)
        elif key in unsampled and (sig.recognises(pattern.signature, output) or matches(pattern, output)):
            # Recognised but no sentence located (e.g. a folded spelling): reached with no issue, so a person
            # sees it instead of it staying unreached with the defect.
            out[key] = signature_issues(pattern, output)
    return out


def text_rule(pattern: Pattern, output: str, edits: Sequence[FixEdit], sampled: bool) -> ItemFix:
    """The approved edits applied as they are: exact 'before' once, where this item shows the pattern."""
    if sampled:
        return apply_pattern_fix(output, edits)  # its reviewers located the defect themselves
    scope = sig.raw_spans(output, pattern.signature) + quote_spans(output, [q for q in pattern.match_on if q])
    return apply_pattern_fix(output, edits, scope or None)


def agent_plan(pattern: Pattern, key: str, sampled: bool, issues: list[MergedIssue], answer: FixProposal) -> ItemPlan:
    """The fix agent's answer for one item as its plan; a fix that leaves the signature in place needs a person."""
    plan = ItemPlan(key=key, sampled=sampled, via="fix agent", issues=issues, before_text=answer.before_text,
                    after_text=answer.proposed_text, applied=answer.edits, skipped=answer.rejected,
                    cost_usd=answer.cost_usd, error=answer.error, calls=answer.calls)
    left = [p for p in pattern.signature if sig.recognises([p], answer.proposed_text)] if plan.changed else []
    if left:
        why = f"the fix agent's edit leaves {', '.join(f'“{p}”' for p in left)} in place"
        return plan.model_copy(update={"after_text": plan.before_text, "applied": [], "error": why})
    return plan


def with_example(issues: list[MergedIssue], edits: Sequence[FixEdit]) -> list[MergedIssue]:
    """The item's issues, each telling the fix agent how the same defect was fixed on the approved item."""
    if not edits:
        return issues
    shown = "; ".join(f"“{e.before}” → “{e.after}”" for e in edits[:3])
    return [i.model_copy(update={"description": f"{i.description}. Approved fix of the same defect in another "
                                                f"item (an example, not text to copy blindly): {shown}"})
            for i in issues]
