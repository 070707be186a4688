"""AppTest: one card per edit; refused edits explained and takeable; an Approve label true to the box."""

from __future__ import annotations

from santa_core.models import FixEdit
from storage.runs import RunStore
from tests.ui.test_fix_proposal import OUTPUT, drive
from tests.ui.test_run_page import EDITOR, VIEWER, as_person, texts

FIX_YEAR = FixEdit(issue=0, before="DEFECT", after="2018")
MISLABELLED = FixEdit(issue=0, before="the fastest", after="a fast")
"""Issue 2's fix labelled as issue 1's: refused, its 'before' text lies outside issue 1's sentence."""


def box(at, run_id: int):
    return next(t for t in at.text_area if t.key and t.key.startswith(f"edit_{run_id}_1"))


def test_a_refused_edit_is_explained_and_taken_into_the_box_as_the_persons_edit(desk_env: RunStore) -> None:
    run_id = drive(desk_env, "the fastest rocket", [FIX_YEAR, MISLABELLED])
    at = as_person(EDITOR, run_id)
    shown = texts(at)
    assert (
        "Refused: it reaches beyond the sentence that holds the issue's evidence. It changes the quoted text "
        "of issue 2."
    ) in shown
    table = at.dataframe[-1].value
    assert "no edit was proposed for it" not in table["why"].tolist()  # issue 2's edit was proposed, and refused
    assert "refused" in table["why"].tolist()[1]
    assert at.button(key="approve_fix").label == "Approve — issue 2 stays unfixed"
    at.button(key=f"take_{run_id}_1_0").click().run()
    assert not at.exception, at.exception
    both = OUTPUT.replace("DEFECT", "2018").replace("the fastest", "a fast")
    assert box(at, run_id).value == both
    assert "Taken: the box holds this edit as yours." in texts(at)
    assert at.button(key="approve_fix").label == "Approve"  # neither quote is in the box now
    at.button(key="approve_fix").click().run()
    assert not at.exception, at.exception
    decisions = desk_env.get_run_view(run_id).rounds[0].decisions
    assert [(d.action, d.after_text) for d in decisions] == [("edit", both)]
    assert desk_env.load_round(run_id, 2).output_text == both


def test_after_a_hand_edit_the_label_names_the_issue_whose_quote_is_still_in_the_box(desk_env: RunStore) -> None:
    run_id = drive(desk_env, "the fastest rocket", [FIX_YEAR])
    at = as_person(EDITOR, run_id)
    assert at.button(key="approve_fix").label == "Approve — issue 2 stays unfixed"
    box(at, run_id).set_value(OUTPUT.replace("DEFECT", "2018") + " Checked by legal.").run()
    assert at.button(key="approve_fix").label == "Approve — issue 2 stays unfixed"  # "the fastest rocket" is there
    box(at, run_id).set_value(OUTPUT.replace("DEFECT", "2018").replace("the fastest", "a fast")).run()
    assert at.button(key="approve_fix").label == "Approve"
    box(at, run_id).set_value(OUTPUT.replace("the fastest", "a fast")).run()  # the year put back by hand
    assert at.button(key="approve_fix").label == "Approve — issue 1 stays unfixed"


def test_each_edit_is_a_card_naming_its_issue_and_criterion(desk_env: RunStore) -> None:
    run_id = drive(desk_env, "the fastest rocket", [FIX_YEAR, FixEdit(issue=1, before="the fastest", after="a fast")])
    at = as_person(EDITOR, run_id)
    names = {c.id: c.name for c in desk_env.get_run_view(run_id).rubric.criteria}
    shown = texts(at)
    assert f"Issue 1 · {names['factual_accuracy']}" in shown and f"Issue 2 · {names['hallucination_free']}" in shown
    diffs = [c.value for c in at.code if c.language == "diff"]
    assert "- Acme's rocket launched in DEFECT.\n+ Acme's rocket launched in 2018." in diffs
    assert "- It is the fastest rocket.\n+ It is a fast rocket." in diffs
    assert [t.key for t in at.toggle] == [f"keep_{run_id}_1_0", f"keep_{run_id}_1_1"]


def test_a_viewer_sees_the_cards_but_no_toggle_and_no_take_button(desk_env: RunStore) -> None:
    # The one door of a write is approve_fix, which checks the role; the page offers no control to a viewer either.
    run_id = drive(desk_env, "the fastest rocket", [FIX_YEAR, MISLABELLED])
    at = as_person(VIEWER, run_id)
    assert "Refused: it reaches beyond the sentence" in texts(at)
    assert "- Acme's rocket launched in DEFECT.\n+ Acme's rocket launched in 2018." in [c.value for c in at.code]
    assert list(at.toggle) == [] and not [b for b in at.button if (b.key or "").startswith("take_")]
