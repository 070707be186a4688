"""A criterion marked for a third reviewer (`third_reviewer: true`): it survives a file's export and import, a
version without it keeps its bytes, the resolved rubric names it, and the linter warns where the mark buys nothing."""

from __future__ import annotations

import pytest

from santa_core.models import CriterionDraft, RubricDraft
from santa_core.rubrics.library import content_key, export_document, read_document, resolve
from santa_core.rubrics.lint import lint

FILE = """\
name: loans
version: 1
domain: finance
description: ''
criteria:
- id: apr-stated
  name: APR stated
  category: compliance
  severity: critical
  pass_condition: The APR appears as a percentage.
  fail_signal: No APR, or an APR without a percentage.
  third_reviewer: true
- id: tone
  name: Tone
  category: compliance
  severity: critical
  pass_condition: No exclamation marks.
  fail_signal: An exclamation mark.
"""


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_a_file_with_a_high_risk_criterion_round_trips(fmt: str) -> None:
    doc = read_document(FILE)
    text = export_document(doc, fmt)
    again = read_document(text, fmt)
    assert again == doc and export_document(again, fmt) == text
    assert [c.third_reviewer for c in again.criteria] == [True, False]
    assert resolve(again, lambda *_: None).third_reviewer_ids() == ["apr-stated"]


def test_the_mark_is_written_only_where_it_is_set() -> None:
    text = export_document(read_document(FILE))
    assert text.count("third_reviewer") == 1  # the unmarked criterion's file reads as before the mark existed
    unmarked = read_document(FILE.replace("  third_reviewer: true\n", ""))
    assert "third_reviewer" not in export_document(unmarked) and "third_reviewer" not in content_key(unmarked)


def _draft(**kw: object) -> RubricDraft:
    c = CriterionDraft(
        id="apr",
        name="APR",
        category="compliance",
        pass_condition="The APR appears as a percentage.",
        fail_signal="No APR.",
        third_reviewer=True,
        **kw,
    )
    return RubricDraft(
        name="loans",
        domain="finance",
        criteria=[c, c.model_copy(update={"id": "b", "retired": False, "third_reviewer": False})],
    )


@pytest.mark.parametrize(
    ("kw", "warned"),
    [
        pytest.param({}, None, id="critical-is-fine"),
        pytest.param({"severity": "suggestion"}, "never blocks", id="on-a-suggestion"),
        pytest.param({"retired": True}, "retired", id="on-a-retired-criterion"),
    ],
)
def test_the_linter_warns_where_a_third_reviewer_buys_nothing(kw: dict, warned: str | None) -> None:
    found = [f for f in lint(_draft(**kw)) if f.field == "third_reviewer"]
    assert [f.level for f in found] == ([] if warned is None else ["warning"])
    assert warned is None or warned in found[0].message
