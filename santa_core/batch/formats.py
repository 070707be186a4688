"""Batch files on the byte level: decoding (UTF-8 only, with a message that says how to fix it),
telling CSV from JSONL, and splitting the text into rows; file-level problems only.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

BatchFormat = Literal["csv", "jsonl"]
Newline = Literal["\n", "\r\n"]
MAX_PROBLEMS = 20
"""Problems listed in one error; the rest are counted ("… and 12 more problems")."""

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


@dataclass(frozen=True)
class Row:
    line: int
    record: dict[str, Any]


@dataclass(frozen=True)
class Parsed:
    format: BatchFormat
    columns: list[str]
    rows: list[Row]
    delimiter: str
    newline: Newline
    bom: bool


def batch_format(name: str) -> BatchFormat:
    """A format's name as a batch format to write (ValueError for any other: a batch is written as CSV or JSONL)."""
    if name == "csv":
        return "csv"
    if name == "jsonl":
        return "jsonl"
    raise ValueError(f"unknown batch format {name!r}: use 'csv' or 'jsonl'")


def parse(data: bytes, filename: str, max_bytes: int) -> Parsed:
    """Decode and split the file into rows; file-level problems only."""
    if not isinstance(data, bytes | bytearray):
        raise TypeError("read the batch file as bytes")
    text, bom = _decode(bytes(data), filename, max_bytes)
    fmt, delimiter = _detect_format(filename, text)
    columns, rows = _parse_csv(text, delimiter) if fmt == "csv" else _parse_jsonl(text)
    if not rows:
        raise BatchFileError(["the file has a header but no items" if columns else "the file is empty"], columns)
    return Parsed(fmt, columns, rows, delimiter if fmt == "csv" else ",", _newline(text), bom)


def _decode(data: bytes, filename: str, max_bytes: int) -> tuple[str, bool]:
    """The file's text; refuses anything but UTF-8 with a message that says how to fix it."""
    if len(data) > max_bytes:
        raise BatchFileError(
            [f"the file has {len(data):,} bytes; the limit is {max_bytes:,}: split it into smaller batches"]
        )
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        raise BatchFileError(["the file is UTF-32 text: save it as UTF-8"])
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise BatchFileError(
            ["the file is UTF-16 text (Excel's 'Unicode Text'): save it as UTF-8 (in Excel: CSV UTF-8)"]
        )
    if data.startswith(b"PK\x03\x04") or _extension(filename) in _SPREADSHEETS:
        raise BatchFileError(["this is a spreadsheet or zip file, not CSV or JSONL: save it as CSV UTF-8"])
    head = data[:4096]
    # Why: UTF-16 without a BOM decodes as "valid" UTF-8 full of NULs; say what it is instead.
    if head.count(0) * 4 >= len(head) > 0:
        raise BatchFileError(["the file is full of NUL bytes: it is UTF-16 text or not a text file; save it as UTF-8"])
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(codecs.BOM_UTF8) if bom else 0)
        line = data[:offset].count(b"\n") + 1
        raise BatchFileError(
            [
                f"the file is not UTF-8: line {line}, byte {offset:,} is 0x{data[offset]:02X} "
                "(the file may be Windows-1252 or Latin-1): save it as UTF-8 (in Excel: CSV UTF-8)"
            ]
        ) from exc
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


def _parse_csv(text: str, delimiter: str) -> tuple[list[str], list[Row]]:
    """Header and rows; each row records the line it starts on (a quoted field may span lines)."""
    csv.field_size_limit(max(csv.field_size_limit(), _CSV_FIELD_LIMIT))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] = []  # filled from the first non-blank row; shared with _csv_rows for errors
    rows: list[Row] = []
    problems: list[str] = []
    for start, fields in _csv_rows(reader, header):
        if not any(fields):
            continue  # a blank line, or a row of empty cells a spreadsheet left behind
        if not header:
            header.extend(_checked_header(fields, start))
        elif len(fields) != len(header):
            problems.append(
                f"line {start}: {len(fields)} fields, but the header has {len(header)}: "
                f"check for an unquoted {_delimiter_name(delimiter)} or a missing quote"
            )
        else:
            rows.append(Row(start, dict(zip(header, fields, strict=True))))
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
            raise BatchFileError(
                [f"line {line}: the header names column '{name}' twice (columns {seen[name]} and {index}): rename one"],
                header,
            )
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


def _parse_jsonl(text: str) -> tuple[list[str], list[Row]]:
    """Columns (keys in order of first appearance) and one row per non-blank line."""
    lines = text.split("\n")  # not splitlines(): U+2028 and friends may sit inside a JSON string
    columns: dict[str, None] = {}
    rows: list[Row] = []
    problems: list[str] = []
    for number, raw in enumerate(lines, 1):
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line.strip():
            continue
        if not rows and not problems and line.strip() == "{":
            raise BatchFileError(
                [f"line {number}: one JSON object spans several lines: write one object per line (JSON Lines)"]
            )
        value, problem = _json_line(line)
        if problem:
            problems.append(f"line {number}: {problem}")
            continue
        columns.update(dict.fromkeys(value))
        rows.append(Row(number, value))
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
        return {}, f"expected a JSON object {{...}}, found {kind(value)}"
    return value, None


def kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"
