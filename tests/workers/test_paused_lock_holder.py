"""A process paused inside a transaction does not hold the others up: the server ends its session after
SANTA_DB_IDLE_TX_S, its row locks go with it, and its write is refused when it comes back.

Why: a worker taken for dead while paused (SIGSTOP, a frozen VM) kept a lock on its run's row, and the worker
taking the run over waited on it for as long as the pause lasted (a CI flake of
test_recovery.py::test_a_worker_taken_for_dead_that_comes_back_pays_and_decides_nothing_twice)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from sqlalchemy import create_engine, text

from storage.db import make_engine, normalise_url
from tests.support.forked import python_code

REPO = Path(__file__).resolve().parents[2]
HOLDER = """
import sys
from sqlalchemy import text
from storage.db import make_engine
with make_engine(sys.argv[1]).connect() as conn:
    conn.execute(text("UPDATE paused_lock SET v = 'paused' WHERE id = 1"))
    print("locked", flush=True)
    sys.stdin.readline()  # the test pauses this process here, then resumes it and says go
    try:
        conn.commit()
        print("committed", flush=True)
    except Exception as exc:  # noqa: BLE001 - what happened is the answer
        print("refused", type(exc).__name__, flush=True)
"""


def test_a_paused_lock_holder_is_cut_off_and_its_late_write_refused(pg_db) -> None:
    url = normalise_url(pg_db)
    with create_engine(url).begin() as conn:
        conn.execute(text("CREATE TABLE paused_lock (id int PRIMARY KEY, v text)"))
        conn.execute(text("INSERT INTO paused_lock VALUES (1, 'before')"))
    env = {**os.environ, "PYTHONPATH": str(REPO), "SANTA_DB_IDLE_TX_S": "2"}
    holder = python_code(  # a real process, forked with the product imported (tests/support/forked.py)
        HOLDER, [url], env=env, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        os.kill(holder.pid, signal.SIGSTOP)
        other = make_engine(url)
        with other.begin() as conn:
            # Without the server cutting the paused session off, this waits on its lock until lock_timeout fails it.
            conn.execute(text("SET LOCAL lock_timeout = '60s'"))
            conn.execute(text("UPDATE paused_lock SET v = 'taken over' WHERE id = 1"))
        os.kill(holder.pid, signal.SIGCONT)
        holder.stdin.write("go\n")
        holder.stdin.flush()
        said = holder.stdout.readline().split()
        assert said and said[0] == "refused", said
        with other.connect() as conn:
            assert conn.execute(text("SELECT v FROM paused_lock")).scalar() == "taken over"
        other.dispose()
    finally:
        os.kill(holder.pid, signal.SIGCONT)
        holder.kill()
        holder.wait(10)


def test_the_idle_transaction_limit_keeps_the_urls_own_options(pg_db) -> None:
    """A search_path (or any option) given in DATABASE_URL still applies beside the limit."""
    url = normalise_url(pg_db)
    sep = "&" if "?" in url else "?"
    engine = make_engine(f"{url}{sep}options=-c%20application_name%3Dsanta_probe")
    with engine.connect() as conn:
        assert conn.execute(text("SHOW application_name")).scalar() == "santa_probe"
        assert conn.execute(text("SHOW idle_in_transaction_session_timeout")).scalar() == "1min"
    engine.dispose()
