"""Nothing lost after a crash or a stop: `review` killed at every step boundary and carried on with
`resume`, and SIGINT / SIGTERM stopping a review in order.

Real processes, the real SDK against the loopback Messages API, a real SQLite file and (when configured)
a real PostgreSQL database. The loopback server holds the request a step waits on, so each kill lands
exactly at its boundary.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlmodel import Session, select

from desk.wiring import open_desk
from santa_core.models import RunStatus
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer
from storage.hashing import json_hash
from storage.runs import RunStore
from storage.startup import init_db
from storage.tables import CallSentRow
from tests.core.run.test_runner import strict, year_fixer
from tests.support import forked
from tests.support.messages_api import (
    MessagesStub,
    fenced_output,
    repeat_key,
    santa_scenario,
    schema_properties,
    screen_key,
)

ROOT = Path(__file__).resolve().parents[2]
SPEC = "Write one sentence announcing the Acme rocket and the year it launched."
SONNET, HAIKU = "claude-sonnet-5-5", "claude-haiku-5-5"

Rule = Callable[[str, dict], bool]
"""(kind, body) -> hold this request; kind is screen, review or fix."""


def kind_of(body: dict, screen: bool) -> str:
    return "screen" if screen else "fix" if "edits" in schema_properties(body) else "review"


class Holder:
    """Answers as santa_scenario does, except requests matching `rule`: those wait until `release`."""

    def __init__(self, stub: MessagesStub) -> None:
        self.rule: Rule = lambda kind, body: False
        self.held = 0
        self.lock = threading.Lock()
        self.release = threading.Event()
        stub.handler = lambda body: self.answer(body, False)
        stub.screen = lambda body: self.answer(body, True)

    def hold(self, rule: Rule) -> None:
        self.rule, self.held, self.release = rule, 0, threading.Event()

    def answer(self, body: dict, screen: bool):
        if self.rule(kind_of(body, screen), body):
            with self.lock:
                self.held += 1
            self.release.wait(60)
        return repeat_key(body) if screen else santa_scenario(body)

    def wait_held(self, n: int) -> None:
        deadline = time.monotonic() + 60
        while self.held < n and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self.held >= n, f"the process never sent the request to hold ({self.held} of {n} held)"


def cli_env(db_url: str, tmp_path: Path) -> dict:
    (tmp_path / "spec.txt").write_text(SPEC, encoding="utf-8")
    (tmp_path / "output.txt").write_text("Acme's rocket launched in DEFECT.", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANTA_")}
    env.update(DATABASE_URL=db_url, PYTHONPATH=str(ROOT))
    return env


@pytest.fixture
def cli(db_url: str, messages_stub: MessagesStub, tmp_path: Path) -> dict:
    return cli_env(db_url, tmp_path)


def start(env: dict, tmp_path: Path, *args: str) -> forked.Forked:
    """`python -m santa_core *args`: a real process, forked with the product imported (tests/support/forked.py;
    tests/cli/test_entrypoints.py starts the entry points as fresh interpreters)."""
    return forked.santa(args, env=env, cwd=tmp_path, **forked.capture(text=True))


REVIEW = (
    "review",
    "--spec",
    "spec.txt",
    "--output",
    "output.txt",
    "--auto-approve",
    "--reviewer-b",
    SONNET,
    "--reviewer-c",
    HAIKU,
)


def review_key(body: dict) -> tuple[str, str]:
    """Which review a request asks for: the reviewer's model and the text under review."""
    return body["model"], fenced_output(body)


def stored_review_keys(repo: RunStore, run_id: int) -> set[tuple[str, str]]:
    view = repo.get_run_view(run_id)
    models = {"B": view.reviewer_b, "C": view.reviewer_c}
    return {(models[slot], r.output_text) for r in view.rounds for slot in r.reviews}


def test_killed_at_every_step_boundary_resume_finishes_and_nothing_is_asked_twice(
    cli: dict, db_url: str, messages_stub: MessagesStub, tmp_path: Path
) -> None:
    holder = Holder(messages_stub)
    repo = RunStore(init_db(db_url, mark_interrupted=False))
    round_one = "Acme's rocket launched in DEFECT."
    boundaries: list[tuple[str, Rule, int, Callable[[], bool]]] = [
        ("before the reviewers (round 1 screen in flight)", lambda k, b: k == "screen", 1, lambda: True),
        ("while both reviewers", lambda k, b: k == "review", 2, lambda: True),
        (
            "after B, while C",
            lambda k, b: k == "review" and b["model"] == HAIKU,
            1,
            lambda: len(repo.load_round(1, 1).reviews) == 1,
        ),
        ("after the gate, during the fix", lambda k, b: k == "fix", 1, lambda: True),
        (
            "after the fix, round 2 screen in flight",
            lambda k, b: k == "screen" and "DEFECT" not in str(b),
            1,
            lambda: True,
        ),
        ("while both round 2 reviewers", lambda k, b: k == "review" and fenced_output(b) != round_one, 2, lambda: True),
    ]
    stored_before: list[tuple[int, set]] = []  # (requests seen at the kill, reviews stored then)
    args = REVIEW
    for name, rule, n, ready in boundaries:
        holder.hold(rule)
        proc = start(cli, tmp_path, *args)
        try:
            holder.wait_held(n)
            deadline = time.monotonic() + 30
            while not ready() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert ready(), name
        finally:
            proc.kill()
            proc.wait(30)
            holder.release.set()
        assert proc.returncode == -signal.SIGKILL, name
        (run,) = repo.list_runs()
        assert run.status == RunStatus.RUNNING, name  # what a killed process leaves
        stored_before.append((len(messages_stub.calls), stored_review_keys(repo, run.id)))
        args = ("resume", str(run.id))
    holder.hold(lambda k, b: False)
    done = forked.run(start(cli, tmp_path, *args), timeout=120)
    assert done.returncode == 0, done.stderr
    assert repo.load_run(run.id).state.status == RunStatus.SHIPPED
    assert "cut off before its answer was stored, asked again: review" in done.stderr  # the last kill's two
    calls = [c["body"] for c in messages_stub.calls if c["path"].startswith("/v1/messages")]
    with Session(repo.engine) as s:
        on_record = set(s.exec(select(CallSentRow.request_hash)).all())
    assert all(json_hash(body) in on_record for body in calls)  # every request that reached the server
    for seen, stored in stored_before:  # no review stored before a kill was asked for after it
        later = [review_key(b) for b in calls[seen:] if kind_of(b, screen_key(b) is not None) == "review"]
        assert not stored & set(later)
    assert repo.get_run_view(run.id).cut_off  # the calls the kills cut off stay in the log, costed
    assert repo.load_run(run.id).spent_usd >= sum(c.estimate_usd for c in repo.get_run_view(run.id).cut_off)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_review_in_order(messages_stub: MessagesStub, tmp_path: Path, sig: int, code: int) -> None:
    db_url = f"sqlite:///{tmp_path / 'santa.db'}"
    cli = cli_env(db_url, tmp_path)
    holder = Holder(messages_stub)
    repo = RunStore(init_db(db_url, mark_interrupted=False))
    holder.hold(lambda k, b: k == "review" and b["model"] == HAIKU)  # B answers, C hangs
    proc = start(cli, tmp_path, *REVIEW)
    try:
        holder.wait_held(1)
        deadline = time.monotonic() + 30
        while not (repo.list_runs() and len(repo.load_round(1, 1).reviews) == 1) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        holder.release.set()
    assert proc.returncode == code
    said = [line for line in err.strip().splitlines() if not line.startswith("santa: warning:")]
    assert "Traceback" not in err and len(said) == 1, err
    assert f"stopped by {signal.Signals(sig).name}" in err and "santa resume 1" in err
    state = repo.load_run(1).state
    assert state.status == RunStatus.INTERRUPTED and state.note == f"stopped by {signal.Signals(sig).name}"
    assert set(repo.load_round(1, 1).reviews) == {"B"}  # the answer that came in is kept


def age(repo: RunStore, run_id: int) -> int:
    """The run untouched for an hour (its process as it was)."""
    from datetime import UTC, datetime, timedelta

    an_hour_ago = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S")
    with repo.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE run SET updated_at = ? WHERE id = ?", (an_hour_ago, run_id))
    return run_id


def left_behind_by(repo: RunStore, run_id: int, worker: str | None, status: RunStatus | None = None) -> int:
    """The run as `worker` left it an hour ago (`status`: moved there first, by that process)."""
    from santa_core.models import RunState

    if status is not None:
        assert repo.transition(run_id, {RunStatus.QUEUED}, RunState(status=status), "worker")
    with repo.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE run SET worker = ? WHERE id = ?", (worker, run_id))
    return age(repo, run_id)


def scripted_desk(url: str, **options: object):  # noqa: ANN201 - desk.Desk
    """The app's desk (it marks, resubmits and sweeps) with scripted reviewers: no model server needed."""
    return open_desk(
        url,
        reviewer_for=lambda name: FunctionReviewer(name, strict),
        fixer_for=lambda name: FunctionFixer(name, year_fixer),
        screen_for=lambda: None,
        **options,
    )


def wait_status(repo: RunStore, run_id: int, status: RunStatus) -> None:
    deadline = time.monotonic() + 30
    while repo.load_run(run_id).state.status != status and time.monotonic() < deadline:
        time.sleep(0.05)
    assert repo.load_run(run_id).state.status == status, repo.load_run(run_id).state


def test_the_app_picks_up_queued_runs_a_dead_process_left(
    tmp_path: Path, queued_elsewhere: tuple[int, subprocess.Popen]
) -> None:
    from storage.workers import host_name
    from tests.core.run.test_runner import RUBRIC

    url = f"sqlite:///{tmp_path / 'santa.db'}"
    repo = RunStore(init_db(url, mark_interrupted=False))
    dead = f"{host_name()}:999999999:1"
    theirs, _ = queued_elsewhere
    left, fresh = (
        repo.create_run(
            spec=SPEC,
            output="Acme launched its rocket in 2018.",
            rubric=RUBRIC,
            reviewer_b="b",
            reviewer_c="c",
            fixer="f",
        )
        for _ in range(2)
    )
    left_behind_by(repo, left, dead)  # the process that queued it died an hour ago
    age(repo, theirs)  # queued long ago by a live command line that works it itself
    desk = scripted_desk(url)
    try:
        wait_status(repo, left, RunStatus.SHIPPED)  # picked up at start, nobody opened it
        assert repo.load_run(fresh).state.status == RunStatus.QUEUED  # its own (live) process claims it
        assert repo.load_run(theirs).state.status == RunStatus.QUEUED
    finally:
        desk.close()


def test_the_app_sweeps_for_runs_left_behind_while_it_runs(
    tmp_path: Path, queued_elsewhere: tuple[int, subprocess.Popen], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a process leaves behind after the app started is picked up without anyone opening a page: a queued
    run is worked, a run `running` under a dead process becomes interrupted (for a person to resume). A run another
    live process queued, and a queued review of a paused batch, are left alone."""
    from desk import wiring
    from santa_core.batch.file import read_batch
    from storage.workers import host_name
    from tests.core.batch.test_driver import config, planted_csv
    from tests.core.run.test_runner import RUBRIC

    url = f"sqlite:///{tmp_path / 'santa.db'}"
    repo = RunStore(init_db(url, mark_interrupted=False))
    monkeypatch.setattr(wiring, "SWEEP_EVERY_S", 3600.0)
    desk = scripted_desk(url)  # started: nothing is left behind yet
    dead = f"{host_name()}:999999999:1"

    def new_run() -> int:
        return repo.create_run(
            spec=SPEC,
            output="Acme launched its rocket in 2018.",
            rubric=RUBRIC,
            reviewer_b="b",
            reviewer_c="c",
            fixer="f",
        )

    try:
        queued, crashed = (new_run() for _ in range(2))
        left_behind_by(repo, queued, dead)
        left_behind_by(repo, crashed, dead, RunStatus.RUNNING)
        theirs, process = queued_elsewhere
        age(repo, theirs)
        file = read_batch(planted_csv(20)[0], "emails.csv", strata=["template"])
        batch_id = desk.batches.create(file, config(file), "cli")
        sample_id = desk.batches.draw(batch_id, "cli")
        held = desk.batches.store.start_review(sample_id, desk.batches.store.pending_items(sample_id)[0])
        desk.batches.pause(batch_id, "cli")
        left_behind_by(repo, held, dead)
        assert sorted(wiring.sweep(desk.runs, desk.runner)) == sorted([crashed, queued])
        wait_status(repo, queued, RunStatus.SHIPPED)
        crashed_state = repo.load_run(crashed).state
        assert (crashed_state.status, crashed_state.note) == (RunStatus.INTERRUPTED, wiring.SWEPT_NOTE)
        desk.runner.pool.shutdown(wait=True)
        assert [repo.load_run(i).state.status for i in (theirs, held)] == [RunStatus.QUEUED, RunStatus.QUEUED]
    finally:
        desk.close()
    # and on its own, every SWEEP_EVERY_S, as the app opens it
    monkeypatch.setattr(wiring, "SWEEP_EVERY_S", 0.05)
    desk = scripted_desk(url)
    try:
        later = left_behind_by(repo, new_run(), dead)  # left after this desk started
        wait_status(repo, later, RunStatus.SHIPPED)
        assert repo.load_run(held).state.status == RunStatus.QUEUED  # the paused batch still holds its review
        process.kill()  # the command line that queued `theirs` dies: it is left behind now
        wait_status(repo, theirs, RunStatus.SHIPPED)
    finally:
        desk.close()


APP_PROCESS = """
import signal, sys, time
from desk.wiring import open_desk, stop_desk
from storage.runs import RunStore
desk = open_desk(sys.argv[1], mark_interrupted=False, screen_for=lambda: None)
run_id = desk.runs.create_run(spec=sys.argv[2], output="Acme's rocket launched in 2018.",
                              rubric=desk.rubrics.resolved("general"), reviewer_b="claude-sonnet-5-5",
                              reviewer_c="claude-haiku-5-5", fixer="claude-sonnet-5-5")
desk.runner.submit(run_id)
while len(RunStore(desk.runs.engine).load_round(run_id, 1).reviews) < 1:
    time.sleep(0.05)
print(run_id, flush=True)
stop_desk(desk)  # what the server's lifespan does when a SIGTERM stops it (ui.app_desk.open_at_server_start)
signal.raise_signal(signal.SIGTERM)  # then the server ends by the signal it caught: no exit hook runs
"""


def test_the_app_process_stopping_marks_its_runs_interrupted_and_keeps_their_answers(
    messages_stub: MessagesStub, tmp_path: Path
) -> None:
    db_url = f"sqlite:///{tmp_path / 'santa.db'}"
    env = cli_env(db_url, tmp_path)
    holder = Holder(messages_stub)
    holder.hold(lambda k, b: k == "review" and b["model"] == HAIKU)  # B answers, C is in flight at the stop
    proc = forked.python_code(APP_PROCESS, [db_url, SPEC], env=env, cwd=tmp_path, **forked.capture(text=True))
    try:
        run_id = int(proc.stdout.readline())
        repo = RunStore(init_db(db_url, mark_interrupted=False))
        deadline = time.monotonic() + 30
        while repo.load_run(run_id).state.status == RunStatus.RUNNING and time.monotonic() < deadline:
            time.sleep(0.05)  # the shutdown hook marks it before the pools wait for C's call
        state = repo.load_run(run_id).state
        assert state.status == RunStatus.INTERRUPTED and "the app stopped" in state.note
        assert set(repo.load_round(run_id, 1).reviews) == {"B"}
    finally:
        holder.release.set()
        proc.wait(60)
    assert proc.returncode == -signal.SIGTERM
    assert repo.load_run(run_id).state.status == RunStatus.INTERRUPTED  # C's late answer decided nothing
    assert set(repo.load_round(run_id, 1).reviews) == {"B", "C"}  # but it was waited for and kept: it was paid for


def test_the_run_page_shows_calls_in_flight_while_the_reviewers_work_and_cut_off_after_a_kill_9(
    cli: dict, db_url: str, messages_stub: MessagesStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34's alarm, with a real process: while `review`'s two reviewer calls wait at the server, the run page
    says they are in flight and raises no warning; once that process is killed (SIGKILL: nothing of it runs any
    more), the same calls are cut off and the page says so."""
    import streamlit as st

    from tests.ui.test_run_page import as_person, texts

    holder = Holder(messages_stub)
    holder.hold(lambda k, b: k == "review")
    monkeypatch.setenv("DATABASE_URL", db_url)
    st.cache_resource.clear()  # the app's desk opens on this test's database
    proc = start(cli, tmp_path, *REVIEW)
    try:
        holder.wait_held(2)
        (run,) = RunStore(init_db(db_url, mark_interrupted=False)).list_runs()
        working = texts(as_person(None, run.id))
        assert "2 call(s) in flight" in working and "cut off" not in working, working
    finally:
        proc.kill()
        proc.wait(30)
        holder.release.set()
    assert proc.returncode == -signal.SIGKILL
    killed = texts(as_person(None, run.id))
    assert "2 call(s) were cut off before their answer was stored" in killed, killed
    assert "in flight" not in killed
    st.cache_resource.clear()
