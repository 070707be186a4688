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
    cfg = BatchConfig(
        name=f"{prefix}.csv",
        file_format=file.format,
        columns=file.columns,
        id_column=file.id_column,
        output_column=file.output_column,
        spec=SPEC,
        strata=file.strata,
        rubric=load_builtin("general"),
        reviewer_b="claude-haiku-4-5",
        reviewer_c="claude-sonnet-4-5",
        fixer="claude-haiku-4-5",
        sample_rate=1.0,
        seed=1,
        **config,
    )
    items = [
        ItemIn(key=it.key, output=it.output, spec=it.spec, strata=it.strata, record=it.record) for it in file.items
    ]
    return store.draw_sample(store.create(cfg, items, "ann"), "ann")


def drive_jobs(url: str) -> list[tuple]:
    with create_engine(normalise_url(url)).connect() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                text(
                    "SELECT (args->>'sample_id')::int, queue_name, priority, lock, status::text "
                    "FROM procrastinate_jobs WHERE task_name = :task ORDER BY id"
                ),
                {"task": DRIVE_SAMPLE},
            ).all()
        ]


def test_samples_are_driven_by_jobs_that_hold_no_slot_and_survive_a_killed_worker(
    pg_db: str, messages_stub: MessagesStub, tmp_path
) -> None:
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
    assert drive_jobs(url) == [(s, BATCH, DRIVE_PRIORITY, f"sample-{s}", "todo") for s in (via_api, direct)]

    env = worker_env(url, messages_stub.url, SANTA_BATCH_POLL_S="0.3")
    logs = [tmp_path / "w1.log", tmp_path / "w2.log"]
    first = start_worker(env, concurrency=1, log=logs[0])  # one slot: a waiting sample must not hold it
    second = None
    try:
        wait_until("the Message Batch to be sent", lambda: store.progress(via_api).api_batch_id is not None, 60)
        wait_until("the direct sample to finish", lambda: store.progress(direct).finished_at is not None, 120)
        run_id = new_run(runs)  # an editor's run, while the Message Batch is still in progress
        engine.enqueue(runs, run_id, "cli")
        wait_until(
            "the editor's run to settle",
            lambda: (
                statuses(runs.engine, [run_id])[run_id] != RunStatus.QUEUED
                and statuses(runs.engine, [run_id])[run_id] != RunStatus.RUNNING
            ),
            60,
        )
        progress = store.progress(via_api)
        assert progress.api_status == "in_progress" and progress.finished_at is None and progress.done == 0
        assert engine.driving(via_api) and not engine.driving(direct)

        second = start_worker(env, concurrency=2, log=logs[1])  # it defers a fresh look at each unfinished sample
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
        failed = {r.key for r in reviews if not r.nice}
        assert failed == {r.key for r in reviews if r.key.endswith(("00", "04", "08"))}
        grouped = store.patterns(progress.batch_id, sample_id)  # by the worker's look that closed the sample
        assert grouped and sum(p.pattern["count"] for p in grouped) == len(failed)
    assert len(messages_stub.batch_ids()) == 1  # sent once, polled by two workers, collected once
    assert all(count == 1 for count in answered_calls_per_slot(runs.engine).values())
    assert calls_after_stored_review(runs.engine) == []
    assert [s for s, *_ in drive_jobs(url)] == []  # every look done (and deleted), none left waiting
    assert len(messages_stub.message_calls()) == 2 * 12 + 2  # the direct sample's and the editor's run's reviews:
    # the Message Batch sample's reviews came back from the batch, never asked one by one


def test_a_look_under_way_on_a_dead_worker_is_recovered_while_another_look_waits(pg_db: str, monkeypatch) -> None:
    """A worker dies holding a look; meanwhile a fresh look was deferred (a worker starting, Resume, Try again).
    Recovery sets the dead look back to waiting, and a live worker then takes both, one after the other."""
    import asyncio

    import psycopg

    monkeypatch.setenv("SANTA_WORKER_HEARTBEAT_S", "0.2")
    monkeypatch.setenv("SANTA_WORKER_STALLED_S", "0.5")
    engine = task_engine(normalise_url(pg_db))
    assert engine.defer_drive(7, asdict(Look()))
    with psycopg.connect(engine.conninfo, autocommit=True) as conn:
        dead = conn.execute("SELECT procrastinate_register_worker_v1()").fetchone()[0]
        taken = conn.execute("SELECT id FROM procrastinate_fetch_job_v2(ARRAY['batch'], %s)", (dead,)).fetchone()[0]
        assert engine.defer_drive(7, asdict(Look()))  # none waits now: a fresh look is deferred
        assert not engine.defer_drive(7, asdict(Look()))  # one waiting is enough
        wait_until(
            "the worker to count as dead",
            lambda: conn.execute(
                "SELECT last_heartbeat < now() - interval '0.6 seconds' FROM procrastinate_workers WHERE id = %s",
                (dead,),
            ).fetchone()[0],
            10,
            0.1,
        )

        async def recover() -> int:
            async with engine.app.open_async():
                return await engine.recover_stalled()

        assert asyncio.run(recover()) == 1
        live = conn.execute("SELECT procrastinate_register_worker_v1()").fetchone()[0]
        first = conn.execute("SELECT id FROM procrastinate_fetch_job_v2(ARRAY['batch'], %s)", (live,)).fetchone()[0]
        assert first == taken  # the recovered look goes first; the sample's lock holds the other back meanwhile
        assert (
            conn.execute("SELECT id FROM procrastinate_fetch_job_v2(ARRAY['batch'], %s)", (live,)).fetchone()[0] is None
        )


def test_a_look_that_fails_stops_a_message_batch_sample_with_the_reason(pg_db: str) -> None:
    """A worker with no Anthropic key looks at a Message Batch sample: the look fails, the chain ends, and the sample
    says why, so the Batch page offers Try again instead of showing it reviewing for ever."""
    from types import SimpleNamespace

    import pytest

    from desk.job_host import JobHost
    from desk.queued import QueuedBatchDriver
    from santa_core.batch.store import BatchProblem
    from ui.batch import stopped_why

    url = normalise_url(pg_db)
    runs = grant(RunStore(init_db(url, mark_interrupted=False)))
    store = BatchStore(runs)
    sample_id = new_sample(store, "api", 4, message_batches=True)
    driver = QueuedBatchDriver(task_engine(url), runs, store, None, lambda name: None, client_for=None)
    try:
        with pytest.raises(BatchProblem, match="needs an Anthropic API key"):
            JobHost(runs, SimpleNamespace(stop=None), driver).drive_sample(
                sample_id, asdict(Look())
            )  # no run is driven
        progress = store.progress(sample_id)
        assert progress.api_status == "stopped: the Message Batches API needs an Anthropic API key"
        assert (
            stopped_why(progress, driving=False, message_batches=True) == "the Message Batches API kept failing (above)"
        )
    finally:
        driver.shutdown()


def test_try_again_makes_a_look_waiting_for_later_due_at_once_with_a_fresh_start(pg_db: str) -> None:
    """A Message Batch poll backing off waits up to 10 min for its next look; a person's Try again (or a start)
    does not wait behind it: the waiting look is due at once and its backoff starts over."""
    engine = task_engine(normalise_url(pg_db))
    assert engine.defer_drive(3, asdict(Look(after_s=600, resume=False, failures=5)))
    assert not engine.defer_drive(3, asdict(Look()))  # a look's own next look: the waiting one is enough
    with create_engine(normalise_url(pg_db)).connect() as conn:

        def waiting() -> tuple:
            # Each reading in a transaction of its own, as a worker's fetch: now() is when it began.
            with conn.begin():
                return tuple(
                    conn.execute(
                        text(
                            "SELECT scheduled_at IS NULL OR scheduled_at <= now(), args->'look' "
                            "FROM procrastinate_jobs WHERE task_name = :t"
                        ),
                        {"t": DRIVE_SAMPLE},
                    ).one()
                )

        assert waiting() == (False, asdict(Look(after_s=600, resume=False, failures=5)))
        assert not engine.defer_drive(3, asdict(Look()), now=True)  # Try again: still one look, due now
        assert waiting() == (True, asdict(Look()))


def test_the_room_for_batch_runs_is_counted_per_provider(monkeypatch) -> None:
    from desk.batch_lanes import batch_room

    monkeypatch.setenv("SANTA_BATCH_LANES", "3")
    claude, gpt = ("claude-haiku-4-5", "claude-sonnet-4-5"), ("openai:gpt-5.4-mini", "openai:gpt-5.4")
    mixed = ("claude-haiku-4-5", "openai:gpt-5.4-mini")
    assert batch_room([], *claude) == 3
    assert batch_room([claude, claude], *claude) == 1
    assert batch_room([claude, claude, gpt], *gpt) == 2  # another provider's runs leave this one's room alone
    assert batch_room([mixed, mixed], *claude) == 1  # a mixed pair's runs count against both of its providers
    assert batch_room([claude, gpt, gpt], *mixed) == 1  # a mixed batch gets the least room of its two providers
    assert batch_room([claude] * 5, *claude) == 0


def test_batch_runs_in_flight_stay_within_the_limit_per_provider_across_samples(
    pg_db: str, messages_stub: MessagesStub, tmp_path
) -> None:
    """Two batches on the same provider, each allowing 4 reviews at once: with SANTA_BATCH_LANES=2 the looks start
    at most 2 of their runs at a time between them (looks at the two samples start reviews one at a time)."""
    url = normalise_url(pg_db)
    runs = grant(RunStore(init_db(url, mark_interrupted=False)))
    store = BatchStore(runs)
    engine = task_engine(url)
    messages_stub.handler = answer_after(0.3)
    samples = [new_sample(store, f"s{i}", 8, concurrency=4) for i in range(2)]
    for sample_id in samples:
        engine.defer_drive(sample_id, asdict(Look()))
    worker = start_worker(
        worker_env(url, messages_stub.url, SANTA_BATCH_LANES="2"), concurrency=8, log=tmp_path / "w.log"
    )
    most = 0
    try:

        def finished() -> bool:
            nonlocal most
            most = max(most, len(runs.active_batch_reviewers()))
            return all(store.progress(s).finished_at is not None for s in samples)

        wait_until("both samples to finish", finished, 120, 0.05)
    finally:
        stop_worker(worker)
    assert most == 2  # without the limit: up to 8 (and 4 when two looks counted at the same moment)
    assert all(store.progress(s).done == 8 for s in samples)
