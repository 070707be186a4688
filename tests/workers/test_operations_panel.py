"""The Operations panel of the Settings page: where runs are worked, and on PostgreSQL the queue as it
stands (waiting jobs, their age, workers), with a warning when jobs wait and nobody works them."""

from __future__ import annotations

import streamlit as st

from desk.engine_status import EngineStatus, QueueFigures, status_text
from desk.task_engine import task_engine
from storage.runs import RunStore
from storage.startup import init_db
from tests.ui.test_app import open_app, texts
from tests.workers.test_worker_behaviour import new_run
from ui.operations import queue_rows


def test_on_sqlite_the_panel_says_runs_work_inside_the_app(desk_env: RunStore) -> None:
    at = open_app("pages/settings.py")
    shown = texts(at)
    assert "Runs are worked inside this app process (SQLite" in shown
    assert "0 running, 0 queued now, at most 4 at once" in shown


def test_on_postgresql_the_panel_shows_waiting_jobs_and_warns_when_no_worker_works_them(pg_db, monkeypatch) -> None:
    runs = RunStore(init_db(pg_db, mark_interrupted=False))
    engine = task_engine(pg_db)
    for _ in range(2):
        engine.enqueue(runs, new_run(runs), "cli")
    engine.enqueue(runs, new_run(runs, source="batch"), "batch")
    monkeypatch.setenv("DATABASE_URL", pg_db)
    monkeypatch.setenv("SANTA_WORKERS_IN_APP", "0")
    st.cache_resource.clear()
    try:
        at = open_app("pages/settings.py")
        table = at.dataframe[0].value
        assert table[["queue", "waiting", "working"]].values.tolist() == [
            ["runs (interactive, first)", 2, 0],
            ["batch reviews", 1, 0],
        ]
        assert table["oldest waiting (since due)"].tolist()[0].endswith(" s")
        assert table["oldest working (since started)"].tolist() == ["–", "–"]
        assert [m.value for m in at.metric] == ["0", "0", "0"]  # live, silent workers; stalled jobs
        assert "Jobs are waiting and no worker is heartbeating" in texts(at)
        assert "this app only enqueues (SANTA_WORKERS_IN_APP=0)" in texts(at)
    finally:
        from ui.app_desk import desk_for

        desk_for(pg_db).close()
        st.cache_resource.clear()
        engine.close()


def test_the_text_and_the_panel_say_what_the_ages_count_from() -> None:
    status = EngineStatus(queues=[QueueFigures("runs", 2, 1, 12.4, 5.0), QueueFigures("batch")])
    assert status_text(status).splitlines()[1:] == [
        "queue runs: 2 waiting (oldest waiting since due: 12 s), 1 working (oldest working since started: 5 s)",
        "queue batch: 0 waiting (oldest waiting since due: -), 0 working (oldest working since started: -)",
    ]
    assert queue_rows(status).to_dict("records") == [
        {
            "queue": "runs (interactive, first)",
            "waiting": 2,
            "oldest waiting (since due)": "12 s",
            "working": 1,
            "oldest working (since started)": "5 s",
        },
        {
            "queue": "batch reviews",
            "waiting": 0,
            "oldest waiting (since due)": "–",
            "working": 0,
            "oldest working (since started)": "–",
        },
    ]
