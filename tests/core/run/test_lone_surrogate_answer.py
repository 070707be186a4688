"""A model's answer holding a lone surrogate (a server that split an emoji in its JSON escapes): no database stores
one. The answer is a bad answer, asked again, and the slot ends a reviewer error; the run's record is written (the
raw answer kept with the surrogate escaped), and the run is never left interrupted to be paid for again."""

from __future__ import annotations

from pathlib import Path

from desk.wiring import model_fixer, model_reviewer
from santa_core.models import EscalationReason, RunStatus
from santa_core.rubrics.library import load_builtin
from santa_core.run.runner import Runner
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant, migrated_sqlite
from tests.support.messages_api import MessagesStub

BROKEN = '{"verdict": "PASS", "note": "ok \ud83d"}'
"""What the stub sends as JSON: the surrogate becomes the escape "\\ud83d", which the SDK reads back as one."""


def test_an_answer_with_a_lone_surrogate_escalates_as_a_reviewer_error(
    tmp_path: Path, messages_stub: MessagesStub
) -> None:
    messages_stub.handler = lambda body: BROKEN
    repo = grant(RunStore(init_db(migrated_sqlite(tmp_path / "santa.db"), mark_interrupted=False)))
    runner = Runner(repo, model_reviewer, model_fixer, workers=2, screen_for=lambda: None)
    run_id = repo.create_run(
        spec="Announce it.",
        output="Acme's rocket launched in 2018.",
        rubric=load_builtin("general"),
        reviewer_b="claude-haiku-5-5",
        reviewer_c="claude-haiku-5-5",
        fixer="claude-opus-5-5",
        created_by="ann",
    )
    state = runner.execute(run_id)
    assert (state.status, state.escalation_reason) == (RunStatus.ESCALATED, EscalationReason.REVIEWER_ERROR), state
    view = repo.get_run_view(run_id)
    for outcome in view.rounds[0].reviews.values():
        assert "not valid JSON" in (outcome.error or ""), outcome.error
        assert "\\ud83d" in outcome.raw_response and "\ud83d" not in outcome.raw_response
    asked = len(messages_stub.message_calls())
    assert asked >= 4  # each reviewer asked again after its bad answer
