"""The write-ahead call log: every model call is on record as *sent* before its request leaves.

Real SDK calls to the loopback Messages API, the real runner, on SQLite and (when configured)
PostgreSQL. A call whose answer never reached the database (a crash between the two) stays in the
log as cut off, and the run's cost counts it at its estimate.
"""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from santa_core.models import RunStatus
from santa_core.reviewers.anthropic import AnthropicFixer, AnthropicReviewer, AnthropicScreen
from santa_core.run.runner import Runner
from storage.hashing import json_hash
from storage.run_rows import cut_off_calls
from storage.runs import RunStore
from storage.startup import init_db
from storage.tables import CallSentRow, LLMCallRow
from tests.conftest import grant
from tests.core.run.test_runner import RUBRIC, SPEC
from tests.support.messages_api import MessagesStub, Reply, santa_scenario

SONNET, HAIKU = "claude-sonnet-5-5", "claude-haiku-5-5"


def new_run(repo: RunStore, output: str) -> int:
    return repo.create_run(spec=SPEC, output=output, rubric=RUBRIC, reviewer_b=SONNET, reviewer_c=HAIKU,
                           fixer=SONNET, auto_approve=True)


def runner(repo: RunStore) -> Runner:
    return Runner(repo, AnthropicReviewer, AnthropicFixer, workers=2, screen_for=lambda: AnthropicScreen(HAIKU))


@pytest.fixture
def repo(db_url: str) -> RunStore:
    return grant(RunStore(init_db(db_url)))


def sent_hashes(repo: RunStore) -> list[str]:
    with Session(repo.engine) as s:
        return list(s.exec(select(CallSentRow.request_hash)).all())


def test_every_request_is_on_record_before_it_leaves(repo: RunStore, messages_stub: MessagesStub) -> None:
    seen_before: list[bool] = []

    def on_record_first(body: dict):  # runs when the request reaches the server
        seen_before.append(json_hash(body) in sent_hashes(repo))
        return santa_scenario(body)

    messages_stub.handler = on_record_first
    screen = messages_stub.screen
    messages_stub.screen = lambda body: (seen_before.append(json_hash(body) in sent_hashes(repo)), screen(body))[1]
    run_id = new_run(repo, "Acme launched its rocket in DEFECT.")
    assert runner(repo).execute(run_id).status == RunStatus.SHIPPED
    # two rounds: screen, B, C, fix, then screen, B, C
    assert len(seen_before) == len(messages_stub.calls) == 7 and all(seen_before)
    with Session(repo.engine) as s:
        answered = set(s.exec(select(LLMCallRow.request_hash)).all())
        notes = s.exec(select(CallSentRow)).all()
        assert {n.request_hash for n in notes} == answered and len(notes) == 7
        assert sorted({(n.purpose, n.slot) for n in notes}, key=str) == sorted(
            {("screen", None), ("review", "B"), ("review", "C"), ("fix", None)}, key=str)
        assert cut_off_calls(s, [run_id]) == []
    assert repo.load_run(run_id).spent_usd == pytest.approx(sum(r.cost_usd for r in _costed(repo, run_id)))


def _costed(repo: RunStore, run_id: int) -> list[LLMCallRow]:
    with Session(repo.engine) as s:
        return list(s.exec(select(LLMCallRow).where(LLMCallRow.run_id == run_id)).all())


class LosesAnswers(RunStore):
    """A store that fails to save the reviews of slot C (as a crash between answer and commit would)."""

    def save_review(self, run_id, round_no, outcome, only_if_empty=False):
        if outcome.slot == "C":
            raise RuntimeError("database went away")
        return super().save_review(run_id, round_no, outcome, only_if_empty)


def test_an_answer_lost_before_its_commit_is_cut_off_costed_and_the_other_answer_kept(
    repo: RunStore, messages_stub: MessagesStub
) -> None:
    # C's answer arrives (and fails to save) first; B's comes later and must still be saved.
    messages_stub.handler = lambda body: (Reply(200, {}, santa_scenario(body), delay_s=0.5)
                                          if body["model"] == SONNET else santa_scenario(body))
    lossy = LosesAnswers(repo.engine)
    run_id = new_run(repo, "Acme launched its rocket in 2018.")
    state = runner(lossy).execute(run_id)
    assert state.status == RunStatus.INTERRUPTED and "database went away" in state.note
    rnd = repo.load_round(run_id, 1)
    assert set(rnd.reviews) == {"B"}  # B's answer was saved although C's save failed
    with Session(repo.engine) as s:
        (lost,) = cut_off_calls(s, [run_id])
    assert (lost.purpose, lost.slot, lost.model) == ("review", "C", HAIKU) and lost.estimate_usd > 0
    saved = sum(r.cost_usd for r in rnd.reviews.values()) + sum(r.cost_usd for r in rnd.screens.values())
    assert repo.load_run(run_id).spent_usd == pytest.approx(saved + lost.estimate_usd)


class CannotNote(RunStore):
    def note_sent(self, *args, **kwargs):
        raise RuntimeError("disk full")


def test_a_call_that_cannot_be_put_on_record_is_not_sent(repo: RunStore, messages_stub: MessagesStub) -> None:
    messages_stub.handler = santa_scenario
    run_id = new_run(repo, "Acme launched its rocket in 2018.")
    state = runner(CannotNote(repo.engine)).execute(run_id)
    assert messages_stub.calls == []  # nothing left the process
    # not a verdict and not the model's error: the run stops, resumable, saying why
    assert state.status == RunStatus.INTERRUPTED
    assert "not sent: the call could not be put on record first (RuntimeError: disk full)" in state.note
    assert repo.load_round(run_id, 1).screens == {}
