"""Batch files: every way a file can be wrong, column guessing, strata, and lossless round trips."""

from __future__ import annotations

import codecs
import csv
import io
import json
from typing import Any

import pytest

from santa_core.batch.fields import MAX_ID_CHARS
from santa_core.batch.file import (
    SANTA_COLUMNS,
    BatchFile,
    BatchFileError,
    BatchItemOut,
    length_bounds,
    length_label,
    read_batch,
    sniff,
    write_batch,
)
from santa_core.batch.formats import MAX_PROBLEMS

TRICKY = [
    "plain text",
    "a, comma; semicolon\tand tab",
    'she said "hello", then ""nothing""',
    "line one\nline two\n",
    "windows\r\nline ends\r\n",
    "old mac\rline end",
    "  leading and trailing spaces  ",
    "unicode: café, naïve, 日本語, emoji 🎅🏽, RTL שלום, combining e\u0301",
    "line separator \u2028 and paragraph \u2029 inside",
    "= looks like a formula, +1, -1, @sum",
    "trailing backslash \\",
    "\ttab first",
]


def csv_bytes(rows: list[list[str]], newline: str = "\n") -> bytes:
    """A CSV file as Python's csv module writes it (fields with \\r quoted by hand, like Santa does)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=newline, quoting=csv.QUOTE_MINIMAL)
    for row in rows:
        writer.writerow(row)
    return out.getvalue().encode("utf-8")


def jsonl_bytes(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def problems(data: bytes, filename: str = "batch.csv", **kwargs: Any) -> list[str]:
    with pytest.raises(BatchFileError) as caught:
        read_batch(data, filename, **kwargs)
    return caught.value.errors


LONG = "x" * 11  # one character over max_text_chars=10


# --- errors: every problem named, with line and column -----------------------------------------

ERRORS = [
    pytest.param(b"", "b.csv", {}, ["the file is empty"], id="empty"),
    pytest.param(b"\n  \r\n", "b.csv", {}, ["the file is empty"], id="blank-lines-only"),
    pytest.param(b"id,output\n", "b.csv", {}, ["the file has a header but no items"], id="header-only"),
    pytest.param("id,output\n1,a\n".encode("utf-16"), "b.csv", {}, ["UTF-16", "save it as UTF-8"], id="utf16-bom"),
    pytest.param("id,output\n1,a\n".encode("utf-16-le"), "b.csv", {}, ["NUL bytes", "UTF-16"], id="utf16-no-bom"),
    pytest.param("id,output\n1,a\n".encode("utf-32"), "b.csv", {}, ["UTF-32", "save it as UTF-8"], id="utf32"),
    # "id,output\n" is bytes 0-9, "1,caf" bytes 10-14, so é (0xE9 in Windows-1252) is byte 15 on line 2.
    pytest.param(
        "id,output\n1,café\n".encode("cp1252"),
        "b.csv",
        {},
        ["not UTF-8: line 2, byte 15 is 0xE9", "Windows-1252", "save it as UTF-8"],
        id="cp1252",
    ),
    # The same file behind a 3-byte UTF-8 BOM: byte 18 of the file.
    pytest.param(
        codecs.BOM_UTF8 + "id,output\n1,café\n".encode("cp1252"),
        "b.csv",
        {},
        ["line 2, byte 18 is 0xE9"],
        id="cp1252-after-bom",
    ),
    pytest.param(b"PK\x03\x04\x14\x00rest", "b.csv", {}, ["spreadsheet", "CSV UTF-8"], id="zip-content"),
    pytest.param(b"id,output\n1,a\n", "b.xlsx", {}, ["spreadsheet"], id="xlsx-name"),
    pytest.param(
        b'[{"id": 1, "output": "a"}]', "b.json", {}, ["one JSON array", "one JSON object per line"], id="json-array"
    ),
    pytest.param(
        b'{\n  "id": 1,\n  "output": "a"\n}\n',
        "b.jsonl",
        {},
        ["line 1: one JSON object spans several lines"],
        id="pretty-json",
    ),
    pytest.param(
        b'id,output\n1,"abc\n2,x\n', "b.csv", {}, ["line 2: a quoted field is never closed"], id="csv-unclosed-quote"
    ),
    pytest.param(
        b'id,output\n1,ok\n2,"ab"c\n',
        "b.csv",
        {},
        ["line 3: a closing quote is followed by more text"],
        id="csv-text-after-quote",
    ),
    pytest.param(
        b"id,output\n1,a,b\n2,c\n",
        "b.csv",
        {},
        ["line 2: 3 fields, but the header has 2: check for an unquoted comma"],
        id="csv-too-many-fields",
    ),
    pytest.param(
        b"id,output,note\n1,a\n", "b.csv", {}, ["line 2: 2 fields, but the header has 3"], id="csv-too-few-fields"
    ),
    pytest.param(
        b"id,output,id\n1,a,2\n",
        "b.csv",
        {},
        ["line 1: the header names column 'id' twice (columns 1 and 3)"],
        id="csv-duplicate-header",
    ),
    # '{"id": 2, "output": ' is 20 characters, so the missing value is expected at column 21.
    pytest.param(
        b'{"id": 1, "output": "a"}\n{"id": 2, "output": \n',
        "b.jsonl",
        {},
        ["line 2: not valid JSON (Expecting value at column 21)"],
        id="jsonl-bad-json",
    ),
    pytest.param(
        b'{"id": 1, "output": "a"}\n"just text"\n[1]\n',
        "b.jsonl",
        {},
        ["line 2: expected a JSON object {...}, found text", "line 3: expected a JSON object {...}, found a list"],
        id="jsonl-not-object",
    ),
    pytest.param(
        b'{"id": 1, "id": 2, "output": "a"}\n',
        "b.jsonl",
        {},
        ["line 1: the field 'id' appears twice"],
        id="jsonl-duplicate-field",
    ),
    pytest.param(
        b'{"id": 1, "output": "a", "score": NaN}\n', "b.jsonl", {}, ["line 1: not valid JSON (NaN"], id="jsonl-nan"
    ),
    pytest.param(
        b"ids,output\n1,a\n",
        "b.csv",
        {},
        [
            "no id column: name one 'id', 'item_id' or 'key'",
            "the columns are: 'ids', 'output'",
            "(did you mean 'ids'?)",
        ],
        id="id-column-guess-fails",
    ),
    pytest.param(
        b"id,output\n1,a\n",
        "b.csv",
        {"id_column": "uid"},
        ["no id column 'uid'; the columns are: 'id', 'output' (did you mean 'id'?)"],
        id="id-column-given-missing",
    ),
    pytest.param(
        b"id,body\n1,a\n",
        "b.csv",
        {},
        ["no output column", "the columns are: 'id', 'body'"],
        id="output-column-missing",
    ),
    pytest.param(
        b"id,ouptut\n1,a\n", "b.csv", {}, ["no output column", "(did you mean 'ouptut'?)"], id="output-column-misspelt"
    ),
    pytest.param(
        b"id,output\n1,a\n",
        "b.csv",
        {"spec_column": "brief"},
        ["no spec column 'brief'"],
        id="spec-column-given-missing",
    ),
    pytest.param(
        b"id,output\n1,a\n",
        "b.csv",
        {"id_column": "output", "output_column": "output"},
        ["the id, output and spec columns must be different columns"],
        id="same-column-twice",
    ),
    pytest.param(
        b"id,output,template\n1,a,t\n",
        "b.csv",
        {"strata": ["templat"]},
        ["no column 'templat' to stratify by", "(did you mean 'template'?)"],
        id="stratum-column-missing",
    ),
    pytest.param(
        b"id,output\n1,a\n", "b.csv", {"strata": ["id"]}, ["'id' is the item's id, output or spec"], id="stratum-is-id"
    ),
    pytest.param(b"id,output\n1,a\n  ,b\n", "b.csv", {}, ["line 3: the id ('id') is empty"], id="empty-id"),
    pytest.param(
        b"id,output\na,x\nb,y\na,z\n",
        "b.csv",
        {},
        ["line 4: the id 'a' is also on line 2: ids must be unique"],
        id="duplicate-id",
    ),
    pytest.param(
        b'{"id": 7, "output": "a"}\n{"id": "7", "output": "b"}\n',
        "b.jsonl",
        {},
        ["line 2: the id '7' is also on line 1"],
        id="duplicate-id-number-and-text",
    ),
    pytest.param(
        b'id,output\n1,"  \n "\n', "b.csv", {}, ["line 2 (id '1'): the output ('output') is empty"], id="empty-output"
    ),
    pytest.param(
        f"id,output\n1,{LONG}\n".encode(),
        "b.csv",
        {"max_text_chars": 10},
        ["line 2 (id '1'): the output has 11 characters; the limit is 10"],
        id="output-too-long",
    ),
    pytest.param(
        f"id,output,spec\n1,a,{LONG}\n".encode(),
        "b.csv",
        {"max_text_chars": 10},
        ["line 2 (id '1'): the spec has 11 characters; the limit is 10"],
        id="spec-too-long",
    ),
    pytest.param(
        f"id,output,notes\n1,a,{LONG}\n".encode(),
        "b.csv",
        {"max_text_chars": 10},
        ["line 2 (id '1'): column 'notes' has 11 characters; the limit is 10"],
        id="other-column-too-long",
    ),
    pytest.param(
        b"id,output\n1,a\n2,b\n3,c\n",
        "b.csv",
        {"max_items": 2},
        ["the file has 3 items; the limit is 2: split it"],
        id="too-many-items",
    ),
    pytest.param(
        b"id,output\n1,a\n2,b\n",
        "b.csv",
        {"max_bytes": 10},
        ["the file has 18 bytes; the limit is 10"],
        id="too-many-bytes",
    ),
    pytest.param(
        b"id,output\n1,a\x00b\n",
        "b.csv",
        {},
        ["line 2 (id '1'): column 'output' contains a NUL character"],
        id="nul-in-csv",
    ),
    pytest.param(
        b'{"id": 1, "output": "a", "meta": {"k": "\\u0000"}}\n',
        "b.jsonl",
        {},
        ["line 1 (id '1'): column 'meta' contains a NUL character"],
        id="nul-nested-in-jsonl",
    ),
    pytest.param(
        b"id,output\n1,a\x1bb\n",
        "b.csv",
        {},
        ["line 2 (id '1'): column 'output' contains a control character (\\x1b) at character 2"],
        id="control-character",
    ),
    pytest.param(
        b'{"id": 1, "output": "a\\ud800"}\n',
        "b.jsonl",
        {},
        ["line 1 (id '1'): column 'output' contains an unpaired surrogate"],
        id="lone-surrogate",
    ),
    pytest.param(
        f"id,output\n{'k' * (MAX_ID_CHARS + 1)},a\n".encode(),
        "b.csv",
        {},
        [f"line 2: the id has {MAX_ID_CHARS + 1} characters; the limit is {MAX_ID_CHARS}"],
        id="id-too-long",
    ),
    pytest.param(b'id,output\n"a\nb",x\n', "b.csv", {}, ["line 2: the id holds a line break"], id="id-with-line-break"),
    pytest.param(
        b'{"id": [1], "output": "a"}\n{"id": true, "output": "b"}\n',
        "b.jsonl",
        {},
        [
            "line 1: the id must be text or a whole number, found a list",
            "line 2: the id must be text or a whole number, found true/false",
        ],
        id="jsonl-id-type",
    ),
    pytest.param(
        b'{"id": 1, "output": 5}\n',
        "b.jsonl",
        {},
        ["line 1 (id '1'): the output ('output') must be text, found a number"],
        id="jsonl-output-type",
    ),
    pytest.param(
        b'{"id": 1, "output": "a"}\n{"id": 2, "text": "b"}\n',
        "b.jsonl",
        {},
        ["line 2 (id '2'): no 'output' field"],
        id="jsonl-output-field-missing",
    ),
    pytest.param(
        b'{"id": 1, "output": "a"}\n{"output": "b"}\n',
        "b.jsonl",
        {},
        ["line 2: no 'id' field"],
        id="jsonl-id-field-missing",
    ),
    pytest.param(
        b'{"id": 1, "output": "a", "spec": 3}\n',
        "b.jsonl",
        {},
        ["line 1 (id '1'): the spec ('spec') must be text, found a number"],
        id="jsonl-spec-type",
    ),
    pytest.param(
        b'{"id": 1, "output": "a", "tags": ["x"]}\n',
        "b.jsonl",
        {"strata": ["tags"]},
        ["line 1 (id '1'): the stratum 'tags' must be text or a number, found a list"],
        id="jsonl-stratum-type",
    ),
]


@pytest.mark.parametrize(("data", "filename", "kwargs", "expected"), ERRORS)
def test_a_bad_file_is_refused_with_every_problem_named(
    data: bytes, filename: str, kwargs: dict[str, Any], expected: list[str]
) -> None:
    found = problems(data, filename, **kwargs)
    for text in expected:
        assert any(text in p for p in found), f"{text!r} not in {found}"


def test_problems_are_capped_with_a_count_of_the_rest() -> None:
    # 31 rows with id "a": the first is fine, the other 30 are duplicates.
    data = b"id,output\n" + b"a,x\n" * 31
    with pytest.raises(BatchFileError) as caught:
        read_batch(data, "b.csv")
    err = caught.value
    assert err.count == 30
    assert len(err.errors) == MAX_PROBLEMS + 1
    assert err.errors[0] == "line 3: the id 'a' is also on line 2: ids must be unique"
    assert err.errors[-1] == f"… and {30 - MAX_PROBLEMS} more problems"
    assert isinstance(err, ValueError) and "line 3" in str(err)


def test_every_row_problem_is_reported_at_once_and_the_error_carries_the_columns() -> None:
    data = b"id,output,template\n1,,t\n1,b,t\n,c,t\n"
    with pytest.raises(BatchFileError) as caught:
        read_batch(data, "b.csv")
    assert caught.value.errors == [
        "line 2 (id '1'): the output ('output') is empty: fill it in or remove the item",
        "line 3: the id '1' is also on line 2: ids must be unique",
        "line 4: the id ('id') is empty: every item needs a unique id",
    ]  # in file order, though duplicates are found after every row is read
    assert caught.value.columns == ["id", "output", "template"]


def test_a_missing_column_error_lists_the_columns_for_the_page_to_offer() -> None:
    with pytest.raises(BatchFileError) as caught:
        read_batch(b"name,body\n1,a\n", "b.csv")
    assert caught.value.columns == ["name", "body"]
    assert caught.value.count == 2  # no id column and no output column


# --- reading: formats, columns, lines -----------------------------------------------------------


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        pytest.param(["id", "output"], ("id", "output", None), id="plain"),
        pytest.param(["ID", "Text"], ("ID", "Text", None), id="any-case"),
        pytest.param([" key ", "content", "Spec"], (" key ", "content", "Spec"), id="spaces-and-spec"),
        pytest.param(["item_id", "text", "output"], ("item_id", "output", None), id="output-preferred-over-text"),
        pytest.param(
            ["id", "key", "response", "specification"], ("id", "response", "specification"), id="first-id-name"
        ),
        pytest.param(["a", "b"], (None, None, None), id="nothing-to-guess"),
    ],
)
def test_sniff_guesses_the_id_output_and_spec_columns(columns: list[str], expected: tuple[Any, ...]) -> None:
    layout = sniff(csv_bytes([columns, ["1"] * len(columns), ["2"] * len(columns)]), "b.csv")
    assert (layout.id_column, layout.output_column, layout.spec_column) == expected
    assert layout.columns == columns and layout.rows == 2 and layout.format == "csv"


@pytest.mark.parametrize(
    ("data", "filename", "fmt", "delimiter"),
    [
        pytest.param(b"id,output\n1,a\n", "b.csv", "csv", ",", id="csv"),
        pytest.param(b"id;output\n1;a,b\n", "b.csv", "csv", ";", id="semicolon-csv"),
        pytest.param(b"id\toutput\n1\ta\n", "b.tsv", "csv", "\t", id="tsv"),
        pytest.param(b"id\toutput\n1\ta\n", "b.txt", "csv", "\t", id="tab-header"),
        pytest.param(b'{"id": 1, "output": "a"}\n', "b.jsonl", "jsonl", ",", id="jsonl"),
        pytest.param(b'{"id": 1, "output": "a"}\n', "b.NDJSON", "jsonl", ",", id="ndjson-upper-case"),
        pytest.param(b'{"id": 1, "output": "a"}\n', "", "jsonl", ",", id="jsonl-by-content"),
        pytest.param(b"id,output\n1,a\n", "upload", "csv", ",", id="csv-by-content"),
    ],
)
def test_the_format_comes_from_the_extension_or_the_content(
    data: bytes, filename: str, fmt: str, delimiter: str
) -> None:
    batch = read_batch(data, filename)
    assert (batch.format, batch.delimiter) == (fmt, delimiter)
    assert [(i.key, i.output) for i in batch.items][0][0] == "1"


def test_a_utf8_bom_is_accepted_and_kept_on_export() -> None:
    data = codecs.BOM_UTF8 + b"id,output\n1,caf\xc3\xa9\n"
    batch = read_batch(data, "b.csv")
    assert batch.bom and batch.columns == ["id", "output"]  # no BOM stuck to the first column name
    assert batch.items[0].output == "café"
    exported = batch.export([i.result("nice") for i in batch.items])
    assert exported.startswith(codecs.BOM_UTF8)
    assert not batch.export([i.result("nice") for i in batch.items], "jsonl").startswith(codecs.BOM_UTF8)


def test_a_crlf_file_keeps_its_line_ends_and_each_item_names_the_line_it_starts_on() -> None:
    data = b'id,output\r\n1,"two\r\nlines"\r\n\r\n2,plain\r\n,,\r\n3,"x"\r\n'
    batch = read_batch(data, "b.csv")
    assert batch.newline == "\r\n"
    # line 1 header; item 1 spans lines 2-3; line 4 blank; item 2 on 5; line 6 empty cells; item 3 on 7.
    assert [(i.key, i.line) for i in batch.items] == [("1", 2), ("2", 5), ("3", 7)]
    assert batch.items[0].output == "two\r\nlines"
    exported = batch.export([i.result("nice") for i in batch.items])
    assert exported == (
        b"id,output,santa_status,santa_pattern,santa_fix,santa_original_output\r\n"
        b'1,"two\r\nlines",nice,,,\r\n2,plain,nice,,,\r\n3,x,nice,,,\r\n'
    )


def test_jsonl_keeps_values_as_parsed_and_reads_integer_ids_as_text() -> None:
    data = jsonl_bytes(
        [
            {"id": 7, "output": "a", "score": 1.5, "ok": True, "meta": {"k": [1, None]}},
            {"id": "b", "output": "c", "extra": None},
        ]
    )
    batch = read_batch(data, "b.jsonl")
    assert batch.columns == ["id", "output", "score", "ok", "meta", "extra"]  # keys in order of first appearance
    assert [i.key for i in batch.items] == ["7", "b"]
    assert batch.items[0].record == {"id": 7, "output": "a", "score": 1.5, "ok": True, "meta": {"k": [1, None]}}


def test_spec_per_item_an_empty_cell_and_no_spec_column() -> None:
    data = b"id,output,spec\n1,a,Write one line\n2,b,\n"
    batch = read_batch(data, "b.csv")
    assert [i.spec for i in batch.items] == ["Write one line", None]  # empty: the batch's one spec applies
    assert read_batch(data, "b.csv", spec_column="").spec_column is None
    assert [i.spec for i in read_batch(data, "b.csv", spec_column="").items] == [None, None]


def test_explicit_columns_override_the_guess() -> None:
    data = b"id,output,sku,copy\n1,a,S1,the copy\n"
    batch = read_batch(data, "b.csv", id_column="sku", output_column="copy")
    assert (batch.items[0].key, batch.items[0].output) == ("S1", "the copy")


def test_ids_are_stripped_but_outputs_are_kept_exactly() -> None:
    batch = read_batch(b'id,output\n a1 ,"  spaced  "\n', "b.csv")
    assert batch.items[0].key == "a1"
    assert batch.items[0].output == "  spaced  "
    assert batch.items[0].record == {"id": " a1 ", "output": "  spaced  "}


def test_an_output_over_csvs_default_field_limit_but_within_ours_loads() -> None:
    text = "y" * 150_000  # csv's own default limit is 131,072; MAX_TEXT_CHARS is 200,000
    batch = read_batch(f"id,output\n1,{text}\n".encode(), "b.csv")
    assert batch.items[0].output == text


@pytest.mark.parametrize(
    ("kwargs", "loads"),
    [
        pytest.param({"max_items": 3}, True, id="items-at-limit"),
        pytest.param({"max_items": 2}, False, id="items-over-limit"),
        pytest.param({"max_text_chars": 5}, True, id="text-at-limit"),
        pytest.param({"max_text_chars": 4}, False, id="text-over-limit"),
    ],
)
def test_limits_are_inclusive(kwargs: dict[str, Any], loads: bool) -> None:
    data = b"id,output\n1,abcde\n2,b\n3,c\n"  # 3 items, the longest output has 5 characters
    if loads:
        assert len(read_batch(data, "b.csv", **kwargs).items) == 3
    else:
        problems(data, "b.csv", **kwargs)


def test_preview_clips_long_values_and_shows_derived_strata() -> None:
    data = csv_bytes([["id", "output"]] + [[str(n), "w" * (n * 100)] for n in range(1, 8)])
    batch = read_batch(data, "b.csv", strata=["length"])
    rows = batch.preview(3, width=50)
    assert len(rows) == 3
    assert rows[0] == {"id": "1", "output": "w" * 49 + "…", "length": "short"}


# --- strata ---------------------------------------------------------------------------------------


def test_strata_come_from_columns_in_the_order_chosen() -> None:
    data = b"id,output,template,locale\n1,a,t1,en\n2,b,t1,fr\n3,c,t2,en\n4,d,t1,en\n"
    batch = read_batch(data, "b.csv", strata=["locale", "template", "locale"])
    assert batch.strata == ["locale", "template"]  # a repeated name counts once
    assert [i.stratum for i in batch.items] == [("en", "t1"), ("fr", "t1"), ("en", "t2"), ("en", "t1")]
    assert batch.strata_sizes() == {("en", "t1"): 2, ("en", "t2"): 1, ("fr", "t1"): 1}
    assert read_batch(data, "b.csv").items[0].stratum == ()


@pytest.mark.parametrize(
    ("lengths", "bounds"),
    [
        pytest.param([1, 2, 3], (1, 2), id="three"),  # ranks ⌈3/3⌉=1 and ⌈6/3⌉=2
        pytest.param([9, 1, 5, 3, 7], (3, 7), id="five-unsorted"),  # sorted 1 3 5 7 9; ranks ⌈5/3⌉=2, ⌈10/3⌉=4
        pytest.param([4] * 6, (4, 4), id="all-equal"),
        pytest.param([10], (10, 10), id="one"),
        pytest.param(list(range(1, 201)), (67, 134), id="two-hundred"),  # ranks ⌈200/3⌉=67, ⌈400/3⌉=134
    ],
)
def test_length_bounds_are_nearest_rank_terciles(lengths: list[int], bounds: tuple[int, int]) -> None:
    assert length_bounds(lengths) == bounds


def test_length_labels_and_an_empty_batch_has_no_bounds() -> None:
    assert [length_label(n, (3, 7)) for n in (1, 3, 4, 7, 8)] == ["short", "short", "medium", "medium", "long"]
    with pytest.raises(ValueError):
        length_bounds([])


def test_the_derived_length_stratum_cuts_the_batch_into_terciles() -> None:
    # outputs of 1..9 characters: bounds (3, 6) by ranks ⌈9/3⌉=3 and ⌈18/3⌉=6, so three of each.
    data = csv_bytes([["id", "output"]] + [[f"i{n}", "é" * n] for n in range(1, 10)])
    batch = read_batch(data, "b.csv", strata=["length"])
    assert [i.strata["length"] for i in batch.items] == ["short"] * 3 + ["medium"] * 3 + ["long"] * 3
    assert batch.length_rule == (
        "length = characters of the output, cut at this batch's terciles: short up to 3, medium 4 to 6, long over 6"
    )
    assert "length" not in batch.items[0].record  # derived, not a field of the file


def test_a_length_column_in_the_file_is_used_as_it_is() -> None:
    batch = read_batch(b"id,output,length\n1,a,long\n2,bbbbbbbbbb,short\n", "b.csv", strata=["length"])
    assert [i.strata["length"] for i in batch.items] == ["long", "short"]
    assert batch.length_rule is None


def test_strata_warnings_name_items_without_a_value_and_too_many_strata() -> None:
    # 10 items, 8 distinct titles: the default 15 % with at least 5 samples 5 items, so 8 strata > 5.
    rows = [["id", "output", "title"]] + [[str(n), "text", f"t{n % 8}" if n != 3 else ""] for n in range(10)]
    batch = read_batch(csv_bytes(rows), "b.csv", strata=["title"])
    assert batch.warnings == [
        "1 of 10 items have no 'title'; they form a stratum of their own",
        "8 strata for 10 items: every stratum is sampled at least once, so each sample has at least 8 items "
        "(the default rate alone would sample 5)",
    ]
    assert read_batch(csv_bytes(rows), "b.csv").warnings == []


def test_jsonl_strata_from_numbers_null_and_missing_fields() -> None:
    data = jsonl_bytes(
        [
            {"id": 1, "output": "a", "v": 2},
            {"id": 2, "output": "b", "v": None},
            {"id": 3, "output": "c"},
            {"id": 4, "output": "d", "v": "x"},
            {"id": 5, "output": "e", "v": True},
        ]
    )
    batch = read_batch(data, "b.jsonl", strata=["v"])
    assert [i.strata["v"] for i in batch.items] == ["2", "", "", "x", "true"]


# --- writing: the verified batch, untouched items byte-identical --------------------------------


def fix_some(batch: BatchFile, fixed: dict[str, str]) -> list[BatchItemOut]:
    return [
        item.result("fixed", output=fixed[item.key], pattern="P1 missing price", fix="added the price")
        if item.key in fixed
        else item.result("nice")
        for item in batch.items
    ]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_csv_round_trip_keeps_every_untouched_item_identical(newline: str) -> None:
    rows = [["id", "output", "template", "note"]] + [
        [f"k{n}", t, f"t{n % 3}", f" n,{n} "] for n, t in enumerate(TRICKY)
    ]
    data = csv_bytes(rows, newline)
    if newline == "\n":  # the csv writer quotes only for its own line terminator; a lone \r must be quoted
        data = data.replace(b"old mac\rline end", b'"old mac\rline end"')
    batch = read_batch(data, "b.csv")
    assert [i.output for i in batch.items] == TRICKY
    fixed = {"k1": 'fixed, with "quotes"\rand a lone CR', "k6": "fixed 🎄"}
    exported = batch.export(fix_some(batch, fixed))
    again = read_batch(exported, "again.csv")
    assert again.newline == newline
    for before, after in zip(batch.items, again.items, strict=True):
        expected_fields = {**before.record, "output": fixed.get(before.key, before.output)}
        assert {c: after.record[c] for c in batch.columns} == expected_fields
        assert after.output.encode() == fixed.get(before.key, before.output).encode()
        changed = before.key in fixed
        assert after.record["santa_status"] == ("fixed" if changed else "nice")
        assert after.record["santa_pattern"] == ("P1 missing price" if changed else "")
        assert after.record["santa_fix"] == ("added the price" if changed else "")
        assert after.record["santa_original_output"] == (before.output if changed else "")


def test_jsonl_round_trip_keeps_values_and_key_order() -> None:
    records = [
        {"id": n, "output": t, "meta": {"n": n, "f": 0.1, "tags": ["a", None]}, "flag": n % 2 == 0}
        for n, t in enumerate(TRICKY)
    ]
    batch = read_batch(jsonl_bytes(records), "b.jsonl")
    exported = batch.export(fix_some(batch, {"3": "new text\n"}))
    lines = exported.decode("utf-8").split("\n")
    assert lines[-1] == "" and len(lines) == len(TRICKY) + 1  # one object per line, \n-terminated
    for record, line in zip(records, lines, strict=False):
        obj = json.loads(line)
        assert list(obj) == ["id", "output", "meta", "flag", *SANTA_COLUMNS]
        expected = {**record, "output": "new text\n"} if record["id"] == 3 else record
        assert {k: obj[k] for k in record} == expected
        assert obj["santa_original_output"] == (record["output"] if record["id"] == 3 else None)
    assert "🎅🏽" in exported.decode("utf-8")  # ensure_ascii=False: the text stays readable


def test_the_csv_export_is_exactly_the_input_plus_the_santa_columns() -> None:
    data = b'id,output,tpl\n1,"a, b",x\n2,"say ""hi""",y\n3,plain,x\n'
    batch = read_batch(data, "b.csv")
    exported = batch.export(fix_some(batch, {"2": "say hello"}))
    assert exported == (
        b"id,output,tpl,santa_status,santa_pattern,santa_fix,santa_original_output\n"
        b'1,"a, b",x,nice,,,\n'
        b'2,say hello,y,fixed,P1 missing price,added the price,"say ""hi"""\n'
        b"3,plain,x,nice,,,\n"
    )


def test_exporting_an_export_rewrites_the_santa_columns_in_place() -> None:
    batch = read_batch(b"id,output\n1,a\n2,b\n", "b.csv")
    first = read_batch(batch.export(fix_some(batch, {"1": "A"})), "first.csv")
    assert first.columns == ["id", "output", *SANTA_COLUMNS]
    second = first.export([item.result("nice") for item in first.items])
    assert second == (
        b"id,output,santa_status,santa_pattern,santa_fix,santa_original_output\n1,A,nice,,,\n2,b,nice,,,\n"
    )


def test_a_semicolon_file_exports_with_semicolons_and_a_jsonl_batch_exports_to_csv() -> None:
    batch = read_batch(b"id;output\n1;a,b\n", "b.csv")
    assert batch.export([batch.items[0].result("nice")]) == (
        b"id;output;santa_status;santa_pattern;santa_fix;santa_original_output\n1;a,b;nice;;;\n"
    )
    jb = read_batch(jsonl_bytes([{"id": 1, "output": "a", "n": 1.5, "m": {"k": "é"}, "z": None}]), "b.jsonl")
    assert (
        jb.export([jb.items[0].result("nice")], "csv")
        == (
            "id,output,n,m,z,santa_status,santa_pattern,santa_fix,santa_original_output\n"
            '1,a,1.5,"{""k"": ""é""}",,nice,,,\n'
        ).encode()
    )


def test_write_batch_without_columns_uses_every_records_keys_and_refuses_unknown_formats() -> None:
    items = [
        BatchItemOut(record={"id": "1", "text": "a"}, original_output="a", output="a", status="nice"),
        BatchItemOut(
            record={"id": "2", "text": "b", "extra": "e"},
            original_output="b",
            output="B",
            status="fixed",
            pattern="p",
            fix="f",
        ),
    ]
    assert write_batch(items, "csv", output_column="text") == (
        b"id,text,extra,santa_status,santa_pattern,santa_fix,santa_original_output\n1,a,,nice,,,\n2,B,e,fixed,p,f,b\n"
    )
    assert [i.changed for i in items] == [False, True]
    with pytest.raises(ValueError, match="unknown batch format 'xlsx'"):
        write_batch(items, "xlsx", output_column="text")  # type: ignore[arg-type]


def test_a_200_item_batch_with_a_planted_defect_round_trips() -> None:
    # 200 items over 4 templates (50 each); 10 of template t2 carry the planted defect and get fixed.
    rows = [["id", "output", "template", "locale"]]
    for n in range(200):
        template = f"t{n % 4}"
        defect = template == "t2" and n < 80  # n = 2, 6, ..., 78: 20 items, every other one planted
        text = f'Product {n}: a fine thing, "quoted".\nPrice: {"TBD" if defect and n % 8 == 2 else n}' + "!" * (n % 9)
        rows.append([f"p{n:03d}", text, template, ["en", "fr"][n % 2]])
    batch = read_batch(csv_bytes(rows), "products.csv", strata=["template", "length"])
    assert len(batch.items) == 200 and batch.rows == 200
    sizes = batch.strata_sizes()
    assert sum(sizes.values()) == 200
    assert {t for t, _ in sizes} == {"t0", "t1", "t2", "t3"} and {n for _, n in sizes} == {"short", "medium", "long"}
    planted = {i.key: i.output.replace("TBD", "42") for i in batch.items if "TBD" in i.output}
    assert len(planted) == 10  # n ≡ 2 (mod 8) for n < 80: 2, 10, ..., 74
    again = read_batch(batch.export(fix_some(batch, planted)), "out.csv")
    assert [i.key for i in again.items] == [i.key for i in batch.items]
    for before, after in zip(batch.items, again.items, strict=True):
        assert after.output == planted.get(before.key, before.output)
        assert after.record["santa_status"] == ("fixed" if before.key in planted else "nice")


def test_a_number_too_large_for_a_float_is_refused_by_line() -> None:
    """1e400 would load as Infinity, which the JSONL export cannot write as JSON."""
    with pytest.raises(BatchFileError) as caught:
        read_batch(b'{"id": "a", "output": "fine"}\n{"id": "b", "output": "x", "score": 1e400}\n', "x.jsonl")
    assert caught.value.errors == ["line 2: not valid JSON (the number 1e400 is too large)"]
