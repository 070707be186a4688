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

from collections.abc import Iterable, Mapping, Sequence
from itertools import islice

from pydantic import BaseModel, Field

from santa_core.batch.spans import phrase_spans
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
        head = (
            f"recognises {self.matched} of the {self.found_in} sampled item(s) showing the pattern and "
            f"{len(self.false_matches)} of the {self.not_found_in} that do not"
        )
        if self.false_matches:
            return f"{head} ({', '.join(self.false_matches[:5])}): refused, it would reach clean items"
        if self.missed:
            return (
                f"{head}: refused, it misses {', '.join(self.missed[:5])}, so items like them in the rest "
                "of the batch would keep the defect"
            )
        return head if self.matched else f"{head}: refused, it recognises none of the pattern's items"


def shows(normalised_text: str, phrase: str) -> bool:
    """Whether the normalised phrase occurs in the normalised text on word boundaries.

    One search of the padded text: trying each occurrence in turn read a long phrase again from nearly every start
    of a text that repeats it ("中中中…"), the text's length times the phrase's.
    """
    return bool(phrase) and f" {phrase} " in f" {normalised_text} "


def recognises(signature: Sequence[str], text: str) -> bool:
    """Whether an item's text shows one of the signature's phrases."""
    hay = normalise(text)
    return any(shows(hay, normalise(p)) for p in signature if usable(p))


def usable(phrase: str) -> bool:
    """Long and specific enough to stand for a defect."""
    words = normalise(phrase).split()
    return (
        sum(len(w) for w in words) >= MIN_PHRASE_CHARS
        and len(words) <= MAX_PHRASE_WORDS
        and any(_specific(w) for w in words)
    )


def _specific(word: str) -> bool:
    return word not in _PLAIN and len(word) >= 4


def phrases(quote: str) -> set[str]:
    """Every usable run of words of a quote (normalised)."""
    words = normalise(quote).split()
    # `usable` of every run, summed as the run grows instead of normalising each run again (a whole text quoted cost
    # six normalisations a word). A space joins nothing in NFKC, case folding or the substitutions, so a run
    # normalises word by word; normalising a word twice may still split it, hence `again`.
    again = [normalise(w).split() for w in words]
    letters = [sum(len(p) for p in parts) for parts in again]
    specific = [any(_specific(p) for p in parts) for parts in again]
    out = set()
    for i in range(len(words)):
        chars = count = 0
        special = False
        for j in range(i, min(i + MAX_PHRASE_WORDS, len(words))):
            chars, count, special = chars + letters[j], count + len(again[j]), special or specific[j]
            if count > MAX_PHRASE_WORDS:
                break
            if chars >= MIN_PHRASE_CHARS and special:
                out.add(" ".join(words[i : j + 1]))
    return out


Grams = dict[int, set[tuple[str, ...]]]
"""Phrases as tuples of their words, by number of words."""


def grams(candidates: Iterable[str]) -> Grams:
    """Normalised phrases of at most MAX_PHRASE_WORDS words, indexed for `shown_in` (longer ones are left out)."""
    by_size: Grams = {}
    for phrase in candidates:
        words = tuple(phrase.split())
        if 0 < len(words) <= MAX_PHRASE_WORDS:
            by_size.setdefault(len(words), set()).add(words)
    return by_size


def shown_in(normalised_text: str, candidates: Grams) -> set[str]:
    """The candidates the text shows (`shows`), reading each run of up to MAX_PHRASE_WORDS of its words once.

    Asking `shows` of every candidate read the text once a candidate (derive: 6 x a quote's words x the sample's
    text). A phrase shows on word boundaries exactly when its words are a run of the text's words: a normalised
    text is its words with one space between them.
    """
    words = normalised_text.split()
    found: set[tuple[str, ...]] = set()
    for size, wanted in candidates.items():
        runs = zip(*(islice(words, i, None) for i in range(size)), strict=False)  # the shortest tail ends it
        found |= wanted.intersection(runs)
    return {" ".join(w) for w in found}


def derive(found: Mapping[str, tuple[str, Iterable[str]]], others: Mapping[str, str]) -> list[str]:
    """The signature of a pattern: phrases of its verified quotes that cover its sampled items and no other.

    `found`: sampled item key → (its reviewed text, the pattern's verified quotes in it);
    `others`: sampled item key → reviewed text, for every sampled item the pattern was not found in.
    Empty when no clean phrase exists (the pattern then reaches only its sampled items).
    """
    texts = {k: normalise(text) for k, (text, _) in found.items()}
    candidates = {p for q in {q for _, quotes in found.values() for q in quotes} for p in phrases(q)}
    index = grams(candidates)
    clean = {p for t in others.values() for p in shown_in(normalise(t), index)}
    index = grams(candidates - clean)
    covers: dict[str, set[str]] = {}
    for key, text in texts.items():
        for phrase in shown_in(text, index):
            covers.setdefault(phrase, set()).add(key)
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
        found_in=len(found),
        matched=len(found) - len(missed),
        missed=missed,
        not_found_in=len(others),
        false_matches=sorted(k for k, t in others.items() if recognises(signature, t)),
    )


def parse(text: str) -> list[str]:
    """A person's signature: one phrase a line, blank lines and repeats dropped (refused if a phrase is too vague)."""
    out: list[str] = []
    seen: set[str] = set()  # one set, not one per line: a pasted list of thousands of lines stays linear
    for line in text.splitlines():
        phrase = " ".join(line.split())
        if not phrase or normalise(phrase) in seen:
            continue
        if not usable(phrase):
            raise ValueError(
                f"“{phrase}” is too vague to recognise a defect: use at least {MIN_PHRASE_CHARS} letters "
                f"and a word that is not a common one, in at most {MAX_PHRASE_WORDS} words"
            )
        out.append(phrase)
        seen.add(normalise(phrase))
    if not out:
        raise ValueError("give at least one phrase, one a line")
    return out


def raw_spans(text: str, signature: Sequence[str]) -> list[tuple[int, int]]:
    """Where the signature's phrases occur in the raw text (words in order, any punctuation or spacing between), in
    time linear in the text and the phrases (`santa_core.batch.spans`)."""
    return sorted(phrase_spans(text, signature))
