"""Text rules and fingerprints shared by the core, storage, the pages and the command line.

One definition each: the size rule every reviewable text obeys, the SHA-256 of a text, the
canonical JSON every hash is taken over, and the unified diff people read.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Any

from santa_core.models import MAX_TEXT_CHARS


def text_problem(text: str, what: str, limit: int = MAX_TEXT_CHARS) -> str | None:
    """Why `text` cannot be reviewed ("<what> is empty", "<what> has N characters; the limit is M"), else None.

    `what` names the text as the caller's sentence needs it ("the spec", "Output", "--spec").
    """
    if not text.strip():
        return f"{what} is empty"
    if len(text) > limit:
        return f"{what} has {len(text):,} characters; the limit is {limit:,}"
    return None


def sha256_text(text: str) -> str:
    """Hex SHA-256 of UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys and text as written: the bytes every hash is taken over.

    Values JSON cannot hold (a datetime in an audit detail) are written as their `str`.
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def unified_diff(before: str, after: str, before_label: str, after_label: str) -> str:
    """A unified diff of two texts, line by line (difflib); "" when they are equal."""
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 fromfile=before_label, tofile=after_label)
    # A last line without a newline would glue onto the next diff line; close it the way diff(1) does.
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
