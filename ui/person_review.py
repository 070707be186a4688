"""A person fills a reviewer slot: the same typed verdict a model reviewer gives."""

from __future__ import annotations

import streamlit as st

from santa_core.models import Review
from santa_core.reviewers.person import CriterionAnswer, person_review
from santa_core.roles import must_differ
from storage.views import RunView
from ui import identity, kept
from ui.safe import escape_markdown


def slot_refusal(view: RunView, slot: str, person_id: str) -> str | None:
    """Why this person may not fill the slot (the storage refuses it too), or None when they may."""
    assignee = view.person_b if slot == "B" else view.person_c
    if assignee and assignee != person_id:
        return f"Slot {slot} is assigned to {identity.display(assignee)}: only they can fill it."
    other = "C" if slot == "B" else "B"
    rnd = view.current_round
    done = None if rnd is None else rnd.reviews.get(other)
    if done is not None and done.reviewer == f"person:{person_id}" and must_differ(person_id):
        return (
            f"You reviewed slot {other} of this round, so slot {slot} needs someone else: the two reviews of "
            "a round must come from different reviewers."
        )
    return None


def same_person_warning(view: RunView, slot: str, person_id: str) -> str | None:
    """Said before the form when this person already filled the round's other slot and may fill this one too
    (the local user of an install without sign-in; with sign-in, `slot_refusal` refuses instead)."""
    other = "C" if slot == "B" else "B"
    rnd = view.current_round
    done = None if rnd is None else rnd.reviews.get(other)
    if done is None or done.reviewer != f"person:{person_id}":
        return None
    return (
        f"You reviewed slot {other} of this round. Two reviews by one person are not independent: if you fill "
        f"slot {slot} too, the run page and the verification record will say so. If someone else can review, "
        "leave this slot to them."
    )


def _all_pass(key: str, ids: list[str]) -> None:
    """The shortcut: every criterion not judged yet becomes PASS; a FAIL already chosen stays."""
    for cid in ids:
        if st.session_state.get(f"{key}_{cid}") is None:
            st.session_state[f"{key}_{cid}"] = "PASS"


def person_review_form(view: RunView, slot: str) -> Review | None:
    """Per-criterion PASS/FAIL (no default) with a note and a quote; returns the Review when submitted and complete."""
    rnd = view.current_round
    key = f"person_{view.id}_{rnd.round_no}_{slot}"
    st.markdown(f"#### Your review for slot {slot} (round {rnd.round_no})")
    if warning := same_person_warning(view, slot, identity.actor()):
        st.warning(escape_markdown(warning))
    st.caption(
        "Judge the output against the spec with the rubric: choose PASS or FAIL for every criterion. "
        "For a FAIL, say what is wrong and paste the offending text from the output (the fix may change "
        "only the sentence that holds it). The other reviewer's verdict stays hidden until yours is in."
    )
    with st.expander("Spec", expanded=False):
        st.text(view.spec)
    st.text_area("Output under review", rnd.output_text, disabled=True, height=200, key=f"{key}_output")
    ids = [c.id for c in view.rubric.criteria]
    st.button(
        "All pass",
        key=f"{key}_all_pass",
        on_click=_all_pass,
        args=(key, ids),
        help="Sets every criterion you have not judged yet to PASS (a FAIL you chose stays). Read each one "
        "before you submit.",
    )
    answers: dict[str, CriterionAnswer] = {}
    for c in view.rubric.criteria:
        for field in ("", "_detail", "_quote"):  # a visit to another page keeps what was judged and typed
            kept.keep(f"{key}_{c.id}{field}")
        left, middle, right = st.columns([1, 2, 2])
        result = left.radio(
            escape_markdown(c.name),
            ["PASS", "FAIL"],
            index=None,
            key=f"{key}_{c.id}",
            horizontal=True,
            help=escape_markdown(f"Pass: {c.pass_condition}\n\nFail signal: {c.fail_signal}"),
        )
        note = middle.text_input(
            f"Note on {escape_markdown(c.name)}",
            key=f"{key}_{c.id}_detail",
            placeholder="What you checked; for a FAIL, what is wrong",
        )
        quote = right.text_input(
            f"Offending text for {escape_markdown(c.name)}",
            key=f"{key}_{c.id}_quote",
            placeholder="For a FAIL: paste it from the output",
            disabled=result != "FAIL",
        )
        answers[c.id] = CriterionAnswer(result=result, note=note, quote=quote if result == "FAIL" else "")
    kept.keep(f"{key}_suggestions")
    suggestions = st.text_area("Suggestions (one per line, optional)", key=f"{key}_suggestions")
    judged = sum(1 for a in answers.values() if a.result is not None)
    st.caption(f"{judged} of {len(answers)} criteria judged.")
    said = st.container()  # above the button, where the eye is when it is clicked
    if not st.button(f"Submit review {slot}", type="primary", key=f"{key}_submit"):
        return None
    review, problems = person_review(view.rubric, rnd.output_text, answers, suggestions)
    for problem in problems:
        said.error(escape_markdown(problem))
    return review
