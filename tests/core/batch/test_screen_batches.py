"""A batch sample and an injection screen that is on but cannot run (its model on OpenAI, no OpenAI key), through
the app's wiring (`open_desk` on SQLite, the real SDK against the loopback Messages API for the Claude reviewers).

Reviewed one call at a time, each item's run stops at its screen (a reviewer error, no reviewer asked). Through the
Message Batches API, the screen would only run at each item's gate, after the batch's answers are paid for: so the
batch is not sent, and the sample says why — in the background driver and in a look of the task engine's driver.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desk.wiring import Desk, open_desk
from santa_core.batch.file import read_batch
from santa_core.batch.sample_batch import STOPPED
from santa_core.batch.store import BatchConfig
from santa_core.models import RunStatus
from santa_core.rubrics.library import load_builtin
from tests.conftest import grant
from tests.core.batch.test_driver import SPEC, planted_answer, planted_csv
from tests.support.messages_api import MessagesStub

SCREEN_PROBLEM = "the injection screen is on but cannot run: the screening model cannot be called here"


@pytest.fixture
def desk(tmp_path: Path, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch) -> Iterator[Desk]:
    messages_stub.handler = planted_answer
    messages_stub.batch_end_after_polls = 1
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("SANTA_SCREEN", raising=False)
    monkeypatch.setenv("SANTA_SCREEN_MODEL", "openai:gpt-5.4-nano")
    monkeypatch.setenv("SANTA_BATCH_POLL_S", "0.01")
    desk = open_desk(f"sqlite:///{tmp_path / 'santa.db'}", workers=2, mark_interrupted=False)
    grant(desk.runs)
    yield desk
    desk.close()


def new_sample(desk: Desk, message_batches: bool) -> int:
    data, _ = planted_csv(20)
    file = read_batch(data, "emails.csv", strata=["template"])
    config = BatchConfig(
        name="emails.csv",
        file_format=file.format,
        columns=file.columns,
        id_column=file.id_column,
        output_column=file.output_column,
        spec=SPEC,
        strata=file.strata,
        rubric=load_builtin("general"),
        reviewer_b="claude-haiku-5-5",
        reviewer_c="claude-sonnet-5-5",
        fixer="claude-opus-5-5",
        message_batches=message_batches,
        sample_rate=0.25,
        min_sample=5,
    )
    return desk.batches.draw(desk.batches.create(file, config, "ann"), "ann")


def test_each_item_of_a_direct_sample_stops_at_its_screen(desk: Desk, messages_stub: MessagesStub) -> None:
    sample_id = new_sample(desk, message_batches=False)
    desk.batches.drive(sample_id)
    progress = desk.batches.wait(sample_id, timeout=60)
    assert progress.finished and progress.errors == progress.size == 5 and progress.nice == 0
    for run_id in desk.batches.store.run_ids(sample_id):
        state = desk.runs.load_run(run_id).state
        assert state.status == RunStatus.SAMPLED and "OPENAI_API_KEY" in state.note
        assert state.note.startswith("batch sample: injection screen of the spec and output failed")
    assert messages_stub.calls == []  # no reviewer was asked


@pytest.mark.parametrize("how", ["background", "look by look"])
def test_a_message_batch_is_not_sent_while_the_screen_cannot_run(
    desk: Desk, messages_stub: MessagesStub, how: str
) -> None:
    sample_id = new_sample(desk, message_batches=True)
    if how == "background":
        desk.batches.drive(sample_id).result(timeout=60)
    else:
        assert desk.batches.step(sample_id) is None  # nothing to look at again until a person acts
    progress = desk.batches.store.progress(sample_id)
    assert progress.api_batch_id is None and progress.api_status.startswith(f"{STOPPED}{SCREEN_PROBLEM}")
    assert "OPENAI_API_KEY" in progress.api_status
    assert messages_stub.calls == [] and desk.batches.store.run_ids(sample_id) == []


@pytest.mark.parametrize("how", ["background", "look by look"])
def test_a_message_batch_is_not_sent_while_the_screens_provider_does_not_answer(
    desk: Desk, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    # A key exists, so the screen can be built; nothing answers at its provider's address, so every item would fail
    # closed at its gate after the reviewers' Message Batch was paid for.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    sample_id = new_sample(desk, message_batches=True)
    if how == "background":
        desk.batches.drive(sample_id).result(timeout=60)
    else:
        assert desk.batches.step(sample_id) is None
    progress = desk.batches.store.progress(sample_id)
    assert progress.api_batch_id is None
    assert progress.api_status.startswith(f"{STOPPED}the injection screen's provider openai does not answer")
    assert messages_stub.calls == [] and desk.batches.store.run_ids(sample_id) == []


def test_an_item_left_out_of_a_message_batch_is_reviewed_even_if_the_detector_would_now_pass_it(
    desk: Desk, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The detector's answer about an item once differed between the send and the collection (another process, a
    # check that could not finish once): the item must still be reviewed, and the sample finish.
    from santa_core.batch import sample_batch

    monkeypatch.setenv("SANTA_SCREEN", "off")
    sample_id = new_sample(desk, message_batches=True)
    left_out = desk.batches.store.pending_items(sample_id)[0]
    outputs = {it.id: it.output for it in desk.batches.store.items(desk.batches.store.progress(sample_id).batch_id)}
    # Flagged while the batch is being sent, clean from then on.
    monkeypatch.setattr(
        sample_batch,
        "injected",
        lambda spec, output, ctx=None: output == outputs[left_out] and not messages_stub.batch_ids(),
    )
    desk.batches.drive(sample_id).result(timeout=60)
    progress = desk.batches.wait(sample_id, timeout=60)
    assert progress.finished and left_out not in desk.batches.store.pending_items(sample_id)
    sent = messages_stub.batch(messages_stub.batch_ids()[0]).requests
    assert len(sent) == 2 * (progress.size - 1), len(sent)  # B and C of every item but the one left out
    assert len(messages_stub.message_calls()) == 2  # and the one left out reviewed on its own
