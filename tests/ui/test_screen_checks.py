"""The browser screen test's judgements that need no browser (tests/support/screens.py): the internal words it
looks for in visible text are found where they are and not in ordinary sentences."""

from __future__ import annotations

import re

import pytest

from tests.support.screens import INTERNAL_WORDS

PATTERNS = {what: re.compile(source) for what, source in INTERNAL_WORDS}
"""The same sources as the page's JavaScript runs (lookbehinds and classes both engines read alike)."""


@pytest.mark.parametrize(
    ("text", "what", "found"),
    [
        ("Low reviewer agreement on no_outcome_guarantees (κ = 0.120)", "a snake_case id", "no_outcome_guarantees"),
        (
            "Injection screen · repeated the key (asked for FAIL-M9J9S8I9BM)",
            "an injection-screen key",
            "FAIL-M9J9S8I9BM",
        ),
        ("verdict: Input should be 'PASS' or 'FAIL'", "raw validation text", "Input should be"),
        ("1 validation error for Review", "raw validation text", "validation error for"),
    ],
)
def test_each_internal_word_is_found(text: str, what: str, found: str) -> None:
    assert [m.group(0) for m in PATTERNS[what].finditer(text)] == [found]


@pytest.mark.parametrize(
    "text",
    [
        "Facts are checked · 2 runs that failed criterion Facts are checked, newest first.",
        "Open https://example.com/a_b or ./review?run=12 or data/santa_db.sqlite",  # addresses and paths are not ids
        "The reviewer FAILed it: FAIL and PASS are verdicts",
        "Mean iterations to converge 1.40 · $0.0569 · 2026-03-02 09:00",
    ],
)
def test_ordinary_text_holds_none(text: str) -> None:
    assert not [m.group(0) for p in PATTERNS.values() for m in p.finditer(text)]
