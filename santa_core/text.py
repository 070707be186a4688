"""Text rules and fingerprints shared by the core, storage, the pages and the command line.

One definition each: the size rule every reviewable text obeys, the SHA-256 of a text, the
canonical JSON every hash is taken over, the unified diff people read, and every occurrence of one
sequence in another in linear time.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from santa_core.models import MAX_TEXT_CHARS


def text_problem(text: str, what: str, limit: int = MAX_TEXT_CHARS) -> str | None:
    """Why `text` cannot be reviewed ("<what> is empty", "<what> has N characters; the limit is M"), else None.

    `what` names the text as the caller's sentence needs it ("the spec", "Output", "--spec").
    """
    if not text.strip():
        return f"{what} is empty"
    return control_problem(text, what) or length_problem(text, what, limit)


CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Control characters no text of the desk may hold: C0 except tab, line feed and carriage return (a line
end), DEL and C1. Why: SQLite would store a NUL and PostgreSQL refuses it; escape sequences and other
controls are invisible on a page, can rewrite a terminal line, and no reviewer reads them as text."""


SURROGATES = re.compile("[\ud800-\udfff]")
"""A UTF-16 surrogate on its own (a broken "\\ud800"-style escape in JSON): no UTF-8 text holds one."""


def control_problem(text: str, what: str) -> str | None:
    """ "<what> contains a control character (\\x1b) at character N: …" for the first one (or an unpaired surrogate),
    else None."""
    found = CONTROL_CHARS.search(text)
    if found is None:
        lone = SURROGATES.search(text)
        if lone is None:
            return None
        return (
            f"{what} contains an unpaired surrogate (a broken \\ud800-style escape) at character "
            f"{lone.start() + 1:,}: fix the text"
        )
    char = found.group()
    name = "a NUL character" if char == "\x00" else "a control character"
    return (
        f"{what} contains {name} ({char.encode('unicode_escape').decode()}) at character {found.start() + 1:,}: "
        "remove it (the file may be partly binary)"
    )


def length_problem(text: str, what: str, limit: int = MAX_TEXT_CHARS) -> str | None:
    """ "<what> has N characters; the limit is M" when `text` is over the limit, else None."""
    return f"{what} has {len(text):,} characters; the limit is {limit:,}" if len(text) > limit else None


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, however deeply nested (dict keys included)."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            yield current
        elif isinstance(current, dict):
            stack.extend(current.keys())
            stack.extend(current.values())
        elif isinstance(current, list | tuple):
            stack.extend(current)


def sha256_text(text: str) -> str:
    """Hex SHA-256 of UTF-8 text."""
    # (surrogatepass: a text no check refused yet hashes without a crash; every other text hashes as before)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def canonical_json(value: Any, default: Callable[[Any], Any] | None = None) -> str:
    """Compact JSON with sorted keys and text as written: the bytes every hash is taken over.

    A value JSON cannot hold raises, unless `default` says how to write it (the audit trail writes
    a datetime in a detail as its `str`).
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=default)


def unified_diff(before: str, after: str, before_label: str, after_label: str, *, exact_line_ends: bool = True) -> str:
    """A unified diff of two texts, line by line (difflib); "" when they are equal.

    `exact_line_ends` (records, exports): line ends are compared, and a last line without a newline
    is marked the way diff(1) does. Off (what a person reads on a page): lines are compared without
    their ends, so a trailing newline alone is no change, and the diff has no markers.
    """
    if not exact_line_ends:
        return "\n".join(
            difflib.unified_diff(
                before.splitlines(), after.splitlines(), fromfile=before_label, tofile=after_label, lineterm=""
            )
        )
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=before_label, tofile=after_label
    )
    # A last line without a newline would glue onto the next diff line; close it the way diff(1) does.
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


T = TypeVar("T")


def starts(hay: Sequence[T], needle: Sequence[T], begin: int = 0) -> Iterator[int]:
    """Where needle starts in hay at `begin` or later, overlapping occurrences too, in order, in time linear in both
    (Knuth–Morris–Pratt: no element of hay is read twice for one needle). An empty needle is found nowhere."""
    if not needle:
        return
    border, k = [0] * len(needle), 0
    for i in range(1, len(needle)):
        while k and needle[i] != needle[k]:
            k = border[k - 1]
        if needle[i] == needle[k]:
            k += 1
        border[i] = k
    k, size = 0, len(needle)
    for i in range(begin, len(hay)):
        item = hay[i]
        while k and item != needle[k]:
            k = border[k - 1]
        if item == needle[k]:
            k += 1
            if k == size:
                yield i - size + 1
                k = border[k - 1]
