"""Batch files: read a CSV or JSONL batch for verification, and write the verified batch back. Pure.

Reading:
- `sniff(data, filename)` looks at a file without judging its items: format, columns in file order,
  the number of items and the columns guessed for id, output and spec (None when no guess).
- `read_batch(data, filename, ...)` loads every item or raises one `BatchFileError` listing what is
  wrong (line and column named); a file never loads in part. Which column is what, and each row's
  checks, are `santa_core.batch.fields`'.

Writing:
- `write_batch(items, fmt, ...)` (or `BatchFile.export`) writes each item's original fields, with the
  output column holding the current text, plus `santa_status`, `santa_pattern`, `santa_fix` and
  `santa_original_output` (the text before the fix, only for changed items). Values are written
  back unchanged, so an item that was not fixed reads back byte-identical; the file's *formatting*
  is normalised (CSV quoting is minimal; JSONL is `json.dumps(..., ensure_ascii=False)`).

Rules worth knowing:
- Text must be UTF-8 (a UTF-8 BOM is accepted and kept on a CSV export, for Excel).
- CSV: the first non-blank row is the header; rows whose cells are all empty are skipped (spreadsheets
  leave them behind); the delimiter is `,`, or `;` / tab when the header has no comma (or `.tsv`).
  Every CSV value is text. JSONL: one JSON object per line; values are kept as parsed.
- The derived stratum `length` (when the file has no `length` column) splits items into
  short / medium / long by the character count of the output, cut at the batch's terciles
  (see `length_bounds`). Characters, not words, so it works for code and for languages written
  without spaces.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from santa_core.batch.fields import (
    ID_COLUMNS,
    LENGTH_STRATUM,
    OUTPUT_COLUMNS,
    SPEC_COLUMNS,
    cell,
    check_unique,
    choose_columns,
    guess_column,
    row_fields,
)
from santa_core.batch.formats import BatchFileError, BatchFormat, Newline, parse
from santa_core.batch.sampling import sample_size
from santa_core.models import MAX_TEXT_CHARS

MAX_ITEMS = 10_000
"""Most items one batch file may hold; larger files are refused with a request to split them."""
MAX_FILE_BYTES = 64 * 1024 * 1024
"""Largest batch file read (bytes), so a wrong upload fails fast instead of filling memory."""
LENGTH_LABELS = ("short", "medium", "long")

STATUS_COLUMN = "santa_status"
PATTERN_COLUMN = "santa_pattern"
FIX_COLUMN = "santa_fix"
ORIGINAL_COLUMN = "santa_original_output"
SANTA_COLUMNS = (STATUS_COLUMN, PATTERN_COLUMN, FIX_COLUMN, ORIGINAL_COLUMN)
"""Columns added on export; a file that already has them (an earlier export) gets them rewritten."""


class BatchLayout(BaseModel):
    """How a batch file is laid out, and which columns look like the id, output and spec."""

    format: BatchFormat
    columns: list[str]
    rows: int
    delimiter: str = ","
    newline: Newline = "\n"
    bom: bool = False
    id_column: str | None = None
    output_column: str | None = None
    spec_column: str | None = None


class BatchItemOut(BaseModel):
    """One item of the verified batch, as exported: the original fields plus what Santa did."""

    record: dict[str, Any]
    original_output: str
    output: str
    status: str
    pattern: str | None = None
    fix: str | None = None

    @property
    def changed(self) -> bool:
        """True when the exported text differs from the text read."""
        return self.output != self.original_output


class BatchItemIn(BaseModel):
    """One item read from a batch file."""

    key: str
    output: str
    spec: str | None = None  # None: the batch's one spec applies
    strata: dict[str, str] = Field(default_factory=dict)  # in the order the strata were chosen
    record: dict[str, Any]  # every field of the row: text for CSV, parsed JSON values for JSONL
    line: int  # 1-based line of the file where the item starts

    @property
    def stratum(self) -> tuple[str, ...]:
        """The item's stratum: its values of the chosen strata, in order (() when none were chosen)."""
        return tuple(self.strata.values())

    def result(
        self, status: str, *, output: str | None = None, pattern: str | None = None, fix: str | None = None
    ) -> BatchItemOut:
        """This item for export: `output` is the current text (None: unchanged)."""
        return BatchItemOut(
            record=self.record,
            original_output=self.output,
            output=self.output if output is None else output,
            status=status,
            pattern=pattern,
            fix=fix,
        )


class BatchFile(BatchLayout):
    """A batch file read in full: every item valid, ids unique."""

    id_column: str
    output_column: str
    strata: list[str] = Field(default_factory=list)
    items: list[BatchItemIn]
    length_rule: str | None = None  # how the derived `length` stratum was cut, for the page
    warnings: list[str] = Field(default_factory=list)

    def preview(self, n: int = 5, width: int = 120) -> list[dict[str, str]]:
        """The first n items as display text (long values clipped), derived strata included."""
        rows = []
        for item in self.items[:n]:
            row = {c: _clip(cell(item.record.get(c)), width) for c in self.columns}
            row.update({s: v for s, v in item.strata.items() if s not in row})
            rows.append(row)
        return rows

    def strata_sizes(self) -> dict[tuple[str, ...], int]:
        """Items per stratum, largest first (ties in sorted order)."""
        counts = Counter(item.stratum for item in self.items)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def export(self, items: Sequence[BatchItemOut], fmt: BatchFormat | None = None) -> bytes:
        """Write the verified items in this file's format (or `fmt`), keeping its columns and line ends."""
        fmt = fmt or self.format
        same_csv = fmt == "csv" and self.format == "csv"
        return write_batch(
            items,
            fmt,
            output_column=self.output_column,
            columns=self.columns,
            newline=self.newline,
            delimiter=self.delimiter if same_csv else ",",
            bom=self.bom and fmt == "csv",
        )


# --- reading --------------------------------------------------------------------------------


def sniff(data: bytes, filename: str = "", *, max_bytes: int = MAX_FILE_BYTES) -> BatchLayout:
    """Format, columns, item count and guessed id/output/spec columns; raises BatchFileError for a bad file."""
    parsed = parse(data, filename, max_bytes)
    cols = parsed.columns
    id_col = guess_column(cols, ID_COLUMNS, ())
    output_col = guess_column(cols, OUTPUT_COLUMNS, (id_col,))
    return BatchLayout(
        format=parsed.format,
        columns=cols,
        rows=len(parsed.rows),
        delimiter=parsed.delimiter,
        newline=parsed.newline,
        bom=parsed.bom,
        id_column=id_col,
        output_column=output_col,
        spec_column=guess_column(cols, SPEC_COLUMNS, (id_col, output_col)),
    )


def read_batch(
    data: bytes,
    filename: str = "",
    *,
    id_column: str | None = None,
    output_column: str | None = None,
    spec_column: str | None = None,
    strata: Sequence[str] = (),
    max_items: int = MAX_ITEMS,
    max_text_chars: int = MAX_TEXT_CHARS,
    max_bytes: int = MAX_FILE_BYTES,
) -> BatchFile:
    """Every item of a CSV or JSONL batch, or one BatchFileError listing every problem.

    A column left as None is guessed (see ID_COLUMNS, OUTPUT_COLUMNS, SPEC_COLUMNS); `spec_column=""`
    means the file has no spec column (one spec for all). `strata` are column names, or `length`.
    """
    parsed = parse(data, filename, max_bytes)
    if len(parsed.rows) > max_items:
        raise BatchFileError(
            [f"the file has {len(parsed.rows):,} items; the limit is {max_items:,}: split it into smaller batches"],
            parsed.columns,
        )
    choice = choose_columns(parsed.columns, id_column, output_column, spec_column, strata, max_text_chars)
    problems: list[tuple[int, str]] = []  # (line, message): reported in file order
    fields = [row_fields(row, choice, problems) for row in parsed.rows]
    check_unique(parsed.rows, fields, problems)
    if problems:
        raise BatchFileError([message for _, message in sorted(problems, key=lambda p: p[0])], parsed.columns)
    length_rule = _add_length(fields) if choice.derived_length else None
    items = [BatchItemIn(line=row.line, record=row.record, **f) for row, f in zip(parsed.rows, fields, strict=True)]
    batch = BatchFile(
        format=parsed.format,
        columns=parsed.columns,
        rows=len(items),
        delimiter=parsed.delimiter,
        newline=parsed.newline,
        bom=parsed.bom,
        id_column=choice.id,
        output_column=choice.output,
        spec_column=choice.spec,
        strata=choice.strata,
        items=items,
        length_rule=length_rule,
    )
    batch.warnings = _strata_warnings(batch)
    return batch


def length_bounds(lengths: Sequence[int]) -> tuple[int, int]:
    """The tercile cuts (t1, t2) of the `length` stratum: short ≤ t1 < medium ≤ t2 < long.

    t1 and t2 are the nearest-rank 1/3 and 2/3 quantiles of the sorted lengths (1-based ranks
    ⌈n/3⌉ and ⌈2n/3⌉), so equal lengths always share a stratum and the cut does not depend on order.
    """
    if not lengths:
        raise ValueError("no lengths to cut")
    ordered = sorted(lengths)
    n = len(ordered)
    return ordered[math.ceil(n / 3) - 1], ordered[math.ceil(2 * n / 3) - 1]


def length_label(chars: int, bounds: tuple[int, int]) -> str:
    """short, medium or long for an output of `chars` characters under `bounds`."""
    low, high = bounds
    return LENGTH_LABELS[0] if chars <= low else LENGTH_LABELS[1] if chars <= high else LENGTH_LABELS[2]


def _add_length(fields: list[dict[str, Any]]) -> str:
    """Fill in the derived `length` stratum; returns the rule as a sentence for the page."""
    bounds = length_bounds([len(f["output"]) for f in fields])
    for f in fields:
        f["strata"][LENGTH_STRATUM] = length_label(len(f["output"]), bounds)
    low, high = bounds
    medium = "none" if high == low else f"{high:,}" if high == low + 1 else f"{low + 1:,} to {high:,}"
    return (
        f"length = characters of the output, cut at this batch's terciles: short up to {low:,}, "
        f"medium {medium}, long over {high:,}"
    )


def _strata_warnings(batch: BatchFile) -> list[str]:
    """Strata that will make samples large, and items without a value for a stratum column."""
    if not batch.strata:
        return []
    warnings = []
    n = len(batch.items)
    for name in batch.strata:
        empty = sum(1 for item in batch.items if not item.strata[name])
        if empty and name in batch.columns:
            warnings.append(f"{empty} of {n} items have no '{name}'; they form a stratum of their own")
    strata = len(batch.strata_sizes())
    usual = sample_size(n)
    if strata > usual:
        warnings.append(
            f"{strata} strata for {n} items: every stratum is sampled at least once, so each sample "
            f"has at least {strata} items (the default rate alone would sample {usual})"
        )
    return warnings


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


# --- writing --------------------------------------------------------------------------------


def write_batch(
    items: Sequence[BatchItemOut],
    fmt: BatchFormat,
    *,
    output_column: str,
    columns: Sequence[str] | None = None,
    newline: Newline = "\n",
    delimiter: str = ",",
    bom: bool = False,
) -> bytes:
    """The verified batch as UTF-8 CSV or JSONL: original fields, current output, then the santa_ columns.

    `columns` orders the CSV header (default: every record's keys in order of first appearance);
    JSONL keeps each record's own key order. Existing santa_ columns keep their place and are rewritten.
    """
    records = [_exported(item, output_column) for item in items]
    if fmt == "csv":
        text = _csv_text(records, _header(records, columns, output_column), newline, delimiter)
        return (codecs.BOM_UTF8 if bom else b"") + text.encode("utf-8")
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + newline for r in records).encode("utf-8")
    raise ValueError(f"unknown batch format {fmt!r}: use 'csv' or 'jsonl'")


def _exported(item: BatchItemOut, output_column: str) -> dict[str, Any]:
    record = dict(item.record)
    record[output_column] = item.output
    record[STATUS_COLUMN] = item.status
    record[PATTERN_COLUMN] = item.pattern
    record[FIX_COLUMN] = item.fix
    # Why only for changed items: the original of an untouched item is its output, already there.
    record[ORIGINAL_COLUMN] = item.original_output if item.changed else None
    return record


def _header(records: list[dict[str, Any]], columns: Sequence[str] | None, output_column: str) -> list[str]:
    names: dict[str, None] = dict.fromkeys(columns or ())
    if columns is None:
        for record in records:
            names.update(dict.fromkeys(k for k in record if k not in SANTA_COLUMNS))
    names.update(dict.fromkeys((output_column, *SANTA_COLUMNS)))
    return list(names)


def _csv_text(records: list[dict[str, Any]], header: list[str], newline: Newline, delimiter: str) -> str:
    """CSV with minimal quoting; a field holding a line break of either kind is always quoted."""
    buffer = io.StringIO()
    # Why "\r\n" then swap: the writer quotes a field only for the characters of its own line
    # terminator, so with "\n" a lone "\r" in an output would go out unquoted and split the row.
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    lines = []
    for row in [header, *([cell(r.get(c)) for c in header] for r in records)]:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(row)
        lines.append(buffer.getvalue()[:-2] + newline)
    return "".join(lines)
