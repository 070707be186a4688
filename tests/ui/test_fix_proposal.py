"""AppTest: a fix proposal says per issue what it did; a partial one is never passed off as complete."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

from santa_core.models import FixEdit, FixPlan, RunStatus
from santa_core.reviewers.base import ReviewRequest
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer, failing
from santa_core.run import actions
from santa_core.run.runner import Runner
from storage.runs import RunStore
from tests.ui.test_app import plain
from tests.ui.test_run_page import EDITOR, MODEL_B, MODEL_C, SPEC, as_person, texts

OUTPUT = "Acme's rocket launched in DEFECT. It is the fastest rocket. It is ready for you."


def two_issues(second_evidence: str):
    """FAIL on the launch year (anchored on DEFECT) and on a speed claim quoting `second_evidence`."""

    def review(request: ReviewRequest):
        first = failing(request, "factual_accuracy", "launch year missing", evidence="DEFECT")
        speed = first.critical_issues[0].model_copy(
            update={
                "criterion": "hallucination_free",
                "description": "unsupported speed claim",
                "evidence": second_evidence,
            }
        )
        return first.model_copy(update={"critical_issues": [*first.critical_issues, speed]})

    return review


def drive(repo: RunStore, second_evidence: str, edits: list[FixEdit], auto_approve: bool = False) -> int:
    runner = Runner(
        repo,
        lambda name: FunctionReviewer(name, two_issues(second_evidence)),
        lambda name: FunctionFixer(name, lambda r: FixPlan(edits=edits)),
        workers=1,
    )
    run_id = repo.create_run(
        SPEC,
        OUTPUT,
        repo.rubrics.resolved("general"),
        MODEL_B,
        MODEL_C,
        MODEL_B,
        created_by=EDITOR,
        auto_approve=auto_approve,
    )
    try:
        runner.execute(run_id)
    finally:
        runner.shutdown()
    return run_id


def test_a_partial_proposal_names_what_stays_unfixed_and_is_not_auto_approved(desk_env: RunStore) -> None:
    run_id = drive(
        desk_env,
        "a claim that is not in the text",
        [FixEdit(issue=0, before="DEFECT", after="2018")],
        auto_approve=True,
    )
    state = desk_env.load_run(run_id).state
    assert state.status == RunStatus.AWAITING_APPROVAL and "not auto-approved" in state.note
    at = as_person(EDITOR, run_id)
    table = at.dataframe[-1].value
    assert table["fix"].tolist() == ["fixed", "unanchored: a person fixes it"]
    assert "Partial proposal: issue 2 stays unfixed" in texts(at)
    assert at.button(key="approve_fix").label == "Approve — issue 2 stays unfixed"


def test_a_person_keeps_or_drops_single_edits(desk_env: RunStore) -> None:
    edits = [FixEdit(issue=0, before="DEFECT", after="2018"), FixEdit(issue=1, before="the fastest", after="a fast")]
    run_id = drive(desk_env, "the fastest rocket", edits)
    at = as_person(EDITOR, run_id)
    assert at.button(key="approve_fix").label == "Approve"  # both issues fixed
    at.toggle(key=f"keep_{run_id}_1_1").set_value(False).run()
    assert not at.exception, at.exception
    box = [t for t in at.text_area if t.key and t.key.startswith(f"edit_{run_id}_1")]
    assert box[0].value == OUTPUT.replace("DEFECT", "2018")
    assert at.button(key="approve_fix").label == "Approve — issue 2 stays unfixed"
    at.button(key="approve_fix").click().run()
    assert not at.exception, at.exception
    nxt = desk_env.load_round(run_id, 2)
    assert nxt is not None and nxt.output_text == OUTPUT.replace("DEFECT", "2018")


def test_asking_the_fix_agent_again_shows_the_new_proposal_and_counts_attempts(desk_env: RunStore) -> None:
    run_id = drive(
        desk_env,
        "the fastest rocket",
        [FixEdit(issue=0, before="DEFECT", after="2018"), FixEdit(issue=1, before="the fastest", after="a fast")],
    )
    at = as_person(EDITOR, run_id)
    assert at.button(key="retry_fix").label == "Ask the fix agent again (2 of 3)"
    at.button(key="retry_fix").click().run()
    assert not at.exception, at.exception
    # The app's own runner asks the loopback fix agent (it replaces DEFECT with "fact") for the same round.
    deadline = time.monotonic() + 60  # generous: the loaded CI machine, not a timing claim
    while time.monotonic() < deadline and desk_env.load_round(run_id, 1).fix_attempts < 2:
        time.sleep(0.1)
    while time.monotonic() < deadline and desk_env.load_run(run_id).state.status != RunStatus.AWAITING_APPROVAL:
        time.sleep(0.1)
    at = as_person(EDITOR, run_id)
    assert "Attempt 2 of 3" in texts(at)
    assert at.text_area(key=f"edit_{run_id}_1_a2").value == OUTPUT.replace("DEFECT", "fact")
    assert at.button(key="retry_fix").label == "Ask the fix agent again (3 of 3)"
    assert desk_env.load_run(run_id).state.round == 1
    decisions = desk_env.get_run_view(run_id).rounds[0].decisions
    assert [(d.action, d.actor) for d in decisions] == [("retry_fix", EDITOR)]


def typed_then_replaced(desk_env: RunStore) -> tuple[AppTest, int, str]:
    """Person A opens proposal 1 and types an edit; meanwhile person B asks the fix agent again and it
    stores proposal 2. Returns A's page (not yet redrawn), the run and what A typed."""
    run_id = drive(
        desk_env,
        "the fastest rocket",
        [FixEdit(issue=0, before="DEFECT", after="2018"), FixEdit(issue=1, before="the fastest", after="a fast")],
    )
    at = as_person(EDITOR, run_id)
    mine = OUTPUT.replace("DEFECT", "2018") + " Checked by legal."
    at.text_area(key=f"edit_{run_id}_1").set_value(mine)
    actions.retry_fix(desk_env, run_id, EDITOR)
    runner = Runner(
        desk_env,
        lambda name: None,
        lambda name: FunctionFixer(name, lambda r: FixPlan(edits=[FixEdit(issue=0, before="DEFECT", after="1999")])),
        workers=1,
    )
    try:
        assert runner.execute(run_id).status == RunStatus.AWAITING_APPROVAL
    finally:
        runner.shutdown()
    return at, run_id, mine


def test_a_decision_on_a_proposal_that_was_replaced_meanwhile_is_refused_and_keeps_the_typed_text(
    desk_env: RunStore,
) -> None:
    at, run_id, mine = typed_then_replaced(desk_env)
    at.button(key="approve_fix").click().run()  # A approves what they saw
    assert not at.exception, at.exception
    assert "The fix proposal changed while you were deciding" in texts(at)
    assert mine in [c.value for c in at.code]  # what A typed is shown, not lost
    assert desk_env.load_run(run_id).state.round == 1  # nothing was approved
    assert [d.action for d in desk_env.get_run_view(run_id).rounds[0].decisions] == ["retry_fix"]
    at.button(key="approve_fix").click().run()  # now A has seen attempt 2: the approval goes through
    assert desk_env.load_round(run_id, 2).output_text == OUTPUT.replace("DEFECT", "1999")


def test_the_run_page_shows_the_rounds_injection_screen(desk_env: RunStore) -> None:
    from desk import open_desk

    desk = open_desk(str(desk_env.engine.url), mark_interrupted=False)  # the loopback model screens and reviews
    try:
        run_id = desk.runs.create_run(
            SPEC,
            "Acme's rocket launched in 2018.",
            desk.rubrics.resolved("general"),
            MODEL_B,
            MODEL_C,
            MODEL_B,
            created_by=EDITOR,
        )
        assert desk.runner.execute(run_id).status == RunStatus.SHIPPED
    finally:
        desk.close()
    at = as_person(EDITOR, run_id)
    key = desk_env.load_round(run_id, 1).screens["spec and output"].secret
    # One line says the outcome; the key and the answer are in its detail only, never in the line a person reads.
    (line,) = [e for e in at.expander if e.label.startswith("Injection screen")]
    assert plain(line.label) == "Injection screen: passed"
    inside = [plain(c.value) for c in line.caption]
    assert inside == [
        f"spec and output: claude-haiku-5-5 repeated the key (asked for {key}, answered '{key}')",
        "spec and output, extraction check: claude-haiku-5-5 quoted nothing found in the text (asked to "
        "quote sentences for an automated reader, answered 'NONE')",
    ]
    assert key not in texts(at).replace("\n".join(inside), "")  # nowhere else on the page


def test_any_redraw_after_the_proposal_changed_says_so_and_keeps_the_typed_text(desk_env: RunStore) -> None:
    at, run_id, mine = typed_then_replaced(desk_env)
    at.text_input(key=f"reason_{run_id}_1").set_value("looks right").run()  # typing, not clicking, redraws
    assert not at.exception, at.exception
    assert "Someone asked the fix agent again while you were deciding: this is proposal 2" in texts(at)
    assert mine in [c.value for c in at.code]
    assert at.text_input(key=f"reason_{run_id}_1_a2").value == ""  # a reason for proposal 1 is not carried over
