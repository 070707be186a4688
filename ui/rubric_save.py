"""Saving the rubric being edited: the save panel (errors that block it, the change note, parents to update, a
save refused because someone saved first), the save callbacks, Discard, and opening a stored version."""

from __future__ import annotations

import json
import re
from typing import Any

import streamlit as st
from pydantic import ValidationError

from santa_core.checks import error_message
from santa_core.models import RUBRIC_NAME_PATTERN
from santa_core.roles import PermissionDenied
from santa_core.rubrics import actions as rubric_actions
from santa_core.rubrics import lint as rubric_lint
from santa_core.rubrics import store as rubric_store
from santa_core.rubrics.store import RubricConflict, RubricSaveError
from ui import kept
from ui import rubric_draft as rd
from ui.rubric_findings import MARK, inherited, lint
from ui.safe import escape_markdown

FLASH = "studio_flash"
CONFLICT = "studio_conflict"
"""Set after a refused save: (rubric name, the newer version someone else saved); cleared on load."""


def snapshot(draft: dict[str, Any]) -> str:
    """A comparable picture of the draft, to tell whether it has unsaved changes."""
    return json.dumps(rd.to_draft(draft).model_dump(), sort_keys=True)


def is_dirty(draft: dict[str, Any]) -> bool:
    """Whether the draft differs from what was loaded."""
    return snapshot(draft) != draft.get("clean")


def save_panel(
    draft: dict[str, Any],
    store: rubric_store.Store,
    actor: str,
    findings: list[rubric_lint.LintFinding],
    shown: list[rubric_lint.LintFinding],
    problems: list[str],
) -> None:
    st.divider()
    errors, warnings = rubric_lint.errors(shown), rubric_lint.warnings(findings)
    hidden = len(rubric_lint.errors(findings)) - len(errors)
    if n := len(errors) + len(problems):
        one = n == 1
        st.error(
            f"{'Not saved: ' if draft.get('tried') else ''}{n} error{'' if one else 's'} "
            f"block{'s' if one else ''} saving; {'it is' if one else 'they are'} marked {MARK} above."
        )
    elif hidden:  # not in red: nothing is wrong with what the author did so far
        st.caption(
            f"Still to complete before saving: {hidden} item{'' if hidden == 1 else 's'}; pressing the save "
            f"button marks {'it' if hidden == 1 else 'them'} {MARK}."
        )
    elif warnings:
        st.warning(
            f"{len(warnings)} warning{'s' if len(warnings) != 1 else ''} (:material/warning: above); you can still save."
        )
    st.text_input(
        "Change note",
        key=rd.header_key("note"),
        max_chars=2000,
        placeholder="What changed and why",
        help="Kept with the version, with your name and the time.",
    )
    update = False
    if draft["base_version"] is not None and _newer_parents(store, draft):
        kept.keep("rs_update_parents")
        update = st.checkbox(
            "Update parents to their latest versions",
            key="rs_update_parents",
            help="Parents stay at the versions this rubric was saved with unless you tick this.",
        )
    _conflict_panel(store, actor, draft, update)
    a, b = st.columns(2)
    a.button(
        "Save new version" if draft["base_version"] else "Create rubric (version 1)",
        type="primary",
        key="rs_save",
        on_click=_save,
        args=(store, actor, update),
    )
    b.button("Discard changes", key="rs_discard", disabled=not is_dirty(draft), on_click=discard, args=(store,))
    if draft["base_version"] is not None:
        with st.expander("Save as a new rubric"):
            kept.keep("rs_copy_name")
            st.text_input("New rubric name", key="rs_copy_name", max_chars=64, placeholder="e.g. acme-compliance-eu")
            st.button("Save a copy as version 1", key="rs_copy", on_click=_save_copy, args=(store, actor))


def _newer_parents(store: rubric_store.Store, draft: dict[str, Any]) -> list[str]:
    out = []
    for ref in draft["pinned"]:
        name, _, version = ref.partition("@")
        latest = store.latest_version(name)
        if version and latest and latest > int(version):
            out.append(f"{name} v{latest}")
    if out:
        st.caption(escape_markdown("Newer parent versions exist: " + ", ".join(out)))
    return out


def open_version(store: rubric_store.Store, name: str | None, version: int | None = None) -> None:
    """Load a stored rubric (the latest version unless `version`) or a new empty draft."""
    if name is None:
        rd.load(None, None, "new")
    else:
        latest = store.latest_version(name)
        rd.load(store.document(name, version), latest, name)
    draft = rd.current()
    assert draft is not None
    rd.sync(draft)
    draft["clean"] = snapshot(draft)


def discard(store: rubric_store.Store) -> None:
    """Throw the draft away and reopen what it was made from."""
    draft = rd.current()
    source = None if draft is None or draft["source"] == "new" else draft["source"]
    open_version(store, source)
    st.session_state[FLASH] = ("ok", ["Changes discarded."])


def _where(loc: tuple) -> str:
    """("criteria", 2, "name") -> "criterion 3 name: "."""
    if len(loc) >= 3 and loc[0] == "criteria" and isinstance(loc[1], int):
        return f"criterion {loc[1] + 1} {str(loc[2]).replace('_', ' ')}: "
    return f"{'.'.join(map(str, loc))}: " if loc else ""


def _save_over(store: rubric_store.Store, actor: str, update_parents: bool) -> None:
    """After a conflict, the author chose to save the draft as the version after the newest one."""
    draft = rd.current()
    assert draft is not None
    name, newer = st.session_state.pop(CONFLICT, (None, None))
    if name == draft["source"] and newer and newer > (draft["base_version"] or 0):
        draft["base_version"] = newer
    _save(store, actor, update_parents)


def _conflict_panel(store: rubric_store.Store, actor: str, draft: dict[str, Any], update: bool) -> None:
    """Someone saved first: compare on the Versions tab, then save over theirs or discard yours."""
    name, newer = st.session_state.get(CONFLICT, (None, None))
    if name != draft["source"] or newer is None or draft["base_version"] is None or newer <= draft["base_version"]:
        return
    st.warning(
        escape_markdown(
            f"{draft['source']} v{newer} was saved while you edited v{draft['base_version']}. Your draft is "
            f"kept. Compare v{newer} on the Versions tab, then save yours as v{newer + 1} (it replaces "
            "their changes where they differ) or press Discard changes to take theirs."
        )
    )
    st.button(f"Save my draft as v{newer + 1}", key="rs_save_over", on_click=_save_over, args=(store, actor, update))


def _save_copy(store: rubric_store.Store, actor: str) -> None:
    """Save-as callback: the draft (with its changes) becomes version 1 of a new name; the original is untouched."""
    name = str(st.session_state.get("rs_copy_name", "")).strip()
    if not re.fullmatch(RUBRIC_NAME_PATTERN, name):
        st.session_state[FLASH] = (
            "error",
            [
                "Not saved: the new name must be lower-case letters, digits, '-' and "
                "'_' (at most 64), e.g. acme-compliance-eu"
            ],
        )
        return
    note = str(st.session_state.get("rs_note", "")).strip() or f"copied from {rd.current()['source']}"  # type: ignore[index]
    _save(store, actor, False, as_name=name, note=note)


def _save(
    store: rubric_store.Store, actor: str, update_parents: bool, as_name: str | None = None, note: str | None = None
) -> None:
    """Save callback: a new version, or the reasons it was refused (the draft is kept then)."""
    draft = rd.current()
    assert draft is not None
    rd.sync(draft)
    parents, problems = inherited(store, draft)
    if problems or rubric_lint.blocks_save(lint(draft, parents)):
        draft["tried"] = True  # every error is shown now, marked, with the count by the button; nothing is written
        return
    try:
        doc = rd.to_document(draft, update_parents)
        base = draft["base_version"]
        if as_name is not None:
            doc, base = doc.model_copy(update={"name": as_name}), None
        result = rubric_actions.save_version(
            store, doc, actor, note if note is not None else st.session_state.get("rs_note", ""), base
        )
    except PermissionDenied as exc:  # roles changed since the page was drawn; the draft stays open
        st.session_state[FLASH] = ("error", [f"Not saved: {exc} Your draft is kept."])
        return
    except RubricSaveError as exc:
        st.session_state[FLASH] = ("error", ["Not saved: " + e for e in exc.errors])
        return
    except RubricConflict as exc:
        st.session_state[FLASH] = ("error", [f"Not saved: {exc}"])
        if as_name is None and draft["base_version"] is not None:
            st.session_state[CONFLICT] = (draft["source"], store.latest_version(draft["source"]))
        return
    except ValidationError as exc:  # a field the lint did not catch
        st.session_state[FLASH] = ("error", [f"Not saved: {_where(e['loc'])}{error_message(e)}" for e in exc.errors()])
        return
    st.session_state.pop(CONFLICT, None)
    open_version(store, result.name)
    st.query_params["rubric"] = result.name
    st.session_state["rubric_pick"] = result.name
    message = (
        f"Saved {result.name} v{result.version}."
        if result.created
        else f"Nothing to save: identical to {result.name} v{result.version}."
    )
    st.session_state[FLASH] = ("ok", [message])
