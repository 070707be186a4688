"""The folded view is the same whether a stretch of text is folded in one `str.translate` (a run of characters that
each fold to one, with single spaces between) or one character at a time: the oracle here is the definition, a
character-by-character fold written out below from `_fold_char`'s pieces, not the product's loop."""

from __future__ import annotations

import re
import string
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from santa_core.checks.folding import _CJK, _fold_char, fold
from santa_core.checks.languages import _COMPOSED_AS_IS, _composed

MODES = [(True, True), (False, True), (True, False), (False, False)]


def folded_one_by_one(text: str, casefold: bool, latin_first: bool) -> tuple[str, list[int]]:
    """Each character's fold in turn; a whitespace run is one space, or one newline if it holds one."""
    out: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        for c in _fold_char(ch, casefold, latin_first):
            if not c.isspace():
                out.append(c)
                index.append(i)
            elif out and out[-1] in " \n":
                if c == "\n":
                    out[-1] = "\n"
            else:
                out.append("\n" if c == "\n" else " ")
                index.append(i)
    return "".join(out), index


TRICKY = (
    string.ascii_letters + string.digits + string.punctuation + "  \t\n\r\u00a0\u3000\u2028"
    + "ÀéßİıﬁẞΣσςАаеΝ‐—“”`\u200b\u00ad\u202e\U000e0041ﷺ①Ⅻ한国語ぱ一丁\u4e00\u9fff"
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(TRICKY) | st.characters(), max_size=60))
def test_the_fold_is_the_fold_of_each_character(text: str) -> None:
    for casefold, latin_first in MODES:
        folded = fold(text, casefold=casefold, latin_first=latin_first)
        assert (folded.text, list(folded.index)) == folded_one_by_one(text, casefold, latin_first)


def test_runs_and_single_spaces_fold_alike_at_their_ends() -> None:
    """Where a run meets whitespace or a character that folds to several or none."""
    for text in ["a b", " a b ", "a  b", "a \n b", "ﷺ a", "a\u200bb c", "Straße x", "ǅx y", "a\u00a0b", "x\t y"]:
        for casefold, latin_first in MODES:
            folded = fold(text, casefold=casefold, latin_first=latin_first)
            assert (folded.text, list(folded.index)) == folded_one_by_one(text, casefold, latin_first), text


def test_every_cjk_ideograph_folds_to_itself() -> None:
    """The fast run takes the CJK Unified Ideographs block as folding to itself, without asking `_fold_char`."""
    for cp in range(_CJK[0], _CJK[1] + 1):
        for casefold, latin_first in MODES:
            assert _fold_char.__wrapped__(chr(cp), casefold, latin_first) == chr(cp)


def composed_one_by_one(text: str) -> tuple[str, list[int]]:
    """The `substring` tables' view by its definition: each character NFKC-composed and case-folded, format
    characters dropped."""
    out: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch) != "Cf":
            piece = unicodedata.normalize("NFKC", ch).casefold()
            out.append(piece)
            index += [i] * len(piece)
    return "".join(out), index


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(TRICKY + "ボットｶﾞがパ각ㄱ") | st.characters(), max_size=60))
def test_the_composed_view_is_that_of_each_character(text: str) -> None:
    view = _composed(text)
    assert (view.text, list(view.index)) == composed_one_by_one(text)


def test_the_composed_runs_hold_only_characters_that_compose_to_one() -> None:
    """Every character the composed view folds by the run: NFKC leaves it, case-folding gives one, it is no format
    character (so a run folds whole exactly as one by one)."""
    runs = _COMPOSED_AS_IS.pattern.strip("[]+")
    ranges = [
        (int(a[2:], 16), int(b[2:], 16)) for a, b in (r.split("-") for r in re.findall(r"\\[xu]\w+-\\[xu]\w+", runs))
    ]
    assert len(ranges) == 5
    for first, last in ranges:
        for cp in range(first, last + 1):
            ch = chr(cp)
            assert unicodedata.category(ch) != "Cf" and unicodedata.normalize("NFKC", ch) == ch, hex(cp)
            assert len(ch.casefold()) == 1, hex(cp)
