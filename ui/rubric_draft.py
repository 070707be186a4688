"""The rubric being edited, kept in session state, and the widget keys that hold its fields.

Every field of the draft lives in a widget key (`rc_<uid>_<field>` for criteria, `rs_<field>`
for the rubric), so edits survive reruns and reordering: a criterion's uid never changes while
the draft is open. `sync()` copies widget values into the draft at the start of each run (and
seeds missing keys from the draft), so leaving the page and coming back loses nothing.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from santa_core.checks import forms as cc
from santa_core.models import CriterionDraft, RubricDocument, RubricDraft

STATE = "studio"
CRITERION_FIELDS = (
    "id",
    "name",
    "category",
    "severity",
    "pass_condition",
    "fail_signal",
    "check_type",
    "third_reviewer",
)
HEADER_FIELDS = ("name", "domain", "description", "extends", "note")
NO_CHECK = "none"


def key(uid: str, field: str) -> str:
    """Widget key of one criterion field."""
    return f"rc_{uid}_{field}"


def check_key(uid: str, kind: str, field: str) -> str:
    """Widget key of one field of a check form (per type, so switching type keeps values)."""
    return f"rc_{uid}_chk_{kind}_{field}"


def header_key(field: str) -> str:
    """Widget key of a rubric-level field."""
    return f"rs_{field}"


def _criterion_state(c: Any, uid: str) -> dict[str, Any]:
    check = c.check or None
    kind = str(check.get("type")) if check else NO_CHECK
    return {
        "uid": uid,
        "id": c.id,
        "name": c.name,
        "category": c.category,
        "severity": c.severity,
        "pass_condition": c.pass_condition,
        "fail_signal": c.fail_signal,
        "check_type": kind if kind in cc.CHECK_TYPES else NO_CHECK,
        "checks": {kind: cc.form_values(check)} if check and kind in cc.CHECK_TYPES else {},
        "retired": c.retired,
        "third_reviewer": c.third_reviewer,
    }


def load(doc: RubricDocument | None, base_version: int | None, source: str) -> None:
    """Start editing `doc` (None: a new, empty rubric); forgets any earlier draft's widgets."""
    for k in [k for k in st.session_state if str(k).startswith(("rc_", "rs_", "_kept_rs_", "studio_conflict"))]:
        del st.session_state[k]
    doc = doc or RubricDocument(name="new-rubric", extends=["general"])
    criteria = [_criterion_state(c, f"k{i}") for i, c in enumerate(doc.criteria)]
    st.session_state[STATE] = {
        "source": source,
        "base_version": base_version,
        "header": {
            "name": doc.name if base_version else "",
            "domain": doc.domain,
            "description": doc.description,
            "extends": [r.partition("@")[0] for r in doc.extends],
            "note": "",
        },
        "pinned": list(doc.extends),
        "criteria": criteria,
        "next": len(criteria),
        # Why: an error is shown only once the author acted on its field (typed in it) or tried to save, so a
        # new rubric or criterion does not open in red before anything was typed.
        "touched": set(),
        "tried": False,
    }


def current() -> dict[str, Any] | None:
    """The open draft, if any."""
    return st.session_state.get(STATE)


def sync(draft: dict[str, Any]) -> None:
    """Widget values -> draft, and draft -> widget keys that are missing (first run, or after a page switch);
    a widget whose value changed is remembered as touched."""
    touched = draft.setdefault("touched", set())
    for field in HEADER_FIELDS:
        _sync_one(header_key(field), draft["header"], field, touched)
    for c in draft["criteria"]:
        for field in CRITERION_FIELDS:
            _sync_one(key(c["uid"], field), c, field, touched)
        kind = c["check_type"]
        if kind != NO_CHECK:
            values = c["checks"].setdefault(kind, cc.form_values({"type": kind}))
            for f in cc.CHECK_SPECS[kind].fields:
                _sync_check_field(check_key(c["uid"], kind, f.name), values, f, touched)


def _sync_one(widget: str, target: dict[str, Any], field: str, touched: set[str]) -> None:
    if widget not in st.session_state:
        st.session_state[widget] = target[field]
        return
    if st.session_state[widget] != target[field]:
        touched.add(widget)
    target[field] = st.session_state[widget]


def _sync_check_field(widget: str, values: dict[str, Any], field: Any, touched: set[str]) -> None:
    """Like `_sync_one`; a "lines" field is a list in the draft and one-per-line text in its widget."""
    if field.kind != "lines":
        _sync_one(widget, values, field.name, touched)
    elif widget in st.session_state:
        lines = [line.strip() for line in str(st.session_state[widget]).splitlines() if line.strip()]
        if lines != values.get(field.name):
            touched.add(widget)
        values[field.name] = lines
    else:
        st.session_state[widget] = "\n".join(values.get(field.name) or [])


def finding_widget(draft: dict[str, Any], index: int | None, field: str | None) -> str | None:
    """The widget a lint finding is about (None: the rubric as a whole, e.g. "no active criterion")."""
    if index is None:
        return header_key(field) if field in HEADER_FIELDS else None
    c = draft["criteria"][index]
    if field in CRITERION_FIELDS:
        return key(c["uid"], field)
    if field and field.startswith("check") and c["check_type"] != NO_CHECK:
        name = field.partition(".")[2].partition(".")[0]
        names = {f.name for f in cc.CHECK_SPECS[c["check_type"]].fields}
        return check_key(c["uid"], c["check_type"], name) if name in names else key(c["uid"], "check_type")
    return None


def acted_on(draft: dict[str, Any], widget: str | None) -> bool:
    """Whether the author changed this widget or tried to save: only then is an error about it shown."""
    return bool(draft.get("tried")) or (widget is not None and widget in draft.get("touched", ()))


def to_draft(draft: dict[str, Any]) -> RubricDraft:
    """The linter's view of the draft."""
    h = draft["header"]
    return RubricDraft(
        name=h["name"].strip(),
        domain=h["domain"].strip(),
        description=h["description"],
        extends=list(h["extends"]),
        criteria=[_criterion_draft(c) for c in draft["criteria"]],
    )


def check_of(c: dict[str, Any]) -> dict | None:
    """The check dict of a criterion's form, or None."""
    if c["check_type"] == NO_CHECK:
        return None
    return cc.check_from_form(c["check_type"], c["checks"].get(c["check_type"], {}))


def _criterion_draft(c: dict[str, Any]) -> CriterionDraft:
    return CriterionDraft(
        id=c["id"].strip(),
        name=c["name"].strip(),
        category=(c["category"] or "").strip(),
        severity=c["severity"],
        pass_condition=c["pass_condition"].strip(),
        fail_signal=c["fail_signal"].strip(),
        check=check_of(c),
        retired=c["retired"],
        third_reviewer=bool(c.get("third_reviewer")),
    )


def to_document(draft: dict[str, Any], update_parents: bool) -> RubricDocument:
    """The document to save; parents kept at their pinned versions unless asked to update."""
    d = to_draft(draft)
    pinned = {r.partition("@")[0]: r for r in draft["pinned"]}
    extends = [name if update_parents else pinned.get(name, name) for name in d.extends]
    return RubricDocument.model_validate(
        {
            **d.model_dump(exclude={"extends", "criteria"}),
            "extends": extends,
            "criteria": [c.model_dump() for c in d.criteria],
        }
    )


# --- structural edits (button callbacks: they run before the next script run) ----------------


def _synced() -> dict[str, Any]:
    """The draft with the latest widget values (callbacks run before the script re-reads them)."""
    draft = current()
    assert draft is not None
    sync(draft)
    return draft


def add_criterion() -> None:
    """Append an empty criterion."""
    draft = _synced()
    uid = f"k{draft['next']}"
    draft["next"] += 1
    empty = CriterionDraft(category="compliance")
    draft["criteria"].append(_criterion_state(empty, uid))


def move(uid: str, step: int) -> None:
    """Move a criterion up (-1) or down (+1)."""
    items = _synced()["criteria"]
    i = next(n for n, c in enumerate(items) if c["uid"] == uid)
    j = i + step
    if 0 <= j < len(items):
        items[i], items[j] = items[j], items[i]


def duplicate(uid: str) -> None:
    """Insert a copy below (with what was just typed), with a new id the author then edits."""
    draft = _synced()
    items = draft["criteria"]
    i = next(n for n, c in enumerate(items) if c["uid"] == uid)
    copy = {**items[i], "checks": {k: dict(v) for k, v in items[i]["checks"].items()}}
    copy["uid"] = f"k{draft['next']}"
    draft["next"] += 1
    copy["id"] = f"{items[i]['id']}_copy"[:64]
    copy["name"] = f"{items[i]['name']} (copy)"
    copy["retired"] = False
    items.insert(i + 1, copy)


def toggle_retired(uid: str) -> None:
    """Retire a criterion (kept, no longer judged) or bring it back."""
    c = next(c for c in _synced()["criteria"] if c["uid"] == uid)
    c["retired"] = not c["retired"]


def remove(uid: str) -> None:
    """Drop a criterion from the draft (saved versions keep it)."""
    draft = _synced()
    draft["criteria"] = [c for c in draft["criteria"] if c["uid"] != uid]
    for k in [k for k in st.session_state if str(k).startswith(f"rc_{uid}_")]:
        del st.session_state[k]
