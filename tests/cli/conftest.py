"""Fixtures of the command-line tests that start real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from storage.startup import init_db

ROOT = Path(__file__).resolve().parents[2]


QUEUING_PROCESS = """
import sys, time
from storage.runs import RunStore
from storage.startup import init_db
from tests.core.run.test_runner import RUBRIC
repo = RunStore(init_db(sys.argv[1], mark_interrupted=False))
print(repo.create_run(spec="Say it.", output="Acme launched its rocket in 2018.", rubric=RUBRIC, reviewer_b="b",
                      reviewer_c="c", fixer="f"), flush=True)
time.sleep(120)  # alive, holding its run (as a command line whose threads are all busy)
"""


@pytest.fixture
def queued_elsewhere(tmp_path: Path) -> Iterator[tuple[int, subprocess.Popen]]:
    """A run another live process on this host queued (and works itself, once it has a free thread)."""
    url = f"sqlite:///{tmp_path / 'santa.db'}"
    init_db(url, mark_interrupted=False)
    proc = subprocess.Popen(
        [sys.executable, "-c", QUEUING_PROCESS, url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        yield int(proc.stdout.readline()), proc
    finally:
        proc.kill()
        proc.wait()


LIVE_PROCESS = """
import time
from storage.workers import this_worker
print(this_worker(), flush=True)
time.sleep(600)  # alive (as a command line working its runs) until the tests that need it end
"""


@pytest.fixture(scope="module")
def live_worker() -> Iterator[str]:
    """How a live process on this host names itself in a run's claim (host:pid:start), for the module's tests."""
    proc = subprocess.Popen(
        [sys.executable, "-c", LIVE_PROCESS],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def env(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """tests/conftest.py's `env`, its database already there as `init_db` leaves a new one (a copy of the test
    process's template: 0.04 s of CPU where each command line test migrated a new file, 0.2-0.3 s with alembic).
    A command line opening a database that does not exist yet stays covered by tests/cli/test_review.py and the
    other modules whose `cli_env` names a new file."""
    from tests.conftest import migrated_sqlite

    migrated_sqlite(Path(env["DATABASE_URL"].removeprefix("sqlite:///")))
    return env
