"""The Rubrics page's Versions tab (history + side-by-side diff) and Import / export tab."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from santa_core import words
from santa_core.models import Rubric, RubricDocument
from santa_core.roles import PermissionDenied
from santa_core.rubrics import actions as rubric_actions
from santa_core.rubrics import diff as rubric_diff
from santa_core.rubrics import library as lib
from santa_core.rubrics import store as rubric_store
from santa_core.rubrics.store import RubricConflict
from santa_core.text import unified_diff
from ui import identity, kept
from ui.safe import escape_markdown

STATUS_LABEL = {"same": "unchanged"}
"""A criterion's change between two versions in words, where the code is not already one ("added", "retired")."""
MAX_IMPORT_BYTES = lib.MAX_RUBRIC_BYTES


def versions_tab(store: rubric_store.Store, name: str) -> None:
    """Every version with author, time and note; a side-by-side diff of any two."""
    versions = store.versions(name)
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "version": v.version,
                    "saved by": identity.display(v.author),
                    "saved at": v.created_at,
                    "note": v.change_note,
                    "how": words.rubric_source(v.source),
                }
                for v in versions
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    if len(versions) < 2:
        st.caption("Save a second version to compare versions.")
        return
    numbers = [v.version for v in versions]
    _follow_latest(name, numbers, {"diff_old": numbers[1], "diff_new": numbers[0]})
    a, b = st.columns(2)
    old = a.selectbox("Compare version", numbers, key="diff_old", format_func=lambda n: f"v{n}")
    new = b.selectbox("with version", numbers, key="diff_new", format_func=lambda n: f"v{n}")
    show_diff(store, name, old, new)


def show_diff(store: rubric_store.Store, name: str, old: int, new: int) -> None:
    """Criterion-level summary, side-by-side changed criteria, and the unified diff of the files."""
    before, after = store.document(name, old), store.document(name, new)
    diff = rubric_diff.diff_documents(before, after)
    own = {c.id for c in before.criteria} | {c.id for c in after.criteria}
    old_parents = _inherited_doc(name, store.resolved(name, old), own)
    new_parents = _inherited_doc(name, store.resolved(name, new), own)
    inherited = rubric_diff.diff_documents(old_parents, new_parents)
    if diff.is_empty and inherited.is_empty:
        st.info(f"v{old} and v{new} have the same content.")
        return
    st.markdown(escape_markdown(_summary(diff)))
    for change in diff.header:
        st.caption(escape_markdown(f"{change.field}: {change.before or '(empty)'} → {change.after or '(empty)'}"))
    show_all = st.toggle("Show unchanged criteria", key="diff_all")
    _side_by_side(before, after, old, new, show_all)
    if not inherited.is_empty:
        # The document only names its parents; what reviewers see also changes when a parent version does.
        st.markdown(
            escape_markdown(
                f"Inherited from parents ({', '.join(before.extends) or 'none'} → "
                f"{', '.join(after.extends) or 'none'}): " + _summary(inherited).removeprefix("Criteria: ")
            )
        )
        _side_by_side(old_parents, new_parents, old, new, show_all=False)
    with st.expander("Unified diff of the exported files"):
        text = unified_diff(
            lib.export_document(before), lib.export_document(after), f"{name}@{old}.yaml", f"{name}@{new}.yaml"
        )
        st.code(text, language="diff")


def _inherited_doc(name: str, resolved: Rubric, own: set[str]) -> RubricDocument:
    """The criteria a version gets from its parents, as a document, to diff like own criteria."""
    return RubricDocument(name=name, criteria=[c for c in resolved.criteria if c.id not in own])


def _side_by_side(before: RubricDocument, after: RubricDocument, old: int, new: int, show_all: bool) -> None:
    left, right = st.columns(2)
    left.markdown(f"**v{old}**")
    right.markdown(f"**v{new}**")
    for row in rubric_diff.side_by_side(before, after):
        if row.status == "same" and not show_all:
            continue
        left, right = st.columns(2)
        left.caption(escape_markdown(f"{row.criterion_id} · {STATUS_LABEL.get(row.status, row.status)}"))
        right.caption(escape_markdown(f"{row.criterion_id} · {STATUS_LABEL.get(row.status, row.status)}"))
        left.code(row.old_text or "—", language=None, wrap_lines=True)
        right.code(row.new_text or "—", language=None, wrap_lines=True)


def _follow_latest(name: str, numbers: list[int], defaults: dict[str, int]) -> None:
    """Version pickers start from the newest versions again whenever the rubric or its latest version changes."""
    marker = f"{name}@{numbers[0]}"
    for key, value in defaults.items():
        if st.session_state.get(f"{key}_for") != marker or st.session_state.get(key) not in numbers:
            st.session_state[key] = value
            st.session_state[f"{key}_for"] = marker


def _summary(diff: rubric_diff.RubricDiff) -> str:
    parts = [
        (len(diff.added), "added"),
        (len(diff.removed), "removed"),
        (len(diff.changed), "changed"),
        (len(diff.retired), "retired"),
        (len(diff.restored), "restored"),
    ]
    text = ", ".join(f"{n} {what}" for n, what in parts if n) or "no criterion changed"
    return f"Criteria: {text}" + ("; order changed" if diff.reordered else "") + "."


def export_panel(store: rubric_store.Store, name: str) -> None:
    """Download any version as YAML or JSON (the documented schema)."""
    numbers = [v.version for v in store.versions(name)]
    _follow_latest(name, numbers, {"exp_version": numbers[0]})
    a, b = st.columns(2)
    version = a.selectbox("Version to export", numbers, key="exp_version", format_func=lambda n: f"v{n}")
    fmt = b.radio("Format", ["yaml", "json"], key="exp_format", horizontal=True)
    text = store.export(name, version, fmt)
    st.download_button(
        f"Download {name}@{version}.{fmt}",
        text.encode("utf-8"),
        file_name=f"{name}@{version}.{fmt}",
        mime="application/json" if fmt == "json" else "application/yaml",
        key="exp_download",
        on_click="ignore",
    )
    with st.expander("Show the file"):
        st.code(text, language=fmt)


def import_panel(store: rubric_store.Store, actor: str) -> None:
    """Import a YAML/JSON rubric file (upload or paste): a new version, or a precise error and no change."""
    st.caption(
        "A file for a new name creates that rubric; for an existing name it becomes the next version "
        "(identical content creates nothing). See docs/rubrics.md for the schema."
    )
    upload = st.file_uploader("Rubric file", type=["yaml", "yml", "json"], key="imp_file", max_upload_size=1)
    kept.keep("imp_text")
    pasted = st.text_area("…or paste the file", key="imp_text", height=150)
    fmt = st.radio("Pasted text is", ["yaml", "json"], key="imp_format", horizontal=True)
    note = st.text_input("Change note (optional)", key="imp_note")
    if not st.button("Import", key="imp_go", type="primary"):
        return
    text, fmt, problem = _import_source(upload, pasted, fmt)
    if upload is not None and pasted.strip():
        st.caption(escape_markdown(f"Imported the uploaded file {upload.name}; the pasted text was not used."))
    if problem:
        st.error(problem)
        return
    try:
        result = rubric_actions.import_file(store, text, fmt, actor, note)
    except (lib.RubricFileError, lib.RubricCompositionError) as exc:
        st.error("Nothing was imported. Fix the file and try again:")
        for e in getattr(exc, "errors", None) or [str(exc)]:
            st.error(escape_markdown(e))
        return
    except RubricConflict as exc:
        st.error(escape_markdown(f"Nothing was imported: {exc}. Try again."))
        return
    except PermissionDenied as exc:  # roles changed since the page was drawn; the pasted text stays
        st.error(escape_markdown(f"Nothing was imported: {exc}"))
        return
    if result.created:
        st.success(escape_markdown(f"Imported {result.name} v{result.version}."))
    else:
        st.info(escape_markdown(f"Unchanged: {result.name} v{result.version} already has exactly this content."))


def _import_source(upload, pasted: str, fmt: str) -> tuple[str, str, str | None]:
    """(text, format, problem) from the uploaded file if any, else the pasted text."""
    if upload is not None:
        raw = upload.getvalue()
        if len(raw) > MAX_IMPORT_BYTES:
            return "", fmt, f"The file is larger than {MAX_IMPORT_BYTES:,} bytes; a rubric is a short list."
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return "", fmt, f"The file is not UTF-8 text (byte {exc.start}). Save it as UTF-8 and upload it again."
        return text, lib.format_of(upload.name), None
    if not pasted.strip():
        return "", fmt, "Nothing to import: upload a file or paste its text."
    return pasted, fmt, None
