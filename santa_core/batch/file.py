"""Batch files: read a CSV or JSONL batch for verification, and write the verified batch back. Pure.

Reading:
- `sniff(data, filename)` looks at a file without judging its items: format, columns in file order,
  the number of items and the columns guessed for id, output and spec (None when no guess).
- `read_batch(data, filename, ...)` loads every item or raises one `BatchFileError` listing what is
  wrong (line and column named); a file never loads in part.

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
import difflib
import io
import json
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from santa_core.batch.sampling import sample_size
from santa_core.models import MAX_TEXT_CHARS

BatchFormat = Literal["csv", "jsonl"]
Newline = Literal["\n", "\r\n"]

MAX_ITEMS = 10_000
"""Most items one batch file may hold; larger files are refused with a request to split them."""
MAX_FILE_BYTES = 64 * 1024 * 1024
"""Largest batch file read (bytes), so a wrong upload fails fast instead of filling memory."""
MAX_ID_CHARS = 200
"""Longest item id: ids are shown in tables and stored as keys."""
MAX_PROBLEMS = 20
"""Problems listed in one error; the rest are counted ("… and 12 more problems")."""

ID_COLUMNS = ("id", "item_id", "key")
OUTPUT_COLUMNS = ("output", "text", "content", "completion", "response")
SPEC_COLUMNS = ("spec", "specification")
"""Column names guessed, in order of preference, compared without case or surrounding spaces."""

LENGTH_STRATUM = "length"
LENGTH_LABELS = ("short", "medium", "long")

STATUS_COLUMN = "santa_status"
PATTERN_COLUMN = "santa_pattern"
FIX_COLUMN = "santa_fix"
ORIGINAL_COLUMN = "santa_original_output"
SANTA_COLUMNS = (STATUS_COLUMN, PATTERN_COLUMN, FIX_COLUMN, ORIGINAL_COLUMN)
"""Columns added on export; a file that already has them (an earlier export) gets them rewritten."""

_FORMATS: dict[str, BatchFormat] = {"csv": "csv", "tsv": "csv", "jsonl": "jsonl", "ndjson": "jsonl", "json": "jsonl"}
_SPREADSHEETS = ("xlsx", "xlsm", "xls", "ods", "numbers")
# Why so large: csv's default field limit (131,072 characters) is below MAX_TEXT_CHARS, and an
# oversized field should be reported by its size, not as a parse error. The file size bounds memory.
_CSV_FIELD_LIMIT = 2**31 - 1


class BatchFileError(ValueError):
    """A batch file that cannot be loaded; `errors` lists the problems (at most MAX_PROBLEMS, then a count)."""

    def __init__(self, problems: Sequence[str], columns: Sequence[str] = ()) -> None:
        shown = list(problems[:MAX_PROBLEMS])
        if len(problems) > MAX_PROBLEMS:
            shown.append(f"… and {len(problems) - MAX_PROBLEMS} more problems")
        super().__init__("; ".join(shown))
        self.errors = shown
        self.count = len(problems)
        self.columns = list(columns)  # what the file holds, when known: the page can offer them


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

    def result(self, status: str, *, output: str | None = None, pattern: str | None = None,
               fix: str | None = None) -> BatchItemOut:
        """This item for export: `output` is the current text (None: unchanged)."""
        return BatchItemOut(record=self.record, original_output=self.output,
                            output=self.output if output is None else output,
                            status=status, pattern=pattern, fix=fix)


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
            row = {c: _clip(_cell(item.record.get(c)), width) for c in self.columns}
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
        return write_batch(items, fmt, output_column=self.output_column, columns=self.columns,
                           newline=self.newline, delimiter=self.delimiter if same_csv else ",",
                           bom=self.bom and fmt == "csv")


# --- reading --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Row:
    line: int
    record: dict[str, Any]


@dataclass(frozen=True)
class _Parsed:
    format: BatchFormat
    columns: list[str]
    rows: list[_Row]
    delimiter: str
    newline: Newline
    bom: bool


@dataclass(frozen=True)
class _Choice:
    id: str
    output: str
    spec: str | None
    strata: list[str]
    derived_length: bool
    max_text_chars: int


def sniff(data: bytes, filename: str = "", *, max_bytes: int = MAX_FILE_BYTES) -> BatchLayout:
    """Format, columns, item count and guessed id/output/spec columns; raises BatchFileError for a bad file."""
    parsed = _parse(data, filename, max_bytes)
    cols = parsed.columns
    id_col = _guess(cols, ID_COLUMNS, ())
    output_col = _guess(cols, OUTPUT_COLUMNS, (id_col,))
    return BatchLayout(format=parsed.format, columns=cols, rows=len(parsed.rows), delimiter=parsed.delimiter,
                       newline=parsed.newline, bom=parsed.bom, id_column=id_col, output_column=output_col,
                       spec_column=_guess(cols, SPEC_COLUMNS, (id_col, output_col)))


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
    parsed = _parse(data, filename, max_bytes)
    if len(parsed.rows) > max_items:
        raise BatchFileError([f"the file has {len(parsed.rows):,} items; the limit is {max_items:,}: "
                              "split it into smaller batches"], parsed.columns)
    choice = _choose(parsed.columns, id_column, output_column, spec_column, strata, max_text_chars)
    problems: list[tuple[int, str]] = []  # (line, message): reported in file order
    fields = [_fields(row, choice, problems) for row in parsed.rows]
    _check_unique(parsed.rows, fields, problems)
    if problems:
        raise BatchFileError([message for _, message in sorted(problems, key=lambda p: p[0])], parsed.columns)
    length_rule = _add_length(fields) if choice.derived_length else None
    items = [BatchItemIn(line=row.line, record=row.record, **f) for row, f in zip(parsed.rows, fields, strict=True)]
    batch = BatchFile(format=parsed.format, columns=parsed.columns, rows=len(items), delimiter=parsed.delimiter,
                      newline=parsed.newline, bom=parsed.bom, id_column=choice.id, output_column=choice.output,
                      spec_column=choice.spec, strata=choice.strata, items=items, length_rule=length_rule)
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


def _parse(data: bytes, filename: str, max_bytes: int) -> _Parsed:
    """Decode and split the file into rows; file-level problems only."""
    if not isinstance(data, bytes | bytearray):
        raise TypeError("read the batch file as bytes")
    text, bom = _decode(bytes(data), filename, max_bytes)
    fmt, delimiter = _detect_format(filename, text)
    columns, rows = _parse_csv(text, delimiter) if fmt == "csv" else _parse_jsonl(text)
    if not rows:
        raise BatchFileError(["the file has a header but no items" if columns else "the file is empty"], columns)
    return _Parsed(fmt, columns, rows, delimiter if fmt == "csv" else ",", _newline(text), bom)


def _decode(data: bytes, filename: str, max_bytes: int) -> tuple[str, bool]:
    """The file's text; refuses anything but UTF-8 with a message that says how to fix it."""
    if len(data) > max_bytes:
        raise BatchFileError([f"the file has {len(data):,} bytes; the limit is {max_bytes:,}: split it into smaller batches"])
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        raise BatchFileError(["the file is UTF-32 text: save it as UTF-8"])
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise BatchFileError(["the file is UTF-16 text (Excel's 'Unicode Text'): save it as UTF-8 (in Excel: CSV UTF-8)"])
    if data.startswith(b"PK\x03\x04") or _extension(filename) in _SPREADSHEETS:
        raise BatchFileError(["this is a spreadsheet or zip file, not CSV or JSONL: save it as CSV UTF-8"])
    head = data[:4096]
    # Why: UTF-16 without a BOM decodes as "valid" UTF-8 full of NULs; say what it is instead.
    if head.count(0) * 4 >= len(head) > 0:
        raise BatchFileError(["the file is full of NUL bytes: it is UTF-16 text or not a text file; save it as UTF-8"])
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8):] if bom else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(codecs.BOM_UTF8) if bom else 0)
        line = data[:offset].count(b"\n") + 1
        raise BatchFileError([f"the file is not UTF-8: line {line}, byte {offset:,} is 0x{data[offset]:02X} "
                              "(the file may be Windows-1252 or Latin-1): save it as UTF-8 (in Excel: CSV UTF-8)"]) from exc
    if not text.strip():
        raise BatchFileError(["the file is empty"])
    return text, bom


def _extension(filename: str) -> str:
    name = filename.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def _detect_format(filename: str, text: str) -> tuple[BatchFormat, str]:
    """(format, CSV delimiter) from the extension, else from the first character."""
    start = text.lstrip()
    if start.startswith("["):
        raise BatchFileError(["the file is one JSON array: write one JSON object per line (JSON Lines, .jsonl)"])
    fmt = _FORMATS.get(_extension(filename)) or ("jsonl" if start.startswith("{") else "csv")
    if fmt == "jsonl":
        return fmt, ","
    if _extension(filename) == "tsv":
        return fmt, "\t"
    header = start.split("\n", 1)[0]
    if "," not in header and (header.count(";") or header.count("\t")):
        return fmt, ";" if header.count(";") >= header.count("\t") else "\t"
    return fmt, ","


def _newline(text: str) -> Newline:
    end = text.find("\n")
    return "\r\n" if end > 0 and text[end - 1] == "\r" else "\n"


def _parse_csv(text: str, delimiter: str) -> tuple[list[str], list[_Row]]:
    """Header and rows; each row records the line it starts on (a quoted field may span lines)."""
    csv.field_size_limit(max(csv.field_size_limit(), _CSV_FIELD_LIMIT))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] = []  # filled from the first non-blank row; shared with _csv_rows for errors
    rows: list[_Row] = []
    problems: list[str] = []
    for start, fields in _csv_rows(reader, header):
        if not any(fields):
            continue  # a blank line, or a row of empty cells a spreadsheet left behind
        if not header:
            header.extend(_checked_header(fields, start))
        elif len(fields) != len(header):
            problems.append(f"line {start}: {len(fields)} fields, but the header has {len(header)}: "
                            f"check for an unquoted {_delimiter_name(delimiter)} or a missing quote")
        else:
            rows.append(_Row(start, dict(zip(header, fields, strict=True))))
    if problems:
        raise BatchFileError(problems, header)
    return header, rows


def _csv_rows(reader: Any, header: list[str]) -> Iterator[tuple[int, list[str]]]:
    """(first line, fields) per row; a parse error names the line where the bad row starts."""
    while True:
        start = reader.line_num + 1
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise BatchFileError([f"line {start}: {_csv_reason(exc)}"], header) from exc
        yield start, fields


def _csv_reason(exc: csv.Error) -> str:
    reason = str(exc)
    if "unexpected end of data" in reason:
        return 'a quoted field is never closed (a " opens it and no " ends it)'
    if "expected after" in reason:
        return 'a closing quote is followed by more text: inside a quoted field write a quote as ""'
    return f"not valid CSV ({reason})"


def _delimiter_name(delimiter: str) -> str:
    return {",": "comma", ";": "semicolon", "\t": "tab"}.get(delimiter, repr(delimiter))


def _checked_header(header: list[str], line: int) -> list[str]:
    seen: dict[str, int] = {}
    for index, name in enumerate(header, 1):
        if name in seen:
            raise BatchFileError([f"line {line}: the header names column '{name}' twice (columns {seen[name]} "
                                  f"and {index}): rename one"], header)
        seen[name] = index
    return header


class _DuplicateField(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object that refuses a repeated key (json.loads would silently keep the last)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateField(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    """A JSON number as a float, refusing one too large for a float (it would come back as Infinity,
    which is not JSON: the export could not be read again)."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text} is too large")
    return value


def _parse_jsonl(text: str) -> tuple[list[str], list[_Row]]:
    """Columns (keys in order of first appearance) and one row per non-blank line."""
    lines = text.split("\n")  # not splitlines(): U+2028 and friends may sit inside a JSON string
    columns: dict[str, None] = {}
    rows: list[_Row] = []
    problems: list[str] = []
    for number, raw in enumerate(lines, 1):
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line.strip():
            continue
        if not rows and not problems and line.strip() == "{":
            raise BatchFileError([f"line {number}: one JSON object spans several lines: "
                                  "write one object per line (JSON Lines)"])
        value, problem = _json_line(line)
        if problem:
            problems.append(f"line {number}: {problem}")
            continue
        columns.update(dict.fromkeys(value))
        rows.append(_Row(number, value))
    if problems:
        raise BatchFileError(problems, list(columns))
    return list(columns), rows


def _json_line(line: str) -> tuple[dict[str, Any], str | None]:
    try:
        value = json.loads(line, object_pairs_hook=_object, parse_constant=_no_constant, parse_float=_finite)
    except _DuplicateField as exc:
        return {}, f"the field '{exc.name}' appears twice in one object"
    except json.JSONDecodeError as exc:
        return {}, f"not valid JSON ({exc.msg} at column {exc.colno})"
    except ValueError as exc:
        return {}, f"not valid JSON ({exc})"
    if not isinstance(value, dict):
        return {}, f"expected a JSON object {{...}}, found {_kind(value)}"
    return value, None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def _choose(columns: list[str], id_column: str | None, output_column: str | None, spec_column: str | None,
            strata: Sequence[str], max_text_chars: int) -> _Choice:
    """The columns to read, given or guessed; every problem with them in one error."""
    problems: list[str] = []
    id_col = _pick(columns, id_column, ID_COLUMNS, (), "id", problems)
    output_col = _pick(columns, output_column, OUTPUT_COLUMNS, (id_col,), "output", problems)
    spec_col = None if spec_column == "" else _pick(columns, spec_column, SPEC_COLUMNS, (id_col, output_col),
                                                     "spec", problems, required=spec_column is not None)
    chosen = [c for c in (id_col, output_col, spec_col) if c is not None]
    if len(set(chosen)) < len(chosen):
        problems.append(f"the id, output and spec columns must be different columns (got {', '.join(map(repr, chosen))})")
    picked = list(dict.fromkeys(strata))
    for name in picked:
        if name in chosen:
            problems.append(f"'{name}' is the item's id, output or spec: stratify by a column such as template or locale")
        elif name not in columns and name != LENGTH_STRATUM:
            problems.append(f"no column '{name}' to stratify by; the columns are: {_listed(columns)}{_hint([name], columns)}")
    if problems or id_col is None or output_col is None:
        raise BatchFileError(problems, columns)
    derived = LENGTH_STRATUM in picked and LENGTH_STRATUM not in columns
    return _Choice(id_col, output_col, spec_col, picked, derived, max_text_chars)


def _guess(columns: Sequence[str], names: Sequence[str], taken: Sequence[str | None]) -> str | None:
    """The first column whose name, without case or surrounding spaces, is one of `names`."""
    folded: dict[str, str] = {}
    for column in columns:
        if column not in taken:
            folded.setdefault(column.strip().casefold(), column)
    return next((folded[name] for name in names if name in folded), None)


def _pick(columns: list[str], given: str | None, names: Sequence[str], taken: Sequence[str | None], what: str,
          problems: list[str], required: bool = True) -> str | None:
    if given is not None:
        if given in columns:
            return given
        problems.append(f"no {what} column '{given}'; the columns are: {_listed(columns)}{_hint([given], columns)}")
        return None
    found = _guess(columns, names, taken)
    if found is None and required:
        problems.append(f"no {what} column: name one {_alternatives(names)} or choose the {what} column; "
                        f"the columns are: {_listed(columns)}{_hint(names, columns)}")
    return found


def _listed(columns: Sequence[str]) -> str:
    return ", ".join(f"'{c}'" for c in columns) if columns else "(none)"


def _alternatives(names: Sequence[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _hint(names: Sequence[str], columns: Sequence[str]) -> str:
    """' (did you mean 'x'?)' for the column closest to any of `names`, if one is close enough."""
    folded = {c.strip().casefold(): c for c in reversed(columns)}
    for name in names:
        close = difflib.get_close_matches(name.strip().casefold(), list(folded), n=1, cutoff=0.6)
        if close:
            return f" (did you mean '{folded[close[0]]}'?)"
    return ""


def _fields(row: _Row, choice: _Choice, problems: list[tuple[int, str]]) -> dict[str, Any]:
    """key, output, spec and strata of one row; its problems go to `problems`."""
    record = row.record
    key, id_problem = _key(record, choice.id)
    where = f"line {row.line}" + (f" (id '{key}')" if key else "")
    found = [_text_problem(name, value, choice) for name, value in record.items()]
    found += [id_problem] if id_problem else []
    output, problem = _output(record, choice)
    found.append(problem)
    spec, problem = _spec(record, choice)
    found.append(problem)
    strata = {}
    for name in choice.strata:
        strata[name], problem = _stratum_value(record, name, choice)
        found.append(problem)
    problems.extend((row.line, f"{where}: {p}") for p in found if p)
    return {"key": key, "output": output, "spec": spec, "strata": strata}


def _key(record: dict[str, Any], column: str) -> tuple[str, str | None]:
    if column not in record:
        return "", f"no '{column}' field (the id)"
    value = record[column]
    if isinstance(value, bool) or not isinstance(value, str | int):
        return "", f"the id must be text or a whole number, found {_kind(value)}"
    key = str(value).strip()
    if not key:
        return "", f"the id ('{column}') is empty: every item needs a unique id"
    if len(key) > MAX_ID_CHARS:
        return "", f"the id has {len(key):,} characters; the limit is {MAX_ID_CHARS}"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in key):
        return "", "the id holds a line break or control character: ids must be one line of plain text"
    return key, None


def _output(record: dict[str, Any], choice: _Choice) -> tuple[str, str | None]:
    value = record.get(choice.output)
    if choice.output not in record:
        return "", f"no '{choice.output}' field (the output)"
    if not isinstance(value, str):
        return "", f"the output ('{choice.output}') must be text, found {_kind(value)}"
    if not value.strip():
        return "", f"the output ('{choice.output}') is empty: fill it in or remove the item"
    return value, None


def _spec(record: dict[str, Any], choice: _Choice) -> tuple[str | None, str | None]:
    value = record.get(choice.spec) if choice.spec else None
    if value is None:
        return None, None
    if not isinstance(value, str):
        return None, f"the spec ('{choice.spec}') must be text, found {_kind(value)}"
    return (value if value.strip() else None), None  # an empty cell: the batch's one spec applies


def _stratum_value(record: dict[str, Any], name: str, choice: _Choice) -> tuple[str, str | None]:
    if choice.derived_length and name == LENGTH_STRATUM:
        return "", None  # filled in once every item is read: the cuts depend on the whole batch
    value = record.get(name)
    if isinstance(value, list | dict):
        return "", f"the stratum '{name}' must be text or a number, found {_kind(value)}"
    return _cell(value), None


def _text_problem(name: str, value: Any, choice: _Choice) -> str | None:
    """A NUL, an unpaired surrogate or an oversized value anywhere in one field, else None."""
    for text in _strings(name, value):
        if "\x00" in text:
            return f"column '{name}' contains a NUL character (\\x00): remove it (the file may be partly binary)"
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return f"column '{name}' contains an unpaired surrogate (a broken \\ud800-style escape): fix the text"
    if isinstance(value, str) and len(value) > choice.max_text_chars:
        what = {choice.output: "the output", choice.spec: "the spec"}.get(name, f"column '{name}'")
        return f"{what} has {len(value):,} characters; the limit is {choice.max_text_chars:,}: shorten or split it"
    return None


def _strings(name: str, value: Any) -> Iterator[str]:
    """Every string in a field: its name, and its value's strings however deeply nested (JSONL)."""
    yield name
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            yield current
        elif isinstance(current, dict):
            stack.extend(current.keys())
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)


def _check_unique(rows: list[_Row], fields: list[dict[str, Any]], problems: list[tuple[int, str]]) -> None:
    first: dict[str, int] = {}
    for row, f in zip(rows, fields, strict=True):
        key = f["key"]
        if not key:
            continue
        if key in first:
            problems.append((row.line, f"line {row.line}: the id '{key}' is also on line {first[key]}: ids must be unique"))
        else:
            first[key] = row.line


def _add_length(fields: list[dict[str, Any]]) -> str:
    """Fill in the derived `length` stratum; returns the rule as a sentence for the page."""
    bounds = length_bounds([len(f["output"]) for f in fields])
    for f in fields:
        f["strata"][LENGTH_STRATUM] = length_label(len(f["output"]), bounds)
    low, high = bounds
    medium = "none" if high == low else f"{high:,}" if high == low + 1 else f"{low + 1:,} to {high:,}"
    return (f"length = characters of the output, cut at this batch's terciles: short up to {low:,}, "
            f"medium {medium}, long over {high:,}")


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
        warnings.append(f"{strata} strata for {n} items: every stratum is sampled at least once, so each sample "
                        f"has at least {strata} items (the default rate alone would sample {usual})")
    return warnings


def _cell(value: Any) -> str:
    """A value as CSV text: text as is, null as empty, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


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
    for row in [header, *([_cell(r.get(c)) for c in header] for r in records)]:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(row)
        lines.append(buffer.getvalue()[:-2] + newline)
    return "".join(lines)
