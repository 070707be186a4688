"""Where a phrase stands in an item's raw text, in time linear in the text and in the phrase.

The raw-text side of `patterns.matches` and `signature.recognises`: a fix reaching an unsampled item may only touch
where the item shows the pattern's quote or signature ("fix only what was flagged"). A phrase is found where its
normalised words (`gate.normalise`) stand in the text in order, case ignored, with punctuation or spacing between
them and no letter, digit or underscore just before or after.

This was the pattern `(?<!\\w)w1[\\W_]+w2[\\W_]+…(?!\\w)` under `re.IGNORECASE`, run with `finditer`: it tries every
start of the text and reads up to the whole phrase from each, so its time was the text's length times the phrase's
(a reviewer's quote has no length limit: 1,000 words over 200,000 characters of "a a …" took about 3 s with the GIL
held), and a phrase holding a word of underscores ("Name: ____") backtracked quadratically in a long run of them.
Here the text is cut once into units and the phrase's units are looked for with Knuth–Morris–Pratt, which never
reads a unit twice for one phrase; each occurrence is then checked at its two ends in constant time.

What is found, span for span:
- a phrase without an underscore: exactly what that pattern found (the same non-overlapping spans, leftmost first).
  Units are the runs of letters and digits; between two of them anything but a letter or digit may stand
  (underscores too, as in "_guaranteed_" markdown). Letters compare as `re.IGNORECASE` compares them: case-folded,
  with i, I, ı and İ one letter (`_key`; tests/core/batch/test_spans.py compares every code point with the letters
  of its case). One exception: `re` also took U+0345 COMBINING GREEK YPOGEGRAMMENI, a mark and not a letter, for ι;
  it is never part of a unit, so a phrase is not found through it.
- a phrase with an underscore ("max_tokens", "__init__", "Name: ____"): where its normalised words stand with
  their own underscores, as the normalised comparison sees them. Units are then runs of letters and digits and runs
  of underscores, and the units of one word must touch. The old pattern also let the space between two words soak
  up underscores ("max tokens" in "max_tokens"), which no search linear in both the text and the phrase follows
  along with underscores held exactly inside words; those spans are no longer found. A smaller scope can only
  refuse an edit (the person fixes the item), never let one reach a sentence that was not flagged.

Every span found is text that pattern matches where it stands: this search never finds more. (With an underscore the
pattern's gaps took underscores greedily: "ss _" in "ss _ _ x" was found to the last underscore, here to the first.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from santa_core.run.gate import normalise
from santa_core.text import starts

Span = tuple[int, int]

_LETTERS = re.compile(r"[^\W_]+")
_UNITS = re.compile(r"[^\W_]+|_+")
_DOTLESS = str.maketrans({"İ": "i", "ı": "i"})
"""`re.IGNORECASE` takes i, I, ı and İ for one letter; case folding keeps ı apart and makes İ two characters."""


def _key(run: str) -> str | None:
    """A run of letters and digits as it is compared: folded as `re.IGNORECASE` folds it, letter for letter (None
    when folding would change its length: no phrase can match it then, as that pattern's letters could not)."""
    if run[0] == "_":
        return run
    folded = run.translate(_DOTLESS).casefold()
    return folded if len(folded) == len(run) else None


class _Units:
    """The text cut once into units, for every phrase of one search."""

    def __init__(self, text: str, underscores: bool) -> None:
        self.text = text
        found = (_UNITS if underscores else _LETTERS).finditer(text)
        self.spans: list[Span] = [m.span() for m in found]
        self.keys = [_key(text[s:e]) for s, e in self.spans]
        # A unit after a gap (or the text's first) may start a word; one touching the unit before continues it.
        self.apart = [i == 0 or s > self.spans[i - 1][1] for i, (s, _) in enumerate(self.spans)]


def _needle(words: Sequence[str], underscores: bool) -> list[tuple[bool, str | None]]:
    """The phrase's units, each with whether a gap stands before it (the first's: whether a word may start there)."""
    if not underscores:
        return [(True, _key(w)) for w in words]
    return [(j == 0, _key(unit)) for w in words for j, unit in enumerate(_UNITS.findall(w))]


def _ends_ok(units: _Units, first: int, last: int, underscores: bool) -> bool:
    """No letter, digit or underscore just before the first unit or just after the last (`(?<!\\w)`, `(?!\\w)`)."""
    if underscores:  # the units of letters and of underscores between them cover every word character
        return units.apart[first] and (last + 1 == len(units.spans) or units.apart[last + 1])
    start, end = units.spans[first][0], units.spans[last][1]
    return (start == 0 or units.text[start - 1] != "_") and (end == len(units.text) or units.text[end] != "_")


def _spans(units: _Units, needle: list[tuple[bool, str | None]], underscores: bool) -> list[Span]:
    """The non-overlapping occurrences of one phrase, leftmost first, as `re.finditer` reports them."""
    if not needle or any(key is None for _, key in needle):
        return []
    ids: dict[object, int] = {}
    # Without underscores a unit is its letters alone: anything may stand between two words.
    symbol = (lambda apart, key: (apart, key)) if underscores else (lambda apart, key: key)
    wanted = [ids.setdefault(symbol(apart, key), len(ids)) for apart, key in needle]
    hay = [ids.get(symbol(apart, key), -1) for apart, key in zip(units.apart, units.keys, strict=True)]
    found: list[Span] = []
    end = 0
    for first in starts(hay, wanted):
        last = first + len(needle) - 1
        if units.spans[first][0] >= end and _ends_ok(units, first, last, underscores):
            found.append((units.spans[first][0], units.spans[last][1]))
            end = units.spans[last][1]
    return found


def phrase_spans(text: str, phrases: Iterable[str]) -> list[Span]:
    """Where each phrase stands in the raw text (see the module docstring), phrase after phrase, each leftmost first."""
    cut: dict[bool, _Units] = {}
    out: list[Span] = []
    for phrase in phrases:
        words = normalise(phrase).split()
        underscores = any("_" in w for w in words)
        if underscores not in cut:
            cut[underscores] = _Units(text, underscores)
        out += _spans(cut[underscores], _needle(words, underscores), underscores)
    return out
