"""The lint of the rubric being edited: the criteria its parents bring, the findings (cached by content), which
of them show, and how a finding is written and marked beside its field."""

from __future__ import annotations

from typing import Any

import streamlit as st
from pydantic import TypeAdapter

from santa_core.models import Criterion, RubricDraft
from santa_core.rubrics import lint as rubric_lint
from santa_core.rubrics import store as rubric_store
from ui import rubric_draft as rd
from ui.safe import escape_markdown

MARK = ":material/block:"
"""Marks a field in error, its message, and the criterion holding it."""


def inherited(store: rubric_store.Store, draft: dict[str, Any]) -> tuple[list[Criterion], list[str]]:
    """Criteria the draft's parents bring (at their pinned versions) and problems finding them."""
    pinned = {r.partition("@")[0]: r for r in draft["pinned"]}
    out: list[Criterion] = []
    problems: list[str] = []
    for name in draft["header"]["extends"]:
        ref = pinned.get(name, name)
        base, _, version = ref.partition("@")
        try:
            parent = store.lookup(base, int(version) if version else None)[1]
        except KeyError as exc:
            problems.append(str(exc.args[0]))
            continue
        out += [c for c in parent.criteria if c.id not in {x.id for x in out}]
    return out, problems


_CRITERIA = TypeAdapter(list[Criterion])


@st.cache_data(max_entries=64, show_spinner=False)
def _lint_of(draft_json: str, parents_json: str) -> list[rubric_lint.LintFinding]:
    """The lint of one draft's content, computed once: an unchanged draft (a page visit, a rerun of another
    widget) is not linted again. Why: the near-duplicate check compares every pair of criteria, the slowest
    step of the page, and the editor waits for the findings before it draws."""
    return rubric_lint.lint(RubricDraft.model_validate_json(draft_json), _CRITERIA.validate_json(parents_json))


def lint(draft: dict[str, Any], parents: list[Criterion]) -> list[rubric_lint.LintFinding]:
    """`rubric_lint.lint` of the draft in session state with its inherited criteria (cached by content)."""
    return _lint_of(rd.to_draft(draft).model_dump_json(), _CRITERIA.dump_json(parents).decode())


def visible(draft: dict[str, Any], findings: list[rubric_lint.LintFinding]) -> list[rubric_lint.LintFinding]:
    """Warnings, and the errors the author acted on: their field was changed, or a save was tried."""
    return [
        f for f in findings if f.level == "warning" or rd.acted_on(draft, rd.finding_widget(draft, f.index, f.field))
    ]


def mark_label(label: str, widget: str, marked: set[str]) -> str:
    """A field's label, marked when an error about it is shown."""
    return f"{MARK} {label}" if widget in marked else label


def show_finding(f: rubric_lint.LintFinding) -> None:
    """One finding as a message: errors in red with the mark, warnings in yellow."""
    if f.level == "error":
        st.error(escape_markdown(finding_text(f)), icon=MARK)
    else:
        st.warning(escape_markdown(finding_text(f)))


def finding_text(f: rubric_lint.LintFinding) -> str:
    field = (f.field or "").replace("_", " ").replace(".", " ")
    where = f"{field}: " if field and field not in f.message.replace(".", " ") else ""  # the message may name it
    return f"{'Error' if f.level == 'error' else 'Warning'} — {where}{f.message}"
