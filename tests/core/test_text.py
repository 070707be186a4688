"""The one definition of each text rule: the size of a reviewable text, hashes, canonical JSON, diffs."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import pytest

from santa_core.models import MAX_TEXT_CHARS
from santa_core.text import canonical_json, sha256_text, text_problem, unified_diff


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("  \n\t", "the spec is empty", id="blank"),
        pytest.param(
            "x" * (MAX_TEXT_CHARS + 1),
            f"the spec has {MAX_TEXT_CHARS + 1:,} characters; the limit is {MAX_TEXT_CHARS:,}",
            id="too-long",
        ),
        pytest.param("x" * MAX_TEXT_CHARS, None, id="at-the-limit"),
    ],
)
def test_text_problem_names_the_text_and_the_limit(text: str, expected: str | None) -> None:
    assert text_problem(text, "the spec") == expected


def test_text_problem_takes_another_limit() -> None:
    assert text_problem("abcd", "Output", limit=3) == "Output has 4 characters; the limit is 3"


def test_sha256_text_is_the_hex_digest_of_utf8() -> None:
    assert sha256_text("Grüße") == hashlib.sha256("Grüße".encode()).hexdigest()


def test_an_unpaired_surrogate_is_refused_and_never_crashes_a_check() -> None:
    """A model's JSON may carry "\\ud800": no text of the desk holds one, and a check that meets one still answers."""
    from santa_core.checks.injection import detect_injection

    text = "Fine text " + json.loads('"\\ud800"') + " and more"
    assert text_problem(text, "Output") == (
        "Output contains an unpaired surrogate (a broken \\ud800-style escape) at character 11: fix the text"
    )
    assert len(sha256_text(text)) == 64 and sha256_text(text) != sha256_text(text.replace(text[10], "?"))
    assert detect_injection(text) == []


def test_canonical_json_sorts_keys_keeps_text_and_refuses_what_json_cannot_hold() -> None:
    assert canonical_json({"b": 1, "a": ["é", None]}) == '{"a":["é",null],"b":1}'
    when = datetime(2026, 12, 3, tzinfo=UTC)
    with pytest.raises(TypeError):
        canonical_json({"at": when})
    assert canonical_json({"at": when}, default=str) == '{"at":"2026-12-03 00:00:00+00:00"}'


def test_an_exact_diff_marks_a_last_line_without_newline() -> None:
    diff = unified_diff("We ship in 2023.", "We ship in 2024.", "before", "after")
    assert diff == (
        "--- before\n+++ after\n@@ -1 +1 @@\n-We ship in 2023.\n\\ No newline at end of file\n"
        "+We ship in 2024.\n\\ No newline at end of file\n"
    )
    assert unified_diff("a\n", "a", "before", "after") != ""  # the line end alone is a change


def test_a_readers_diff_compares_lines_without_their_ends() -> None:
    diff = unified_diff("We ship in 2023.", "We ship in 2024.", "before", "after", exact_line_ends=False)
    assert diff == "--- before\n+++ after\n@@ -1 +1 @@\n-We ship in 2023.\n+We ship in 2024."
    assert unified_diff("a\n", "a", "before", "after", exact_line_ends=False) == ""
