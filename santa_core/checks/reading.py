"""The reading-grade check: Flesch–Kincaid grade level at most a limit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import pyphen
from pydantic import Field

from santa_core.checks.base import CheckConfigBase, CheckResult, plural
from santa_core.checks.folding import Folded


class ReadingGradeCheck(CheckConfigBase):
    """Flesch–Kincaid grade level at most `max`."""

    type: Literal["reading_grade"]
    max: float = Field(ge=1, le=20)


_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")  # "don't" is one word
_SENTENCE_END = re.compile(r"[.!?]+")


@dataclass(frozen=True)
class ReadingStats:
    """Counts behind a Flesch–Kincaid grade level."""

    sentences: int
    words: int
    syllables: int
    grade: float
    longest_sentence: str


@lru_cache(maxsize=1)
def _dictionary() -> pyphen.Pyphen:
    return pyphen.Pyphen(lang="en_US")


@lru_cache(maxsize=65536)
def syllable_count(word: str) -> int:
    """Syllables of a word as older textstat releases counted them: pyphen hyphenation points + 1."""
    return len(_dictionary().positions(word)) + 1


def reading_stats(text: str) -> ReadingStats | None:
    """Flesch–Kincaid grade of a text, or None when it has no words to grade."""
    runs = [run for run in _SENTENCE_END.split(text) if _WORD.search(run)]
    if not runs:
        return None
    words = [w for run in runs for w in _WORD.findall(run)]
    syllables = sum(syllable_count(w) for w in words)
    grade = 0.39 * (len(words) / len(runs)) + 11.8 * (syllables / len(words)) - 15.59
    longest = max(runs, key=lambda run: len(_WORD.findall(run)))
    return ReadingStats(len(runs), len(words), syllables, grade, " ".join(longest.split()))


def reading_grade(cfg: ReadingGradeCheck, output: str, folded: Folded) -> CheckResult:
    stats = reading_stats(output)
    if stats is None:
        return True, "nothing to grade: the output has no words", ""
    longest = stats.longest_sentence
    # Short: the detail is stored and shown, and a long sentence may hold text that should not spread.
    longest = longest if len(longest) <= 60 else longest[:59] + "…"
    detail = (
        f"grade {stats.grade:.1f} (limit {cfg.max:g}): {plural(stats.sentences, 'sentence')}, {plural(stats.words, 'word')}, "
        f'{plural(stats.syllables, "syllable")}; longest sentence: "{longest}"'
    )
    # Compare what the detail shows, so "grade 8.0 (limit 8)" never reads as a failure.
    return round(stats.grade, 1) <= cfg.max, detail, ""
