"""Where a fix may touch the output: the sentences (or lines, for code) that hold an issue's evidence.

"Fix only what was flagged" is enforced here by construction. An issue is *anchored* when its
evidence is found in the output word for word (spacing, quote style and look-alike letters may
differ; the words may not); its *scope* is every sentence that holds the evidence. An edit for the
issue must lie inside one of those spans. An issue whose evidence is missing or cannot be found is
*unanchored*: no automatic edit is applied for it, a person fixes it.

A sentence ends after '.', '!', '?' or '…' (closing quotes and brackets included) followed by
whitespace, and at every line break, so a line of code is its own unit.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

from santa_core.checks.folding import fold

Span = tuple[int, int]

_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]»]*[ \t]+|\r?\n")


@lru_cache(maxsize=256)
def sentence_spans(text: str) -> tuple[Span, ...]:
    """The text cut into units (sentences, never crossing a line break), each with its trailing spaces.

    The units and the line breaks between them cover the text exactly once.
    """
    spans: list[Span] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.group(0).endswith("\n"):
            if m.start() > start:
                spans.append((start, m.start()))
            start = m.end()
        else:
            spans.append((start, m.end()))
            start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return tuple(spans)


def find_evidence(text: str, evidence: str) -> list[Span]:
    """Every place the evidence stands in the text: exact matches, else matches of the folded words.

    Folding (see `santa_core.checks.folding`) makes spacing, case of quotes and look-alike letters
    irrelevant but never a changed word, so a paraphrased quote is not found.
    """
    if not evidence.strip():
        return []
    exact, i = [], text.find(evidence)
    while i != -1:
        exact.append((i, i + len(evidence)))
        i = text.find(evidence, i + 1)
    if exact:
        return exact
    hay, needle = fold(text, casefold=False), fold(evidence, casefold=False).text.strip()
    if not needle:
        return []
    found, i = [], hay.text.find(needle)
    while i != -1:
        found.append(hay.span(i, i + len(needle)))
        i = hay.text.find(needle, i + 1)
    return found


def scope_of(text: str, evidence: str) -> list[Span]:
    """The spans an edit for an issue quoting `evidence` may lie in: the sentences holding each occurrence.

    Empty when the issue is unanchored. An occurrence that runs across sentences makes their
    union one span.
    """
    units = sentence_spans(text)
    starts = [u[0] for u in units]
    spans: list[Span] = []
    for start, end in find_evidence(text, evidence):
        first = max(0, bisect.bisect_right(starts, start) - 1)
        last = bisect.bisect_left(starts, end)
        touched = [u for u in units[first:last + 1] if u[0] < end and start < u[1]] or [(start, end)]
        spans.append((min(touched[0][0], start), max(touched[-1][1], end)))
    return sorted(set(spans))


def within(spans: list[Span], start: int, end: int) -> bool:
    """The edit [start, end) lies inside one of the spans (an insertion at a span's edge counts)."""
    return any(s <= start and end <= e for s, e in spans)
