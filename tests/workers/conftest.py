"""A fresh PostgreSQL database per test of the task engine."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import PG_URL, _pg_database


@pytest.fixture
def pg_db() -> Iterator[str]:
    """A fresh PostgreSQL database for one test, dropped afterwards."""
    if not PG_URL:
        pytest.skip("SANTA_TEST_POSTGRES_URL not set")
    yield from _pg_database(PG_URL)


@pytest.fixture(autouse=True)
def reachable_database() -> None:
    """Each test starts with the process's outage tracker (desk.outage.OUTAGE, one per process, shared by every
    thread) as a fresh process has it: the database reachable and no stop under way. A test that ended during an
    outage or a stop left it otherwise, and the next test's worker calls then gave up before trying (a CI flake:
    `recover_stalled` retried nothing)."""
    from desk.outage import OUTAGE

    with OUTAGE._lock:
        OUTAGE.away_since, OUTAGE.back_at, OUTAGE._stop_by, OUTAGE._said_away = None, float("-inf"), None, False
        OUTAGE._waiters.clear()
