"""Column widths that fit a table into its container, and the row height its wrapped cells need (pure).

A Streamlit dataframe is a canvas grid: columns wider together than the grid scroll sideways and cut what is
past the right edge. So every table gets a width for each column, chosen from its content, that adds up to
no more than the room it has (a 1,024 px window, the narrowest desk the app is made for, is the reference; a
wider window only widens the columns, the grid shares the room left over among them). Text that does not fit on one line wraps: Streamlit wraps
cell text only in rows taller than 4rem, and one row height serves the whole table, so a table either has
one-line rows or rows of 3 lines or more. `fit` picks the fewest lines per row at which every column fits,
then spends the room left on columns that can do with fewer lines, then on the long text columns.

Widths are estimated from the characters (the grid draws 14 px Source Sans; the figures are Chromium's
measures, rounded up): an estimate too wide costs a few pixels, one too narrow cuts a word.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache

import pandas as pd

PAGE_PX = 546
"""A table's room directly in the main area: 562 px in a 1,024 × 768 window with the sidebar open (818 px at
1,280 px)."""
MAIN_PX = 524
"""A table's room in the main area wherever it stands (528 px inside an expander at 1,024 px)."""
CARD_PX = 384
"""A table's room in one of two side-by-side columns (a review card): 400 px at 1,280 px, the one room still
fitted for that window (272 px at 1,024 px cannot hold a detail in six lines: the cards need stacking there)."""
MARKER_PX = 36
"""The box or circle at the start of each row of a table whose rows can be selected (up to 999 rows)."""
CELL_PAD_PX = 16
"""A cell's horizontal padding (8 px each side)."""
HEADER_PAD_PX = 22
"""A header's padding and the sort arrow a click on it adds."""
MIN_COLUMN_PX = 50
"""The grid's narrowest column."""
WRAP_LINES = 6
"""The most lines a wrapped row is tall; a longer cell shows whole when clicked."""
WRAPPED_LINES = 3
"""The lines the shortest wrapped row (66 px) holds: a table that wraps at all may as well use them."""
LINE_PX, FIRST_LINE_PX, WRAP_ROW_PX = 20, 24, 66
"""A wrapped row: its first line with the padding, 20 px each further line (the grid's 1.4 line height),
and never under 66 px (Streamlit wraps only above 64 px)."""
MEASURED = 40
"""Per column, the cells whose lines are counted: the widest ones (a list of 500 runs stays quick)."""
NBSP = "\u00a0"
"""A space the grid never wraps at (it wraps only at plain spaces)."""


def unbroken(text: str) -> str:
    """`text` with its spaces made ones the grid does not wrap at: "desk v1", "round 3" stay on one line."""
    return text.replace(" ", NBSP)


ASCII_PX = (
    2.9,
    4.2,
    6.2,
    7.2,
    7.2,
    11.9,
    8.8,
    3.6,
    4.4,
    4.4,
    6.1,
    7.2,
    3.6,
    4.5,
    3.6,
    5.1,
    7.2,
    7.2,
    7.2,
    7.2,
    7.2,
    7.2,
    7.2,
    7.2,
    7.2,
    7.2,
    3.6,
    3.6,
    7.2,
    7.2,
    7.2,
    6.2,
    12.3,
    7.9,
    8.5,
    8.3,
    8.9,
    7.6,
    7.2,
    8.9,
    9.5,
    3.8,
    7.0,
    8.4,
    7.1,
    10.5,
    9.4,
    9.6,
    8.2,
    9.6,
    8.3,
    7.8,
    7.8,
    9.4,
    7.5,
    11.4,
    7.4,
    6.9,
    7.8,
    4.4,
    5.1,
    4.4,
    7.2,
    7.3,
    7.9,
    7.3,
    8.0,
    6.6,
    8.1,
    7.2,
    4.3,
    7.3,
    7.9,
    3.6,
    3.6,
    7.2,
    3.7,
    12.0,
    7.9,
    7.9,
    8.1,
    8.1,
    5.1,
    6.1,
    4.9,
    7.9,
    6.8,
    10.4,
    6.5,
    6.8,
    6.2,
    4.4,
    3.5,
    4.4,
    7.2,
)
"""The widths of the printable ASCII characters, space to tilde, 3 % over what Chromium measures for 14 px
Source Sans (the grid's font)."""


@cache
def char_px(ch: str) -> float:
    """The width of one character as the grid draws it (14 px Source Sans), rounded up a little."""
    if " " <= ch <= "~":
        return ASCII_PX[ord(ch) - 32]
    if ch == NBSP:
        return ASCII_PX[0]
    if unicodedata.category(ch) in ("Mn", "Me", "Cf"):  # variation selectors, joiners: no width of their own
        return 0.0
    if unicodedata.east_asian_width(ch) in ("W", "F") or ord(ch) >= 0x2190:  # emoji, symbols, CJK
        return 19.0
    return 8.0


def text_px(text: str) -> float:
    """The width of one line of `text`."""
    return sum(char_px(ch) for ch in text)


def words(text: str) -> list[str]:
    """The words the grid wraps between: split at plain spaces and line ends only (not at no-break spaces)."""
    return [w for line in text.split("\n") for w in line.split(" ") if w]


def word_widths(text: str) -> tuple[tuple[float, ...], ...]:
    """Per line of `text`, the widths of its words (split at plain spaces): what `wrapped_lines` measures."""
    return tuple(tuple(text_px(w) for w in paragraph.split(" ") if w) for paragraph in str(text).split("\n"))


def wrapped_lines(text: str, width: int) -> int:
    """How many lines `text` takes in a cell `width` px wide, wrapped at plain spaces (a word longer than a
    line is broken where the line ends, as the grid does)."""
    return measured_lines(word_widths(text), width)


def measured_lines(paragraphs: tuple[tuple[float, ...], ...], width: int) -> int:
    """`wrapped_lines` from a text's `word_widths` (a column measured once is wrapped at many widths)."""
    room = max(1.0, width - CELL_PAD_PX)
    space = char_px(" ")
    lines = 0
    for paragraph in paragraphs:
        lines += 1
        used = 0.0
        for w in paragraph:
            if used and used + space + w <= room:
                used += space + w
                continue
            if used:
                lines += 1
            broken = max(0, math.ceil(w / room) - 1)  # a word longer than a line runs on to the next
            lines += broken
            used = w - room * broken
    return lines


def cell_text(value: object) -> str:
    """A cell as the grid shows it (nothing for a missing value)."""
    if value is None or (not isinstance(value, (str, list, tuple, dict)) and pd.isna(value)):
        return ""
    return str(value)


@dataclass(frozen=True)
class Fit:
    widths: dict[str, int]
    """Each column's width in px (all columns of the frame, in its order)."""
    lines: int
    """The most lines a row needs at these widths (at most the `most_lines` asked for)."""

    @property
    def row_height(self) -> int | None:
        """The row height for st.dataframe: None (one-line rows) unless a cell wraps."""
        return None if self.lines <= 1 else max(WRAP_ROW_PX, FIRST_LINE_PX + LINE_PX * (self.lines - 1))


class _Column:
    """One column's texts as the fitting sees them: its header's width, its widest cells."""

    def __init__(self, header: str, cells: list[str], breakable: bool = False) -> None:
        self.head = max(MIN_COLUMN_PX, math.ceil(text_px(header) + HEADER_PAD_PX))
        widest = sorted({c for c in cells if c}, key=lambda t: max(text_px(p) for p in t.split("\n")), reverse=True)
        longest_word = sorted(widest, key=lambda t: max(map(text_px, words(t)), default=0), reverse=True)
        self.cells = list(dict.fromkeys(widest[:MEASURED] + longest_word[: MEASURED // 4]))
        self.one_line = max(
            self.head, math.ceil(max((text_px(p) for t in self.cells for p in t.split("\n")), default=0) + CELL_PAD_PX)
        )
        self.word = max(
            self.head,
            math.ceil(
                max((text_px(w) for t in self.cells for w in words(t) if not (breakable and "@" in w)), default=0)
                + CELL_PAD_PX
            ),
        )
        """The width of the longest word: a column that wraps breaks no word unless nothing else fits (in a
        `breakable` column, only e-mail addresses may break: "cli (command line)" never reads "com mand")."""
        self._measured = [word_widths(t) for t in self.cells]
        self._narrowest: dict[int, int] = {}

    def lines(self, width: int) -> int:
        return max((measured_lines(m, width) for m in self._measured), default=1)

    def narrowest(self, lines: int) -> int:
        """The least width at which every cell takes at most `lines` lines, no word broken (never under the
        header's)."""
        if lines not in self._narrowest:
            low, high = self.word, self.one_line
            while low < high:
                mid = (low + high) // 2
                low, high = (low, mid) if self.lines(mid) <= lines else (mid + 1, high)
            self._narrowest[lines] = low
        return self._narrowest[lines]


def fit(
    frame: pd.DataFrame,
    room: int = MAIN_PX,
    wide: tuple[str, ...] = (),
    fixed: dict[str, int] | None = None,
    labels: dict[str, str] | None = None,
    most_lines: int = WRAP_LINES,
    breakable: tuple[str, ...] = (),
) -> Fit:
    """Column widths that add up to at most `room` px (unless even the headers cannot), and the lines the
    tallest row then needs.

    When every column can have one line of its longest cell (never less than its header, `labels` where the
    header is not the column's name), that is their width. Otherwise the rows get the fewest lines (3 or
    more, up to `most_lines`) at which every column fits without breaking a word, and the room left goes,
    cheapest first, to columns that can do with a line less. When not even `most_lines` fit, the other
    columns are capped at a common width so that the `wide` ones keep theirs (the wide ones are capped too
    if that is not enough; a cell cut at the last line shows whole when clicked). Whatever room is left at
    the end goes to the `wide` columns (the long texts). `fixed` columns keep the width given (a link, a
    number: what they show is not their text, so they never set the rows' height); `breakable` columns
    (names with e-mail addresses) may break a word at a line's end.
    """
    fixed, labels = fixed or {}, labels or {}
    names = tuple(str(c) for c in frame.columns)
    texts = tuple(() if c in fixed else tuple(cell_text(v) for v in frame[c]) for c in names)
    found = _fitted(
        names, texts, room, tuple(wide), tuple(fixed.items()), tuple(labels.items()), most_lines, tuple(breakable)
    )
    return Fit(dict(found.widths), found.lines)  # widths of the caller's own


@lru_cache(maxsize=64)  # bounded: a 500-run list is some 400 kB of text
def _fitted(
    names: tuple[str, ...],
    texts: tuple[tuple[str, ...], ...],
    room: int,
    wide: tuple[str, ...],
    fixed_widths: tuple[tuple[str, int], ...],
    label_pairs: tuple[tuple[str, str], ...],
    most_lines: int,
    breakable: tuple[str, ...],
) -> Fit:
    """`fit` of a table's cell texts, kept per content: the same table (a run's rubric, a page rerun with nothing
    changed) is fitted once per process, not on every rerun."""
    fixed, labels = dict(fixed_widths), dict(label_pairs)
    cols = {
        c: _Column(labels.get(c, c), list(cells), c in breakable)
        for c, cells in zip(names, texts, strict=True)
        if c not in fixed
    }
    wides = [c for c in names if c in wide and c in cols]
    budget = room - sum(fixed.get(c, 0) for c in names)

    def done(widths: dict[str, int], lines: int) -> Fit:
        left = budget - sum(widths.values())
        for n, c in enumerate(wides):  # the room left to the long texts (the grid would spread it over all)
            extra = max(0, left // (len(wides) - n))
            widths[c] += extra
            left -= extra
        lines = min(lines, max((cols[c].lines(w) for c, w in widths.items()), default=1))
        return Fit({c: fixed[c] if c in fixed else widths[c] for c in names}, max(1, lines))

    if sum(col.one_line for col in cols.values()) <= budget:
        return done({c: col.one_line for c, col in cols.items()}, 1)
    rows = next(
        (
            n
            for n in range(min(WRAPPED_LINES, most_lines), most_lines + 1)
            if sum(col.narrowest(n) for col in cols.values()) <= budget
        ),
        None,
    )
    if rows is None:
        target = {c: col.narrowest(most_lines) for c, col in cols.items()}
        kept = {c: w for c, w in target.items() if c in wides}  # the long texts keep theirs, if the others can give
        floor = {c: col.word for c, col in cols.items()}  # and no word is broken, if that can be had
        for floors in (floor, {c: col.head for c, col in cols.items()}):
            if sum(kept.values()) + sum(floors[c] for c in target if c not in kept) <= budget:
                break
        else:
            kept = {}
        capped = [c for c in target if c not in kept]

        def total(cap: int) -> int:
            return sum(kept.values()) + sum(max(floors[c], min(target[c], cap)) for c in capped)

        low, high = 0, max(target.values(), default=0)
        while low < high:  # the widest common cap at which the columns fit
            mid = (low + high + 1) // 2
            low, high = (mid, high) if total(mid) <= budget else (low, mid - 1)
        return done(kept | {c: max(floors[c], min(target[c], low)) for c in capped}, most_lines)
    widths = {c: col.narrowest(rows) for c, col in cols.items()}
    lines = {c: cols[c].lines(w) for c, w in widths.items()}
    while True:  # a line less where it costs least, while the room lasts
        left = budget - sum(widths.values())
        options = [(cols[c].narrowest(lines[c] - 1) - widths[c], c) for c in cols if lines[c] > 1]
        affordable = [(cost, c) for cost, c in options if 0 < cost <= left]
        if not affordable:
            break
        cost, c = min(affordable)
        widths[c] += cost
        lines[c] = cols[c].lines(widths[c])
    return done(widths, rows)
