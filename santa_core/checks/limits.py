"""Length limits: at most so many words, at most so many characters."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from santa_core.checks.base import CheckConfigBase, CheckResult
from santa_core.checks.folding import Folded


class MaxWordsCheck(CheckConfigBase):
    """At most `max` whitespace-separated words."""

    type: Literal["max_words"]
    max: int = Field(ge=1)


class MaxCharsCheck(CheckConfigBase):
    """At most `max` characters."""

    type: Literal["max_chars"]
    max: int = Field(ge=1)


def max_words(cfg: MaxWordsCheck, output: str, folded: Folded) -> CheckResult:
    n = len(output.split())
    return n <= cfg.max, f"{n} words (limit {cfg.max})", ""


def max_chars(cfg: MaxCharsCheck, output: str, folded: Folded) -> CheckResult:
    n = len(output)
    return n <= cfg.max, f"{n} characters (limit {cfg.max})", ""
