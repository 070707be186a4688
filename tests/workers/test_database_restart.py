"""A PostgreSQL restart mid-run: a worker holding four runs loses every connection while their reviews are in
flight. It keeps running, its worker loop starts again once the database answers, the jobs cut short are
retried and their runs taken over from the last committed step: every run ships, and no review that was
stored is asked for again. Runs on a cluster of its own (the shared one must not restart under other tests)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine

from desk.task_engine import task_engine
from santa_core.models import RunStatus
from storage.db import normalise_url
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import PG_URL
from tests.support.outage import OwnCluster
from tests.support.workers import (
    answer_after,
    calls_after_stored_review,
    claimed_by,
    reviews_per_slot,
    start_worker,
    statuses,
    stop_worker,
    wait_until,
    worker_env,
)
from tests.workers.test_worker_behaviour import new_run


@pytest.fixture
def own_cluster() -> Iterator[OwnCluster]:
    """A throwaway PostgreSQL cluster of this test's own (it restarts it)."""
    if not PG_URL:
        pytest.skip("SANTA_TEST_POSTGRES_URL not set (no PostgreSQL here)")
    with OwnCluster(prefix="santa-pg-restart-") as cluster:
        yield cluster


def test_a_database_restart_mid_run_loses_no_run(own_cluster, messages_stub) -> None:
    messages_stub.handler = answer_after(1.5)
    url = normalise_url(own_cluster.url)  # the cluster is this test's alone: its default database will do
    runs = RunStore(init_db(url, mark_interrupted=False))
    engine = task_engine(url)
    ids = [new_run(runs) for _ in range(6)]
    worker = start_worker(worker_env(url, messages_stub.url), concurrency=4)
    db = create_engine(url, pool_pre_ping=True)  # the test's own reads survive the restart too
    try:
        for run_id in ids:
            engine.enqueue(runs, run_id, "cli")
        wait_until("the worker to hold four runs", lambda: len(claimed_by(db, worker.pid)) == 4, timeout=60, every=0.05)
        own_cluster.restart()
        wait_until(
            "every run to ship", lambda: set(statuses(db, ids).values()) == {RunStatus.SHIPPED}, timeout=120, every=0.5
        )
        assert worker.poll() is None  # it rode the restart out
    finally:
        stop_worker(worker)
        engine.close()
        db.dispose()
        runs.engine.dispose()
    check = create_engine(url)
    assert max(reviews_per_slot(check).values()) == 1
    assert calls_after_stored_review(check) == []
    check.dispose()
