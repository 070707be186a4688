"""The Batch page while a sample is reviewed: pause and resume, a sample cut short by a restart is
picked up when the app starts again, a sample sent through the Message Batches API is tracked
until it ends, stopped reviews are said and tried again (and reviews another process may still
retry are not called stopped), the time left and the state of a batch. The reviewers and the fix agent are the real Anthropic adapters talking to the loopback stub
(`messages_stub`); background work is awaited by polling the database and re-running the page, as
the page's polling fragment would.
"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlmodel import Session

from desk import open_desk
from santa_core.batch.file import read_batch
from santa_core.batch.store import BatchConfig, ItemIn, SampleProgress
from santa_core.rubrics.library import load_builtin
from storage.batches import BatchStore
from storage.runs import RunStore
from storage.tables import RunRow
from tests.core.batch.test_driver import SPEC, planted_csv
from tests.support.batch_page import batch_answer, create_batch, keys, open_batch, sample_in, texts, upload, wait_until
from tests.support.messages_api import MessagesStub
from ui.batch import eta, stopped_why
from ui.batch_list import state_of


def test_pause_stops_new_reviews_and_resume_finishes_the_sample(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    release = threading.Event()

    def held(body: dict) -> dict:
        release.wait(timeout=30)  # the first review waits here until the test has paused the batch
        return batch_answer(body)

    messages_stub.handler = held
    store = BatchStore(desk_env)
    try:
        at = upload(open_batch(), planted_csv(40)[0], spec=SPEC, concurrency=1)
        at.button(key="batch_create").click().run()
        [batch] = store.batches()
        sample = store.get(batch.id).latest
        assert sample is not None and sample.size == 6  # 15 % of 40, rounded up
        wait_until("the first review to start", lambda: len(store.run_ids(sample.id)) == 1, at)
        assert "Sample 1: 0 of 6 items reviewed" in texts(at)
        at.button(key="batch_pause").click().run()
        assert store.is_paused(batch.id) and "Paused" in texts(at) and "batch_resume" in keys(at)
    finally:
        release.set()
    # The review in flight finishes and is kept; with the batch paused, no other one starts.
    wait_until("the review in flight", lambda: store.progress(sample.id).done == 1, at)
    assert len(store.run_ids(sample.id)) == 1 and store.progress(sample.id).finished_at is None
    figures = {m.label: m.value for m in at.metric}
    assert "1 of 6 items reviewed" in texts(at) and figures["Time left"] == "paused"
    assert int(figures["NICE"]) + int(figures["NAUGHTY"]) == 1
    at.button(key="batch_resume").click().run()
    assert not store.is_paused(batch.id)
    done = sample_in(store, batch.id, 1, at)
    assert done.done == 6 and len(store.run_ids(sample.id)) == 6
    assert "Sample 1:" in texts(at) and "batch_pause" not in keys(at)


def test_a_sample_cut_short_by_a_restart_is_reviewed_when_the_app_starts_again(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    messages_stub.handler = batch_answer
    data, _ = planted_csv(40)
    file = read_batch(data, "emails.csv", strata=["template"])
    config = BatchConfig(
        name="emails.csv",
        file_format=file.format,
        columns=file.columns,
        id_column="id",
        output_column="output",
        spec=SPEC,
        strata=file.strata,
        rubric=load_builtin("general"),
        reviewer_b="claude-sonnet-5-5",
        reviewer_c="claude-haiku-5-5",
        fixer="claude-opus-5-5",
    )
    store = BatchStore(desk_env)
    batch_id = store.create(
        config, [ItemIn(key=it.key, output=it.output, strata=it.strata, record=it.record) for it in file.items], "ann"
    )
    sample_id = store.draw_sample(batch_id, "ann")  # drawn, then the process died: no review started
    assert store.run_ids(sample_id) == []
    at = open_batch(batch_id)  # a new process: the desk opens and picks the sample up
    sample_in(store, batch_id, 1, at)
    assert len(store.run_ids(sample_id)) == 6 and "Sample 1:" in texts(at)


def test_a_sample_through_the_message_batches_api_is_tracked_until_it_ends(
    desk_env: RunStore, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SANTA_BATCH_POLL_S", "0.05")  # the desk polls the stub often (read when it opens)
    messages_stub.handler = batch_answer
    store = BatchStore(desk_env)
    at = upload(open_batch(), planted_csv(40)[0], spec=SPEC, message_batches=True)
    assert "through the Message Batches API (about half price)" in str([m.help for m in at.metric])
    at.button(key="batch_create").click().run()
    [batch] = store.batches()
    sample = store.get(batch.id).latest
    wait_until("the Message Batch", lambda: store.progress(sample.id).api_status == "in_progress", at)
    [api_id] = messages_stub.batch_ids()
    assert f"Message Batch {api_id}: in_progress" in texts(at)
    # Sent: Pause could not hold it back, so it is not offered (the page says why).
    assert "batch_pause" not in keys(at) and "A Message Batch that was sent cannot be paused" in texts(at)
    assert {m.label: m.value for m in at.metric}["Time left"] == "—"
    messages_stub.end_batch(api_id)
    done = sample_in(store, batch.id, 1, at)
    assert done.api_status == "ended" and done.done == done.size == 6
    assert f"Sample 1: {done.nice} NICE, {done.naughty} NAUGHTY of 6" in texts(at)
    assert not messages_stub.message_calls()  # every review came back through the batch, none one by one


def test_a_sample_whose_reviews_stopped_says_so_and_try_again_finishes_it(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    from santa_core.run import engine
    from santa_core.run.runner import advance_run

    messages_stub.handler = batch_answer
    desk = open_desk(mark_interrupted=False)
    try:
        batch_id = create_batch(desk, planted_csv(40)[0])
        desk.batches.pause(batch_id, "ann")  # so the app's start does not pick the sample up
        sample_id = desk.batches.store.draw_sample(batch_id, "ann")
        run_id = desk.batches.store.start_review(sample_id, desk.batches.store.pending_items(sample_id)[0])
        state = advance_run(desk.runs, run_id, desk.runs.load_run(run_id).state, engine.Claim(), "worker")
        advance_run(desk.runs, run_id, state, engine.Interrupt(note="worker error: OperationalError"), "system")
    finally:
        desk.close()
    with Session(desk_env.engine) as s, s.begin():  # the worker error was a minute ago
        row = s.get(RunRow, run_id)
        row.updated_at = row.updated_at - timedelta(minutes=1)
    store = BatchStore(desk_env)
    at = open_batch(batch_id)
    assert "Reviewing stopped" not in texts(at) and "Paused" in texts(at)  # paused: not stalled
    store.set_paused(batch_id, False, "ann")  # unpaused elsewhere, with nobody driving the sample here
    at.run()
    shown = texts(at)
    assert "Reviewing stopped: 1 review(s) stopped on a worker error and no review of this sample is running" in shown
    assert "batch_pause" not in keys(at)
    assert any(e.label.startswith("Sampled items") for e in at.expander)  # with the links to their runs
    at.button(key="batch_retry").click().run()
    assert sample_in(store, batch_id, 1, at).finished
    assert store.progress(sample_id).interrupted == 0 and "Reviewing stopped" not in texts(at)
    assert [e.actor for e in desk_env.audit.events(action="batch.retried")] == ["local"]


# --- pure pieces -------------------------------------------------------------------------------------


def progress(done: int, size: int = 30, seconds: float = 0.0) -> SampleProgress:
    from datetime import UTC, datetime

    return SampleProgress(
        id=1,
        batch_id=1,
        number=1,
        seed=1,
        size=size,
        created_at=datetime.now(UTC),
        finished_at=None,
        api_batch_id=None,
        api_status=None,
        done=done,
        nice=done,
        naughty=0,
        errors=0,
        cost_usd=0.0,
        seconds_done=seconds,
    )


@pytest.mark.parametrize(
    "done, seconds, paused, api, expected",
    [
        pytest.param(0, 0.0, False, False, "—", id="nothing-yet"),
        pytest.param(10, 20.0, False, False, "~40 s", id="seconds"),  # 20 s / 10 × 20 left = 40 s
        pytest.param(3, 60.0, False, False, "~9 min", id="minutes"),  # 60 / 3 × 27 = 540 s = 9 min
        pytest.param(1, 600.0, False, False, "~4.8 h", id="hours"),  # 600 × 29 = 17,400 s = 4.83 h
        pytest.param(10, 20.0, True, False, "paused", id="paused"),
        pytest.param(10, 20.0, False, True, "—", id="message-batches"),
    ],
)
def test_eta_from_the_pace_so_far(done: int, seconds: float, paused: bool, api: bool, expected: str) -> None:
    assert eta(progress(done, seconds=seconds), paused, api) == expected


def test_state_of_a_batch() -> None:
    from datetime import UTC, datetime

    from santa_core.batch.store import Batch

    config = BatchConfig(
        name="x.csv",
        file_format="csv",
        columns=["id", "output"],
        id_column="id",
        output_column="output",
        spec=SPEC,
        rubric=load_builtin("general"),
        reviewer_b="b",
        reviewer_c="c",
        fixer="f",
    )
    batch = Batch(
        id=1,
        name="x.csv",
        created_at=datetime.now(UTC),
        created_by="ann",
        config=config,
        paused=False,
        items=40,
        samples=[],
    )
    assert state_of(batch, 0) == "no sample yet"
    running = progress(2, 6)
    assert state_of(batch.model_copy(update={"samples": [running]}), 0) == "reviewing sample 1 (2/6)"
    assert state_of(batch.model_copy(update={"samples": [running], "paused": True}), 0) == "paused sample 1 (2/6)"
    finished = running.model_copy(update={"done": 6, "nice": 6, "finished_at": datetime.now(UTC)})
    assert state_of(batch.model_copy(update={"samples": [finished]}), 0) == "clean after sample 1"
    failed = finished.model_copy(update={"nice": 4, "naughty": 2})
    assert state_of(batch.model_copy(update={"samples": [failed]}), 1) == "sample 1: 1 pattern(s) to decide"


def test_interrupted_reviews_another_process_may_still_retry_are_not_called_stopped() -> None:
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 1, 1, tzinfo=UTC)

    def why(
        driving: bool = False,
        active: int = 0,
        ago_s: float | None = 60,
        api_status: str | None = None,
        interrupted: int = 1,
        api: bool = False,
        done: int = 2,
    ) -> str | None:
        p = progress(done).model_copy(
            update={
                "interrupted": interrupted,
                "active": active,
                "api_status": api_status,
                "created_at": now - timedelta(1),
                "last_activity": None if ago_s is None else now - timedelta(seconds=ago_s),
            }
        )
        return stopped_why(p, driving, api, now)

    assert why() == "1 review(s) stopped on a worker error and no review of this sample is running"
    assert why(driving=True) is None  # this process drives it
    assert why(active=2) is None  # another process's reviews are running
    assert why(ago_s=5) is None  # a driver may be waiting to retry (2, 4, 8 s)
    assert why(done=30) is None  # finished
    assert why(interrupted=0) == "no review of this sample is running (the process reviewing it stopped)"
    assert why(interrupted=0, ago_s=None) is not None  # drawn a day ago, never started
    assert why(interrupted=0, api=True) is None  # a Message Batch has no runs until it is collected
    assert why(api_status="error: rate limited; trying again", interrupted=0, api=True) is None  # still polling
    assert why(api_status="stopped: not found", interrupted=0, api=True) == (
        "the Message Batches API kept failing (above)"
    )
