"""One criterion in the Rubrics page's editor: its expander with the lint about it, its fields, its deterministic
check, and its buttons (move, duplicate, retire, remove); read only, the same fields as text."""

from __future__ import annotations

from typing import Any

import streamlit as st

from santa_core.checks import forms as cc
from santa_core.checks.forms import describe_check
from santa_core.models import CATEGORIES
from santa_core.rubrics import lint as rubric_lint
from ui import rubric_draft as rd
from ui.rubric_findings import MARK, finding_text, mark_label, show_finding
from ui.safe import escape_markdown

SEVERITIES = ("critical", "suggestion")


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


def criterion_text(i: int, c: dict[str, Any], findings: list[rubric_lint.LintFinding]) -> None:
    label = _criterion_label(i, c)
    with st.expander(label, key=rd.key(c["uid"], "box_ro")):
        for f in findings:
            (st.error if f.level == "error" else st.warning)(escape_markdown(finding_text(f)))
        third = " · high-risk: a third reviewer judges it too" if c.get("third_reviewer") else ""
        st.caption(escape_markdown(f"Category: {c['category']} · severity: {c['severity']}{third}"))
        st.markdown("**Pass condition**")
        st.text(c["pass_condition"])
        st.markdown("**Fail signal**")
        st.text(c["fail_signal"])
        check = rd.check_of(c)
        st.caption(escape_markdown(f"Deterministic check: {describe_check(check) if check else 'none'}"))


def criterion_box(
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
            show_finding(f)
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
        return mark_label(text, rd.key(uid, field), marked)

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
        mark_label("Deterministic check", rd.key(uid, "check_type"), marked),
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
        _check_field(rd.check_key(uid, kind, f.name), f, mark_label(f.label, rd.check_key(uid, kind, f.name), marked))


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
