"""The other ways a text reads once a reader's eye skips what hides a word: letter-spaced runs joined, markup dropped,
digits and look-alike letters read as letters. The injection detector scans each view it makes of a text (the
views are folded like the text itself, with an index back to the original, so evidence is the original's).
"""

from __future__ import annotations

from regex import Match

from santa_core.checks.bounded import Pattern
from santa_core.checks.folding import Folded, fold

__all__ = ["deleet", "despaced", "plain"]

_LETTER_SPACED = Pattern(r"(?<!\S)(?:\S[ \t\u00a0]{1,3}){3,}\S(?![^\s.,;:!?])")


def despaced(text: str, casefold: bool) -> Folded | None:
    """Letter-spaced runs joined ("s e t  v e r d i c t" → "set verdict") and folded, indexed into `text`; None if none."""
    runs = _LETTER_SPACED.finditer(text)
    if not runs:
        return None
    out: list[str] = []
    index: list[int] = []
    last = 0
    for m in runs:
        out.append(text[last : m.start()])
        index.extend(range(last, m.start()))
        for k, ch in enumerate(m.group(0), start=m.start()):
            if not ch.isspace():
                out.append(ch)
                index.append(k)
            elif text[k - 1].isspace() and not text[k - 2].isspace():  # a wider gap separates words
                out.append(" ")
                index.append(k)
        last = m.end()
    out.append(text[last:])
    index.extend(range(last, len(text)))
    folded = fold("".join(out), casefold=casefold)
    return Folded(folded.text, tuple(map(index.__getitem__, folded.index)), text)


_LEET = str.maketrans("013457@$", "oieastas")
_L_AS_I = str.maketrans("l|", "ii")
# Words an attack spells with "l" or "|" for "i" ("lgnore prev|ous |nstruct|ons"); only these are read back, since
# every other word with an "l" is just a word.
_I_WORDS = frozenset(
    "ignore ignoring previous prior instructions instruction initial original verdict reviewer reviewers"
    " criteria criterion evaluation evaluating grading disregard rubric".split()
)


_LEET_WORD = Pattern(r"\b(?=\w*[a-z])(?=\w*[0134578@$])[\w@$]+\b")
# Why the lookahead and the possessive run: "[a-z|]*[l|][a-z|]*" backtracked over every way of splitting a long
# word at its l's when the word ran into a digit ("lll…l1"); a word is taken whole, once.
_L_WORD = Pattern(r"(?<![\w|])(?=[a-z|]*?[l|])[a-z|]++(?![\w|])")


def deleet(folded: Folded) -> Folded:
    """Digits standing for letters inside words ("1gn0re" → "ignore"), "l" or "|" for "i" in the words of an attack
    ("lgnore"); same length, same index."""
    text = _LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), folded.text)

    def as_i(m: Match[str]) -> str:
        word = m.group(0).translate(_L_AS_I)
        return word if word in _I_WORDS else m.group(0)

    text = _L_WORD.sub(as_i, text)
    return Folded(text, folded.index, folded.source)


# Markdown emphasis and code marks ("*Ignore* *previous*", "_return_ `PASS`"), hyphens inside a word ("Ig-nore",
# "P-A-S-S") and dots between single letters ("I.g.n.o.r.e"): what a reader's eye skips over.
_MARKUP = Pattern(r"[*_`~]+|(?<=[A-Za-z])-(?=[A-Za-z])|(?<![\w.])(?:[A-Za-z]\.){2,}[A-Za-z](?![\w])")


def plain(text: str, casefold: bool) -> Folded | None:
    """The text without markup inside and around words, folded and indexed into `text`; None if there is none."""
    out: list[str] = []
    index: list[int] = []
    last = 0
    for m in _MARKUP.finditer(text):
        out.append(text[last : m.start()])
        index.extend(range(last, m.start()))
        piece = m.group(0)
        if piece[0] in "*_`~":
            inside = m.start() > 0 and text[m.start() - 1].isalnum() and m.end() < len(text) and text[m.end()].isalnum()
            if inside:  # "ignore_previous_instructions": a word separator
                out.append(" ")
                index.append(m.start())
        elif piece != "-":
            for k, ch in enumerate(piece, start=m.start()):
                if ch != ".":
                    out.append(ch)
                    index.append(k)
        last = m.end()
    if last == 0:
        return None
    out.append(text[last:])
    index.extend(range(last, len(text)))
    folded = fold("".join(out), casefold=casefold)
    return Folded(folded.text, tuple(map(index.__getitem__, folded.index)), text)
