"""A `santa worker` process on PostgreSQL whose injection screen is on but cannot run (its model on OpenAI, no
OpenAI key in the worker's environment): the run it takes from the queue stops at its screen as "could not be reviewed",
and the loopback Messages API (the Claude reviewers, through the real SDK) receives no request."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine

from desk.task_engine import task_engine
from santa_core.models import EscalationReason, RunStatus
from storage.db import normalise_url
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import PG_URL
from tests.support.messages_api import MessagesStub
from tests.support.workers import start_worker, statuses, stop_worker, wait_until, worker_env
from tests.workers.test_worker_behaviour import new_run


@pytest.mark.skipif(not PG_URL, reason="SANTA_TEST_POSTGRES_URL not set")
def test_a_workers_run_stops_at_a_screen_that_cannot_run(pg_db: str, messages_stub: MessagesStub) -> None:
    runs = RunStore(init_db(pg_db, mark_interrupted=False))
    engine = task_engine(pg_db)
    run_id = new_run(runs)
    engine.enqueue(runs, run_id, "cli")
    env = worker_env(pg_db, messages_stub.url, SANTA_SCREEN_MODEL="openai:gpt-5.4-nano")
    worker = start_worker(env, concurrency=1, fresh=True)  # the worker entry point's real start (the rest fork)
    try:
        db = create_engine(normalise_url(pg_db))
        wait_until("the run to escalate", lambda: statuses(db, [run_id])[run_id] == RunStatus.ESCALATED, timeout=90)
    finally:
        stop_worker(worker)
        engine.close()
    state = runs.load_run(run_id).state
    assert state.escalation_reason == EscalationReason.PROVIDER_FAILED
    assert state.note.startswith(
        "injection screen of the spec and output failed (the screening model cannot be "
        "called here: no API key for provider 'openai'"
    )
    assert "no reviewer was asked" in state.note
    assert messages_stub.calls == []
