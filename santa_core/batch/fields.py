"""A batch file's columns and each row's fields: which column is the id, the output and the spec (given or guessed),
and every row's values checked, each problem named by its line (`file.read_batch` reports them all at once). Pure.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from santa_core.batch.formats import BatchFileError, Row, kind
from santa_core.text import control_problem, length_problem, strings_in

MAX_ID_CHARS = 200
"""Longest item id: ids are shown in tables and stored as keys."""

ID_COLUMNS = ("id", "item_id", "key")
OUTPUT_COLUMNS = ("output", "text", "content", "completion", "response")
SPEC_COLUMNS = ("spec", "specification")
"""Column names guessed, in order of preference, compared without case or surrounding spaces."""

LENGTH_STRATUM = "length"
"""The derived stratum: an item's length, short, medium or long (`file.length_bounds`)."""


@dataclass(frozen=True)
class Choice:
    """The columns read as the id, output and spec, the strata, and the limits a row's values are held to."""

    id: str
    output: str
    spec: str | None
    strata: list[str]
    derived_length: bool
    max_text_chars: int


def choose_columns(
    columns: list[str],
    id_column: str | None,
    output_column: str | None,
    spec_column: str | None,
    strata: Sequence[str],
    max_text_chars: int,
) -> Choice:
    """The columns to read, given or guessed; every problem with them in one error."""
    problems: list[str] = []
    id_col = _pick(columns, id_column, ID_COLUMNS, (), "id", problems)
    output_col = _pick(columns, output_column, OUTPUT_COLUMNS, (id_col,), "output", problems)
    spec_col = (
        None
        if spec_column == ""
        else _pick(
            columns, spec_column, SPEC_COLUMNS, (id_col, output_col), "spec", problems, required=spec_column is not None
        )
    )
    chosen = [c for c in (id_col, output_col, spec_col) if c is not None]
    if len(set(chosen)) < len(chosen):
        problems.append(
            f"the id, output and spec columns must be different columns (got {', '.join(map(repr, chosen))})"
        )
    picked = list(dict.fromkeys(strata))
    for name in picked:
        if name in chosen:
            problems.append(
                f"'{name}' is the item's id, output or spec: stratify by a column such as template or locale"
            )
        elif name not in columns and name != LENGTH_STRATUM:
            problems.append(
                f"no column '{name}' to stratify by; the columns are: {_listed(columns)}{_hint([name], columns)}"
            )
    if problems or id_col is None or output_col is None:
        raise BatchFileError(problems, columns)
    derived = LENGTH_STRATUM in picked and LENGTH_STRATUM not in columns
    return Choice(id_col, output_col, spec_col, picked, derived, max_text_chars)


def guess_column(columns: Sequence[str], names: Sequence[str], taken: Sequence[str | None]) -> str | None:
    """The first column whose name, without case or surrounding spaces, is one of `names`."""
    folded: dict[str, str] = {}
    for column in columns:
        if column not in taken:
            folded.setdefault(column.strip().casefold(), column)
    return next((folded[name] for name in names if name in folded), None)


def _pick(
    columns: list[str],
    given: str | None,
    names: Sequence[str],
    taken: Sequence[str | None],
    what: str,
    problems: list[str],
    required: bool = True,
) -> str | None:
    if given is not None:
        if given in columns:
            return given
        problems.append(f"no {what} column '{given}'; the columns are: {_listed(columns)}{_hint([given], columns)}")
        return None
    found = guess_column(columns, names, taken)
    if found is None and required:
        problems.append(
            f"no {what} column: name one {_alternatives(names)} or choose the {what} column; "
            f"the columns are: {_listed(columns)}{_hint(names, columns)}"
        )
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


def row_fields(row: Row, choice: Choice, problems: list[tuple[int, str]]) -> dict[str, Any]:
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
        return "", f"the id must be text or a whole number, found {kind(value)}"
    key = str(value).strip()
    if not key:
        return "", f"the id ('{column}') is empty: every item needs a unique id"
    if len(key) > MAX_ID_CHARS:
        return "", f"the id has {len(key):,} characters; the limit is {MAX_ID_CHARS}"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in key):
        return "", "the id holds a line break or control character: ids must be one line of plain text"
    return key, None


def _output(record: dict[str, Any], choice: Choice) -> tuple[str, str | None]:
    value = record.get(choice.output)
    if choice.output not in record:
        return "", f"no '{choice.output}' field (the output)"
    if not isinstance(value, str):
        return "", f"the output ('{choice.output}') must be text, found {kind(value)}"
    if not value.strip():
        return "", f"the output ('{choice.output}') is empty: fill it in or remove the item"
    return value, None


def _spec(record: dict[str, Any], choice: Choice) -> tuple[str | None, str | None]:
    value = record.get(choice.spec) if choice.spec else None
    if value is None:
        return None, None
    if not isinstance(value, str):
        return None, f"the spec ('{choice.spec}') must be text, found {kind(value)}"
    return (value if value.strip() else None), None  # an empty cell: the batch's one spec applies


def _stratum_value(record: dict[str, Any], name: str, choice: Choice) -> tuple[str, str | None]:
    if choice.derived_length and name == LENGTH_STRATUM:
        return "", None  # filled in once every item is read: the cuts depend on the whole batch
    value = record.get(name)
    if isinstance(value, list | dict):
        return "", f"the stratum '{name}' must be text or a number, found {kind(value)}"
    return cell(value), None


def _text_problem(name: str, value: Any, choice: Choice) -> str | None:
    """A control character (NUL included), an unpaired surrogate or an oversized value anywhere in one field,
    else None."""
    for text in _strings(name, value):
        if problem := control_problem(text, f"column '{name}'"):
            return problem
    what = {choice.output: "the output", choice.spec: "the spec"}.get(name, f"column '{name}'")
    if isinstance(value, str) and (problem := length_problem(value, what, choice.max_text_chars)):
        return f"{problem}: shorten or split it"
    return None


def _strings(name: str, value: Any) -> Iterator[str]:
    """Every string in a field: its name, and its value's strings however deeply nested (JSONL)."""
    yield name
    yield from strings_in(value)


def check_unique(rows: list[Row], fields: list[dict[str, Any]], problems: list[tuple[int, str]]) -> None:
    first: dict[str, int] = {}
    for row, f in zip(rows, fields, strict=True):
        key = f["key"]
        if not key:
            continue
        if key in first:
            problems.append(
                (row.line, f"line {row.line}: the id '{key}' is also on line {first[key]}: ids must be unique")
            )
        else:
            first[key] = row.line


def cell(value: Any) -> str:
    """A value as CSV text: text as is, null as empty, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
