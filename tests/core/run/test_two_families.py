"""A run whose reviewers come from two model families on two providers, end to end through the real SDKs:
B on an OpenAI-compatible server (Chat Completions), C on Claude (Messages API), the fix agent on either."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, select

from desk.wiring import model_fixer, model_reviewer, model_screen
from santa_core.rubrics.library import load_builtin
from santa_core.run.runner import Runner
from storage.records import verification_record
from storage.runs import RunStore
from storage.startup import init_db
from storage.tables import LLMCallRow
from tests.conftest import grant, migrated_sqlite
from tests.support.chat_api import ChatStub, chat_error, for_chat
from tests.support.messages_api import MessagesStub, santa_scenario, schema_properties

SPEC = "Announce the Acme rocket. Mention the 2018 launch."
ROUND1 = "Acme's rocket launched in DEFECT. Order today."


def logged_calls(repo: RunStore, run_id: int) -> list[LLMCallRow]:
    with Session(repo.engine) as s:
        return list(s.exec(select(LLMCallRow).where(LLMCallRow.run_id == run_id)).all())


def clean_run(repo: RunStore) -> tuple[int, object]:
    """A clean output reviewed by B on OpenAI and C on Claude, unscreened; its id and where it stopped."""
    runner = Runner(repo, model_reviewer, model_fixer, workers=2, screen_for=lambda: None)
    run_id = repo.create_run(
        spec=SPEC,
        output="Acme's rocket launched in 2018.",
        rubric=load_builtin("general"),
        reviewer_b="openai:gpt-5.4-mini",
        reviewer_c="claude-haiku-5-5",
        fixer="claude-opus-5-5",
        created_by="ann",
    )
    return run_id, runner.execute(run_id)


@pytest.fixture
def repo(tmp_path: Path, messages_stub: MessagesStub, chat_stub: ChatStub) -> RunStore:
    messages_stub.handler = santa_scenario
    chat_stub.handler = for_chat(santa_scenario)
    return grant(RunStore(init_db(migrated_sqlite(tmp_path / "santa.db"), mark_interrupted=False)))


@pytest.mark.parametrize("fixer", ["openai:gpt-5.5", "claude-opus-5-5"])
def test_review_fix_rereview_ship_across_two_families(
    repo: RunStore, messages_stub: MessagesStub, chat_stub: ChatStub, fixer: str
) -> None:
    runner = Runner(repo, model_reviewer, model_fixer, workers=2, screen_for=model_screen(repo))
    run_id = repo.create_run(
        spec=SPEC,
        output=ROUND1,
        rubric=load_builtin("general"),
        reviewer_b="openai:gpt-5.4-mini",
        reviewer_c="claude-haiku-5-5",
        fixer=fixer,
        auto_approve=True,
        created_by="ann",
    )
    assert runner.execute(run_id).status == "shipped"
    view = repo.get_run_view(run_id)
    assert [r.output_text for r in view.rounds] == [ROUND1, "Acme's rocket launched in fact. Order today."]
    # round 1: both FAIL (NAUGHTY), fixed, round 2: both PASS (NICE); each slot on its own provider
    for rnd, verdict in zip(view.rounds, ("FAIL", "PASS"), strict=True):
        assert {o.reviewer for o in rnd.reviews.values()} == {"openai:gpt-5.4-mini", "claude-haiku-5-5"}
        assert all(o.review.verdict == verdict for o in rnd.reviews.values())
    chat_reviews = [c for c in chat_stub.chat_calls() if "verdict" in str(c["body"]["response_format"])]
    claude_reviews = [c for c in messages_stub.message_calls() if "verdict" in schema_properties(c["body"])]
    assert len(chat_reviews) == 2 and len(claude_reviews) == 2
    fixes_on_chat = [c for c in chat_stub.chat_calls() if "edits" in str(c["body"]["response_format"])]
    assert len(fixes_on_chat) == (1 if fixer.startswith("openai:") else 0)
    # every call logged and priced with its own provider's model id
    calls = logged_calls(repo, run_id)
    assert {c.model for c in calls if c.purpose == "review"} == {"openai:gpt-5.4-mini", "claude-haiku-5-5"}
    assert all(c.cost_usd > 0 for c in calls)
    record = verification_record(repo, run_id)
    assert record.spans_two_families is True and record.panel_families == "GPT + Claude"


def test_an_openai_slot_that_keeps_failing_could_not_be_reviewed(repo: RunStore, chat_stub: ChatStub) -> None:
    chat_stub.handler = lambda body: chat_error(500, "upstream broke", headers={"x-should-retry": "false"})
    run_id, state = clean_run(repo)
    assert state.status == "escalated" and state.escalation_reason == "provider_failed"
    outcome = repo.get_run_view(run_id).rounds[0].reviews["B"]
    assert outcome.status == "error" and "server error (500" in outcome.error


def test_a_slot_whose_provider_has_no_key_could_not_be_reviewed_not_a_smaller_panel(
    repo: RunStore, monkeypatch: pytest.MonkeyPatch, messages_stub: MessagesStub
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    run_id, state = clean_run(repo)
    assert state.status == "escalated" and state.escalation_reason == "provider_failed"
    outcome = repo.get_run_view(run_id).rounds[0].reviews["B"]
    assert "OPENAI_API_KEY" in outcome.error
