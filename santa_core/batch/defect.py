"""What one defect is, and what a pattern is called: the phrase a reviewer flagged, and a short title.

A reviewer names the words it objects to in its complaint ("'risk-free' claim", "promises “guaranteed” results")
and quotes the sentence they stand in as evidence. Two complaints under one criterion that flag different words
are two defects, even when their sentences share a product name or a template: joining them would make one fix
answer for two problems (and reach the other defect's items with an edit meant for the first). So:

- `flagged` is the shortest phrase an issue's description quotes that also stands in its evidence (None when the
  description quotes nothing of it: then the quotes alone decide, as before);
- `different_defects` says two issues flag different words (compared by their stems: "guaranteed" and
  "guarantees" are one defect, "risk-free" and "guarantees" two);
- `title` names a pattern for people: the criterion's name and the phrase its items share,
  e.g. `Outcome guarantees: “guaranteed”`, never one item's raw sentence.

Pure.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from santa_core.models import MergedIssue
from santa_core.run.gate import normalise

_QUOTED = re.compile(r"""(?<!\w)'([^']{2,80})'(?!\w)|"([^"]{2,80})"|“([^”]{2,80})”|‘([^’]{2,80})’|«([^»]{2,80})»""")
"""A span a description puts in quotes (straight, curly or guillemets). A straight quote opens only where no letter
stands before it and closes only where none follows: the apostrophe of "copy's" or "Don't" would otherwise pair with
the quote that opens 'risk-free', and the phrase flagged would be lost (two defects read as one)."""
MAX_FLAGGED_WORDS = 6
"""A flagged phrase is a few words: a whole quoted sentence is the evidence, not what is wrong with it."""
MAX_TITLE_CHARS = 80
MAX_CANDIDATES = 16
"""Quoted phrases of one description looked for in its evidence, at most: each look reads the whole evidence, so
a description quoting thousands of spans (a pasted run of apostrophes) would cost their product; a reviewer's
complaint quotes a handful."""
_SUFFIXES = ("ing", "ed", "es", "s")


def flagged(issue: MergedIssue) -> str | None:
    """The phrase the issue's description flags (normalised): the shortest it quotes that stands in the evidence."""
    candidates: list[str] = []
    for match in _QUOTED.finditer(issue.description):
        phrase = normalise(next(g for g in match.groups() if g is not None))
        if phrase and len(phrase.split()) <= MAX_FLAGGED_WORDS and phrase not in candidates:
            candidates.append(phrase)
            if len(candidates) == MAX_CANDIDATES:
                break
    evidence = f" {normalise(issue.evidence)} "
    found = [phrase for phrase in candidates if f" {phrase} " in evidence]
    return min(found, key=lambda p: (len(p), p)) if found else None


def stem(phrase: str) -> str:
    """The phrase with each word's common English ending dropped ("guaranteed", "guarantees" → "guarant")."""
    out = []
    for word in phrase.split():
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 4:
                word = word[: -len(suffix)]
                break
        while word.endswith("e") and len(word) > 4:  # "guarantee" and "guaranteed" alike
            word = word[:-1]
        out.append(word)
    return " ".join(out)


def different_defects(a: MergedIssue, b: MergedIssue) -> bool:
    """Both issues flag a phrase, and not the same one (up to its endings)."""
    fa, fb = flagged(a), flagged(b)
    return fa is not None and fb is not None and stem(fa) != stem(fb)


def defects_of(issues: Iterable[MergedIssue]) -> set[str]:
    """The stems of the phrases a group of issues flags."""
    return {stem(f) for issue in issues if (f := flagged(issue)) is not None}


def one_defect(a: set[str], b: set[str]) -> bool:
    """Whether two groups flagging these stems may be one pattern: the same phrases, or one group flags none."""
    return not a or not b or a == b


def title(
    criterion_name: str, issues: Iterable[MergedIssue], signature: Iterable[str] = (), evidence: Iterable[str] = ()
) -> str:
    """A short title: the criterion's name and the phrase the pattern's items share.

    The phrase is the one most of its issues flag (as a reviewer spelt it, case kept from the evidence), else the
    pattern's first signature phrase, else its shortest quote; with none, the criterion's name alone.
    """
    issues = list(issues)
    phrase = _most_flagged(issues) or next(iter(signature), "") or min(evidence, key=len, default="")
    phrase = " ".join(phrase.split())
    if len(phrase) > MAX_TITLE_CHARS:
        phrase = phrase[: MAX_TITLE_CHARS - 1].rstrip() + "…"
    return f"{criterion_name}: “{phrase}”" if phrase else criterion_name


def most_flagged(issues: Iterable[MergedIssue]) -> str:
    """The phrase most of the issues flag, as a reviewer spelt it ("" when none flags one)."""
    return _most_flagged(list(issues))


def _most_flagged(issues: list[MergedIssue]) -> str:
    """The phrase most issues flag, in the words of the first evidence it stands in."""
    counts = Counter(f for i in issues if (f := flagged(i)) is not None)
    if not counts:
        return ""
    best = min(counts, key=lambda p: (-counts[p], len(p), p))
    for issue in issues:
        for match in _QUOTED.finditer(issue.description):
            raw = next(g for g in match.groups() if g is not None)
            if normalise(raw) == best:
                return raw.strip()
    return best


def criterion_names(criteria: Iterable[tuple[str, str]]) -> Mapping[str, str]:
    """Criterion id (normalised) → its name, for `title`."""
    return {normalise(cid): name for cid, name in criteria}
