"""The Rubrics page's editor: rubric header, one expander per criterion with its lint, and Save.

Lint runs on every rerun and is shown next to the criterion it is about; errors block saving,
warnings do not. Saving creates a new immutable version (storage refuses a stale or broken one).
"""

from __future__ import annotations

import json
import re
from typing import Any

import streamlit as st
from pydantic import TypeAdapter, ValidationError

from santa_core.checks import error_message
from santa_core.checks import forms as cc
from santa_core.checks.forms import describe_check
from santa_core.models import CATEGORIES, RUBRIC_NAME_PATTERN, Criterion, RubricDraft
from santa_core.roles import PermissionDenied
from santa_core.rubrics import actions as rubric_actions
from santa_core.rubrics import lint as rubric_lint
from santa_core.rubrics import store as rubric_store
from santa_core.rubrics.store import RubricConflict, RubricSaveError
from ui import kept
from ui import rubric_draft as rd
from ui.safe import escape_markdown

SEVERITIES = ("critical", "suggestion")
FLASH = "studio_flash"
CONFLICT = "studio_conflict"
"""Set after a refused save: (rubric name, the newer version someone else saved); cleared on load."""
DOMAINS = ("general", "content", "code", "compliance")
MARK = ":material/block:"
"""Marks a field in error, its message, and the criterion holding it."""


def snapshot(draft: dict[str, Any]) -> str:
    """A comparable picture of the draft, to tell whether it has unsaved changes."""
    return json.dumps(rd.to_draft(draft).model_dump(), sort_keys=True)


def is_dirty(draft: dict[str, Any]) -> bool:
    """Whether the draft differs from what was loaded."""
    return snapshot(draft) != draft.get("clean")


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
        _criterion(i, c, rubric_lint.for_criterion(shown, i), len(draft["criteria"]), marked)
    st.button(":material/add: Add criterion", key="rs_add", on_click=rd.add_criterion)
    _save_panel(draft, store, actor, findings, shown, parent_problems)
    return findings


def visible(draft: dict[str, Any], findings: list[rubric_lint.LintFinding]) -> list[rubric_lint.LintFinding]:
    """Warnings, and the errors the author acted on: their field was changed, or a save was tried."""
    return [
        f for f in findings if f.level == "warning" or rd.acted_on(draft, rd.finding_widget(draft, f.index, f.field))
    ]


def _marked(label: str, widget: str, marked: set[str]) -> str:
    """A field's label, marked when an error about it is shown."""
    return f"{MARK} {label}" if widget in marked else label


def _show(f: rubric_lint.LintFinding) -> None:
    """One finding as a message: errors in red with the mark, warnings in yellow."""
    if f.level == "error":
        st.error(escape_markdown(_finding_text(f)), icon=MARK)
    else:
        st.warning(escape_markdown(_finding_text(f)))


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
        _criterion_text(i, c, rubric_lint.for_criterion(findings, i))
    return findings


def _criterion_label(i: int, c: dict[str, Any]) -> str:
    """ "1. Name · `id`": the name as people read it, the id as code (what a file and the command line name it).
    Escaped: names and ids come from authors and imported files, and a label is rendered as markdown."""
    cid = str(c["id"] or "")
    shown = f"`{cid}`" if cid and "`" not in cid and cid.isprintable() else escape_markdown(cid or "(no id)")
    return (
        escape_markdown(f"{i + 1}. {c['name'] or '(no name)'}")
        + f" · {shown}"
        + (" · retired" if c["retired"] else "")
        + (" · third reviewer" if c.get("third_reviewer") else "")
    )


def _criterion_text(i: int, c: dict[str, Any], findings: list[rubric_lint.LintFinding]) -> None:
    label = _criterion_label(i, c)
    with st.expander(label, key=rd.key(c["uid"], "box_ro")):
        for f in findings:
            (st.error if f.level == "error" else st.warning)(escape_markdown(_finding_text(f)))
        third = " · high-risk: a third reviewer judges it too" if c.get("third_reviewer") else ""
        st.caption(escape_markdown(f"Category: {c['category']} · severity: {c['severity']}{third}"))
        st.markdown("**Pass condition**")
        st.text(c["pass_condition"])
        st.markdown("**Fail signal**")
        st.text(c["fail_signal"])
        check = rd.check_of(c)
        st.caption(escape_markdown(f"Deterministic check: {describe_check(check) if check else 'none'}"))


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
            _marked("Rubric name", rd.header_key("name"), marked),
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
            _marked("Domain", rd.header_key("domain"), marked),
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
        _marked("Extends (base first, then extensions)", rd.header_key("extends"), marked),
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
        _show(f)


def _pins(draft: dict[str, Any]) -> list[str]:
    pinned = {r.partition("@")[0]: r for r in draft["pinned"]}
    return [pinned.get(n, f"{n} (latest)") for n in draft["header"]["extends"]]


def _finding_text(f: rubric_lint.LintFinding) -> str:
    field = (f.field or "").replace("_", " ").replace(".", " ")
    where = f"{field}: " if field and field not in f.message.replace(".", " ") else ""  # the message may name it
    return f"{'Error' if f.level == 'error' else 'Warning'} — {where}{f.message}"


def _criterion(
    i: int, c: dict[str, Any], findings: list[rubric_lint.LintFinding], count: int, marked: set[str]
) -> None:
    errors = [f for f in findings if f.level == "error"]
    mark = f"{MARK} " if errors else (":material/warning: " if findings else "")
    # escape_markdown(): names come from authors and imported files; a label is rendered as markdown.
    label = mark + _criterion_label(i, c)
    # A fixed key keeps the expander's identity (and so its open/closed state in the browser) while
    # its label changes with the lint marks as the author types.
    with st.expander(label, expanded=bool(errors) or not c["id"], key=rd.key(c["uid"], "box")):
        for f in findings:
            _show(f)
        if c["retired"]:
            st.info(
                "Retired: kept in this rubric (its id stays reserved) but no longer judged. Restore to judge it again."
            )
        _criterion_fields(c, marked)
        _check_form(c, marked)
        _criterion_buttons(i, c, count)


def _criterion_fields(c: dict[str, Any], marked: set[str]) -> None:
    uid = c["uid"]

    def label(text: str, field: str) -> str:
        return _marked(text, rd.key(uid, field), marked)

    a, b = st.columns(2)
    a.text_input(
        label("Id", "id"),
        key=rd.key(uid, "id"),
        max_chars=64,
        help="Lower-case letters, digits, '-' and '_'; "
        "reviewers cite it and failures are counted by it, so keep it stable.",
    )
    b.text_input(label("Name", "name"), key=rd.key(uid, "name"))
    categories = list(dict.fromkeys([*CATEGORIES, c["category"]] if c["category"] else CATEGORIES))
    a.selectbox(
        label("Category", "category"),
        categories,
        key=rd.key(uid, "category"),
        accept_new_options=True,
        help="One of the method's categories, or type a custom one.",
    )
    b.selectbox(
        label("Severity", "severity"),
        SEVERITIES,
        key=rd.key(uid, "severity"),
        help="critical: a failure blocks shipping. suggestion: reported, never blocks.",
    )
    st.checkbox(
        label("High-risk: a third reviewer judges it too", "third_reviewer"),
        key=rd.key(uid, "third_reviewer"),
        help="Runs on this rubric ask a third model (reviewer D) to judge the high-risk criteria as well; a run "
        "ships only when B, C and D all pass. D reads only these criteria, so it costs a fraction of B or C.",
    )
    st.text_area(
        label("Pass condition", "pass_condition"),
        key=rd.key(uid, "pass_condition"),
        height=80,
        help="What a passing output does, stated so two reviewers would agree: name the things to count or find.",
    )
    st.text_area(
        label("Fail signal", "fail_signal"),
        key=rd.key(uid, "fail_signal"),
        height=80,
        help="What a reviewer sees in an output that fails it: the concrete evidence to quote.",
    )


def _check_form(c: dict[str, Any], marked: set[str]) -> None:
    uid = c["uid"]
    kinds = [rd.NO_CHECK, *cc.CHECK_TYPES]
    kind = st.selectbox(
        _marked("Deterministic check", rd.key(uid, "check_type"), marked),
        kinds,
        key=rd.key(uid, "check_type"),
        format_func=lambda k: "none" if k == rd.NO_CHECK else cc.CHECK_SPECS[k].title,
        help="Runs before the reviewers, on the exact text; a failed check of a critical "
        "criterion blocks shipping even if both reviewers pass it.",
    )
    if kind == rd.NO_CHECK:
        return
    spec = cc.CHECK_SPECS[kind]
    st.caption(escape_markdown(spec.explanation))
    for f in spec.fields:
        _check_field(rd.check_key(uid, kind, f.name), f, _marked(f.label, rd.check_key(uid, kind, f.name), marked))


def _check_field(widget: str, f: Any, label: str) -> None:
    if f.kind == "lines":
        st.text_area(label, key=widget, height=100, help=(f.help + " One per line.").strip())
    elif f.kind == "int":
        st.number_input(label, key=widget, min_value=0, step=1, help=f.help or None)
    elif f.kind == "float":
        st.number_input(label, key=widget, min_value=0.0, step=0.5, help=f.help or None)
    elif f.kind == "bool":
        st.checkbox(label, key=widget, help=f.help or None)
    else:
        st.text_input(label, key=widget, help=f.help or None)


def _criterion_buttons(i: int, c: dict[str, Any], count: int) -> None:
    uid = c["uid"]
    cols = st.columns(5)
    cols[0].button(
        ":material/arrow_upward: Up", key=rd.key(uid, "up"), disabled=i == 0, on_click=rd.move, args=(uid, -1)
    )
    cols[1].button(
        ":material/arrow_downward: Down",
        key=rd.key(uid, "down"),
        disabled=i == count - 1,
        on_click=rd.move,
        args=(uid, 1),
    )
    cols[2].button("Duplicate", key=rd.key(uid, "dup"), on_click=rd.duplicate, args=(uid,))
    cols[3].button(
        "Restore" if c["retired"] else "Retire",
        key=rd.key(uid, "retire"),
        on_click=rd.toggle_retired,
        args=(uid,),
        help="Retired criteria stay in the rubric (id reserved) but are not judged.",
    )
    cols[4].button(
        "Remove",
        key=rd.key(uid, "remove"),
        on_click=rd.remove,
        args=(uid,),
        help="Drop it from this draft. Saved versions keep it; Discard changes brings it back.",
    )


def _save_panel(
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
