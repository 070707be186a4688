"""Where a fix may touch the output: the sentences (or lines, for code) that hold an issue's evidence.

"Fix only what was flagged" is enforced here by construction. An issue is *anchored* when its
evidence is found in the output word for word (spacing, quote style and look-alike letters may
differ; the words may not); its *scope* is every sentence that holds the evidence. An edit for the
issue must lie inside one of those spans. An issue whose evidence is missing or cannot be found is
*unanchored*: no automatic edit is applied for it, a person fixes it.

A sentence ends at a stop ('.', '!', '?', '…', or the full-width '。', '！', '？', '．') with any
closing quotes, brackets, markdown emphasis and footnote marker after it ("days.**[1]"), followed
by a space of any kind (no-break and ideographic spaces too), or by the next sentence's capital
letter with no space ("days.No refunds"), or, after a full-width stop, by anything. It also ends at
every line break (\n, \r, \r\n, U+2028, U+2029, …), so a line of code is its own unit. Not
boundaries: decimals and versions (3.5, v1.2.3), a capital glued to a URL, an address, a path
or a dotted name (https://…/Docs.Html, jane.Doe@…, java.util.List), a title before a name ("Dr. Smith"), "e.g."-style
abbreviations before a small letter or a digit ("e.g. the", "U.S. law", "No. 5"). When unsure the
splitter cuts: a smaller scope can only refuse an edit, never let one reach an unflagged sentence.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

from santa_core.checks.folding import fold

Span = tuple[int, int]

# Every break str.splitlines() knows (\r\n is one break).
_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_SPACE = rf"[^\S{_BREAKS}]|[\u200b-\u200d\u2060\ufeff]"  # spaces inside a line, the invisible ones too
_CLOSE = r"[\"'”’»›)\]}*_~`」』）］｝】〉》〕]"
_FOOTNOTE = r"(?:\[\^?\w{1,10}\]|[⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
# Why the lookbehinds and possessive quantifiers: a match starts only at the first stop of a run
# and never backtracks, so 200k characters of dots or brackets stay linear.
_BOUNDARY = re.compile(
    rf"(?P<br>\r\n|[{_BREAKS}])"
    rf"|(?<![。！？｡．])(?:[。！？｡]|．(?![0-9０-９]))++{_CLOSE}*+{_FOOTNOTE}?+{_CLOSE}*+(?:{_SPACE})*+"
    rf"|(?<![.!?…])(?P<stop>[.!?…]++){_CLOSE}*+{_FOOTNOTE}?+{_CLOSE}*+(?:(?P<space>(?:{_SPACE})++)|(?=[^\W\d_]))"
)
# The word a glued capital starts is a sentence's first word when a space or punctuation follows it.
_GLUED_WORD = re.compile(r"[^\W\d_]+(?=[\s,;:!?)]|\.(?:\s|$)|$)")
_TITLES = frozenset("mr mrs ms mx dr prof rev hon sen rep gov gen col capt lt sgt hr fr sra srta".split())
_BEFORE_SMALL = frozenset("etc vs approx incl excl ca cf al resp bzw usw ggf vgl".split())
_BEFORE_DIGIT = frozenset("no nr fig figs vol p pp art ch sec abs ca approx vs op tel".split())


def _word_before(text: str, i: int) -> str:
    """The letters-and-dots word that ends at i ("e.g", "Dr"), or "" when it is long or not a word."""
    j = i
    while j > 0 and i - j < 16 and (text[j - 1].isalpha() or text[j - 1] == "."):
        j -= 1
    return "" if j > 0 and (text[j - 1].isalnum() or i - j >= 16) else text[j:i]


def _is_boundary(text: str, m: re.Match[str]) -> bool:
    """Whether a stop the pattern found ends a sentence (see the module docstring)."""
    if m.group("stop") is None:
        return True
    i, after = m.start("stop"), m.end()
    if m.group("space") is None:  # glued: "days.No refunds", not "acme.Example.com" or "Dr.Smith"
        if i < 2 or not all(c.isalpha() and not c.isupper() for c in text[i - 2:i]) or not text[after].isalpha() or text[after].islower():
            return False
        token = text[max(0, i - 200):i].split()[-1:]
        if token and any(mark in token[0] for mark in ("://", "@", ".", "/")):
            return False  # a URL, an address, a path or a dotted name (java.util.List, acme.Example.com)
        # A caseless script (CJK, Arabic, …) starts a sentence with no space; a capital starts one
        # when its word ends (System.Collections.Generic is one name).
        return not text[after].isupper() or bool(_GLUED_WORD.match(text, after))
    if m.group("stop") != "." or after == len(text):
        return True
    word, nxt = _word_before(text, i), text[after]
    low = word.lower()
    if low in _TITLES and nxt.isupper():
        return False
    if ("." in word or low in _BEFORE_SMALL) and (nxt.islower() or nxt.isdigit()):
        return False
    return not (low in _BEFORE_DIGIT and nxt.isdigit())


@lru_cache(maxsize=256)
def sentence_spans(text: str) -> tuple[Span, ...]:
    """The text cut into units (sentences, never crossing a line break), each with its trailing spaces.

    The units and the line breaks between them cover the text exactly once.
    """
    spans: list[Span] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        if m.group("br") is not None:
            if m.start() > start:
                spans.append((start, m.start()))
            start = m.end()
        elif _is_boundary(text, m):
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
