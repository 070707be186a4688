"""On PostgreSQL the alert pass is a procrastinate periodic task of the workers: a real `santa worker` process
sends an overdue escalation's reminder with nobody on a page, once, after the receiver's outage; two workers
together still send it once."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import timedelta
from pathlib import Path

from sqlalchemy import text

from desk.task_engine import ALERTS, RUNS, task_engine
from santa_core import alerts as core
from storage.alerts import AlertStore
from storage.runs import RunStore
from storage.startup import init_db
from storage.times import utcnow
from tests.conftest import grant
from tests.storage.test_alerts import escalate
from tests.support.receivers import WebhookReceiver
from tests.support.workers import start_worker, stop_worker, wait_until, worker_env

SECRET = "whsec-worker"


def last_pass(runs: RunStore) -> int:
    """The tick of the newest alert pass deferred (one per tick across all workers), once no pass waits or runs."""
    with runs.engine.connect() as conn:
        busy = conn.execute(
            text("SELECT count(*) FROM procrastinate_jobs WHERE task_name = :t AND status IN ('todo', 'doing')"),
            {"t": ALERTS},
        ).scalar_one()
        tick = conn.execute(
            text("SELECT max(defer_timestamp) FROM procrastinate_periodic_defers WHERE task_name = :t"), {"t": ALERTS}
        ).scalar_one()
        return -1 if busy else tick


def test_a_worker_sends_the_overdue_reminder_once_with_nobody_on_a_page(pg_db: str, tmp_path: Path) -> None:
    runs = grant(RunStore(init_db(pg_db, mark_interrupted=False)))
    run_id = escalate(runs)
    runs.set_due(run_id, utcnow() - timedelta(minutes=1), "ann")
    receiver = WebhookReceiver(fail_first=1).start()
    env = worker_env(
        pg_db,
        "http://127.0.0.1:9",
        SANTA_ALERT_EVERY_S="1",
        SANTA_ALERT_BACKOFF_S="0.1",
        SANTA_ALERT_SECRET=SECRET,
        SANTA_ALERT_HOOKS=json.dumps([{"name": "ops", "url": receiver.url(), "events": [core.ESCALATION_OVERDUE]}]),
    )
    workers = [start_worker(env, concurrency=2, log=tmp_path / f"worker{n}.log") for n in range(2)]
    try:
        wait_until("the reminder", lambda: receiver.accepted(), timeout=60)
        ticks: list[int] = []
        wait_until("no pass under way", lambda: ticks.append(last_pass(runs)) or ticks[-1] >= 0, timeout=10)
        tick = ticks[-1]
        wait_until("two more passes", lambda: last_pass(runs) >= tick + 2, timeout=30)  # that send nothing again
        [delivered] = [t for t in AlertStore(runs).log() if t.status == "ok"]
    finally:
        for proc in workers:
            stop_worker(proc)
        receiver.stop()
    [got] = receiver.accepted()
    assert json.loads(got.body)["data"]["run_id"] == run_id
    expected = "sha256=" + hmac.new(SECRET.encode(), got.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(expected, got.headers["X-Santa-Signature"])
    assert len(receiver.received) == 2 and delivered.attempt == 2  # the refused try, the one taken; never again


def test_the_alert_pass_is_not_counted_in_the_runs_queue_figures(pg_db: str) -> None:
    init_db(pg_db, mark_interrupted=False).dispose()
    engine = task_engine(pg_db)
    try:
        engine.sync_app().configure_task(ALERTS).defer(timestamp=0)
        [runs_queue] = [q for q in engine.status().queues if q.queue == RUNS]
        assert (runs_queue.waiting, runs_queue.working) == (0, 0)
    finally:
        engine.close()
