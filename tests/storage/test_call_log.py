"""The write-ahead call log: every model call is on record as *sent* before its request leaves.

Real SDK calls to the loopback Messages API, the real runner, on SQLite and (when configured)
PostgreSQL. A call whose answer never reached the database (a crash between the two) stays in the
log as cut off, and the run's cost counts it at its estimate.
"""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from santa_core.models import RunStatus
from santa_core.reports.metrics import MetricsFilter
from santa_core.reviewers.anthropic import AnthropicFixer, AnthropicReviewer, AnthropicScreen
from santa_core.run.runner import Runner
from storage.hashing import json_hash
from storage.records import verification_record
from storage.run_rows import cut_off_calls
from storage.runs import RunStore
from storage.tables import CallSentRow, LLMCallRow
from tests.conftest import granted_store
from tests.core.run.test_runner import RUBRIC, SPEC
from tests.support.messages_api import MessagesStub, Reply, santa_scenario

SONNET, HAIKU = "claude-sonnet-5-5", "claude-haiku-5-5"


def new_run(repo: RunStore, output: str) -> int:
    return repo.create_run(
        spec=SPEC, output=output, rubric=RUBRIC, reviewer_b=SONNET, reviewer_c=HAIKU, fixer=SONNET, auto_approve=True
    )


def runner(repo: RunStore) -> Runner:
    return Runner(repo, AnthropicReviewer, AnthropicFixer, workers=2, screen_for=lambda: AnthropicScreen(HAIKU))


@pytest.fixture
def repo(db_url: str) -> RunStore:
    return granted_store(db_url)


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
    extract = messages_stub.extract
    messages_stub.extract = lambda body: (seen_before.append(json_hash(body) in sent_hashes(repo)), extract(body))[1]
    run_id = new_run(repo, "Acme launched its rocket in DEFECT.")
    assert runner(repo).execute(run_id).status == RunStatus.SHIPPED
    # two rounds: the screen's key and extraction checks, B, C, fix, then key and extraction, B, C
    assert len(seen_before) == len(messages_stub.calls) == 9 and all(seen_before)
    with Session(repo.engine) as s:
        answered = set(s.exec(select(LLMCallRow.request_hash)).all())
        notes = s.exec(select(CallSentRow)).all()
        assert {n.request_hash for n in notes} == answered and len(notes) == 9
        assert sorted({(n.purpose, n.slot) for n in notes}, key=str) == sorted(
            {("screen", None), ("review", "B"), ("review", "C"), ("fix", None)}, key=str
        )
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
    messages_stub.handler = lambda body: (
        Reply(200, {}, santa_scenario(body), delay_s=0.5) if body["model"] == SONNET else santa_scenario(body)
    )
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


# --- every attempt on record, every failure costed ------------------------------------------------------------


def _calls(repo: RunStore) -> tuple[list[CallSentRow], list[LLMCallRow]]:
    with Session(repo.engine) as s:
        return list(s.exec(select(CallSentRow)).all()), list(s.exec(select(LLMCallRow)).all())


def _received(stub: MessagesStub) -> list[str]:
    """The request hashes of every paid request the model server received (POST /v1/messages)."""
    return sorted(json_hash(c["body"]) for c in stub.calls if c["path"].split("?")[0] == "/v1/messages")


def test_a_retried_request_is_on_record_once_per_attempt_and_its_failure_counts_at_its_estimate(
    repo: RunStore, messages_stub: MessagesStub
) -> None:
    # The first reviewer request meets an overloaded API (a 5xx: the request left, it may be billed), the retry is
    # answered. Our retries, not the SDK's: each attempt passed the door and is its own row.
    overloaded = [
        Reply(
            529,
            {"retry-after-ms": "1"},
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
    ]
    messages_stub.handler = lambda body: overloaded.pop() if overloaded else santa_scenario(body)
    run_id = new_run(repo, "Acme launched its rocket in 2018.")
    assert runner(repo).execute(run_id).status == RunStatus.SHIPPED
    sent, answered = _calls(repo)
    assert sorted(n.request_hash for n in sent) == _received(messages_stub)  # every paid request, once each
    assert len(sent) == 5 == len(answered)  # the screen's key and extraction checks, B, B again, C
    (failed,) = [c for c in answered if c.error]
    assert "overloaded (529" in failed.error
    (note,) = [n for n in sent if n.request_hash == failed.request_hash and n.slot == failed.slot][:1]
    assert failed.cost_usd == pytest.approx(note.estimate_usd) and failed.cost_usd > 0
    assert repo.load_run(run_id).spent_usd == pytest.approx(sum(c.cost_usd for c in answered))


def test_timed_out_and_dropped_calls_show_failed_at_their_estimate(repo: RunStore, messages_stub: MessagesStub) -> None:
    # Sonnet (B) never answers in time, twice (a retry); Haiku (C) drops the connection mid-request.
    messages_stub.handler = lambda body: (
        Reply(200, {}, santa_scenario(body), delay_s=1.0) if body["model"] == SONNET else Reply(drop=True)
    )
    run = Runner(
        repo,
        lambda name: AnthropicReviewer(name, timeout=0.3, max_retries=1 if name == SONNET else 0),
        AnthropicFixer,
        workers=2,
        screen_for=lambda: AnthropicScreen(HAIKU),
    )
    run_id = new_run(repo, "Acme launched its rocket in 2018.")
    assert run.execute(run_id).status == RunStatus.ESCALATED
    sent, answered = _calls(repo)
    assert sorted(n.request_hash for n in sent) == _received(messages_stub)
    failed = sorted((c for c in answered if c.purpose == "review"), key=lambda c: c.model)
    assert [(c.model, c.slot) for c in failed] == [(HAIKU, "C"), (SONNET, "B"), (SONNET, "B")]
    assert "could not reach the API" in failed[0].error
    assert all(c.error.startswith("timed out") for c in failed[1:]) and "after 1 retries" in failed[2].error
    estimate = {n.request_hash: n.estimate_usd for n in sent}
    assert all(c.cost_usd == pytest.approx(estimate[c.request_hash]) and c.cost_usd > 0 for c in failed)
    screen = sum(c.cost_usd for c in answered if c.purpose == "screen")
    paid = screen + sum(c.cost_usd for c in failed)
    # The same figure everywhere a person or a pipeline reads it.
    figures = {
        "budget": repo.load_run(run_id).spent_usd,
        "run page": repo.get_run_view(run_id).total_cost_usd,
        "--json": repo.run_json(run_id)["cost_usd"],
        "record": verification_record(repo, run_id).total_cost_usd,
        "Metrics": repo.metrics.report(MetricsFilter()).headline.total_cost_usd,
    }
    assert figures == dict.fromkeys(figures, pytest.approx(paid))


def test_a_refused_request_costs_nothing_and_is_not_sent_again(repo: RunStore, messages_stub: MessagesStub) -> None:
    # A 4xx is not billed by the API, and only 408/409/429 are worth sending again.
    messages_stub.handler = lambda body: Reply(
        400, {}, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad field"}}
    )
    run_id = new_run(repo, "Acme launched its rocket in 2018.")
    assert runner(repo).execute(run_id).status == RunStatus.ESCALATED
    sent, answered = _calls(repo)
    reviews = [c for c in answered if c.purpose == "review"]
    assert len(reviews) == 2 and all("request rejected (400" in c.error and c.cost_usd == 0 for c in reviews)
    assert sorted(n.request_hash for n in sent) == _received(messages_stub)
