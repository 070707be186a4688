"""A person fills a reviewer slot: the same typed verdict a model reviewer gives."""

from __future__ import annotations

import streamlit as st

from santa_core.models import Review
from santa_core.reviewers.person import CriterionAnswer, person_review
from santa_core.roles import must_differ
from storage.views import RunView
from ui import identity
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
        return (f"You reviewed slot {other} of this round, so slot {slot} needs someone else: the two reviews of "
                "a round must come from different reviewers.")
    return None


def person_review_form(view: RunView, slot: str) -> Review | None:
    """Per-criterion PASS/FAIL (no default) with a note and a quote; returns the Review when submitted and complete."""
    rnd = view.current_round
    key = f"person_{view.id}_{rnd.round_no}_{slot}"
    st.markdown(f"#### Your review for slot {slot} (round {rnd.round_no})")
    st.caption("Judge the output against the spec with the rubric: choose PASS or FAIL for every criterion. "
               "For a FAIL, say what is wrong and paste the offending text from the output (the fix may change "
               "only the sentence that holds it). The other reviewer's verdict stays hidden until yours is in.")
    with st.expander("Spec", expanded=False):
        st.text(view.spec)
    st.text_area("Output under review", rnd.output_text, disabled=True, height=200, key=f"{key}_output")
    answers: dict[str, CriterionAnswer] = {}
    for c in view.rubric.criteria:
        left, middle, right = st.columns([1, 2, 2])
        result = left.radio(escape_markdown(c.name), ["PASS", "FAIL"], index=None, key=f"{key}_{c.id}",
                            horizontal=True,
                            help=escape_markdown(f"Pass: {c.pass_condition}\n\nFail signal: {c.fail_signal}"))
        note = middle.text_input(f"Note on {escape_markdown(c.name)}", key=f"{key}_{c.id}_detail",
                                 placeholder="What you checked; for a FAIL, what is wrong")
        quote = right.text_input(f"Offending text for {escape_markdown(c.name)}", key=f"{key}_{c.id}_quote",
                                 placeholder="For a FAIL: paste it from the output", disabled=result != "FAIL")
        answers[c.id] = CriterionAnswer(result=result, note=note, quote=quote if result == "FAIL" else "")
    suggestions = st.text_area("Suggestions (one per line, optional)", key=f"{key}_suggestions")
    judged = sum(1 for a in answers.values() if a.result is not None)
    st.caption(f"{judged} of {len(answers)} criteria judged.")
    if not st.button(f"Submit review {slot}", type="primary", key=f"{key}_submit"):
        return None
    review, problems = person_review(view.rubric, rnd.output_text, answers, suggestions)
    for problem in problems:
        st.error(escape_markdown(problem))
    return review
