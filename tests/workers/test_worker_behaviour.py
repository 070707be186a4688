"""The task engine's everyday behaviour on the throwaway PostgreSQL: the command line's refusals and
`--status`, where a job goes (queue, priority, lock), interactive runs before batch reviews, the hand-over
on SIGTERM, the app working jobs itself, and queued runs a dead app left behind finishing with nobody on
a page."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
import streamlit as st
from sqlalchemy import create_engine, text

from desk.hand_over import HANDED_OVER_NOTE, TAKEN_OVER
from desk.task_engine import BATCH, INTERACTIVE_PRIORITY, RUNS, task_engine
from santa_core.models import RunStatus
from santa_core.rubrics.library import load_builtin
from storage.db import normalise_url
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import PG_URL
from tests.support.app_server import free_port, streamlit_command, wait_for
from tests.support.app_server import stop as stop_server
from tests.support.cli import santa_in_process
from tests.support.forked import Forked, python_code
from tests.support.messages_api import santa_scenario
from tests.support.workers import (
    REPO,
    answer_after,
    calls_after_stored_review,
    claimed_by,
    start_worker,
    state_notes,
    statuses,
    stop_worker,
    wait_until,
    worker_env,
)
from tests.ui.test_app import open_app, start_run

SPEC = "Announce the Acme rocket in two sentences. Mention the 2018 launch."
needs_pg = pytest.mark.skipif(not PG_URL, reason="SANTA_TEST_POSTGRES_URL not set")


def new_run(runs: RunStore, output: str = "Acme's rocket launched in 2018.", source: str = "cli") -> int:
    return runs.create_run(
        spec=SPEC,
        output=output,
        rubric=load_builtin("general"),
        reviewer_b="claude-haiku-4-5",
        reviewer_c="claude-sonnet-4-5",
        fixer="claude-haiku-4-5",
        created_by="cli",
        source=source,
    )


def jobs(url: str) -> list[tuple]:
    with create_engine(normalise_url(url)).connect() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                text(
                    "SELECT (args->>'run_id')::int, queue_name, priority, lock, status::text FROM procrastinate_jobs "
                    "WHERE task_name = 'santa.work_run' ORDER BY id"
                )
            ).all()
        ]


def test_on_sqlite_the_worker_and_enqueue_refuse_and_nothing_is_created(tmp_path, env) -> None:
    (tmp_path / "spec.txt").write_text(SPEC)
    (tmp_path / "out.txt").write_text("Acme's rocket launched in 2018.")
    done = santa_in_process(["worker"], env, tmp_path)
    assert done.returncode == 2 and "needs DATABASE_URL on PostgreSQL" in done.stderr
    done = santa_in_process(
        ["review", "--spec", "spec.txt", "--output", "out.txt", "--enqueue", "--json"], env, tmp_path
    )
    assert done.returncode == 2 and "--enqueue needs DATABASE_URL on PostgreSQL" in done.stderr
    assert done.stdout == ""
    assert RunStore(init_db(env["DATABASE_URL"], mark_interrupted=False)).list_runs() == []


def test_a_worker_whose_database_is_down_says_so_in_one_line(tmp_path, env) -> None:
    env = {**env, "DATABASE_URL": "postgresql://santa@127.0.0.1:1/santa"}  # nothing listens on port 1
    for args in (["worker"], ["worker", "--status"]):
        done = santa_in_process(args, env, tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("santa: cannot open the database postgresql+psycopg://santa@127.0.0.1:1/santa")
        assert len(done.stderr.strip().splitlines()) == 1


@needs_pg
def test_status_counts_waiting_jobs_and_fails_the_health_check_with_no_worker(pg_db, messages_stub, tmp_path):
    env = worker_env(pg_db, messages_stub.url)
    done = santa_in_process(["worker", "--status", "--json"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    empty = json.loads(done.stdout)
    assert [(q["queue"], q["waiting"], q["working"]) for q in empty["queues"]] == [(RUNS, 0, 0), (BATCH, 0, 0)]
    assert empty["recovery_bound_s"] == pytest.approx(2 + 1)  # FAST_RECOVERY: silence, then a recovery pass
    (tmp_path / "spec.txt").write_text(SPEC)
    (tmp_path / "out.txt").write_text("Acme's rocket launched in 2018.")
    for _ in range(2):
        assert (
            santa_in_process(
                ["review", "--spec", "spec.txt", "--output", "out.txt", "--enqueue"], env, tmp_path
            ).returncode
            == 0
        )
    done = santa_in_process(["worker", "--status"], env, tmp_path)
    assert done.returncode == 1, done.stdout  # jobs wait and nobody works them
    assert "queue runs: 2 waiting" in done.stdout and "no worker is heartbeating" in done.stderr
    assert santa_in_process(["worker", "--queues", "runs,emails"], env, tmp_path).returncode == 2
    assert santa_in_process(["worker", "--concurrency", "0"], env, tmp_path).returncode == 2


@needs_pg
def test_a_job_goes_to_its_queue_with_its_priority_and_lock_once(pg_db) -> None:
    runs = RunStore(init_db(pg_db, mark_interrupted=False))
    engine = task_engine(pg_db)
    editor, sample = new_run(runs), new_run(runs, source="batch")
    assert engine.enqueue(runs, editor, "cli") and engine.enqueue(runs, sample, "batch")
    assert not engine.enqueue(runs, editor, "cli")  # a waiting job of the run is enough
    assert jobs(pg_db) == [
        (editor, RUNS, INTERACTIVE_PRIORITY, f"run-{editor}", "todo"),
        (sample, BATCH, 0, f"batch:anthropic:{sample % 4}", "todo"),
    ]
    engine.close()


@needs_pg
def test_a_worker_takes_the_editors_run_before_waiting_batch_reviews(pg_db, messages_stub, tmp_path) -> None:
    messages_stub.handler = answer_after(0.2)
    runs = RunStore(init_db(pg_db, mark_interrupted=False))
    engine = task_engine(pg_db)
    samples = [new_run(runs, source="batch") for _ in range(3)]
    for run_id in samples:
        engine.enqueue(runs, run_id, "batch")
    editor = new_run(runs)
    engine.enqueue(runs, editor, "cli")  # enqueued last
    worker = start_worker(worker_env(pg_db, messages_stub.url, SANTA_BATCH_LANES="1"), concurrency=1)
    try:
        db = create_engine(normalise_url(pg_db))
        ids = [*samples, editor]
        wait_until("every run to ship", lambda: set(statuses(db, ids).values()) == {RunStatus.SHIPPED}, timeout=90)
    finally:
        stop_worker(worker)
        engine.close()
    with db.connect() as conn:
        claimed = [
            r
            for (r,) in conn.execute(
                text("SELECT run_id FROM state_change WHERE to_status = 'running' ORDER BY id")
            ).all()
        ]
    assert claimed[0] == editor and sorted(claimed[1:]) == samples


@needs_pg
def test_sigterm_hands_the_runs_over_and_no_review_is_asked_twice(pg_db, messages_stub, tmp_path) -> None:
    messages_stub.handler = answer_after(2.0)
    env = worker_env(pg_db, messages_stub.url)
    runs = RunStore(init_db(pg_db, mark_interrupted=False))
    engine = task_engine(pg_db)
    ids = [new_run(runs) for _ in range(3)]
    leaving = start_worker(env, concurrency=4)
    db = create_engine(normalise_url(pg_db))
    try:
        for run_id in ids:
            engine.enqueue(runs, run_id, "cli")
        wait_until(
            "the leaving worker to hold every run",
            lambda: len(claimed_by(db, leaving.pid)) == 3,
            timeout=60,
            every=0.05,
        )
        # The reviewers' calls are in flight (the stub records a call as it arrives and answers it 2 s later): waited
        # for, where a fixed 0.3 s sleep hoped for it.
        wait_until("the reviewers' calls to be in flight", lambda: len(messages_stub.message_calls()) == 6, every=0.05)
        stopped_at = time.monotonic()
        assert stop_worker(leaving, signal.SIGTERM) == 0
        assert time.monotonic() - stopped_at < 30  # it finished the step in flight, not every run
        assert set(statuses(db, ids).values()) == {RunStatus.QUEUED}
        staying = start_worker(env, concurrency=4)
        try:
            wait_until(
                "the runs to ship on the other worker",
                lambda: set(statuses(db, ids).values()) == {RunStatus.SHIPPED},
                timeout=60,
            )
        finally:
            stop_worker(staying)
    finally:
        stop_worker(leaving)
        engine.close()
    assert state_notes(db, ids).count(HANDED_OVER_NOTE) == 3
    assert calls_after_stored_review(db) == []
    # Each review was asked for once: the leaving worker's answers were stored before it handed over.
    assert len(messages_stub.message_calls()) == 6


@needs_pg
def test_the_app_works_queued_runs_itself_by_default(pg_db, messages_stub, monkeypatch) -> None:
    messages_stub.handler = santa_scenario
    monkeypatch.setenv("DATABASE_URL", pg_db)
    monkeypatch.delenv("SANTA_WORKERS_IN_APP", raising=False)
    st.cache_resource.clear()
    try:
        at = open_app("pages/review.py")
        start_run(at, "Acme's rocket launched in 2018. It is ready for you.")
        runs = RunStore(init_db(pg_db, mark_interrupted=False))
        run_id = runs.list_runs(limit=1)[0].id
        wait_until(
            "the app's own worker to ship the run",
            lambda: runs.load_run(run_id).state.status == RunStatus.SHIPPED,
            timeout=60,
        )
        assert jobs(pg_db) == []  # the job was worked and, done, deleted
    finally:
        from ui.app_desk import desk_for

        desk_for(pg_db).close()
        st.cache_resource.clear()


@needs_pg
def test_the_app_works_queued_runs_from_its_start_with_nobody_on_a_page(pg_db, messages_stub, tmp_path) -> None:
    """`streamlit run app.py` opens the desk as the server starts (app.py's `app` lifespan): its own worker
    registers and takes the queue with no page ever opened; the server's stop unregisters it."""
    messages_stub.handler = answer_after(0.2)
    env = worker_env(pg_db, messages_stub.url)
    runs = RunStore(init_db(pg_db, mark_interrupted=False))
    engine = task_engine(pg_db)
    ids = [new_run(runs) for _ in range(2)]
    for run_id in ids:
        engine.enqueue(runs, run_id, "cli")
    engine.close()
    db = create_engine(normalise_url(pg_db))
    port = free_port()
    log = tmp_path / "app.log"
    server = subprocess.Popen(
        streamlit_command(port),
        env=env,
        cwd=REPO,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_until("the app's own worker to register", lambda: in_app_workers(db) == 1, timeout=60)
        wait_until("every run to ship", lambda: set(statuses(db, ids).values()) == {RunStatus.SHIPPED}, timeout=90)
        wait_for(f"http://127.0.0.1:{port}/_stcore/health", server, log, "the app", 10)  # serving all along
    finally:
        stop_server(server)
    assert in_app_workers(db) == 0, log.read_text(errors="replace")  # stopped, not left for the stall timeout
    assert "Server start: the desk is open" in log.read_text(errors="replace")


def in_app_workers(db) -> int:
    with db.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM procrastinate_workers")).scalar_one()


APP_DESK = """
import sys
from desk.wiring import open_desk, stop_on_exit
desk = open_desk(sys.argv[1])  # what ui.app_desk does when a page first opens: on PostgreSQL, an in-app worker
stop_on_exit(desk)
print("open", flush=True)
sys.stdin.readline()
sys.exit(0)  # as the Streamlit server returns from its main after SIGTERM: the interpreter shuts down
"""


def app_with_queued_runs(pg_db: str, stub_url: str, n: int) -> tuple[dict, object, list[int], Forked, object]:
    """`n` queued runs and an app process (its own session) working two of them at a time in its desk, once it
    holds two; with a database engine to look at them."""
    env = worker_env(pg_db, stub_url, SANTA_WORKERS="2")
    runs = RunStore(init_db(pg_db, mark_interrupted=False))
    engine = task_engine(pg_db)
    ids = [new_run(runs) for _ in range(n)]
    for run_id in ids:
        engine.enqueue(runs, run_id, "cli")
    app = python_code(  # a real process, forked with the product imported (tests/support/forked.py)
        APP_DESK,
        [pg_db],
        env=env,
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    db = create_engine(normalise_url(pg_db))
    try:
        assert app.stdout.readline().strip() == "open"
        wait_until("the app to work two runs", lambda: len(claimed_by(db, app.pid)) == 2, timeout=60, every=0.05)
    except BaseException:
        os.killpg(app.pid, signal.SIGKILL)
        engine.close()
        raise
    return env, engine, ids, app, db


def test_an_app_that_stops_hands_its_runs_to_the_queue_and_a_worker_finishes_them(pg_db, messages_stub, tmp_path):
    messages_stub.handler = answer_after(1.5)
    env, engine, ids, app, db = app_with_queued_runs(pg_db, messages_stub.url, 2)
    try:
        wait_until(
            "both runs' reviewers to be asked", lambda: len(messages_stub.message_calls()) == 4, timeout=60, every=0.05
        )
        app.stdin.write("stop\n")  # with the four answers on their way
        app.stdin.flush()
        assert app.wait(60) == 0
        # Nobody presses Resume: both runs are back on the queue with the answers the app had asked for.
        assert set(statuses(db, ids).values()) == {RunStatus.QUEUED}
        assert state_notes(db, ids).count(HANDED_OVER_NOTE) == 2
        worker = start_worker(env, concurrency=4)
        try:
            wait_until("every run to ship", lambda: set(statuses(db, ids).values()) == {RunStatus.SHIPPED})
        finally:
            stop_worker(worker)
    finally:
        if app.poll() is None:
            app.kill()
        engine.close()
    assert calls_after_stored_review(db) == []
    assert len(messages_stub.message_calls()) == 4  # two reviews per run, each asked for once


@needs_pg
def test_runs_a_dead_app_left_behind_finish_after_a_restart_with_nobody_on_a_page(pg_db, messages_stub, tmp_path):
    messages_stub.handler = answer_after(1.0)
    env, engine, ids, app, db = app_with_queued_runs(pg_db, messages_stub.url, 5)
    try:
        held = claimed_by(db, app.pid)
        os.killpg(app.pid, signal.SIGKILL)  # the app dies with two runs running and three queued
        app.wait(10)
        port = free_port()
        log = tmp_path / "app.log"
        server = subprocess.Popen(
            streamlit_command(port),
            env={**env, "SANTA_WORKERS_IN_APP": "0"},
            cwd=REPO,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        worker = start_worker(env, concurrency=4)
        try:
            wait_for(f"http://127.0.0.1:{port}/_stcore/health", server, log, "the restarted app", 60)
            wait_until("every run to ship", lambda: set(statuses(db, ids).values()) == {RunStatus.SHIPPED}, timeout=90)
        finally:
            stop_worker(worker)
            stop_server(server)
    finally:
        if app.poll() is None:
            os.killpg(app.pid, signal.SIGKILL)
        engine.close()
    # Each held run once: taken over by the worker, or marked interrupted by the restarted app's start (which opens
    # its desk) and resumed by the worker.
    notes = state_notes(db, held)
    assert (
        sum(n.startswith(TAKEN_OVER) for n in notes) + notes.count("the server stopped while this run was running") == 2
    )
    assert calls_after_stored_review(db) == []
