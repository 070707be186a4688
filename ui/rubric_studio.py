"""The Rubrics page's rubric picker and the draft as a usable rubric."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from santa_core.models import Rubric
from santa_core.rubrics import library as lib
from santa_core.rubrics import lint as rubric_lint
from santa_core.rubrics import store as rubric_store
from ui import identity, rubric_findings, rubric_save
from ui import rubric_draft as rd
from ui.safe import escape_markdown

NEW = "+ New rubric"
PICK = "rubric_pick"


def pick_rubric(store: rubric_store.Store, allow_new: bool = True, default: str | None = None) -> str | None:
    """Select a rubric (grouped by domain) or, for people who may edit rubrics, a new one; opens it in
    the editor, first the one asked for in the URL, else the draft's, else `default` (Settings' rubric for new
    runs). Returns the stored name."""
    summaries = store.list_rubrics()
    labels = {s.name: f"{s.domain} · {s.name} v{s.version} ({s.criteria} criteria)" for s in summaries}
    options = [*labels, NEW] if allow_new or not labels else [*labels]
    if st.session_state.get(PICK) not in options:  # e.g. "New rubric" left over from when they could edit
        st.session_state.pop(PICK, None)
    if PICK not in st.session_state:  # first visit, or back from another page (widget state was cleared)
        draft = rd.current()
        wanted = st.query_params.get("rubric") or (draft and (NEW if draft["source"] == "new" else draft["source"]))
        fallback = default if default in labels else (options[0] if labels else NEW)
        st.session_state[PICK] = wanted if wanted in options else fallback
    choice = st.selectbox("Rubric", options, key=PICK, format_func=lambda o: labels.get(o, o))
    with st.expander(f"All rubrics by domain ({len(summaries)})"):
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "domain": s.domain,
                        "rubric": s.name,
                        "latest": f"v{s.version}",
                        "criteria": s.criteria,
                        "extends": ", ".join(s.extends),
                        "saved by": identity.display(s.author),
                        "saved at": s.saved_at,
                    }
                    for s in summaries
                ]
            ),
            hide_index=True,
            width="stretch",
        )
    target = None if choice == NEW else choice
    draft = rd.current()
    source = None if draft is None or draft["source"] == "new" else draft["source"]
    if draft is None or (source != target and not (draft["source"] == "new" and target is None)):
        if draft is not None and rubric_save.is_dirty(draft):
            held = "the new rubric" if source is None else source
            st.warning(
                escape_markdown(
                    f"Unsaved changes to {held} are still open below: save them, or press "
                    "Discard changes, before opening another rubric."
                )
            )
            return source
        rubric_save.open_version(store, target)
    if target:
        st.query_params["rubric"] = target
    elif "rubric" in st.query_params:
        del st.query_params["rubric"]
    return target


def draft_rubric(
    store: rubric_store.Store, findings: list[rubric_lint.LintFinding]
) -> tuple[Rubric | None, str | None]:
    """The draft resolved as reviewers would see it, or why it cannot be (lint errors first)."""
    draft = rd.current()
    assert draft is not None
    if rubric_lint.blocks_save(findings):
        n = len(rubric_lint.errors(findings))
        # Why: Edit shows an error only once its field was typed in or a save tried; say so, or this count
        # would name errors that Edit does not show yet.
        hidden = n - len(rubric_lint.errors(rubric_findings.visible(draft, findings)))
        where = "Edit marks each one" + (" once you press its save button" if hidden else "")
        return None, f"The draft has {n} error{'s' if n != 1 else ''} ({where}); fix them to try it."
    try:
        doc = rd.to_document(draft, update_parents=False)
        if not doc.name:
            doc = doc.model_copy(update={"name": "draft"})
        return lib.resolve(doc, store.lookup), None
    except (ValueError, KeyError) as exc:
        return None, f"The draft cannot be used yet: {exc}"
