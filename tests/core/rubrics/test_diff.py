"""Comparing two rubric versions: statuses, reorder, header changes, side by side, unified."""

from __future__ import annotations

from typing import Any

import pytest

from santa_core.models import Criterion, RubricDocument
from santa_core.rubrics.diff import (
    CriterionChange,
    FieldChange,
    RubricDiff,
    check_json,
    diff_documents,
    render_criterion,
    side_by_side,
)
from santa_core.text import unified_diff as unified


def crit(cid: str, **overrides: Any) -> Criterion:
    fields: dict[str, Any] = {
        "id": cid,
        "name": cid.title(),
        "category": "completeness",
        "pass_condition": f"{cid} holds",
        "fail_signal": f"{cid} broken",
    }
    return Criterion(**(fields | overrides))


def doc(*criteria: Criterion, **header: Any) -> RubricDocument:
    return RubricDocument(**({"name": "promo", "domain": "content"} | header), criteria=list(criteria))


OLD = doc(crit("a"), crit("b"), crit("c"))
CHECK = {"type": "forbidden_terms", "terms": ["risk-free"]}


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        pytest.param(doc(crit("a"), crit("b"), crit("c")), RubricDiff(), id="identical"),
        pytest.param(doc(crit("a"), crit("b"), crit("c"), crit("d")), RubricDiff(added=["d"]), id="added"),
        pytest.param(doc(crit("a"), crit("c")), RubricDiff(removed=["b"]), id="removed"),
        pytest.param(doc(crit("a"), crit("b", retired=True), crit("c")), RubricDiff(retired=["b"]), id="retired"),
        pytest.param(
            doc(crit("a"), crit("b", name="Bee"), crit("c")),
            RubricDiff(changed=[CriterionChange("b", [FieldChange("name", "B", "Bee")])]),
            id="changed-name",
        ),
        pytest.param(
            doc(crit("a", check=CHECK), crit("b"), crit("c")),
            RubricDiff(changed=[CriterionChange("a", [FieldChange("check", "", check_json(CHECK))])]),
            id="changed-check",
        ),
        pytest.param(doc(crit("b"), crit("a"), crit("c")), RubricDiff(reordered=True), id="reordered"),
        pytest.param(doc(crit("a"), crit("c")), RubricDiff(removed=["b"]), id="removal-is-not-a-reorder"),
        pytest.param(
            doc(crit("a"), crit("b"), crit("c"), domain="marketing", extends=["general@1"]),
            RubricDiff(header=[FieldChange("domain", "content", "marketing"), FieldChange("extends", "", "general@1")]),
            id="header",
        ),
    ],
)
def test_diff_documents(new: RubricDocument, expected: RubricDiff) -> None:
    result = diff_documents(OLD, new)
    assert result == expected
    assert result.is_empty is (expected == RubricDiff())


def test_restored() -> None:
    old = doc(crit("a", retired=True))
    assert diff_documents(old, doc(crit("a"))).restored == ["a"]


def test_describe_check_is_compact_and_sorted() -> None:
    assert check_json({"terms": ["x"], "type": "forbidden_terms"}) == '{"terms":["x"],"type":"forbidden_terms"}'
    assert check_json(None) == ""


# --- side by side ---------------------------------------------------------------------------


def test_side_by_side_statuses_in_new_order_with_removed_in_place() -> None:
    old = doc(crit("a"), crit("b"), crit("c"), crit("d"), crit("e", retired=True))
    new = doc(crit("f"), crit("a", severity="suggestion"), crit("c"), crit("d", retired=True), crit("e"))
    rows = side_by_side(old, new)
    assert [(r.criterion_id, r.status) for r in rows] == [
        ("f", "added"),
        ("a", "changed"),
        ("b", "removed"),
        ("c", "same"),
        ("d", "retired"),
        ("e", "restored"),
    ]
    by_id = {r.criterion_id: r for r in rows}
    assert by_id["f"].old_text == "" and "name: F" in by_id["f"].new_text
    assert by_id["b"].new_text == "" and "pass condition: b holds" in by_id["b"].old_text
    assert "severity: suggestion" in by_id["a"].new_text
    assert "retired: yes" in by_id["d"].new_text


def test_side_by_side_removed_first_stays_first() -> None:
    rows = side_by_side(doc(crit("a"), crit("b")), doc(crit("b")))
    assert [(r.criterion_id, r.status) for r in rows] == [("a", "removed"), ("b", "same")]


def test_render_criterion_has_every_field() -> None:
    text = render_criterion(crit("a", check=CHECK))
    assert text.splitlines() == [
        "name: A",
        "category: completeness",
        "severity: critical",
        "pass condition: a holds",
        "fail signal: a broken",
        'check: {"terms":["risk-free"],"type":"forbidden_terms"}',
        "retired: no",
        "third reviewer: no",
    ]


def test_marking_a_criterion_for_a_third_reviewer_is_a_change() -> None:
    marked = crit("a").model_copy(update={"third_reviewer": True})
    rows = side_by_side(doc(crit("a")), doc(marked))
    assert [(r.criterion_id, r.status) for r in rows] == [("a", "changed")]
    assert "third reviewer: yes" in rows[0].new_text


# --- unified --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old_text", "new_text", "expected"),
    [
        pytest.param("x\n", "x\n", "", id="equal"),
        pytest.param(
            "name: promo\nversion: 1\n",
            "name: promo\nversion: 2\n",
            "--- promo v1\n+++ promo v2\n@@ -1,2 +1,2 @@\n name: promo\n-version: 1\n+version: 2\n",
            id="changed-line",
        ),
    ],
)
def test_unified(old_text: str, new_text: str, expected: str) -> None:
    assert unified(old_text, new_text, "promo v1", "promo v2") == expected
