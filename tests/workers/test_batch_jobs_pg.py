"""Batch samples driven by the task engine on the throwaway PostgreSQL: a sample is a chain of short drive jobs
(`santa.drive_sample`, one look each), so a worker's slot is never held while a sample's reviews or its Message
Batch run; the chain lives in the database, so a worker killed mid-chain loses nothing and the Message Batch is
polled and collected by another worker, sent once."""

from __future__ import annotations

import csv
import io
import signal
from dataclasses import asdict

from sqlalchemy import create_engine, text

from desk.task_engine import BATCH, DRIVE_PRIORITY, DRIVE_SAMPLE, task_engine
from santa_core.batch.driver import Look
from santa_core.batch.file import read_batch
from santa_core.batch.store import BatchConfig, ItemIn
from santa_core.models import RunStatus
from santa_core.rubrics.library import load_builtin
from storage.batches import BatchStore
from storage.db import normalise_url
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant
from tests.support.messages_api import MessagesStub, as_reply, santa_scenario
from tests.support.workers import (
    answer_after,
    answered_calls_per_slot,
    calls_after_stored_review,
    start_worker,
    statuses,
    stop_worker,
    wait_until,
    worker_env,
)
from tests.workers.test_worker_behaviour import new_run

SPEC = "Write a short customer e-mail for the template named in the item."


def batch_file(rows: int, prefix: str):
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["id", "template", "output"])
    for i in range(rows):
        text_ = f"Hello customer {i}, thanks for your order." + (" DEFECT" if i % 4 == 0 else "")
        writer.writerow([f"{prefix}-{i:02d}", ("promo", "welcome")[i % 2], text_])
    return read_batch(buf.getvalue().encode("utf-8"), f"{prefix}.csv", strata=["template"])


def new_sample(store: BatchStore, prefix: str, rows: int, **config: object) -> int:
    """A batch of `rows` items, every one of them in its first sample (drawn, not started): the sample's id."""
    file = batch_file(rows, prefix)
    cfg = BatchConfig(name=f"{prefix}.csv", file_format=file.format, columns=file.columns, id_column=file.id_column,
                      output_column=file.output_column, spec=SPEC, strata=file.strata, rubric=load_builtin("general"),
                      reviewer_b="claude-haiku-4-5", reviewer_c="claude-sonnet-4-5", fixer="claude-haiku-4-5",
                      sample_rate=1.0, seed=1, **config)
    items = [ItemIn(key=it.key, output=it.output, spec=it.spec, strata=it.strata, record=it.record) for it in file.items]
    return store.draw_sample(store.create(cfg, items, "ann"), "ann")


def drive_jobs(url: str) -> list[tuple]:
    with create_engine(normalise_url(url)).connect() as conn:
        return [tuple(r) for r in conn.execute(text(
            "SELECT (args->>'sample_id')::int, queue_name, priority, lock, queueing_lock, status::text "
            "FROM procrastinate_jobs WHERE task_name = :task ORDER BY id"), {"task": DRIVE_SAMPLE}).all()]


def test_samples_are_driven_by_jobs_that_hold_no_slot_and_survive_a_killed_worker(
        pg_db: str, messages_stub: MessagesStub, tmp_path) -> None:
    url = normalise_url(pg_db)
    runs = grant(RunStore(init_db(url, mark_interrupted=False)))
    store = BatchStore(runs)
    engine = task_engine(url)
    messages_stub.handler = answer_after(0.2)
    via_api = new_sample(store, "api", 8, message_batches=True)  # its Message Batch ends only when told below
    direct = new_sample(store, "direct", 12, concurrency=2)
    for sample_id in (via_api, direct):
        assert engine.defer_drive(sample_id, asdict(Look()))
        assert not engine.defer_drive(sample_id, asdict(Look()))  # a look already waits: one is enough
    assert drive_jobs(url) == [(s, BATCH, DRIVE_PRIORITY, f"sample-{s}", f"sample-{s}", "todo")
                               for s in (via_api, direct)]

    env = worker_env(url, messages_stub.url, SANTA_BATCH_POLL_S="0.3")
    logs = [tmp_path / "w1.log", tmp_path / "w2.log"]
    first = start_worker(env, concurrency=1, log=logs[0])  # one slot: a waiting sample must not hold it
    second = None
    try:
        wait_until("the Message Batch to be sent", lambda: store.progress(via_api).api_batch_id is not None, 60)
        wait_until("the direct sample to finish", lambda: store.progress(direct).finished_at is not None, 120)
        run_id = new_run(runs)  # an editor's run, while the Message Batch is still in progress
        engine.enqueue(runs, run_id, "cli")
        wait_until("the editor's run to settle", lambda: statuses(runs.engine, [run_id])[run_id] != RunStatus.QUEUED
                   and statuses(runs.engine, [run_id])[run_id] != RunStatus.RUNNING, 60)
        progress = store.progress(via_api)
        assert progress.api_status == "in_progress" and progress.finished_at is None and progress.done == 0
        assert engine.driving(via_api) and not engine.driving(direct)

        second = start_worker(env, concurrency=2, log=logs[1])
        wait_until("the second worker to poll", lambda: messages_stub.batch(None).polls >= 2, 30)
        stop_worker(first, signal.SIGKILL)  # mid-chain: whichever look it held is retried by the other
        messages_stub.handler = lambda body: as_reply(santa_scenario(body), body)
        messages_stub.end_batch()
        wait_until("the Message Batch sample to finish", lambda: store.progress(via_api).finished_at is not None, 90)
    finally:
        for proc in (first, second):
            if proc is not None:
                stop_worker(proc)

    for sample_id, size in ((via_api, 8), (direct, 12)):
        progress = store.progress(sample_id)
        assert progress.finished and progress.done == size and progress.errors == 0
        reviews = store.reviews(sample_id)
        assert {r.key for r in reviews if not r.nice} == {r.key for r in reviews if r.key.endswith(("00", "04", "08"))}
    assert len(messages_stub.batch_ids()) == 1  # sent once, polled by two workers, collected once
    assert all(count == 1 for count in answered_calls_per_slot(runs.engine).values())
    assert calls_after_stored_review(runs.engine) == []
    assert [s for s, *_ in drive_jobs(url)] == []  # every look done (and deleted), none left waiting
    assert len(messages_stub.message_calls()) == 2 * 12 + 2  # the direct sample's and the editor's run's reviews:
    # the Message Batch sample's reviews came back from the batch, never asked one by one
