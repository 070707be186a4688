"""The injection screen fails closed like a reviewer: on, and unable to run (no key for its model, an unknown
provider, a client that cannot be built, settings that cannot be read), every round a model reviews stops at
its screen as "could not be reviewed", naming why, before any reviewer is asked. Only the setting off means no screen.

Through the app's own wiring (`desk.wiring.open_desk` on SQLite: the Anthropic and OpenAI adapters of the real
SDKs, the screen chosen by `model_screen`) against the loopback Messages API (the reviewers) and Chat
Completions (the screen, when it can run), on every door that starts a round: a new run, a resume after an
interruption, the next round after a fix is approved, and an escalation's edit and re-review.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desk.wiring import Desk, open_desk
from santa_core.models import EscalationReason, RunState, RunStatus
from santa_core.rubrics.library import load_builtin
from santa_core.run import actions
from tests.conftest import grant
from tests.support.chat_api import ChatStub, for_chat
from tests.support.messages_api import MessagesStub, santa_scenario

SPEC = "Announce the Acme rocket. Mention the 2018 launch."
CLEAN = "Acme's rocket launched in 2018. Order today."
DEFECTIVE = "Acme's rocket launched in DEFECT. Order today."
SCREEN_MODEL = "openai:gpt-5.4-nano"
"""The screen on another provider than the reviewers (Claude, on the Messages API), so taking its key away leaves
the reviewers callable: whatever reaches the Messages API afterwards is a reviewer paid without a screen."""


@pytest.fixture
def desk(
    tmp_path: Path, messages_stub: MessagesStub, chat_stub: ChatStub, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Desk]:
    """The app's desk on a fresh SQLite file: Claude reviewers and fix agent, the screen on OpenAI."""
    messages_stub.handler = santa_scenario
    chat_stub.handler = for_chat(santa_scenario)  # (the chat stub answers a screen with its key)
    for name in ("SANTA_SCREEN", "SANTA_REVIEWER_B", "SANTA_REVIEWER_C", "SANTA_FIXER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SANTA_SCREEN_MODEL", SCREEN_MODEL)
    desk = open_desk(f"sqlite:///{tmp_path / 'santa.db'}", workers=2, mark_interrupted=False)
    grant(desk.runs)
    yield desk
    desk.close()


def new_run(desk: Desk, output: str = CLEAN, b: str = "claude-haiku-5-5", c: str = "claude-sonnet-5-5") -> int:
    return actions.start_run(desk.runs, SPEC, output, load_builtin("general"), b, c, "claude-opus-5-5", "ann")


def reviewer_requests(messages_stub: MessagesStub) -> list[dict]:
    """Every request that reached the Messages API (the reviewers' and fix agent's only server)."""
    return messages_stub.calls


def assert_stopped_at_screen(desk: Desk, run_id: int, state: RunState, *why: str) -> None:
    """Escalated as could not be reviewed, its note the screen's reason (with `why`), no review stored."""
    assert state.status == RunStatus.ESCALATED and state.escalation_reason == EscalationReason.PROVIDER_FAILED
    assert state.note.startswith("injection screen of the spec and output failed")
    assert "no reviewer was asked" in state.note and all(w in state.note for w in why), state.note
    rnd = desk.runs.get_run_view(run_id).rounds[-1]
    assert rnd.reviews == {} and rnd.screens["spec and output"].verdict == "error"


@pytest.mark.parametrize(
    ("setup", "why"),
    [
        pytest.param(
            lambda mp: mp.delenv("OPENAI_API_KEY"),
            ("no API key for provider 'openai'", "OPENAI_API_KEY", "turn the injection screen off in Settings"),
            id="no-key",
        ),
        pytest.param(
            lambda mp: mp.setenv("SANTA_SCREEN_MODEL", "acme:tiny"), ("unknown provider 'acme'",), id="unknown-provider"
        ),
        pytest.param(
            lambda mp: mp.setenv("OPENAI_BASE_URL", "http://[::1"),
            ("cannot call openai:gpt-5.4-nano",),
            id="client-cannot-be-built",
        ),
        pytest.param(
            lambda mp: mp.setenv("SANTA_SCREEN", "maybe"),
            ("the screen could not be set up", "SANTA_SCREEN"),
            id="settings-unreadable",
        ),
    ],
)
def test_a_screen_that_cannot_run_stops_the_round_before_any_reviewer(
    desk: Desk,
    messages_stub: MessagesStub,
    chat_stub: ChatStub,
    monkeypatch: pytest.MonkeyPatch,
    setup,
    why: tuple[str, ...],
) -> None:
    run_id = new_run(desk)
    setup(monkeypatch)
    state = desk.runner.execute(run_id)
    assert_stopped_at_screen(desk, run_id, state, *why)
    assert reviewer_requests(messages_stub) == [] and chat_stub.calls == []


def test_the_same_run_with_the_screen_callable_ships(
    desk: Desk, messages_stub: MessagesStub, chat_stub: ChatStub
) -> None:
    """The control: with the screen's key present, the same run is screened on OpenAI and reviewed on Claude."""
    run_id = new_run(desk)
    assert desk.runner.execute(run_id).status == RunStatus.SHIPPED
    assert len(chat_stub.screen_calls()) == 1 and len(messages_stub.message_calls()) == 2


def test_only_the_setting_off_runs_a_round_unscreened(
    desk: Desk, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("SANTA_SCREEN", "off")
    run_id = new_run(desk)
    assert desk.runner.execute(run_id).status == RunStatus.SHIPPED
    assert len(messages_stub.message_calls()) == 2


def test_a_panel_with_one_model_is_screened_and_a_panel_of_people_is_not_held_by_it(
    desk: Desk, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    mixed = new_run(desk, b="person", c="claude-haiku-5-5")
    assert_stopped_at_screen(desk, mixed, desk.runner.execute(mixed), "OPENAI_API_KEY")
    assert reviewer_requests(messages_stub) == []
    # No model reads the text: nothing to take over, so a screen that cannot run does not hold the people's review.
    people = new_run(desk, b="person", c="person")
    assert desk.runner.execute(people).status == RunStatus.AWAITING_HUMAN_REVIEW
    assert desk.runs.get_run_view(people).rounds[0].screens == {}
    assert desk.runner.screen_problem(("person", "person")) is None
    assert "OPENAI_API_KEY" in desk.runner.screen_problem(("person", "claude-haiku-5-5"))


def test_resume_after_an_interruption_stops_at_the_screen(
    desk: Desk, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = new_run(desk)
    desk.runs.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
    desk.runs.transition(
        run_id, {RunStatus.RUNNING}, RunState(status=RunStatus.INTERRUPTED, note="the app stopped"), "system"
    )
    monkeypatch.delenv("OPENAI_API_KEY")
    actions.resume(desk.runs, run_id, "ann")
    assert_stopped_at_screen(desk, run_id, desk.runner.execute(run_id), "OPENAI_API_KEY")
    assert reviewer_requests(messages_stub) == []


def test_the_round_after_an_approved_fix_and_an_escalations_rereview_stop_at_the_screen(
    desk: Desk, messages_stub: MessagesStub, chat_stub: ChatStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = new_run(desk, DEFECTIVE)
    assert desk.runner.execute(run_id).status == RunStatus.AWAITING_APPROVAL  # round 1 screened and reviewed
    paid = len(reviewer_requests(messages_stub))  # two reviews and a fix
    assert paid == 3 and len(chat_stub.screen_calls()) == 1
    monkeypatch.delenv("OPENAI_API_KEY")  # the screen's key goes away between rounds
    actions.approve_fix(desk.runs, run_id, "ann")
    assert_stopped_at_screen(desk, run_id, desk.runner.execute(run_id), "OPENAI_API_KEY")
    escalation = desk.runs.get_run_view(run_id).escalation.id
    actions.resolve_escalation(
        desk.runs,
        run_id,
        "rereview",
        "ann",
        "edited by hand",
        "Acme's rocket launched in 2018. Order it today.",
        escalation,
    )
    assert_stopped_at_screen(desk, run_id, desk.runner.execute(run_id), "OPENAI_API_KEY")
    assert len(reviewer_requests(messages_stub)) == paid  # no reviewer asked after the screen could not run
    assert len(desk.runs.get_run_view(run_id).rounds) == 3
