"""A diff a person reads: changed sentences with one sentence of context, never a long text twice.

A line diff of prose shows a one-line paragraph whole on each side, however little changed in it (a
200,000-character paragraph appeared twice on the run page). Here the units are sentences; the equal
ones are left out but for `context` on each side of a change, and a long unit shows only the words
around what changed. Time is about linear in the texts: the common head and tail are cut in one pass
and difflib compares sentences, not characters.
"""

from __future__ import annotations

import difflib
import re

BOUNDARY = re.compile(r"(?<![.!?…])[.!?…]++[\"'”’)\]]*+\s+|\n\s*")
"""Where a sentence ends: its closing punctuation (and quotes or brackets after it) followed by space, or a line end.
Linear on any text: a match starts only at the first mark of a run (the look-behind) and the possessive runs never
give back, so a run of dots with no space after it is read once, not once from each of its characters."""

LONG = 400
"""A changed piece longer than this many characters shows only the words around what changed."""
AROUND = 80
"""How many characters of unchanged text stand on each side of a change inside a long piece."""
MOST = 3000
"""The most characters one side of one change shows; the rest is counted, not printed (the box holds it all)."""
MOST_SHOWN = 30_000
"""The most characters a whole diff shows: a text reworded all over is not shown twice by its many changes either."""
CONTEXT_CHARS = 200
"""The most characters a context sentence shows (a long one is cut on the side away from the change)."""


def sentences(text: str) -> list[str]:
    """The text cut after each sentence end or line end; the pieces joined give the text back exactly."""
    cuts = [m.end() for m in BOUNDARY.finditer(text)]
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if b > a]


def _common_head(a: str, b: str) -> int:
    """Length of the common start of a and b."""
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # binary search on slices: C-speed comparisons, no per-character Python loop
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_tail(a: str, b: str, limit: int) -> int:
    """Length of the common end of a and b, at most `limit`."""
    lo, hi = 0, min(limit, len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _one_line(text: str) -> str:
    """A piece of text as one diff line: its line ends as spaces, no space at its ends."""
    return " ".join(text.split("\n")).strip()


def _capped(text: str) -> str:
    """At most MOST characters of a changed piece, saying how many more there are."""
    if len(text) <= MOST:
        return text
    return f"{text[:MOST]} … ({len(text) - MOST:,} more characters)"


def _listed(mark: str, units: list[str]) -> list[str]:
    """One line per sentence, up to MOST characters in all; the rest counted."""
    lines, size = [], 0
    for n, unit in enumerate(units):
        if size > MOST:
            lines.append(f"{mark} … ({len(units) - n:,} more sentences)")
            break
        if unit.strip():
            lines.append(f"{mark} {_one_line(unit)}")
            size += len(unit)
    return lines


def _long_change(old: str, new: str) -> list[str]:
    """A change inside a long piece: only what changed, with AROUND characters of unchanged text each side."""
    head = _common_head(old, new)
    tail = _common_tail(old, new, min(len(old), len(new)) - head)
    start = max(0, head - AROUND)
    lead = "…" if start else ""
    trail = "…" if tail > AROUND else ""
    shown = [lead + text[start : len(text) - tail + AROUND] + trail for text in (old, new)]
    return [f"{mark} {_capped(_one_line(text))}" for mark, text in zip("-+", shown, strict=True) if text.strip()]


def _changed(old: list[str], new: list[str]) -> list[str]:
    """The lines of one change: its sentences, each removed one beside its replacement when they pair up,
    or for a long sentence only the words around what changed."""
    if any(len(u) > LONG for u in (*old, *new)):
        return _long_change("".join(old), "".join(new))
    if len(old) == len(new) and len(old) * LONG <= MOST:
        return [line for was, now in zip(old, new, strict=True) for line in _listed("-", [was]) + _listed("+", [now])]
    return _listed("-", old) + _listed("+", new)


def _context(unit: str, before_change: bool) -> str:
    """A context sentence, cut to CONTEXT_CHARS on the side away from the change."""
    text = _one_line(unit)
    if len(text) <= CONTEXT_CHARS:
        return "  " + text
    return "  …" + text[-CONTEXT_CHARS:] if before_change else "  " + text[:CONTEXT_CHARS] + "…"


def _skipped(count: int) -> str:
    return f"  … {count} unchanged sentence{'s' if count != 1 else ''} …"


def sentence_diff(
    before: str, after: str, old: str = "current output", new: str = "proposed output", context: int = 1
) -> str:
    """The changed sentences of `after` against `before`, `context` unchanged sentences around each change,
    the rest counted; "(no change)" when equal. Lines start "- " (removed), "+ " (added), "  " (unchanged)."""
    if before.strip() == after.strip():
        return "(no change)"
    lines, shown, size = diff_lines(before, after, context), [f"--- {old}", f"+++ {new}"], 0
    for n, line in enumerate(lines):
        size += len(line) + 1
        if size > MOST_SHOWN:  # a text changed all over: the page shows the start, the box holds it all
            left = sum(1 for rest in lines[n:] if rest.startswith(("- ", "+ ")))
            shown.append(
                f"… and {left:,} more changed line{'s' if left != 1 else ''}, not shown here "
                "(the text in the box is whole)"
            )
            break
        shown.append(line)
    return "\n".join(shown)


def sentence_of(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the whole sentences of `text` that hold text[start:end]."""
    cuts = [0, *(m.end() for m in BOUNDARY.finditer(text)), len(text)]
    first = max(c for c in cuts if c <= start)
    last = min((c for c in cuts if c >= end and c > first), default=len(text))
    return first, last


def diff_lines(before: str, after: str, context: int = 1) -> list[str]:
    """The lines of `sentence_diff` without its two header lines."""
    a, b = sentences(before), sentences(after)
    ka, kb = [u.strip() for u in a], [u.strip() for u in b]  # the space after a sentence is no change to it
    # Cut the common head and tail first: one pass, so difflib sees only the part that differs.
    head = 0
    while head < min(len(a), len(b)) and ka[head] == kb[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and ka[-1 - tail] == kb[-1 - tail]:
        tail += 1
    mid_a, mid_b = ka[head : len(a) - tail], kb[head : len(b) - tail]
    ops: list[tuple[str, int, int, int, int]] = [("equal", 0, head, 0, head)] if head else []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, mid_a, mid_b).get_opcodes():
        ops.append((op, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        ops.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    lines: list[str] = []
    for n, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag != "equal":
            lines += _changed(a[i1:i2], b[j1:j2])
            continue
        units = a[i1:i2]
        lead = units[:context] if n > 0 else []  # after the previous change
        trail = units[len(units) - context :] if n < len(ops) - 1 and context else []  # before the next change
        if len(lead) + len(trail) + 1 >= len(units):  # a gap of one sentence is shown, not counted
            lines += [_context(u, before_change=False) for u in units]
            continue
        lines += [_context(u, before_change=False) for u in lead]
        lines.append(_skipped(len(units) - len(lead) - len(trail)))
        lines += [_context(u, before_change=True) for u in trail]
    return lines
