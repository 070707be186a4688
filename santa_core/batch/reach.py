"""Where a pattern's fix reaches: every item that shows the defect, each with a fix of its own.

A person approves a pattern once, on its representative item. The fix then reaches:
- its other **sampled** items, fixed for the issues their own reviewers raised;
- every **unsampled** item that shows its signature (or one of its exact quotes), fixed for one
  issue per sentence that shows it, what of the defect stands in that sentence as the issue's evidence
  (a quote, else the longest run of a quote's words, else the signature phrase: `defect_in`).

Each reached item gets its own edit, under the same scope rule as a single run: first the approved
edits as a **text rule** (the exact 'before' text, once, inside the sentence holding one of the item's
issues), else the **fix agent** on that item alone, with the approved fix as its example; its edits
must lie in the sentence holding each issue's evidence. A fix is accepted when it fixes the item's
issues (`unfixed`): each issue's evidence is gone from its sentence and nothing outside those
sentences changed. The pattern's signature only *recognises* items: a fix that leaves a signature
word in place is not refused for it. An item no fix is accepted for, or whose sentence cannot be
located, is listed for a person.

Pure: `reached` decides which items and issues, `text_rule` tries the approved edits; the driver
asks the fix agent and stores the plans (`ItemPlan`) until a person approves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from santa_core.batch import signature as sig
from santa_core.batch.item_fix import ItemFix, apply_pattern_fix, issue_sentences, locate, shown_sentences, still_shows
from santa_core.batch.patterns import Pattern, matches, pattern_fix_issues
from santa_core.models import FixEdit, FixProposal, LLMCall, MergedIssue, RejectedEdit
from santa_core.run.fixer import occurrences
from santa_core.scope import Span, within

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
        return ItemFix(
            before_text=self.before_text, after_text=self.after_text, applied=self.applied, skipped=self.skipped
        )

    def outcome(self) -> str:
        """In words, for the page, the export and the command line."""
        if self.changed:
            return f"fixed by the {self.via}" if self.via != "representative" else "fixed (the approved fix)"
        why = self.error or "; ".join(r.reason for r in self.skipped) or "the fix agent made no edit here"
        return f"needs a person: {why}"


def signature_issues(pattern: Pattern, output: str) -> list[MergedIssue]:
    """One issue per sentence of an unsampled item that shows the pattern; its evidence is what of the defect stands
    in that sentence (`defect_in`), which a fix must remove, and whose sentence is the fix's scope. A sentence that
    only the signature recognises is an issue only when no sentence of the item holds the defect's own words: "Tell
    us about your satisfaction" beside "Your satisfaction is guaranteed forever" is not a second defect."""
    quotes = [q for q in pattern.match_on if q]
    seen = [output[s:e].strip() for s, e in shown_sentences(output, quotes, pattern.signature)]
    found = [(sentence, defect_words(sentence, quotes)) for sentence in seen if sentence]
    # A sentence the signature alone recognises is an issue only when no sentence holds the defect's own words;
    # every sentence that holds them is one ("Every refund is guaranteed, forever" beside "Your satisfaction is
    # guaranteed forever"), even a run as short as "your satisfaction" (then a person may have to fix it: safe).
    if any(words for _, words in found):
        found = [(sentence, words) for sentence, words in found if words]
    example = f" (recognised by the pattern's signature: {', '.join(pattern.signature)})" if pattern.signature else ""
    return [
        MergedIssue(
            criterion=pattern.criterion,
            description=f"{pattern.title}{example}",
            evidence=words or recognised(sentence, pattern.signature),
            flagged_by="check",
        )
        for sentence, words in found[:MAX_ISSUES_PER_ITEM]
    ]


_WORD = re.compile(r"\w+")
MAX_QUOTE_WORDS = 64
"""Words of a quote compared with a sentence (the comparison is linear in the sentence, times at most this)."""


def defect_in(sentence: str, quotes: Sequence[str], signature: Sequence[str]) -> str:
    """What of the pattern's defect stands in an unsampled item's sentence: its own words (`defect_words`), else the
    signature phrase it shows, else the sentence. The recogniser is the last resort, never preferred to the defect's
    own words: a fix that rewrites "guaranteed forever" but keeps "satisfaction" fixes "Your satisfaction is
    guaranteed forever"."""
    return defect_words(sentence, quotes) or recognised(sentence, signature)


def recognised(sentence: str, signature: Sequence[str]) -> str:
    """The signature phrase a sentence shows (the first), else the sentence."""
    phrases = sig.raw_spans(sentence, signature)
    return sentence[phrases[0][0] : phrases[0][1]] if phrases else sentence


def defect_words(sentence: str, quotes: Sequence[str]) -> str | None:
    """A reviewers' quote that stands in the sentence (the longest), else the longest run of two or more of a
    quote's words that it holds (as written in the sentence); None when it holds neither."""
    standing = [q.strip() for q in quotes if q.strip() and still_shows(sentence, q.strip())]
    if standing:
        return max(standing, key=len)
    words = [(m.start(), m.end(), m.group().casefold()) for m in _WORD.finditer(sentence)]
    best = (1, 0, 0)  # (words, start, end): a single shared word is no evidence of the defect
    for quote in quotes:
        at: dict[str, list[int]] = {}
        for j, word in enumerate(_WORD.findall(quote)[:MAX_QUOTE_WORDS]):
            at.setdefault(word.casefold(), []).append(j)
        run: dict[int, int] = {}  # quote position j -> words matched so far ending at j (the last sentence word)
        for i, (_, end, word) in enumerate(words):
            run = {j: run.get(j - 1, 0) + 1 for j in at.get(word, ())}
            for n in run.values():
                if n > best[0]:
                    best = (n, words[i - n + 1][0], end)
    return sentence[best[1] : best[2]] if best[0] > 1 else None


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


def text_rule(output: str, edits: Sequence[FixEdit], issues: Sequence[MergedIssue]) -> ItemFix:
    """The approved edits applied as they are: exact 'before' once, inside a sentence holding one of the issues."""
    return apply_pattern_fix(output, edits, issue_sentences(output, issues))


def unfixed(before: str, after: str, applied: Sequence[FixEdit], issues: Sequence[MergedIssue]) -> str | None:
    """Why a fix does not fix the item's issues, or None when it does: it is accepted when each issue's evidence is
    gone from the sentence holding it and nothing outside those sentences changed.

    Judged from the text itself, not from the pattern's signature: a recogniser is not the defect.
    """
    if not issues:
        return UNLOCATED
    scopes = [locate(before, issue.evidence) for issue in issues]
    if not all(scopes):
        return "no sentence of it holds the issue's quote at one place, so a person fixes it"
    placed: list[tuple[int, int, str]] = []
    for edit in applied:
        found = occurrences(before, edit.before)
        if len(found) != 1:
            return "an edit's text does not stand once in the item"
        placed.append((found[0], found[0] + len(edit.before), edit.after))
    placed.sort()
    if _rebuilt(before, placed) != after:
        return "its text is not its edits applied"
    sentences: list[Span] = [span for spans in scopes for span in spans]
    if any(not within(sentences, start, end) for start, end, _ in placed):
        return "it edits a sentence nobody flagged"
    for issue, [(start, end)] in zip(issues, scopes, strict=True):
        inside = [(s - start, e - start, a) for s, e, a in placed if start <= s and e <= end]
        if still_shows(_rebuilt(before[start:end], inside), issue.evidence.strip()):
            return f"the edit leaves “{issue.evidence.strip()}” in its sentence"
    return None


def _rebuilt(text: str, placed: Sequence[tuple[int, int, str]]) -> str:
    """The text with the placed replacements (start, end, after), in order and apart, applied."""
    pieces, cursor = [], 0
    for start, end, after in placed:
        pieces += [text[cursor:start], after]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def rule_plan(
    key: str, sampled: bool, issues: list[MergedIssue], output: str, edits: Sequence[FixEdit]
) -> ItemPlan | None:
    """The approved edits as this item's fix when they apply whole and fix its issues (else None: the fix agent)."""
    fix = text_rule(output, edits, issues)
    if not fix.changed or fix.skipped or unfixed(fix.before_text, fix.after_text, fix.applied, issues):
        return None
    return ItemPlan(key=key, sampled=sampled, via="text rule", issues=issues, **fix.model_dump())


def retext(plan: ItemPlan, output: str, edits: Sequence[FixEdit]) -> ItemPlan:
    """A text-rule plan (or the representative's) with the edits a person reworded; another item's is judged by its
    issues again (the representative's words are the person's own)."""
    fix = text_rule(output, edits, plan.issues)
    why = (
        None
        if plan.via == "representative" or not fix.changed
        else unfixed(fix.before_text, fix.after_text, fix.applied, plan.issues)
    )
    if why:
        return plan.model_copy(
            update={
                **fix.model_dump(),
                "after_text": output,
                "applied": [],
                "error": f"the reworded fix is not accepted: {why}",
            }
        )
    return plan.model_copy(update=fix.model_dump())


def agent_plan(key: str, sampled: bool, issues: list[MergedIssue], answer: FixProposal) -> ItemPlan:
    """The fix agent's answer for one item as its plan; a fix that does not fix the item's issues in their own
    sentences, or that tried to edit elsewhere, needs a person."""
    plan = ItemPlan(
        key=key,
        sampled=sampled,
        via="fix agent",
        issues=issues,
        before_text=answer.before_text,
        after_text=answer.proposed_text,
        applied=answer.edits,
        skipped=answer.rejected,
        cost_usd=answer.cost_usd,
        error=answer.error,
        calls=answer.calls,
    )
    if not plan.changed:
        return plan
    why = (
        "it also proposed an edit that was refused"
        if answer.rejected
        else unfixed(plan.before_text, plan.after_text, plan.applied, issues)
    )
    if why:
        return plan.model_copy(
            update={
                "after_text": plan.before_text,
                "applied": [],
                "error": f"the fix agent's edit is not accepted: {why}",
            }
        )
    return plan


def with_example(issues: list[MergedIssue], edits: Sequence[FixEdit]) -> list[MergedIssue]:
    """The item's issues, each telling the fix agent how the same defect was fixed on the approved item."""
    if not edits:
        return issues
    shown = "; ".join(f"“{e.before}” → “{e.after}”" for e in edits[:3])
    return [
        i.model_copy(
            update={
                "description": f"{i.description}. Approved fix of the same defect in another "
                f"item (an example, not text to copy blindly): {shown}"
            }
        )
        for i in issues
    ]
