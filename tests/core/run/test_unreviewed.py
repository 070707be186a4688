"""A provider outage is its own outcome, "could not be reviewed", with Try again (issue 34, point 4).

Through the app's own wiring (`desk.wiring.open_desk` on SQLite: the real Anthropic SDK) against the loopback
Messages API answering 500 / 529: the round nobody could judge escalates as `provider_failed`, never NAUGHTY or a
reviewer error, naming the call that failed in the provider's words; a verdict that was given is never hidden behind
an outage. Try again is a counted attempt (a decision and an audit event), refused with nothing written for a
viewer, over budget, or on a run that was judged; the escalation's other door (re-review) keeps to the budget too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import select

from desk.wiring import Desk, open_desk
from santa_core.models import EscalationReason, GateDecision, RunState, RunStatus
from santa_core.roles import PermissionDenied
from santa_core.rubrics.library import load_builtin
from santa_core.run import actions, engine
from santa_core.run.unreviewed import could_not_review
from storage.tables import AuditEventRow, DecisionRow, EscalationRow
from tests.conftest import grant
from tests.support.messages_api import MessagesStub, error_reply, repeat_key, santa_scenario

SPEC = "Announce the Acme rocket. Mention the 2018 launch."
CLEAN = "Acme's rocket launched in 2018. Order today."
DEFECTIVE = "Acme's rocket launched in DEFECT. Order today."
MODEL_B, MODEL_C, SCREEN = "claude-sonnet-5-5", "claude-haiku-5-5", "claude-haiku-5-5"
EDITOR, OFFICER, VIEWER = "editor@example.com", "officer@example.com", "viewer@example.com"
SERVER_ERROR = "Server error (HTTP 500: api error) after 3 retries: Internal server error."


def broken(body: dict):
    """A model server that fails every request (the SDK's retries included)."""
    return error_reply(500, "api_error", "Internal server error")


def claude_desk(url: str, stub: MessagesStub, monkeypatch: pytest.MonkeyPatch) -> Iterator[Desk]:
    """The app's desk on `url`: Claude reviewers, fix agent and screen on the loopback Messages API."""
    stub.handler = santa_scenario
    for name in ("SANTA_SCREEN", "SANTA_REVIEWER_B", "SANTA_REVIEWER_C", "SANTA_FIXER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SANTA_SCREEN_MODEL", SCREEN)
    desk = open_desk(url, workers=2, mark_interrupted=False)
    grant(desk.runs)
    yield desk
    desk.close()


@pytest.fixture
def desk(tmp_path: Path, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch) -> Iterator[Desk]:
    """The app's desk on SQLite."""
    yield from claude_desk(f"sqlite:///{tmp_path / 'santa.db'}", messages_stub, monkeypatch)


def run_once(desk: Desk, budget_usd: float | None = None, output: str = CLEAN) -> tuple[int, RunState]:
    run_id = actions.start_run(
        desk.runs,
        SPEC,
        output,
        load_builtin("general"),
        MODEL_B,
        MODEL_C,
        "claude-opus-5-5",
        EDITOR,
        budget_usd=budget_usd,
    )
    return run_id, desk.runner.execute(run_id)


def screen_outage(desk: Desk, stub: MessagesStub, budget_usd: float | None = None) -> int:
    stub.screen = broken
    run_id, state = run_once(desk, budget_usd)
    assert (state.status, state.escalation_reason) == (RunStatus.ESCALATED, EscalationReason.PROVIDER_FAILED)
    return run_id


def rows(desk: Desk, run_id: int) -> tuple[int, int, int, int]:
    """What a refused action must leave as it was: decisions, audit events, open escalations, rounds."""
    with desk.runs.db.read() as s:
        decisions = len(s.exec(select(DecisionRow).where(DecisionRow.run_id == run_id)).all())
        events = len(s.exec(select(AuditEventRow).where(AuditEventRow.run_id == run_id)).all())
        opened = len(
            s.exec(select(EscalationRow).where(EscalationRow.run_id == run_id, EscalationRow.status == "open")).all()
        )
    return decisions, events, opened, len(desk.runs.get_run_view(run_id).rounds)


# --- the outcome ----------------------------------------------------------------------------------------------


def test_a_screen_outage_could_not_be_reviewed_and_is_not_naughty(desk: Desk, messages_stub: MessagesStub) -> None:
    run_id = screen_outage(desk, messages_stub)
    assert messages_stub.message_calls() == []  # fail closed: no reviewer paid without a screen
    rnd = desk.runs.get_run_view(run_id).rounds[-1]
    said = could_not_review(rnd)
    assert said == f"the injection screen ({SCREEN}) could not be run: {SERVER_ERROR}"
    assert (
        "injection screen of the spec and output failed (server error (500 api_error)"
        in desk.runs.load_run(run_id).state.note
    )


@pytest.mark.parametrize("status", [500, 529])
def test_a_reviewer_the_provider_failed_is_named_and_the_run_could_not_be_reviewed(
    desk: Desk, messages_stub: MessagesStub, status: int
) -> None:
    messages_stub.handler = lambda body: (
        error_reply(status, "overloaded_error", "Overloaded") if body["model"] == MODEL_B else santa_scenario(body)
    )
    run_id, state = run_once(desk)
    assert (state.status, state.escalation_reason) == (RunStatus.ESCALATED, EscalationReason.PROVIDER_FAILED)
    word = {500: "Server error", 529: "API overloaded"}[status]
    assert state.note == (
        f"reviewer B ({MODEL_B}) got no answer: {word} (HTTP {status}: overloaded error) after 3 retries: Overloaded."
    )
    assert could_not_review(desk.runs.get_run_view(run_id).rounds[-1]) == state.note


def test_a_verdict_given_beside_an_outage_stays_naughty(desk: Desk, messages_stub: MessagesStub) -> None:
    """C found a defect while B's provider failed: NAUGHTY is true, so it is not called an outage."""
    messages_stub.handler = lambda body: broken(body) if body["model"] == MODEL_B else santa_scenario(body)
    run_id, state = run_once(desk, output=DEFECTIVE)
    assert state.escalation_reason == EscalationReason.REVIEWER_ERROR
    rnd = desk.runs.get_run_view(run_id).rounds[-1]
    assert rnd.gate.decision == GateDecision.NAUGHTY and rnd.gate.issues and could_not_review(rnd) == ""


def test_a_bad_answer_is_a_reviewer_failure_not_an_outage(desk: Desk, messages_stub: MessagesStub) -> None:
    messages_stub.handler = lambda body: "not json at all" if body["model"] == MODEL_B else santa_scenario(body)
    run_id, state = run_once(desk)
    assert state.escalation_reason == EscalationReason.REVIEWER_ERROR
    assert could_not_review(desk.runs.get_run_view(run_id).rounds[-1]) == ""


# --- Try again --------------------------------------------------------------------------------------------------


def test_try_again_is_a_counted_attempt_that_reviews_afresh(desk: Desk, messages_stub: MessagesStub) -> None:
    run_id = screen_outage(desk, messages_stub)
    messages_stub.screen = repeat_key  # the provider answers again
    state = actions.try_again(desk.runs, run_id, EDITOR)
    # A new round of the same text; the round nobody judged does not use up one of the run's rounds.
    assert (state.status, state.round, state.round_cap, state.escalation_reason) == (RunStatus.QUEUED, 2, 4, None)
    view = desk.runs.get_run_view(run_id)
    assert view.rounds[-1].output_text == CLEAN
    (decision,) = view.rounds[0].decisions
    assert (decision.action, decision.actor) == ("try_again", EDITOR)
    with desk.runs.db.read() as s:
        esc = s.exec(select(EscalationRow).where(EscalationRow.run_id == run_id)).one()
        kinds = [e.action for e in s.exec(select(AuditEventRow).where(AuditEventRow.run_id == run_id)).all()]
    assert (esc.status, esc.resolution, esc.resolved_by) == ("resolved", "tried_again", EDITOR)
    assert "decision.try_again" in kinds and "escalation.resolved" in kinds
    assert desk.runner.execute(run_id).status == RunStatus.SHIPPED  # fresh calls: screen and both reviewers
    assert len(messages_stub.message_calls()) == 2


@pytest.mark.parametrize("actor", [VIEWER, "author@example.com"])
def test_try_again_by_someone_without_the_role_is_refused_and_writes_nothing(
    desk: Desk, messages_stub: MessagesStub, actor: str
) -> None:
    run_id = screen_outage(desk, messages_stub)
    before = rows(desk, run_id)
    with pytest.raises(PermissionDenied, match="may not try a review again after the model provider failed"):
        actions.try_again(desk.runs, run_id, actor)
    assert rows(desk, run_id) == before
    assert desk.runs.load_run(run_id).state.status == RunStatus.ESCALATED


def test_a_compliance_officer_may_try_again(desk: Desk, messages_stub: MessagesStub) -> None:
    run_id = screen_outage(desk, messages_stub)
    assert actions.try_again(desk.runs, run_id, OFFICER).status == RunStatus.QUEUED


def test_try_again_over_budget_is_refused_with_the_reason_and_writes_nothing(
    desk: Desk, messages_stub: MessagesStub
) -> None:
    # The failed screen calls count at their estimate (a 5xx may be billed), which passes this tiny budget.
    run_id = screen_outage(desk, messages_stub, budget_usd=1e-9)
    assert desk.runs.load_run(run_id).spent_usd > 1e-9
    before = rows(desk, run_id)
    for door in (
        lambda: actions.try_again(desk.runs, run_id, EDITOR),
        lambda: actions.resolve_escalation(desk.runs, run_id, "rereview", OFFICER, "once more"),
        lambda: actions.resolve_escalation(desk.runs, run_id, "try_again", OFFICER, "once more"),
    ):
        with pytest.raises(actions.ActionError, match="budget .* is spent"):
            door()
        assert rows(desk, run_id) == before


def test_try_again_is_only_for_a_run_the_provider_failed(desk: Desk, messages_stub: MessagesStub) -> None:
    messages_stub.handler = lambda body: "not json at all" if body["model"] == MODEL_B else santa_scenario(body)
    run_id, _ = run_once(desk)
    before = rows(desk, run_id)
    with pytest.raises(actions.ActionError, match="nothing to try again"):
        actions.try_again(desk.runs, run_id, EDITOR)
    # The store's own door refuses too (the engine's move), inside its transaction.
    with pytest.raises(engine.InvalidTransition, match="Try again is for a run the model provider failed"):
        desk.runs.resolve_escalation(run_id, "try_again", EDITOR, "once more")
    assert rows(desk, run_id) == before


def test_the_escalation_queue_door_still_re_reviews_an_outage(desk: Desk, messages_stub: MessagesStub) -> None:
    run_id = screen_outage(desk, messages_stub)
    with pytest.raises(PermissionDenied):
        actions.resolve_escalation(desk.runs, run_id, "rereview", EDITOR, "once more")
    assert actions.resolve_escalation(desk.runs, run_id, "rereview", OFFICER, "once more").status == RunStatus.QUEUED


# --- the engine -------------------------------------------------------------------------------------------------


def escalated(why: EscalationReason) -> RunState:
    return RunState(status=RunStatus.ESCALATED, round=2, round_cap=3, escalation_reason=why, note="x")


def test_the_engine_escalates_an_unreviewed_gate_as_provider_failed() -> None:
    running = RunState(status=RunStatus.RUNNING)
    new = engine.advance(running, engine.Gate(GateDecision.NAUGHTY, reviewer_error=True, unreviewed="B failed"))
    assert (new.status, new.escalation_reason, new.note) == (
        RunStatus.ESCALATED,
        EscalationReason.PROVIDER_FAILED,
        "B failed",
    )
    caught = engine.advance(running, engine.Gate(GateDecision.NAUGHTY, injection=True, unreviewed="B failed"))
    assert caught.escalation_reason == EscalationReason.INJECTION  # an injection is a verdict: it comes first


def test_the_engine_tries_again_only_after_a_provider_failure() -> None:
    for why in EscalationReason:
        if why != EscalationReason.PROVIDER_FAILED:
            with pytest.raises(engine.InvalidTransition):
                engine.advance(escalated(why), engine.Resolve("try_again"))
    again = engine.advance(escalated(EscalationReason.PROVIDER_FAILED), engine.Resolve("try_again"))
    assert (again.status, again.round, again.round_cap) == (RunStatus.QUEUED, 3, 4)
