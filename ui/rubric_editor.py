"""The Rubrics page's editor: rubric header, one expander per criterion with its lint, and Save.

Lint runs on every rerun and is shown next to the criterion it is about; errors block saving,
warnings do not. Saving creates a new immutable version (storage refuses a stale or broken one).
The editor's parts: `ui.rubric_findings` (the lint), `ui.rubric_criterion` (a criterion's form) and
`ui.rubric_save` (saving, discarding, opening a version).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from santa_core.models import Criterion
from santa_core.rubrics import lint as rubric_lint
from santa_core.rubrics import store as rubric_store
from ui import rubric_draft as rd
from ui.rubric_criterion import criterion_box, criterion_text
from ui.rubric_findings import MARK, inherited, lint, mark_label, show_finding, visible
from ui.rubric_save import FLASH, is_dirty, save_panel
from ui.safe import escape_markdown

DOMAINS = ("general", "content", "code", "compliance")


def render(store: rubric_store.Store, actor: str) -> list[rubric_lint.LintFinding]:
    """The whole editor for the open draft; returns the current lint findings."""
    draft = rd.current()
    assert draft is not None
    rd.sync(draft)
    parents, parent_problems = inherited(store, draft)
    findings = lint(draft, parents)
    shown = visible(draft, findings)
    marked = {w for f in rubric_lint.errors(shown) if (w := rd.finding_widget(draft, f.index, f.field))}
    if parent_problems:
        marked.add(rd.header_key("extends"))
    _flash()
    _header(draft, store, parents, parent_problems, shown, marked)
    st.markdown(f"**Own criteria** ({len(draft['criteria'])})")
    if not draft["criteria"]:
        st.caption("No own criteria yet: this rubric is its parents' criteria. Add one to extend them.")
    for i, c in enumerate(draft["criteria"]):
        criterion_box(i, c, rubric_lint.for_criterion(shown, i), len(draft["criteria"]), marked)
    st.button(":material/add: Add criterion", key="rs_add", on_click=rd.add_criterion)
    save_panel(draft, store, actor, findings, shown, parent_problems)
    return findings


def read_only(store: rubric_store.Store, refusal: str) -> list[rubric_lint.LintFinding]:
    """The open rubric for someone who may read but not change it: every field as text, no controls."""
    draft = rd.current()
    assert draft is not None
    parents, parent_problems = inherited(store, draft)
    findings = lint(draft, parents)
    _flash()
    st.info(escape_markdown(refusal))  # escaped: the refusal names the person, and names come from sign-in
    if is_dirty(draft):  # typed while they still could edit: kept, shown, not lost, but not savable now
        st.warning(
            "The draft below has unsaved changes that you may no longer save. They stay here until you "
            "leave this session; ask a rubric author to save them, or copy them out."
        )
    h = draft["header"]
    st.markdown(
        escape_markdown(f"**{h['name'] or '(new rubric)'}** v{draft['base_version'] or '—'} · domain {h['domain']}")
    )
    if h["description"]:
        st.text(h["description"])
    for p in parent_problems:
        st.error(escape_markdown(p))
    if parents:
        st.caption(
            escape_markdown(
                f"Inherited: {len(parents)} criteria from {', '.join(_pins(draft))} — "
                + ", ".join(c.id for c in parents)
            )
        )
    st.markdown(f"**Own criteria** ({len(draft['criteria'])})")
    for i, c in enumerate(draft["criteria"]):
        criterion_text(i, c, rubric_lint.for_criterion(findings, i))
    return findings


def _flash() -> None:
    """The outcome of the last save or discard (set by a callback)."""
    msg = st.session_state.pop(FLASH, None)
    if not msg:
        return
    kind, lines = msg
    if kind == "ok":
        st.success(escape_markdown(lines[0]))
    else:
        for line in lines:
            st.error(escape_markdown(line))


def _header(
    draft: dict[str, Any],
    store: rubric_store.Store,
    parents: list[Criterion],
    problems: list[str],
    findings: list[rubric_lint.LintFinding],
    marked: set[str],
) -> None:
    existing = draft["base_version"] is not None
    left, right = st.columns(2)
    with left:
        st.text_input(
            mark_label("Rubric name", rd.header_key("name"), marked),
            key=rd.header_key("name"),
            disabled=existing,
            max_chars=64,
            placeholder="e.g. acme-compliance",
            help="Lower-case letters, digits, '-' and '_'. It names the rubric in runs, commands and "
            "URLs, so it cannot change once saved (save a copy under a new name instead).",
        )
    with right:
        domains = sorted({*DOMAINS, *(r.domain for r in store.list_rubrics()), draft["header"]["domain"]})
        st.selectbox(
            mark_label("Domain", rd.header_key("domain"), marked),
            domains,
            key=rd.header_key("domain"),
            accept_new_options=True,
            help="Groups rubrics on this page. Type a new one to add a domain.",
        )
    st.text_area(
        "Description",
        key=rd.header_key("description"),
        height=68,
        help="What this rubric is for; shown to authors, not to reviewers.",
    )
    options = [n for n in store.names() if n != draft["header"]["name"]]
    options += [n for n in draft["header"]["extends"] if n not in options]
    st.multiselect(
        mark_label("Extends (base first, then extensions)", rd.header_key("extends"), marked),
        options,
        key=rd.header_key("extends"),
        help="Parents' criteria come first, in this order; a criterion shared by two parents "
        "counts once. Own criteria follow.",
    )
    for p in problems:
        st.error(escape_markdown(p), icon=MARK)
    if parents:
        st.caption(
            escape_markdown(
                f"Inherited: {len(parents)} criteria from {', '.join(_pins(draft))} — "
                + ", ".join(c.id for c in parents)
            )
        )
    for f in rubric_lint.for_criterion(findings, None):
        show_finding(f)


def _pins(draft: dict[str, Any]) -> list[str]:
    pinned = {r.partition("@")[0]: r for r in draft["pinned"]}
    return [pinned.get(n, f"{n} (latest)") for n in draft["header"]["extends"]]
