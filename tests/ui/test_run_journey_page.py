"""AppTest: one run's journey without friction (issue 19). The Reject button says it escalates, the fix
agent can be asked again (and the page says when it cannot), an input error stands next to its field with a
character count, the run page shows escapes and the record only once they apply, its live part polls fast
only while a worker is busy, and names stay as they were when the run was started."""

from __future__ import annotations

import json
import time

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from santa_core.models import EscalationReason, FixEdit, FixPlan, RunStatus
from santa_core.reviewers.doubles import FunctionFixer
from santa_core.run import actions, engine
from santa_core.run.runner import Runner
from storage.runs import RunStore
from tests.ui.test_app import open_app, plain
from tests.ui.test_fix_proposal import drive
from tests.ui.test_run_page import (
    CLEAN,
    EDITOR,
    MODEL_B,
    MODEL_C,
    SPEC,
    as_person,
    awaiting,  # noqa: F401 - a fixture
    keys,
    shipped,  # noqa: F401 - a fixture
    texts,
)
from ui import components, run_view, table_fit

SECTIONS = ("Escapes", "Verification record")


def headings(at: AppTest) -> list[str]:
    return [m.value.lstrip("# ") for m in at.markdown if m.value.startswith("#")]


# --- the decision on a fix ---------------------------------------------------------------------


def test_reject_says_that_it_escalates_and_does(desk_env: RunStore, awaiting: int) -> None:  # noqa: F811
    at = as_person(EDITOR, awaiting)
    reject = at.button(key="reject_fix")
    assert reject.label == "Reject and escalate"
    assert "Escalations page" in reject.help and "ask the fix agent again" in reject.help
    reject.click().run()  # no reason given: refused, nothing recorded
    assert "Say why you reject the fix" in texts(at)
    assert desk_env.load_run(awaiting).state.status == RunStatus.AWAITING_APPROVAL
    at.text_input(key=f"reason_{awaiting}_1").set_value("the tone is wrong")
    at.button(key="reject_fix").click().run()
    assert not at.exception, at.exception
    state = desk_env.load_run(awaiting).state
    assert state.status == RunStatus.ESCALATED and state.escalation_reason == EscalationReason.REJECTED_FIX
    (decision,) = desk_env.get_run_view(awaiting).rounds[0].decisions
    assert (decision.action, decision.actor, decision.reason) == ("reject", EDITOR, "the tone is wrong")


def test_asking_again_replaces_the_proposal_in_the_same_round_with_the_note_recorded(
    desk_env: RunStore,
    awaiting: int,  # noqa: F811 - a fixture
) -> None:  # noqa: F811
    at = as_person(EDITOR, awaiting)
    at.text_input(key=f"reason_{awaiting}_1").set_value("keep the launch year")
    at.button(key="retry_fix").click().run()
    assert not at.exception, at.exception
    # The app's own runner asks the loopback fix agent again, for round 1.
    deadline = time.monotonic() + 60  # generous: a loaded machine, not a timing claim
    while time.monotonic() < deadline and not (
        desk_env.load_round(awaiting, 1).fix_attempts == 2
        and desk_env.load_run(awaiting).state.status == RunStatus.AWAITING_APPROVAL
    ):
        time.sleep(0.1)
    rnd = desk_env.load_round(awaiting, 1)
    assert rnd.fix_attempts == 2 and rnd.proposal is not None and desk_env.load_run(awaiting).state.round == 1
    assert desk_env.load_round(awaiting, 2) is None  # the same round: no new round was started
    (decision,) = desk_env.get_run_view(awaiting).rounds[0].decisions
    assert (decision.action, decision.actor, decision.reason) == ("retry_fix", EDITOR, "keep the launch year")
    (event,) = desk_env.audit.events(action="decision.retry_fix", run_id=awaiting)
    assert event.actor == EDITOR and event.detail == {"round": 1, "reason": "keep the launch year"}


def test_when_the_fix_agent_cannot_be_asked_again_the_page_says_why(desk_env: RunStore) -> None:
    run_id = drive(desk_env, "the fastest rocket", [FixEdit(issue=0, before="DEFECT", after="2018")])
    runner = Runner(
        desk_env,
        lambda name: None,
        lambda name: FunctionFixer(name, lambda r: FixPlan(edits=[FixEdit(issue=0, before="DEFECT", after="1999")])),
        workers=1,
    )
    try:
        for _ in range(actions.MAX_FIX_ATTEMPTS - 1):
            actions.retry_fix(desk_env, run_id, EDITOR)
            assert runner.execute(run_id).status == RunStatus.AWAITING_APPROVAL
    finally:
        runner.shutdown()
    at = as_person(EDITOR, run_id)
    assert "retry_fix" not in keys(at) and "approve_fix" in keys(at)
    assert "made 3 proposals in this round, the most a round allows" in texts(at)


# --- the new-run form --------------------------------------------------------------------------


def order(at: AppTest) -> list[tuple[str, str]]:
    """The main area's elements in page order: (type, key or shown text)."""
    return [(n.type, n.key or plain(getattr(n, "value", ""))[:80]) for n in at.main if not hasattr(n, "children")]


def test_an_input_error_stands_under_its_field_with_a_character_count(desk_env: RunStore) -> None:
    at = open_app()
    at.text_area(key="new_spec").set_value(SPEC)
    at.run()
    assert f"{len(SPEC):,} / 200,000 characters" in [c.value for c in at.caption]  # before any click
    at.text_area(key="new_output").set_value("x" * 200_001)
    at.button(key="start_review").click().run()
    assert not at.exception, at.exception
    page = order(at)
    box = page.index(("text_area", "new_output"))
    assert page[box + 1] == ("caption", ":red[200,001 / 200,000 characters: 1 over the limit]")
    kind, shown = page[box + 2]
    assert kind == "error" and shown.startswith("Output has 200,001 characters; the limit is 200,000")
    start = page.index(("button", "start_review"))
    assert box < start and not any(k == "error" for k, _ in page[:box])  # the spec is fine: no error at it
    by_button = next(shown for kind, shown in page[start + 1 :] if kind == "error")  # after the estimate beside it
    assert "Output: see the message under the box above" in by_button  # and by the button, where
    assert desk_env.list_runs() == []
    at.text_area(key="new_output").set_value(CLEAN).run()  # fixed: the error goes with the next rerun
    assert not at.error


# --- the run page ------------------------------------------------------------------------------


@pytest.fixture
def intervals(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """The run_every each st.fragment of a page was configured with, in order."""
    seen: list[float | None] = []
    real = st.fragment

    def recording(func=None, *, run_every=None):  # noqa: ANN001, ANN202 - st.fragment's own signature
        seen.append(run_every)
        return real(func, run_every=run_every)

    monkeypatch.setattr(st, "fragment", recording)
    return seen


def test_a_run_being_reviewed_polls_fast_and_shows_no_escapes_or_record(
    desk_env: RunStore, intervals: list[float | None]
) -> None:
    run_id = desk_env.create_run(
        SPEC, CLEAN, desk_env.rubrics.resolved("general"), MODEL_B, MODEL_C, MODEL_B, created_by=EDITOR
    )
    state = desk_env.load_run(run_id).state
    claimed = engine.advance(state, engine.Claim())
    assert desk_env.transition(run_id, {state.status}, claimed, "worker", claimed.note)
    at = as_person(EDITOR, run_id)
    assert intervals[-1] == run_view.LIVE_EVERY_S and run_view.LIVE_EVERY_S <= 0.5
    assert not set(SECTIONS) & set(headings(at))
    assert not keys(at, "download_button")


def test_a_shipped_run_polls_no_more_and_shows_escapes_and_record(
    desk_env: RunStore,
    shipped: int,  # noqa: F811 - a fixture
    intervals: list[float | None],
) -> None:  # noqa: F811
    at = as_person(EDITOR, shipped)
    assert intervals[-1] is None
    assert set(SECTIONS) <= set(headings(at))
    assert f"escape_{shipped}_submit" in keys(at)


def test_criterion_tables_show_every_row_and_wrap_long_details() -> None:
    def page() -> None:
        import pandas as pd

        from ui import components

        components.full_table(
            pd.DataFrame([{"criterion": f"c{i}", "result": "FAIL", "detail": "why " * 40} for i in range(14)]),
            wide=("detail",),
        )
        components.full_table(pd.DataFrame([{"criterion": "c", "result": "PASS", "detail": "ok"}]), wide=("detail",))

    at = AppTest.from_function(page).run()
    long, short = at.dataframe
    assert len(long.value) == 14
    widths = {c: v["width"] for c, v in json.loads(long.proto.columns).items() if "width" in v}
    assert set(widths) == {"criterion", "result", "detail"} and sum(widths.values()) <= table_fit.MAIN_PX
    assert widths["detail"] == max(widths.values())  # the long text takes the room the others leave
    assert long.proto.row_height > 64  # Streamlit wraps cell text only in rows taller than 4rem
    assert short.proto.row_height == 0  # short texts keep one-line rows
    assert components.WRAP_LINES >= 3


def test_run_page_tables_are_drawn_whole(
    desk_env: RunStore,
    awaiting: int,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    heights: list[object] = []
    real = st.dataframe

    def recording(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        heights.append(kwargs.get("height", "auto"))
        return real(*args, **kwargs)

    monkeypatch.setattr(st, "dataframe", recording)
    as_person(EDITOR, awaiting)
    assert heights and set(heights) == {"content"}  # no table stops at ten rows in a scroll area


# --- names as they were -----------------------------------------------------------------------


def test_a_new_display_name_shows_at_once_and_a_past_run_keeps_its_starters(desk_env: RunStore) -> None:
    old = desk_env.people.get("local").name
    rubric = desk_env.rubrics.resolved("general")
    before = desk_env.create_run(SPEC, CLEAN, rubric, MODEL_B, MODEL_C, MODEL_B, created_by="local")
    at = open_app("pages/settings.py")
    at.text_input(key="set_name").set_value("Rudolph Red")
    at.button(key="set_save").click().run()
    assert not at.exception, at.exception
    # The sidebar is drawn by app.py before the page saves, so the save reruns the whole script: the page
    # shown is the rerun's (its button no longer clicked). AppTest drops app.py's sidebar after switch_page
    # (see test_escalation_queue.sidebar_text); in a browser that rerun redraws the sidebar with the new name.
    assert at.button(key="set_save").value is False
    assert desk_env.people.get("local").name == "Rudolph Red"
    assert any("Saved" in s.value for s in at.success)
    after = desk_env.create_run(SPEC, CLEAN, rubric, MODEL_B, MODEL_C, MODEL_B, created_by="local")
    assert f"started by {old} (local)" in texts(as_person(None, before))
    assert "started by Rudolph Red (local)" in texts(as_person(None, after))


# --- the Rubrics page --------------------------------------------------------------------------


def test_the_rubrics_page_lints_an_unchanged_draft_once(desk_env: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from santa_core.rubrics import lint as rubric_lint
    from ui import rubric_findings

    calls: list[int] = []
    real = rubric_lint.lint
    monkeypatch.setattr(rubric_lint, "lint", lambda *a, **k: calls.append(1) or real(*a, **k))
    rubric_findings._lint_of.clear()
    at = open_app("pages/rubrics.py")
    linted = len(calls)
    assert linted >= 1
    at.run()  # a rerun (another widget, a visit back): the editor draws at once, with the findings it had
    assert len(calls) == linted and not at.exception
