"""The run page of a run the model provider failed (issue 34, point 4), driven with AppTest.

The desk's real adapters talk to the loopback Messages API, whose known-answer screen answers 500: the page says
"could not be reviewed" and which call failed, never NAUGHTY or "a reviewer failed"; the reviewer columns say they
were not asked; Try again is on the page for those who may, queues a fresh round, and with the provider answering
again the run ships. A viewer and a run over budget get the reason instead of the button; the Escalations page shows
the same words and refuses a fresh review over budget.
"""

from __future__ import annotations

import pytest

from desk import open_desk
from santa_core.models import RunStatus
from storage.runs import RunStore
from tests.support.messages_api import MessagesStub, error_reply, repeat_key
from tests.ui.test_escalation_queue import item_id, open_as
from tests.ui.test_run_page import CLEAN, EDITOR, MODEL_B, MODEL_C, SPEC, VIEWER, as_person, keys, texts, wait_for


def broken(body: dict):
    return error_reply(500, "api_error", "Internal server error")


def outage_run(repo: RunStore, stub: MessagesStub, budget_usd: float | None = None) -> int:
    """A run by an editor whose screen the provider fails, driven to its stop."""
    stub.screen = broken
    desk = open_desk(str(repo.engine.url), mark_interrupted=False)
    try:
        run_id = desk.runs.create_run(
            SPEC,
            CLEAN,
            desk.rubrics.resolved("general"),
            MODEL_B,
            MODEL_C,
            MODEL_B,
            created_by=EDITOR,
            budget_usd=budget_usd,
        )
        desk.runner.execute(run_id)
    finally:
        desk.close()
    assert repo.load_run(run_id).state.escalation_reason == "provider_failed"
    return run_id


@pytest.fixture
def outage(desk_env: RunStore, messages_stub: MessagesStub) -> int:
    return outage_run(desk_env, messages_stub)


def test_the_page_says_could_not_be_reviewed_and_tries_again_to_nice(
    desk_env: RunStore, messages_stub: MessagesStub, outage: int
) -> None:
    at = as_person(EDITOR, outage)
    shown = texts(at)
    assert "NAUGHTY" not in shown and "a reviewer failed" not in shown and "No review yet." not in shown
    assert (
        "Could not be reviewed: the model provider failed — the injection screen (claude-haiku-5-5) could not "
        "be run: Server error (HTTP 500: api error) after 3 retries: Internal server error."
    ) in shown
    assert shown.count("Not asked: the injection screen could not be run.") == 2  # both reviewer columns
    assert [t.label for t in at.tabs] == ["Round 1 · could not be reviewed"]
    assert "try_again" in keys(at)
    bar = at.warning[0].value  # the decision bar, first under the title
    assert bar.startswith("Could not be reviewed\\: the model provider failed") and "**[Try again ↓](#decide)**" in bar
    messages_stub.screen = repeat_key  # the provider answers again
    at.button(key="try_again").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    wait_for(desk_env, outage, RunStatus.SHIPPED)
    at = as_person(EDITOR, outage)
    shown = texts(at)
    assert "NICE" in shown and f"Editor <{EDITOR}> · tried again after the model provider failed" in shown
    assert [t.label for t in at.tabs] == ["Round 1 · could not be reviewed", "Round 2 · NICE"]


def test_a_viewer_reads_it_but_gets_the_reason_instead_of_try_again(outage: int) -> None:
    at = as_person(VIEWER, outage)
    assert "try_again" not in keys(at)
    assert "To try a review again after the model provider failed you need to be" in texts(at)


def test_over_budget_the_page_says_why_there_is_no_try_again(desk_env: RunStore, messages_stub: MessagesStub) -> None:
    run_id = outage_run(desk_env, messages_stub, budget_usd=1e-9)  # the failed calls count at their estimate
    at = as_person(EDITOR, run_id)
    assert "try_again" not in keys(at)
    assert "Try again is not offered: the run's budget is spent." in texts(at)
    assert "Try again ↓" not in texts(at) and "The run's budget is spent, so it cannot be tried again" in texts(at)


def test_the_escalations_page_says_it_too_and_refuses_a_fresh_review_over_budget(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    run_id = outage_run(desk_env, messages_stub, budget_usd=1e-9)
    esc = item_id(desk_env, run_id)
    at = open_as("officer@example.com")
    shown = texts(at)
    assert "Could not be reviewed: the model provider failed — the injection screen" in shown
    assert "NAUGHTY" not in shown and "a reviewer failed" not in shown
    at.radio(key=f"res_{esc}").set_value("rereview").run()
    at.text_area(key=f"res_why_{esc}").set_value("Once more.")
    at.button(key=f"res_go_{esc}").click().run()
    assert not at.exception, at.exception
    assert any("budget" in e.value and "is spent" in e.value for e in at.error), [e.value for e in at.error]
    assert desk_env.load_run(run_id).state.status == RunStatus.ESCALATED


def test_a_stale_tabs_try_again_starts_no_second_attempt(desk_env: RunStore, messages_stub: MessagesStub) -> None:
    """Review B of issue 34: a tab showing the outage stays open; someone else tries again while the provider is
    still down, so the run escalates again; the old tab's click must not start another paid attempt unseen."""
    from santa_core.run import actions

    run_id = outage_run(desk_env, messages_stub)
    stale = as_person(EDITOR, run_id)  # shows the first escalation, with Try again
    assert "try_again" in keys(stale)
    desk = open_desk(str(desk_env.engine.url), mark_interrupted=False)
    try:  # another tab tries again; the provider is still down: a second escalation
        actions.try_again(desk.runs, run_id, EDITOR)
        desk.runner.execute(run_id)
    finally:
        desk.close()
    assert desk_env.load_run(run_id).state.escalation_reason == "provider_failed"
    stale.button(key="try_again").click().run()
    assert not stale.exception, stale.exception
    assert any("Nothing was recorded: someone else decided this escalation" in e.value for e in stale.error)
    tries = [d.action for r in desk_env.get_run_view(run_id).rounds for d in r.decisions if d.action == "try_again"]
    assert tries == ["try_again"]  # the other tab's only


def test_the_store_itself_refuses_a_paid_round_over_budget(desk_env: RunStore, messages_stub: MessagesStub) -> None:
    """Review B of issue 34: the budget rule lived in the actions only; the store's own door started a paid round
    on a run whose budget was spent. Refused there too, with nothing written."""
    from santa_core.run.actions import ActionError

    run_id = outage_run(desk_env, messages_stub, budget_usd=1e-9)
    for resolution in ("try_again", "rereview"):
        with pytest.raises(ActionError, match="budget"):
            desk_env.resolve_escalation(run_id, resolution, EDITOR, "tried again")
    state = desk_env.load_run(run_id).state
    assert (state.status, state.round) == (RunStatus.ESCALATED, 1)
