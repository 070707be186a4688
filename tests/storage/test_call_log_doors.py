"""One door for every paid request: whatever path pays a model (a run, its screen, a batch's reviews sent one by
one or as a Message Batch, a rubric trial, a re-check of a past run), the model server's count of paid requests
equals the `llm_call_sent` rows, each put on record before it left, tied to what it served, and each has its
answered or failed `llm_call` row. Test connection asks the free model list only: nothing to put on record.

Real adapters against the loopback Messages API; the real runner, batch driver and stores on SQLite (and
PostgreSQL when configured).
"""

from __future__ import annotations

from collections import Counter

import anthropic
import pytest
from sqlmodel import Session, select

from santa_core.batch.driver import BatchDriver
from santa_core.batch.file import read_batch
from santa_core.models import Criterion, Rubric
from santa_core.providers import provider_of
from santa_core.reviewers.anthropic import AnthropicFixer, AnthropicReviewer, AnthropicScreen
from santa_core.reviewers.base import CallNotRecorded, ReviewRequest
from santa_core.rubrics import actions as rubric_actions
from santa_core.run.runner import Runner
from storage.batches import BatchStore
from storage.hashing import json_hash
from storage.rubrics import RubricStore
from storage.runs import RunStore
from storage.tables import CallSentRow, LLMCallRow, TrialRow
from tests.conftest import granted_store
from tests.core.batch.test_driver import config, planted_answer, planted_csv
from tests.support.messages_api import MessagesStub, error_reply, santa_scenario

SONNET, HAIKU = "claude-sonnet-5-5", "claude-haiku-5-5"
RUBRIC = Rubric(
    name="mail",
    criteria=[
        Criterion(
            id="compliance",
            name="Compliance",
            category="compliance",
            pass_condition="no promise we cannot keep",
            fail_signal="a promise such as free shipping forever",
        )
    ],
)
SAMPLE = "Hello Ann, our spring sale starts today."


@pytest.fixture
def repo(db_url: str) -> RunStore:
    return granted_store(db_url, mark_interrupted=False)


def paid_requests(stub: MessagesStub) -> Counter[str]:
    """The hash of every paid request the server received: each POST /v1/messages, and each item of each
    Message Batch create (refused or not)."""
    bodies = [c["body"] for c in stub.calls if c["path"].split("?")[0] == "/v1/messages"]
    bodies += [
        r["params"]
        for c in stub.batch_calls()
        if c["method"] == "POST" and c["path"] == "/v1/messages/batches"
        for r in c["body"]["requests"]
    ]
    return Counter(json_hash(b) for b in bodies)


def on_record(repo: RunStore, stub: MessagesStub) -> tuple[list[CallSentRow], list[LLMCallRow]]:
    """The call log, checked against the server: one *sent* row per paid request, each with its answer row."""
    with Session(repo.engine) as s:
        sent, answered = list(s.exec(select(CallSentRow)).all()), list(s.exec(select(LLMCallRow)).all())
    assert Counter(n.request_hash for n in sent) == paid_requests(stub) and sent
    assert Counter(n.request_hash for n in sent) == Counter(c.request_hash for c in answered)
    for row in (*sent, *answered):  # exactly one of run, batch and trial names what the call served
        assert sum(x is not None for x in (row.run_id, row.batch_id, row.trial_key)) == 1
    return sent, answered


def batch_driver(repo: RunStore, stub: MessagesStub) -> tuple[BatchDriver, Runner]:
    runner = Runner(repo, AnthropicReviewer, AnthropicFixer, workers=2, screen_for=lambda: AnthropicScreen(HAIKU))
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
    return BatchDriver(repo, BatchStore(repo), runner, AnthropicFixer, client_for=lambda: client, poll_s=0.01), runner


@pytest.mark.parametrize("message_batches", [False, True], ids=["one by one", "message batch"])
def test_a_batchs_reviews_are_each_on_record_before_they_leave(
    repo: RunStore, messages_stub: MessagesStub, message_batches: bool
) -> None:
    messages_stub.handler = planted_answer
    messages_stub.batch_end_after_polls = 1
    # Ten items (was 20: the claim holds per request, and ten still cover the five templates, both locales, one
    # planted defect and two runner workers sending at once; half the reviews cost half the CPU).
    data, _ = planted_csv(10)
    file = read_batch(data, "emails.csv", strata=["template"])
    driver, runner = batch_driver(repo, messages_stub)
    try:
        cfg = config(file, message_batches=message_batches, sample_rate=1.0).model_copy(
            update={"rubric": RUBRIC, "reviewer_b": HAIKU, "reviewer_c": SONNET}
        )
        batch_id = driver.create(file, cfg, "ann")
        sample_id = driver.store.draw_sample(batch_id, "ann")
        assert driver.drive(sample_id).result(timeout=120).finished
    finally:
        driver.shutdown()
        runner.shutdown()
    sent, answered = on_record(repo, messages_stub)
    reviews = [n for n in sent if n.purpose == "review"]
    assert len(reviews) == 20  # both reviewers of each of 10 items
    # Sent one by one, each review serves its item's run; in a Message Batch, made before the runs, the batch.
    assert all((n.batch_id == batch_id and n.run_id is None) if message_batches else n.run_id for n in reviews)
    assert all(c.run_id for c in answered)  # the answers are stored with the items' runs


def test_a_message_batch_the_api_refused_leaves_each_item_failed_at_no_cost(
    repo: RunStore, messages_stub: MessagesStub
) -> None:
    messages_stub.script_batches(error_reply(400, "invalid_request_error", "requests: too many"))
    data, _ = planted_csv(5)
    file = read_batch(data, "emails.csv", strata=["template"])
    driver, runner = batch_driver(repo, messages_stub)
    try:
        cfg = config(file, message_batches=True, sample_rate=1.0).model_copy(
            update={"rubric": RUBRIC, "reviewer_b": HAIKU, "reviewer_c": SONNET}
        )
        batch_id = driver.create(file, cfg, "ann")
        sample_id = driver.store.draw_sample(batch_id, "ann")
        driver.drive(sample_id).result(timeout=60)
        assert "too many" in driver.store.progress(sample_id).api_status
    finally:
        driver.shutdown()
        runner.shutdown()
    sent, answered = on_record(repo, messages_stub)
    assert len(sent) == 10 and all(n.batch_id == batch_id for n in sent)
    assert all(c.batch_id == batch_id and "request rejected (400" in c.error and c.cost_usd == 0 for c in answered)


@pytest.mark.parametrize("kind", ["try", "recheck"])
def test_a_trials_call_is_on_record_before_the_trial_is_stored(
    repo: RunStore, messages_stub: MessagesStub, kind: str
) -> None:
    messages_stub.handler = santa_scenario
    store = RubricStore(repo)
    run_id = None if kind == "try" else 1
    if run_id is not None:  # a past run to re-check
        repo.create_run(spec="A spec.", output=SAMPLE, rubric=RUBRIC, reviewer_b=SONNET, reviewer_c=HAIKU, fixer=SONNET)
    rubric_actions.try_rubric(store, RUBRIC, SAMPLE, "ann", "A spec.", AnthropicReviewer(SONNET), run_id=run_id)
    (note,), (call,) = on_record(repo, messages_stub)
    with Session(repo.engine) as s:
        (trial,) = s.exec(select(TrialRow)).all()
    assert note.trial_key == call.trial_key == trial.trial_key and trial.trial_key.startswith(f"{kind}:")
    assert call.error is None and call.cost_usd > 0


class CannotKeepTrials(RubricStore):
    def record_trial(self, *args, **kwargs):
        raise RuntimeError("database went away")


def test_a_trial_whose_storing_fails_leaves_its_call_on_record(repo: RunStore, messages_stub: MessagesStub) -> None:
    messages_stub.handler = santa_scenario
    with pytest.raises(RuntimeError, match="database went away"):
        rubric_actions.try_rubric(CannotKeepTrials(repo), RUBRIC, SAMPLE, "ann", "A spec.", AnthropicReviewer(SONNET))
    (note,), (call,) = on_record(repo, messages_stub)
    assert note.trial_key == call.trial_key and call.cost_usd > 0


def test_test_connection_asks_only_the_free_model_list(repo: RunStore, messages_stub: MessagesStub) -> None:
    from desk.connection import check_connection

    result = check_connection(provider_of(SONNET))
    assert result.problem is None and SONNET in result.models
    assert [(c["method"], c["path"].split("?")[0]) for c in messages_stub.calls] == [("GET", "/v1/models")]
    assert paid_requests(messages_stub) == Counter()  # nothing billed, so nothing to put on record


def test_an_adapter_with_no_call_log_open_sends_nothing(messages_stub: MessagesStub) -> None:
    client = anthropic.Anthropic(base_url=messages_stub.url, api_key="test")
    request = ReviewRequest(rubric=RUBRIC, spec="A spec.", output=SAMPLE)
    for call in (
        lambda: AnthropicReviewer(SONNET, client=client).review(request, "B"),
        lambda: AnthropicScreen(HAIKU, client=client).screen(SAMPLE, "output"),
    ):
        with pytest.raises(CallNotRecorded, match="no call log is open"):
            call()
    assert messages_stub.calls == []
