"""A pattern's signature: how its defect is recognised in items nobody reviewed.

A pattern's quotes differ from item to item when the batch's sentences vary ("Your results are
guaranteed within 5 days", "Growth is guaranteed for every plan"): matching unsampled items by
the exact quotes reaches almost none of them. The signature is the few phrases the reviewers'
quotes share that tell the defect apart *in the sample itself*:

- every phrase is a run of words taken from a quote the reviewers gave and the desk found in
  that item (never invented);
- a phrase found in any sampled item the pattern was NOT found in (a NICE item, or one that
  failed for another reason) is refused: it would reach clean items;
- of the rest, phrases are chosen greedily to cover the sampled items the pattern was found in
  (most items first, then the fewest words: the most general phrase that is still clean).

`check` validates any signature (derived, or edited by a person) against both sides of the
sample. All pure; text is compared normalised (case, spacing, punctuation folded), on word
boundaries.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, Field

from santa_core.run.gate import normalise

MIN_PHRASE_CHARS = 6
"""Fewest letters and digits a phrase needs: shorter ones ("free", "best") occur in unrelated items."""
MAX_PHRASE_WORDS = 6
MAX_PHRASES = 5
_PLAIN = frozenset(
    "a an the is are was were be been of in on at to and or for it its this that these with as not no by we"
    " you your our us i my me he she they them their his her from into than then so if but all any can will"
    " would could should may might must have has had do does did just only very more most also such".split()
)
"""Words that say nothing about a defect on their own: a phrase needs a word outside this list."""


class SignatureCheck(BaseModel):
    """How a signature fares on the sample: it must reach the items the pattern was found in, and no other."""

    found_in: int = 0
    """Sampled items the pattern was found in."""
    matched: int = 0
    """Of those, how many the signature recognises."""
    not_found_in: int = 0
    """Sampled items the pattern was not found in (NICE, or failed for another reason)."""
    false_matches: list[str] = Field(default_factory=list)
    """Keys of those the signature would wrongly reach."""
    missed: list[str] = Field(default_factory=list)
    """Keys of sampled items showing the pattern that the signature does not recognise."""

    @property
    def valid(self) -> bool:
        """Recognises every sampled item the pattern was found in and none it was not."""
        return self.found_in > 0 and self.matched == self.found_in and not self.false_matches

    def summary(self) -> str:
        """In words, for the page and the command line."""
        head = (f"recognises {self.matched} of the {self.found_in} sampled item(s) showing the pattern and "
                f"{len(self.false_matches)} of the {self.not_found_in} that do not")
        if self.false_matches:
            return f"{head} ({', '.join(self.false_matches[:5])}): refused, it would reach clean items"
        if self.missed:
            return (f"{head}: refused, it misses {', '.join(self.missed[:5])}, so items like them in the rest "
                    "of the batch would keep the defect")
        return head if self.matched else f"{head}: refused, it recognises none of the pattern's items"


def _edge(hay: str, i: int) -> bool:
    return i < 0 or i >= len(hay) or hay[i] == " "


def shows(normalised_text: str, phrase: str) -> bool:
    """Whether the normalised phrase occurs in the normalised text on word boundaries."""
    if not phrase:
        return False
    start = normalised_text.find(phrase)
    while start != -1:
        if _edge(normalised_text, start - 1) and _edge(normalised_text, start + len(phrase)):
            return True
        start = normalised_text.find(phrase, start + 1)
    return False


def recognises(signature: Sequence[str], text: str) -> bool:
    """Whether an item's text shows one of the signature's phrases."""
    hay = normalise(text)
    return any(shows(hay, normalise(p)) for p in signature if usable(p))


def usable(phrase: str) -> bool:
    """Long and specific enough to stand for a defect."""
    words = normalise(phrase).split()
    return (sum(len(w) for w in words) >= MIN_PHRASE_CHARS and len(words) <= MAX_PHRASE_WORDS
            and any(w not in _PLAIN and len(w) >= 4 for w in words))


def phrases(quote: str) -> set[str]:
    """Every usable run of words of a quote (normalised)."""
    words = normalise(quote).split()
    out = set()
    for n in range(1, min(MAX_PHRASE_WORDS, len(words)) + 1):
        for i in range(len(words) - n + 1):
            gram = " ".join(words[i:i + n])
            if usable(gram):
                out.add(gram)
    return out


def derive(found: Mapping[str, tuple[str, Iterable[str]]], others: Mapping[str, str]) -> list[str]:
    """The signature of a pattern: phrases of its verified quotes that cover its sampled items and no other.

    `found`: sampled item key → (its reviewed text, the pattern's verified quotes in it);
    `others`: sampled item key → reviewed text, for every sampled item the pattern was not found in.
    Empty when no clean phrase exists (the pattern then reaches only its sampled items).
    """
    texts = {k: normalise(text) for k, (text, _) in found.items()}
    clean_texts = [normalise(t) for t in others.values()]
    candidates = {p for _, quotes in found.values() for q in quotes for p in phrases(q)}
    covers: dict[str, set[str]] = {}
    for phrase in candidates:
        if any(shows(t, phrase) for t in clean_texts):
            continue
        reach = {k for k, t in texts.items() if shows(t, phrase)}
        if reach:
            covers[phrase] = reach
    chosen: list[str] = []
    left = set(texts)
    while left and covers and len(chosen) < MAX_PHRASES:
        best = min(covers, key=lambda p: (-len(covers[p] & left), len(p.split()), -len(p), p))
        if not covers[best] & left:
            break
        chosen.append(best)
        left -= covers.pop(best)
    return chosen


def check(signature: Sequence[str], found: Mapping[str, str], others: Mapping[str, str]) -> SignatureCheck:
    """Validate a signature against the sample: `found` and `others` map sampled item keys to reviewed text."""
    missed = sorted(k for k, t in found.items() if not recognises(signature, t))
    return SignatureCheck(
        found_in=len(found), matched=len(found) - len(missed), missed=missed,
        not_found_in=len(others), false_matches=sorted(k for k, t in others.items() if recognises(signature, t)))


def parse(text: str) -> list[str]:
    """A person's signature: one phrase a line, blank lines and repeats dropped (refused if a phrase is too vague)."""
    out: list[str] = []
    seen: set[str] = set()  # one set, not one per line: a pasted list of thousands of lines stays linear
    for line in text.splitlines():
        phrase = " ".join(line.split())
        if not phrase or normalise(phrase) in seen:
            continue
        if not usable(phrase):
            raise ValueError(f"“{phrase}” is too vague to recognise a defect: use at least {MIN_PHRASE_CHARS} letters "
                             f"and a word that is not a common one, in at most {MAX_PHRASE_WORDS} words")
        out.append(phrase)
        seen.add(normalise(phrase))
    if not out:
        raise ValueError("give at least one phrase, one a line")
    return out


def raw_spans(text: str, signature: Sequence[str]) -> list[tuple[int, int]]:
    """Where the signature's phrases occur in the raw text (words in order, any punctuation or spacing between)."""
    spans = []
    for phrase in signature:
        words = normalise(phrase).split()
        if words:
            pattern = r"(?<!\w)" + r"[\W_]+".join(re.escape(w) for w in words) + r"(?!\w)"
            spans += [(m.start(), m.end()) for m in re.finditer(pattern, text, re.IGNORECASE)]
    return sorted(spans)
