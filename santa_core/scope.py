"""Where a fix may touch the output: the sentences (or lines, for code) that hold an issue's evidence.

"Fix only what was flagged" is enforced here by construction. An issue is *anchored* when its
evidence is found in the output word for word (spacing, quote style and look-alike letters may
differ; the words may not) at exactly one place; its *scope* is the sentence that holds it. An edit
for the issue must lie inside that span. An issue whose evidence is missing, cannot be found, is too
short to point at a place (punctuation, "5%", "the") or stands at more than one place is
*unanchored*: no automatic edit is applied for it, a person fixes it.

A sentence ends at a stop ('.', '!', '?', '…', or the full-width '。', '！', '？', '．') with any
closing quotes, brackets, markdown emphasis and footnote marker after it ("days.**[1]"), followed
by a space of any kind (no-break and ideographic spaces too), or with no space by the next
sentence's capital ("days.No refunds") or caseless letter (CJK), or, after a full-width stop, by
anything. It also ends at every line break (\n, \r, \r\n, U+2028, U+2029, …), so a line of code
is its own unit. Not boundaries: decimals and versions (3.5, v1.2.3), a capital glued to a URL,
an address, a path or a dotted name (https://…/Docs.Html, jane.Doe@…, java.util.List), "e.g."-style
abbreviations before a small letter or a digit ("e.g. the", "U.S. law", "No. 5"). A title before a
name ("Dr. Smith") is cut like any stop before a capital: "1 hr. Refunds …" must not join two claims.
Also boundaries: the stops of other scripts (। ؟ ۔ and the Greek ";"), an emoji after a stop, a
semicolon, a table cell's "|", and two HTML elements that meet ("</li><li>"). When unsure the splitter cuts: a smaller scope can only refuse an
edit, never let one reach an unflagged sentence.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

from santa_core.checks.folding import Folded, fold

Span = tuple[int, int]

# Every break str.splitlines() knows (\r\n is one break).
_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_SPACE = rf"[^\S{_BREAKS}]|[\u200b-\u200d\u2060\ufeff]"  # spaces inside a line, the invisible ones too
_CLOSE = r"[\"'”’»›)\]}*_~`」』）］｝】〉》〕\u2600-\u27bf\ufe0f\U0001f000-\U0001faff]"  # emoji after a stop too
_FOOTNOTE = r"(?:\[\^?\w{1,10}\]|[⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
# Why the lookbehinds and possessive quantifiers: a match starts only at the first stop of a run
# and never backtracks, so 200k characters of dots or brackets stay linear.
_BOUNDARY = re.compile(
    rf"(?P<br>\r\n|[{_BREAKS}])"
    rf"|(?<![。！？｡．।॥؟۔\u037e։።။។།‼‽；])(?:[。！？｡।॥؟۔\u037e։።။។།‼‽；]|．(?![0-9０-９]))++{_CLOSE}*+{_FOOTNOTE}?+{_CLOSE}*+(?:{_SPACE})*+"
    # One-line formats: a semicolon (claims, config, code), a table cell, an HTML element that ends
    # where the next begins ("</li><li>"). Cutting there can only make a scope smaller.
    # An HTML entity ("&nbsp;", "&amp;") is matched first so its ";" is no boundary.
    rf"|(?P<entity>&(?:#\w{{1,8}}|[A-Za-z]{{1,10}});)"
    rf"|(?<![;|])[;|•·]++(?:{_SPACE})*+|>(?:{_SPACE})*+(?=<)"
    # An emoji ends a claim in social copy even without a stop ("Only 10 dollars 🔥 Refunds …").
    rf"|[\u2600-\u27bf\u2b50\u2b55\U0001f000-\U0001faff]\ufe0f?(?:{_SPACE})++"
    # A line break or a block that ends in HTML, with text after it ("dollars<br>Refunds", "</p>Refunds").
    rf"|(?:<br\s*/?>|</(?:p|li|div|h[1-6]|tr|td|th|dd|dt|blockquote)>)(?:{_SPACE})*+"
    rf"|(?<![.!?…])(?P<stop>[.!?…]++){_CLOSE}*+{_FOOTNOTE}?+{_CLOSE}*+(?:(?P<space>(?:{_SPACE})++)|(?=[^\W\d_]))"
)
# The word a glued capital starts is a sentence's first word when a space or punctuation follows it.
_GLUED_WORD = re.compile(r"[^\W\d_]+(?=[\s,;:!?)]|\.(?:\s|$)|$)")
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
    if m.group("entity") is not None:
        return False
    if m.group("stop") is None:
        return True
    i, after = m.start("stop"), m.end()
    if m.group("space") is None:  # glued: "days.No refunds", not "acme.Example.com" or "Dr.Smith"
        if (
            i < 2
            or not all(c.isalpha() and not c.isupper() for c in text[i - 2 : i])
            or not text[after].isalpha()
            or text[after].islower()
        ):
            return False
        token = text[max(0, i - 200) : i].split()[-1:]
        if token and any(mark in token[0] for mark in ("://", "@", ".", "/")):
            return False  # a URL, an address, a path or a dotted name (java.util.List, acme.Example.com)
        # A caseless script (CJK, Arabic, …) starts a sentence with no space; a capital starts one
        # when its word ends (System.Collections.Generic is one name).
        return not text[after].isupper() or bool(_GLUED_WORD.match(text, after))
    if m.group("stop") != "." or after == len(text):
        return True
    word, nxt = _word_before(text, i), text[after]
    low = word.lower()
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


MIN_WORD_CHARS = 3
"""Evidence with fewer letters and digits than this points at no place ("5%", "a", "—")."""
COMMON_WORDS = frozenset(
    "the and for are but not you all any can was one our has his her its who how why yes this that with from"
    " have they them then than there their what when will been into some your more also only very just here"
    " were which would could should about other der die das und ein eine mit von fur ist nicht den dem des"
    " les des une est pour dans avec que qui pas los las del por con una para como che per gli della dos com"
    " uma nao".split()
)
"""Single words too common to point at one place, however rarely one output uses them."""

# Why these say why: the person who fixes an unanchored issue should know what was wrong with the quote.
NO_QUOTE = "it quotes no text from the output"
TOO_SHORT = "its quoted text is too short to point at one place"
NOT_FOUND = "its quoted text is not in the output word for word"
AMBIGUOUS = "its quoted text stands more than once in the output, so it does not say which place"


@lru_cache(maxsize=8)
def _folded(text: str) -> Folded:
    return fold(text, casefold=False)


def _exact(text: str, evidence: str, limit: int) -> list[Span]:
    """The first `limit` places of the evidence, exactly (a few: each find reads the evidence again)."""
    found: list[Span] = []
    i = text.find(evidence)
    while i != -1 and len(found) < limit:
        found.append((i, i + len(evidence)))
        i = text.find(evidence, i + 1)
    return found


def _by_folded_words(text: str, evidence: str, limit: int) -> list[Span]:
    """The first `limit` places of the evidence's folded words in the folded text."""
    needle = fold(evidence, casefold=False).text.strip()
    if not needle:
        return []
    hay = _folded(text)
    found: list[Span] = []
    i = hay.text.find(needle)
    while i != -1 and len(found) < limit:
        found.append(hay.span(i, i + len(needle)))
        i = hay.text.find(needle, i + 1)
    return found


def stands_in(text: str, evidence: str) -> bool:
    """Whether the evidence stands in the text: exactly, else as its folded words.

    Folding (see `santa_core.checks.folding`) makes spacing, case of quotes and look-alike letters
    irrelevant but never a changed word, so a paraphrased quote is not found. Whether a quote is
    enough to anchor a fix is `anchor`'s question, not this one's. One place is enough to say so: every
    place of a quote of half a 200,000-character run of dashes read the quote again 100,000 times.
    """
    return bool(evidence.strip()) and bool(_exact(text, evidence, 1) or _by_folded_words(text, evidence, 1))


def too_short(evidence: str) -> bool:
    """The evidence names no place: under MIN_WORD_CHARS letters and digits, or one common word ("the")."""
    words = re.findall(r"\w+", fold(evidence).text)
    return sum(map(len, words)) < MIN_WORD_CHARS or (len(words) == 1 and words[0] in COMMON_WORDS)


def anchor(text: str, evidence: str) -> tuple[Span | None, str]:
    """(the one place the evidence stands in the text, "") or (None, why it anchors no fix).

    Evidence that is empty, too short, missing, or found at more than one place anchors nothing:
    an edit must never reach a sentence that was not flagged, and a quote found twice does not say
    which one was. Found twice means twice exactly, or twice once spacing, quote style and
    look-alike letters are folded away.
    """
    if not evidence.strip():
        return None, NO_QUOTE
    if too_short(evidence):
        return None, TOO_SHORT
    exact = _exact(text, evidence, 2)
    folded = _by_folded_words(text, evidence, 2)
    if len(exact) > 1 or len(folded) > 1:
        return None, AMBIGUOUS
    if not exact and not folded:
        return None, NOT_FOUND
    return (exact or folded)[0], ""


def scope_of(text: str, evidence: str) -> list[Span]:
    """The span an edit for an issue quoting `evidence` may lie in: the sentence holding its one place.

    Empty when the issue is unanchored (see `anchor`). A quote that runs across sentences makes
    their union the span.
    """
    place, _ = anchor(text, evidence)
    if place is None:
        return []
    start, end = place
    units = sentence_spans(text)
    starts = [u[0] for u in units]
    first = max(0, bisect.bisect_right(starts, start) - 1)
    last = bisect.bisect_left(starts, end)
    touched = [u for u in units[first : last + 1] if u[0] < end and start < u[1]] or [(start, end)]
    return [(min(touched[0][0], start), max(touched[-1][1], end))]


def within(spans: list[Span], start: int, end: int) -> bool:
    """The edit [start, end) lies inside one of the spans (an insertion at a span's edge counts)."""
    return any(s <= start and end <= e for s, e in spans)
