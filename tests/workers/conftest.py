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
