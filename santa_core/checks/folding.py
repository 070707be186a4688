"""Text folding for matching: one view of a text in which look-alikes compare equal.

A *folded* copy is compatibility-normalised, has invisible and bidi characters removed,
homoglyphs mapped to ASCII, case folded and whitespace collapsed, and keeps an index back to
the original so that a match on the folded text can quote the exact original substring.
Shared by the injection detector (`checks.injection`) and the term checks (`checks.terms`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat

# Why strip these: zero-width and bidi control characters are invisible to a person but split
# a phrase for a naive matcher ("ign\u200bore previous instructions").
_INVISIBLE = frozenset(
    [*range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x206A)] + [0xFEFF, 0x00AD, 0x034F, 0x061C, 0x180E]
)
# Why decode tag characters: U+E0020..U+E007E are invisible copies of ASCII ("ASCII
# smuggling"); a model can still read them, so the detector must too.
_TAG_FIRST, _TAG_LAST = 0xE0020, 0xE007E

# Why a confusables fold: NFKC does not map Cyrillic/Greek letters to Latin, so "rіsk-free"
# (Cyrillic і) or "РАSS" would otherwise slip past every term list. Small, explicit table of
# letters that look identical to Latin ones; also dash, quote, bracket and slash variants.
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic lower / upper
        "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
        "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "һ": "h",
        "ԁ": "d", "ӏ": "l", "ԛ": "q", "ԝ": "w",
        "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
        "С": "C", "Т": "T", "У": "Y", "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S", "Ԛ": "Q",
        "Ԝ": "W",
        # Greek lower / upper
        "α": "a", "ο": "o", "ι": "i", "κ": "k", "ν": "v", "ρ": "p", "υ": "u", "χ": "x",
        "ϲ": "c", "ε": "e", "τ": "t",
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
        "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
        # Cherokee and Lisu capitals drawn like Latin ones ("ᏀUARANTEED", "ꓖuaranteed")
        "Ꭰ": "D", "Ꭱ": "R", "Ꭲ": "T", "Ꭵ": "i", "Ꭼ": "E", "Ꮃ": "W", "Ꮇ": "M", "Ꮋ": "H", "Ꮐ": "G",
        "Ꮮ": "L", "Ꮪ": "S", "Ꮯ": "C", "Ᏼ": "B", "Ꮓ": "Z", "Ꮶ": "K", "Ꮲ": "P", "Ꭹ": "y", "Ꮩ": "V",
        "Ꭻ": "J",
        "ꓐ": "B", "ꓑ": "P", "ꓓ": "D", "ꓔ": "T", "ꓖ": "G", "ꓗ": "K", "ꓙ": "J", "ꓚ": "C", "ꓜ": "Z",
        "ꓟ": "M", "ꓠ": "N", "ꓡ": "L", "ꓢ": "S", "ꓣ": "R", "ꓦ": "V", "ꓧ": "H", "ꓪ": "W", "ꓫ": "X",
        "ꓬ": "Y", "ꓮ": "A", "ꓰ": "E", "ꓲ": "I", "ꓳ": "O", "ꓴ": "U",
        # Latin look-alikes outside ASCII
        "ı": "i", "ɡ": "g", "ɑ": "a", "ʟ": "l",
        # Latin small capitals ("ɪɢɴᴏʀᴇ ᴘʀᴇᴠɪᴏᴜꜱ"): no compatibility decomposition, read as letters
        "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ꜰ": "f", "ɢ": "g", "ʜ": "h", "ɪ": "i",
        "ᴊ": "j", "ᴋ": "k", "ᴍ": "m", "ɴ": "n", "ᴏ": "o", "ᴘ": "p", "ꞯ": "q", "ʀ": "r", "ꜱ": "s",
        "ᴛ": "t", "ᴜ": "u", "ᴠ": "v", "ᴡ": "w", "ʏ": "y", "ᴢ": "z",
        # Armenian small letters drawn like Latin ones ("Ignօre", "ignոre")
        "օ": "o", "ս": "u", "հ": "h", "ո": "n", "ց": "g", "զ": "q", "ա": "w", "ք": "p",
        # punctuation variants
        "‐": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-",
        "“": '"', "”": '"', "„": '"', "‟": '"', "«": '"', "»": '"', "″": '"',
        "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "`": "'",
        "‹": "<", "〈": "<", "⟨": "<", "❮": "<", "❬": "<", "⧼": "<", "ᐸ": "<", "《": "<", "⟪": "<", "❰": "<",
        "›": ">", "〉": ">", "⟩": ">", "❯": ">", "❭": ">", "⧽": ">", "ᐳ": ">", "》": ">", "⟫": ">", "❱": ">",
        "∕": "/", "⁄": "/", "⧸": "/",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Folded:
    """Folded text with, for each folded character, its index in the original text."""

    text: str
    index: tuple[int, ...]
    source: str

    def original(self, start: int, end: int) -> str:
        """The original substring behind folded[start:end]."""
        if end <= start:
            return ""
        return self.source[self.index[start] : self.index[end - 1] + 1]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original (start, end) behind folded[start:end]."""
        return self.index[start], self.index[end - 1] + 1


@lru_cache(maxsize=16384)
def _fold_char(ch: str, casefold: bool, latin_first: bool = True) -> str:
    """Fold one character: invisible -> '', tag char -> ASCII, NFKD minus marks, homoglyphs."""
    cp = ord(ch)
    if cp in _INVISIBLE:
        return ""
    if 0xE0000 <= cp <= 0xE007F:
        return chr(cp - 0xE0000) if _TAG_FIRST <= cp <= _TAG_LAST else ""
    # NFKD + dropping combining marks is NFKC's compatibility fold plus diacritic removal, so
    # "ïgnore" and "<\u0338" (which NFKC would compose into "≮") both fold to plain ASCII.
    base = "".join(c for c in unicodedata.normalize("NFKD", ch) if unicodedata.category(c) not in ("Mn", "Me"))
    # latin_first: look-alikes before case-folding, so a Greek capital Nu ("Ν") in "ΝO RISK" reads
    # as "N" (case-folding first gives "ν", which looks like "v"). That view is made for spotting
    # Latin words spelt with foreign letters; it folds a Greek word's capitals and small letters
    # differently, so term checks also match on the other view (case first), where Greek text is
    # case-insensitive as it should be.
    if latin_first:
        base = base.translate(_CONFUSABLES)
    if casefold:
        base = base.casefold()
    return base.translate(_CONFUSABLES)


_PLAIN, _SPACE, _BREAK = 0, 1, 2


@lru_cache(maxsize=16384)
def _pieces(ch: str, casefold: bool, latin_first: bool) -> tuple[tuple[int, str], ...]:
    """`_fold_char` as pieces: runs of visible characters (_PLAIN, the run) and whitespace runs (_BREAK when the run
    holds a newline, else _SPACE). Why: a character may fold to many ("ﷺ" to eighteen, with spaces), and a text of
    them must not cost a Python step per folded character (bench/adversarial_inputs.py measures it)."""
    pieces: list[tuple[int, str]] = []
    for c in _fold_char(ch, casefold, latin_first):
        kind = _BREAK if c == "\n" else _SPACE if c.isspace() else _PLAIN
        if pieces and kind != _PLAIN and pieces[-1][0] != _PLAIN:  # one whitespace run; a newline in it wins
            pieces[-1] = (max(kind, pieces[-1][0]), "")
        elif pieces and kind == _PLAIN and pieces[-1][0] == _PLAIN:
            pieces[-1] = (_PLAIN, pieces[-1][1] + c)
        else:
            pieces.append((kind, c if kind == _PLAIN else ""))
    return tuple(pieces)


_CJK = (0x4E00, 0x9FFF)
"""CJK Unified Ideographs: each folds to itself in every mode (no decomposition, no case, no look-alike entry)."""


@lru_cache(maxsize=4)
def _plain_run(casefold: bool, latin_first: bool) -> tuple[re.Pattern[str], dict[int, str]]:
    """Runs whose characters each fold to exactly one visible character, with single whitespace characters between
    them (a space, tab or carriage return folds to a space, a newline stays), and the table that folds them: such a
    run folds character by character with nothing dropped, added or collapsed, so it is folded in one
    `str.translate` instead of a Python step per character. The run starts and ends on a visible character (a
    whitespace character is always between two), so no whitespace run or its state crosses its ends."""
    ones = {
        ch: folded
        for ch in map(chr, range(0x21, 0x250))
        if len(folded := _fold_char(ch, casefold, latin_first)) == 1 and not folded.isspace()
    }
    chars = "".join(re.escape(ch) for ch in ones) + f"\\u{_CJK[0]:04x}-\\u{_CJK[1]:04x}"
    pattern = re.compile(f"[{chars}](?:[{chars}]|[ \\t\\r\\n](?=[{chars}]))+")
    table = {ord(ch): folded for ch, folded in ones.items() if folded != ch}
    return pattern, {**table, ord("\t"): " ", ord("\r"): " "}


def _fold_each(
    text: str, start: int, end: int, casefold: bool, latin_first: bool, out: list[str], index: list[int], spaced: bool
) -> bool:
    """Fold text[start:end] one character at a time onto `out` and `index`; returns whether it ended in a space."""
    for i in range(start, end):
        for kind, run in _pieces(text[i], casefold, latin_first):
            if kind == _PLAIN:
                out.append(run)
                index.extend(repeat(i, len(run)))
                spaced = False
            elif not spaced:
                out.append("\n" if kind == _BREAK else " ")
                index.append(i)
                spaced = True
            elif kind == _BREAK:
                out[-1] = "\n"  # the run's one character becomes a newline
    return spaced


def fold(text: str, casefold: bool = True, latin_first: bool = True) -> Folded:
    """Fold text for matching; whitespace runs become one space (or one newline)."""
    out: list[str] = []
    index: list[int] = []
    spaced = False  # the last character out is a space or a newline (a whitespace run goes on)
    plain, table = _plain_run(casefold, latin_first)
    at = 0
    for match in plain.finditer(text):
        start, end = match.span()
        spaced = _fold_each(text, at, start, casefold, latin_first, out, index, spaced)
        out.append(match.group().translate(table))
        index.extend(range(start, end))
        spaced, at = False, end
    _fold_each(text, at, len(text), casefold, latin_first, out, index, spaced)
    return Folded("".join(out), tuple(index), text)
