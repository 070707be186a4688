"""Decoded views: what a text says once a model decodes it for itself.

A model reads base64, hex, percent-encoding and HTML entities as easily as plain words, follows "decode this rot13",
reads text behind a right-to-left override in order and letters of any script as the Latin ones they look like; a
pattern over the text as written sees none of it. Each view here is the decoded text of one blob (or one stretch of
text), with the blob's span in the original, and the detector reads each view with its other layers (`layers.layered`).

Bounded on purpose: untrusted text can hold blobs without end, so at most MAX_VIEWS views and MAX_DECODED decoded
characters are made, every pattern is a `bounded.Pattern` that runs in linear time (possessive runs, bounded
windows), and a view is never decoded again (depth 1: a blob of blobs costs one level, not a tower).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote, unquote_plus

import icu
from regex import IGNORECASE

from santa_core.checks.bounded import Pattern

__all__ = ["MAX_DECODED", "MAX_VIEWS", "DecodedView", "views", "views_read"]

MAX_VIEWS = 50
"""Views made of one text at most (the rest of its blobs are not decoded)."""
MAX_DECODED = 20_000
"""Decoded characters of one text at most, all views together."""
BLOB_CAP = 8_000
"""Characters of one blob decoded at most (a data URI of an image runs to megabytes)."""
WINDOW = 600
"""Characters after a decode hint (and a third of it before) that rot13 or reversing reads."""


@dataclass(frozen=True)
class DecodedView:
    """One decoded view: how it was decoded (`name`), the span of the original it decodes and the decoded text."""

    name: str
    start: int
    end: int
    text: str


def _printable(data: bytes) -> str | None:
    """The bytes as text when they are UTF-8 a person could read (letters in it, nothing but printable characters and
    line breaks), else None: a hash or an id decodes to binary."""
    decoded = data.decode("utf-8", errors="replace")
    letters = sum(ch.isalpha() for ch in decoded)
    odd = sum(not (ch.isprintable() or ch in "\n\r\t") or ch == "\ufffd" for ch in decoded)
    # A stray byte or two (a control character, a Latin-1 letter) does not stop a model reading the words around it;
    # binary has many. Read a blob when at most one character in twenty is odd, the odd ones blanked.
    if letters < 4 or odd * 20 > len(decoded):
        return None
    return "".join(" " if not (ch.isprintable() or ch in "\n\r\t") or ch == "\ufffd" else ch for ch in decoded)


# A blob: a run of the base64 alphabet (either one) at least 16 long, standing alone. Possessive: read once.
_BLOB = Pattern(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}+={0,6}+(?![A-Za-z0-9+/=_-])")
_HEX_ONLY = Pattern(r"(?:[0-9A-Fa-f]{2})++")
_BASE32_ONLY = Pattern(r"[A-Z2-7]++=*+")
# A data URI's payload whose type is not text: an image, a font or bytes (their bytes are no words).
_DATA_URI = Pattern(
    r"data:(?!text/|application/(?:json|xml|javascript))[\w.+-]{1,40}+/[\w.+-]{1,80}+"
    r"(?:;[\w.+-]{1,40}+=[\w.+-]{1,80}+){0,5}+;base64,$",
    IGNORECASE,
)


def _decode_blob(blob: str) -> tuple[str, str] | None:
    """(name, text) of the first decoding that reads as text: hex, base32, base64 (standard or URL-safe)."""
    blob = blob[:BLOB_CAP]
    attempts = []
    if _HEX_ONLY.fullmatch(blob) is not None:
        attempts.append(("hex", lambda: binascii.unhexlify(blob)))
    body = blob.rstrip("=")
    if _BASE32_ONLY.fullmatch(blob) is not None:
        attempts.append(("base32", lambda: base64.b32decode(body + "=" * (-len(body) % 8), casefold=False)))
    padded = body + "=" * (-len(body) % 4)
    url_safe = "-" in blob or "_" in blob
    attempts.append(("base64", lambda: base64.b64decode(padded, altchars=b"-_" if url_safe else None, validate=True)))
    for name, decode in attempts:
        try:
            decoded = _printable(decode())
        except (binascii.Error, ValueError):
            continue
        if decoded is not None:
            return name, decoded
    return None


def _wrapped(text: str) -> list[tuple[int, int]]:
    """The blobs' spans, a blob wrapped over lines (MIME's 76 characters a line, whole quanta of 4) joined into one."""
    spans: list[tuple[int, int]] = []
    for m in _BLOB.finditer(text):  # blobs do not overlap: decoding them all reads the text once
        if spans and text[spans[-1][1] : m.start()] in ("\n", "\r\n") and (spans[-1][1] - spans[-1][0]) % 4 == 0:
            if m.end() - spans[-1][0] <= BLOB_CAP:
                spans[-1] = (spans[-1][0], m.end())
                continue
        spans.append(m.span())
    return spans


def _blobs(text: str) -> list[DecodedView]:
    """Base64, base32 and hex blobs that decode to readable text (not an image's data URI)."""
    found = []
    for start, end in _wrapped(text):
        if _DATA_URI.search(text, max(0, start - 200), start) is not None:
            continue
        decoded = _decode_blob("".join(text[start:end].split()))
        if decoded is not None:
            found.append(DecodedView(decoded[0], start, end, decoded[1]))
    return found


# A token that holds a percent-escape: a URL, its query string, a form body. Tokens do not overlap: read once.
_TOKEN = Pattern(r"[^\s\"'<>()\[\]{}]{3,4000}+")
_PERCENT = Pattern(r"%[0-9A-Fa-f]{2}")


def _percent(text: str) -> list[DecodedView]:
    """Percent-encoded tokens decoded ('+' as a space in a query string)."""
    found = []
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        if _PERCENT.search(token) is None:
            continue
        decoded = unquote_plus(token) if "?" in token or "=" in token else unquote(token)
        if decoded != token:
            found.append(DecodedView("percent", m.start(), m.end(), decoded))
    return found


_ENTITY = Pattern(r"&(?:#[0-9]{1,7}+|#[xX][0-9a-fA-F]{1,6}+|[A-Za-z][A-Za-z0-9]{1,31}+);")
_NEAR = 200
"""Entities closer than this many characters are one stretch; a stretch reads this far either side too."""
STRETCH_CAP = 2_000
"""Characters of entities one stretch holds at most (a page escaped throughout is many stretches, not one)."""


def _entities(text: str) -> list[DecodedView]:
    """Stretches of text with HTML entities ("&#105;gnore", "&#x41;&#x49;"), unescaped."""
    found = []
    stretch: list[int] = []
    for m in _ENTITY.finditer(text):
        if stretch and (m.start() - stretch[1] > _NEAR or m.end() - stretch[0] > STRETCH_CAP):
            found.append(_unescaped(text, *stretch))
            stretch = []
        stretch = [stretch[0] if stretch else m.start(), m.end()]
    if stretch:
        found.append(_unescaped(text, *stretch))
    return [v for v in found if v is not None]


def _unescaped(text: str, start: int, end: int) -> DecodedView | None:
    """The stretch from `start` to `end`, widened to its line (up to _NEAR characters either side), unescaped."""
    line_start = text.rfind("\n", max(0, start - _NEAR), start) + 1 or max(0, start - _NEAR)
    line_end = text.find("\n", end, end + _NEAR)
    line_end = min(len(text), end + _NEAR) if line_end == -1 else line_end
    stretch = text[line_start:line_end]
    unescaped = html.unescape(stretch)
    return None if unescaped == stretch else DecodedView("entities", line_start, line_end, unescaped)


# Words that tell a model to decode what follows (or precedes) them: rot13 and reversed text need one, since any
# text can be "decoded" by them.
_ROT13_HINT = Pattern(r"(?<![a-z0-9])(?:rot[-_ ]?13|caesar|decode|decipher|decrypt|deobfuscate|unscramble)", IGNORECASE)
_REVERSE_HINT = Pattern(r"(?<![a-z0-9])(?:reversed?|backwards?|right[- ]to[- ]left|mirror(?:ed)?)(?![a-z])", IGNORECASE)


def _windows(text: str, hint: Pattern) -> list[tuple[int, int]]:
    """Windows around each hint (a third of WINDOW before, WINDOW after), merged where they overlap."""
    windows: list[tuple[int, int]] = []
    for m in hint.finditer(text):
        start, end = max(0, m.start() - WINDOW // 3), min(len(text), m.end() + WINDOW)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], end)
        else:
            windows.append((start, end))
    return windows


def _rot13(text: str) -> list[DecodedView]:
    """The text near a decode hint, read as rot13."""
    return [DecodedView("rot13", a, b, codecs.decode(text[a:b], "rot13")) for a, b in _windows(text, _ROT13_HINT)]


_OVERRIDE = Pattern(r"\u202e([^\u202a-\u202e\u2066-\u2069\n]{1,4000}+)")


def _reversed(text: str) -> list[DecodedView]:
    """Text behind a right-to-left override as a person sees it (reversed), and text near a "read it backwards"."""
    found = [DecodedView("reversed", m.start(), m.end(), m.group(1)[::-1]) for m in _OVERRIDE.finditer(text)]
    found += [DecodedView("reversed", a, b, text[a:b][::-1]) for a, b in _windows(text, _REVERSE_HINT)]
    return found


# --- the confusables skeleton (Unicode UTS #39) ------------------------------------------------------------------
# Why ICU: its SpoofChecker computes the skeleton of UTS #39 from the Unicode consortium's confusables data (ICU
# 77.1: Unicode 16.0), kept current with ICU's releases; a hand-grown table misses what nobody thought of. One
# checker for every thread: ICU documents a configured checker as safe to use from many threads at once.
_SPOOF = icu.SpoofChecker()
_WORD = Pattern(r"[^\s\p{P}\p{S}]{2,200}+|\S")


@lru_cache(maxsize=65536)
def _skeleton(ch: str) -> str:
    """One character as the ASCII it stands for: its compatibility form when that is ASCII ("ｒ", "𝚖": the form a
    model reads, where the skeleton would draw "𝚖" as "rn"), else its UTS #39 skeleton without the marks NFD splits
    off ("ạ" → "a"); a capital whose skeleton is "l" is read "I" (the prototype of I, l and 1 is "l")."""
    compatible = unicodedata.normalize("NFKC", ch)
    if compatible.isascii():
        return compatible
    skeleton = unicodedata.normalize("NFD", _SPOOF.getSkeleton(0, ch))
    skeleton = "".join(c for c in skeleton if not unicodedata.combining(c))
    return "I" if skeleton == "l" and ch.isupper() else skeleton


def _word_skeleton(word: str) -> str | None:
    """The word with every non-ASCII letter read as the ASCII one it looks like, when all of them look like one
    ("раss" with a Cyrillic р and а → "pass"); None when the word is ASCII or has a letter that looks like none."""
    if word.isascii():
        return None
    out = []
    letters = False  # a word whose only foreign characters are invisible is the fold's to read, not a look-alike
    for ch in word:
        mapped = ch if ch.isascii() else _skeleton(ch)
        if not mapped.isascii():
            return None
        letters = letters or (not ch.isascii() and ch.isalnum())
        out.append(mapped)
    return "".join(out) if letters else None


def _skeletons(text: str) -> list[DecodedView]:
    """Lines with words spelt in look-alike letters, each such word read as its ASCII skeleton."""
    found = []
    start = 0
    while start < len(text):
        end = text.find("\n", start, start + 2000)
        end = min(len(text), start + 2000) if end == -1 else end
        line = text[start:end]
        if not line.isascii():
            pieces = []
            changed = False
            for m in _WORD.finditer(line):
                skeleton = _word_skeleton(m.group(0))
                changed = changed or skeleton is not None
                pieces.append((m.start(), m.end(), skeleton))
            if changed:
                found.append(DecodedView("skeleton", start, end, _rewritten(line, pieces)))
        start = end + 1 if end < len(text) and text[end] == "\n" else end
    return found


def _rewritten(line: str, pieces: list[tuple[int, int, str | None]]) -> str:
    """The line with each piece that has a skeleton replaced by it."""
    out, last = [], 0
    for a, b, skeleton in pieces:
        if skeleton is not None:
            out.append(line[last:a])
            out.append(skeleton)
            last = b
    out.append(line[last:])
    return "".join(out)


# Why this order: the caps keep the first views made, so the decoders that need a hint or an override (rot13, reversed
# text) come first, then blobs that decode to words and look-alike letters, then what an ordinary web page is full of
# (query strings, entities). A text with more than the caps hold is not passed on what was read: `views_read` says so.
_DECODERS = (_rot13, _reversed, _blobs, _skeletons, _percent, _entities)


def views(text: str) -> list[DecodedView]:
    """Every decoded view of the text, within MAX_VIEWS and MAX_DECODED (see `views_read`)."""
    return views_read(text)[0]


def views_read(text: str) -> tuple[list[DecodedView], DecodedView | None]:
    """Every decoded view of the text, in order of decoder then place, within MAX_VIEWS and MAX_DECODED, and the first
    view the caps left unread (None when every one was kept). A view that decodes to the text of one kept already is
    not kept again: repeats (of an attack's padding or of an ordinary page's) do not spend the caps."""
    kept: list[DecodedView] = []
    seen: set[str] = set()
    total = 0
    for decoder in _DECODERS:
        for view in decoder(text):
            if view.text in seen:
                continue
            if len(kept) >= MAX_VIEWS or total >= MAX_DECODED:
                return kept, view
            seen.add(view.text)
            view = DecodedView(view.name, view.start, view.end, view.text[: MAX_DECODED - total])
            kept.append(view)
            total += len(view.text)
    return kept, None
