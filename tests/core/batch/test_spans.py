"""`spans.phrase_spans` against the pattern it replaced, and the linear searches under it (`text.starts`,
`fixer.occurrences`) against the obvious quadratic ones: a fix reaching an unsampled item is held to these spans, so
the linear search must never find more than the old pattern, and finds exactly what it found without underscores."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from itertools import pairwise

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from santa_core.batch.spans import phrase_spans
from santa_core.run.fixer import occurrences
from santa_core.run.gate import normalise
from santa_core.text import starts

Span = tuple[int, int]


def _old_pattern(phrase: str) -> re.Pattern[str] | None:
    """The pattern `item_fix.quote_spans` and `signature.raw_spans` ran before `spans` (the oracle, copied)."""
    words = normalise(phrase).split()
    if not words:
        return None
    return re.compile(r"(?<!\w)" + r"[\W_]+".join(re.escape(w) for w in words) + r"(?!\w)", re.IGNORECASE)


def _old_spans(text: str, phrase: str) -> list[Span]:
    pattern = _old_pattern(phrase)
    return [] if pattern is None else [m.span() for m in pattern.finditer(text)]


def _matches_in_place(pattern: re.Pattern[str], text: str, start: int, end: int) -> bool:
    """Whether the pattern matches text[start:end] in place: its lookbehind sees the text before `start` (`pos` does
    not cut the text), and its lookahead, cut off by `endpos`, is asked of the character after `end` here."""
    return bool(pattern.fullmatch(text, start, end)) and not re.match(r"\w", text[end : end + 1])


# Words whose case folding is special (i I ı İ, ß and its "ss"), underscores alone and inside words, mixed case.
_WORDS = [
    "a",
    "A",
    "ab",
    "Ab",
    "aB",
    "i",
    "I",
    "ı",
    "İ",
    "iı",
    "ß",
    "ss",
    "SS",
    "ſ",
    "max",
    "MAX",
    "tokens",
    "_",
    "__",
    "max_tokens",
    "_a",
    "a_",
    "x1",
    "1",
]
_GAPS = [" ", "  ", ",", ", ", ".", "-", "\n", "_", " _ ", "__", "!?", "", "\u0345"]


def test_phrase_spans_are_the_old_patterns_and_never_more() -> None:
    """Without an underscore in the phrase: the very spans the old pattern found. With one: each span found is text
    the old pattern matches where it stands (it may find fewer: the module's docstring)."""
    seen = {"exact": 0, "underscore found": 0, "underscore fewer": 0}

    @settings(derandomize=True, max_examples=500, deadline=None, phases=[Phase.explicit, Phase.generate], database=None)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        # A few words and gaps an example, the text often a piece repeated: phrases recur and their occurrences overlap.
        words = data.draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=2, unique=True))
        gaps = data.draw(st.lists(st.sampled_from(_GAPS), min_size=1, max_size=3, unique=True))
        tokens = data.draw(st.lists(st.sampled_from(words + gaps), max_size=6)) * data.draw(st.integers(1, 3))
        text = "".join(tokens)
        phrases = []
        for _ in range(data.draw(st.integers(1, 3))):
            how = data.draw(st.sampled_from(["piece", "its words", "drawn"] if tokens else ["drawn"]))
            if how != "drawn":  # a piece of the text itself, or its words alone (a quote that lost the markdown)
                i = data.draw(st.integers(0, len(tokens) - 1))
                piece = tokens[i : data.draw(st.integers(i + 1, len(tokens)))]
                phrases.append("".join(piece) if how == "piece" else " ".join(t for t in piece if t in words))
            else:
                phrases.append(
                    data.draw(st.sampled_from(gaps)).join(
                        data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=3))
                    )
                )
        found = phrase_spans(text, phrases)
        assert found == [s for phrase in phrases for s in phrase_spans(text, [phrase])]  # phrase after phrase
        for phrase in phrases:
            mine, old, pattern = phrase_spans(text, [phrase]), _old_spans(text, phrase), _old_pattern(phrase)
            for start, end in mine:  # never more: each span is text the old pattern matches where it stands
                assert pattern and _matches_in_place(pattern, text, start, end), (text, phrase, (start, end))
            assert all(a[1] <= b[0] for a, b in pairwise(mine)), (text, phrase)  # apart, leftmost first
            if "_" not in normalise(phrase) and "\u0345" not in text:  # U+0345: see the code point test below
                assert mine == old, (text, phrase)
                seen["exact"] += bool(old)
            elif "_" in normalise(phrase):
                seen["underscore found"] += bool(mine)
                seen["underscore fewer"] += len(mine) < len(old)

    check()
    assert min(seen.values()) >= 5, seen  # every branch was exercised: the property is not vacuous


@pytest.mark.parametrize(
    ("text", "phrase", "mine", "old"),
    [
        ("Set max_tokens.", "max tokens", [(4, 14)], [(4, 14)]),  # without an underscore, any gap: "_guaranteed_" too
        ("İSTANBUL, ıstanbul", "istanbul", [(0, 8), (10, 18)], [(0, 8), (10, 18)]),
        ("Straße", "strasse", [], []),  # ß folds to two letters: neither pattern took it for "ss"
        ("Set max_tokens.", "max_tokens", [(4, 14)], [(4, 14)]),
        ("Set max _tokens.", "max_tokens", [], []),  # a word's units touch
        ("max_tokens_foo", "max_tokens foo", [], [(0, 14)]),  # the old gap took the underscore: no longer found
        ("ss _ _ x", "ss _", [(0, 4)], [(0, 6)]),  # the old gap took underscores greedily
        ("a a a a", "a a", [(0, 3), (4, 7)], [(0, 3), (4, 7)]),  # apart, leftmost first
        ("\u0345a", "ιa", [], [(0, 2)]),  # the one character `re` took for a letter that is not one
    ],
)
def test_the_documented_cases(text: str, phrase: str, mine: list[Span], old: list[Span]) -> None:
    assert (phrase_spans(text, [phrase]), _old_spans(text, phrase)) == (mine, old)


def _groups() -> list[list[str]]:
    """Every code point, in groups that case mapping joins (a character, its lowercase, uppercase, titlecase and case
    folding, first characters, transitively): `re.IGNORECASE` compares characters by their lowercase, so a character
    can match another only inside its group. Groups of one are left out (a character matches only itself there)."""
    parent: dict[str, str] = {}

    def root(c: str) -> str:
        while parent.get(c, c) != c:
            c = parent[c]
        return c

    for code in range(sys.maxunicode + 1):
        c = chr(code)
        for mapped in (c.lower(), c.upper(), c.title(), c.casefold()):
            if mapped[:1] != c:
                a, b = root(c), root(mapped[0])
                if a != b:
                    parent[a] = b
    groups: dict[str, list[str]] = {}
    for c in set(parent) | set(parent.values()):
        groups.setdefault(root(c), []).append(c)
    return [sorted(group) for group in groups.values()]


def test_every_code_point_compares_as_the_old_pattern_compared_it() -> None:
    """Each letter or digit a normalised phrase can hold, as a one-word phrase, against every character of its case
    group: the very characters the old pattern found, but for U+0345 (a combining mark, not a letter, that `re` takes
    for ι: a unit here is a run of letters and digits, so the mark is never found). A character alone in its group
    (no case mapping reaches it or leaves it) is compared by `re.IGNORECASE` as itself: all of them, in one phrase,
    must be found as themselves (the old pattern is not compiled for them: 120,000 literals take seconds)."""
    words = {ch for code in range(sys.maxunicode + 1) for w in normalise(chr(code)).split() for ch in w} - {"_"}
    grouped: set[str] = set()
    differ = []
    for group in _groups():
        grouped.update(group)
        text = " ".join(group)
        for w in sorted(words.intersection(group)):
            mine, old = phrase_spans(text, [w]), _old_spans(text, w)
            assert set(mine) <= set(old), (w, text)
            differ += [text[s:e] for s, e in sorted(set(old) - set(mine))]
    assert differ == ["\u0345"]
    alone = " ".join(sorted(words - grouped))
    assert len(words - grouped) > 100_000  # the ideographs, the other letters without case, the digits
    assert phrase_spans(alone, [alone]) == [(0, len(alone))]


def _naive_starts(hay: str | list[int], needle: str | list[int], begin: int = 0) -> list[int]:
    n = len(needle)
    return [i for i in range(begin, len(hay) - n + 1) if n and hay[i : i + n] == needle]


@settings(derandomize=True, max_examples=400, deadline=None, phases=[Phase.explicit, Phase.generate], database=None)
@given(st.text("ab", max_size=30), st.text("ab", max_size=6), st.integers(0, 31))
def test_starts_finds_every_occurrence_overlapping_ones_too(hay: str, needle: str, begin: int) -> None:
    assert list(starts(hay, needle, begin)) == _naive_starts(hay, needle, begin)
    as_list: Callable[[str], list[int]] = lambda s: [ord(c) for c in s]  # noqa: E731 - any sequence, not only text
    assert list(starts(as_list(hay), as_list(needle))) == _naive_starts(as_list(hay), as_list(needle))


@pytest.mark.parametrize(
    ("hay", "needle", "expected"),
    [
        ("aaaa", "aa", [0, 1, 2]),
        ("abababa", "aba", [0, 2, 4]),
        ("aabaabaaab", "aabaaab", [3]),
        ("abc", "", []),
        ("", "a", []),
        ("a", "ab", []),
    ],
)
def test_starts_by_hand(hay: str, needle: str, expected: list[int]) -> None:
    assert list(starts(hay, needle)) == expected


@settings(derandomize=True, max_examples=300, deadline=None, phases=[Phase.explicit, Phase.generate], database=None)
@given(st.text("ab ", max_size=40), st.text("ab ", max_size=5))
def test_occurrences_are_every_start_of_sub(text: str, sub: str) -> None:
    assert occurrences(text, sub) == _naive_starts(text, sub)


@pytest.mark.parametrize(
    ("text", "sub"),
    [
        (
            "a" * 6_000,
            "a" * 1_000,
        ),  # after 25 occurrences `find` has read sub more than 4x the text: one pass finds the rest
        ("ab" * 3_000 + "a", "ab" * 500 + "a"),
        ("ab" * 3_000 + "b" + "ab" * 1_500, "ab" * 400),  # an occurrence missing in the middle, after the switch
        ("xa" + "a" * 6_000, "a" * 999 + "x"),  # never found: the budget is never reached
    ],
)
def test_occurrences_past_the_budget_of_find(text: str, sub: str) -> None:
    assert occurrences(text, sub) == _naive_starts(text, sub)
