"""What every deterministic check shares: the config base and the wording helpers of a detail.

A check runner takes (config, output, folded output) and returns (ok, detail, evidence): `detail` says
what was checked and what was found, in a rubric author's words; `evidence` is the exact offending
text when there is one (it anchors the fix agent's edits), or "" when a fix cannot be pinned to one span.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from santa_core.checks.folding import Folded


class CheckConfigBase(BaseModel):
    model_config = ConfigDict(extra="forbid")


CheckResult = tuple[bool, str, str]
"""(ok, detail, evidence) of one check on one output."""
CheckRunner = Callable[[Any, str, Folded], CheckResult]


def context(text: str, start: int, end: int, width: int = 30) -> str:
    """The hit with some text either side, on one line."""
    left = ("…" if start > width else "") + text[max(0, start - width) : start]
    right = text[end : end + width] + ("…" if end + width < len(text) else "")
    return " ".join((left + text[start:end] + right).split())


def plural(count: int, noun: str) -> str:
    """'1 link', '3 links'."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def line_of(text: str, offset: int) -> int:
    """1-based line number of a character offset."""
    return text.count("\n", 0, offset) + 1


MAX_LISTED = 10
"""Offending links or secrets named in a detail; past this many the rest are counted."""


def listed(items: list[str]) -> str:
    """Items joined with "; ", the ones past MAX_LISTED counted."""
    more = f"; (+{len(items) - MAX_LISTED} more)" if len(items) > MAX_LISTED else ""
    return "; ".join(items[:MAX_LISTED]) + more
