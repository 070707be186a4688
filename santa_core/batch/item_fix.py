"""One approved fix applied to an item of the batch: held to the sentences where the item shows the pattern. Pure.

`apply_pattern_fix` applies the edits a person approved on the pattern's representative item to another item: the
same exact spans, inside that item's own sentences that show the pattern (the single run's scope rule), or nothing
at all; `apply_to_batch` does it for every item that shows the pattern (`patterns.matching_items`). Fixing is strict
(the approved `before` text, byte for byte, exactly once) so that no item gets a change its text was not approved
for; an item that shows the pattern but cannot take the approved edit is reported as skipped, for a person.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from santa_core.batch.patterns import Pattern, found_in, matching_items, pattern_fix_issues, usable_quote
from santa_core.batch.signature import raw_spans
from santa_core.batch.spans import phrase_spans
from santa_core.models import FixEdit, MergedIssue, RejectedEdit
from santa_core.run.fixer import occurrences
from santa_core.run.gate import normalise
from santa_core.scope import Span, scope_of, sentence_spans, stands_in, within


class ItemFix(BaseModel):
    """The approved edits applied to one item: what changed and what could not be applied."""

    before_text: str
    after_text: str
    applied: list[FixEdit] = Field(default_factory=list)
    skipped: list[RejectedEdit] = Field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether the item's text changed."""
        return self.after_text != self.before_text


def _already_fixed(text: str, start: int, edit: FixEdit) -> bool:
    """The 'before' found sits inside the 'after' text: applying again would nest the fix."""
    return edit.before in edit.after and any(p <= start < p + len(edit.after) for p in occurrences(text, edit.after))


def quote_spans(text: str, quotes: Sequence[str]) -> list[tuple[int, int]]:
    """Where the quotes occur in the raw text: their words in order, any punctuation or spacing between,
    case ignored (the raw-text side of `matches`, so an edit can be held to the defect's place), in time linear
    in the text and the quotes (`santa_core.batch.spans`)."""
    return phrase_spans(text, quotes)


def shown_sentences(output: str, quotes: Sequence[str], signature: Sequence[str] = ()) -> list[Span]:
    """The sentences where an item shows the pattern, in order: those holding a quote or a signature phrase.

    A phrase is placed by the raw-text search (`quote_spans`, `signature.raw_spans`); a quote also by the single
    run's rule (`santa_core.scope.scope_of`: exact or folded, at one place), which places a quote glued into text
    written without spaces. A quote or phrase that stands nowhere the text can be cut names no sentence: the
    item's fix then has no scope, and a person fixes it.
    """
    sentences = sentence_spans(output)
    begins = [s for s, _ in sentences]
    found = sorted(raw_spans(output, signature) + quote_spans(output, quotes))
    homes: set[Span] = {span for q in quotes for span in scope_of(output, q)}
    for start, _ in found:
        at = bisect_right(begins, start) - 1
        if at >= 0 and start < sentences[at][1]:
            homes.add(sentences[at])
    return sorted(homes)


def locate(output: str, evidence: str) -> list[Span]:
    """The sentence holding an issue's evidence: the single run's rule (`santa_core.scope.scope_of`), else where the
    pattern's own matching (case ignored, `quote_spans`) finds it at exactly one place; empty when neither does."""
    found = scope_of(output, evidence)
    if found or not usable_quote(evidence):
        return found
    places = quote_spans(output, [evidence])
    if len(places) != 1:
        return []
    (start, end), sentences = places[0], sentence_spans(output)
    touched = [u for u in sentences if u[0] < end and start < u[1]] or [(start, end)]
    return [(min(touched[0][0], start), max(touched[-1][1], end))]


def still_shows(sentence: str, evidence: str) -> bool:
    """Whether the evidence still stands in a sentence: as it was quoted, or up to case, spacing and punctuation."""
    return stands_in(sentence, evidence) or found_in(normalise(sentence), normalise(evidence))


def issue_sentences(output: str, issues: Sequence[MergedIssue]) -> list[Span]:
    """The sentences holding the issues' evidence (`locate`): the only places an item's fix may edit."""
    return sorted({span for issue in issues for span in locate(output, issue.evidence)})


def _skip_reason(
    text: str, edit: FixEdit, spans: list[tuple[int, int, FixEdit]], scope: Sequence[Span] | None = None
) -> tuple[int, str | None]:
    """Where the approved edit applies in this item, or why it does not."""
    if not edit.before:
        return -1, "has an empty 'before' text"
    if edit.before == edit.after:
        return -1, "changes nothing"
    if scope is not None and not scope:
        return -1, "has no sentence of this item to edit (none showing the pattern could be located); fix it by hand"
    found = occurrences(text, edit.before)
    if not found:
        return -1, "approved 'before' text is not in this item (exact text required); fix it by hand"
    if len(found) > 1:
        # The person approved one occurrence in its context; which one is meant here is a guess.
        return -1, f"approved 'before' text occurs {len(found)} times in this item; fix it by hand"
    start = found[0]
    if _already_fixed(text, start, edit):
        return -1, "is already applied to this item"
    if any(s < start + len(edit.before) and start < e for s, e, _ in spans):
        return -1, "overlaps another approved edit"
    if scope is not None and not within(list(scope), start, start + len(edit.before)):
        # Fix only what was flagged: the same words in another sentence of an item are not the defect.
        return -1, "is not in the sentence where this item shows the pattern; fix it by hand"
    return start, None


def apply_pattern_fix(output: str, edits: Sequence[FixEdit], scope: Sequence[Span] | None = None) -> ItemFix:
    """Apply the edits approved on the representative to another item: each where its exact 'before' occurs once.

    With `scope` (the sentences where the item shows the pattern) an edit must lie inside one of them, as a single
    run's edit must lie in its issue's sentence; an empty scope applies nothing. Every item the batch reaches is
    given its scope; None is for the representative's own text, whose edits a person wrote or saw.
    An edit that cannot apply is skipped with the reason; an item none applies to stays byte-identical.
    Applying the same edits twice changes nothing the second time.
    """
    spans: list[tuple[int, int, FixEdit]] = []
    skipped: list[RejectedEdit] = []
    for edit in edits:
        start, reason = _skip_reason(output, edit, spans, scope)
        if reason:
            skipped.append(RejectedEdit(edit=edit, reason=f"approved edit for issue {edit.issue + 1} {reason}"))
        else:
            spans.append((start, start + len(edit.before), edit))
    spans.sort(key=lambda s: s[0])
    pieces, cursor = [], 0
    for start, end, edit in spans:
        pieces += [output[cursor:start], edit.after]
        cursor = end
    pieces.append(output[cursor:])
    return ItemFix(before_text=output, after_text="".join(pieces), applied=[s[2] for s in spans], skipped=skipped)


def apply_to_batch(pattern: Pattern, edits: Sequence[FixEdit], items: Iterable[tuple[str, str]]) -> dict[str, ItemFix]:
    """The approved fix applied to every batch item that shows the pattern, keyed by item; others are absent.

    Each item's edits are confined to its own sentences that show the pattern: a sampled item's, those holding its
    reviewers' quotes; another item's, those holding a quote of the pattern (`shown_sentences`).
    """
    pairs = list(items)
    outputs = dict(pairs)
    if len(outputs) != len(pairs):
        twice = next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise ValueError(f"item {twice!r} appears twice in the batch; item keys must be unique")
    sampled = set(pattern.items)
    quotes = [q for q in pattern.match_on if usable_quote(q)]

    def scope(key: str) -> list[Span]:
        if key in sampled:
            return issue_sentences(outputs[key], pattern_fix_issues(pattern, key))
        return shown_sentences(outputs[key], quotes)

    return {key: apply_pattern_fix(outputs[key], edits, scope(key)) for key in matching_items(pattern, pairs)}
