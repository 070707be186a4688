"""Batch samples a process that is gone left behind are picked up by the running app's sweep, with nobody on a
page; a sample a live command line drives, and a paused batch's, are left alone.

The first test kills a real `santa batch` command line (SIGKILL) while its reviews wait on the loopback Messages
API, with the app's desk open in this process on the same SQLite file and sweeping every few milliseconds. The
second judges each kind of sample left behind by one direct sweep of an in-process desk (`live_worker`, in
conftest.py, is a live process on this host).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from desk import Desk, wiring
from desk.wiring import open_desk
from santa_core.batch.file import read_batch
from santa_core.models import RunStatus
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer
from storage.runs import RunStore
from storage.startup import init_db
from storage.workers import alive_on_this_host, host_name, this_worker
from tests.cli.test_crash import HAIKU, SONNET, Holder, age, cli_env, left_behind_by, start
from tests.core.batch.test_driver import SPEC, config, fixer, planted_csv, strict
from tests.support.messages_api import MessagesStub

DEAD = f"{host_name()}:999999999:1"
"""A process on this host that is not running (no such pid)."""
DONE = (RunStatus.SHIPPED, RunStatus.SAMPLED)
Make = Callable[[Desk, int], list[int]]
"""Leave a sample as some process did; the runs of its reviews."""


def batch_desk(url: str, **options: object) -> Desk:
    """The app's desk (it marks, resubmits and sweeps) with scripted reviewers that fail the planted promise."""
    return open_desk(
        url,
        reviewer_for=lambda name: FunctionReviewer(name, strict),
        fixer_for=lambda name: FunctionFixer(name, fixer),
        screen_for=lambda: None,
        **options,
    )


def wait_for(what: str, check: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.fixture
def counted_sweeps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The app's sweep every 20 ms, each one counted (the list grows by one per sweep)."""
    done: list[int] = []
    sweep = wiring.sweep

    def counting(*args: object) -> list[int]:
        try:
            return sweep(*args)  # type: ignore[arg-type]
        finally:
            done.append(1)

    monkeypatch.setattr(wiring, "sweep", counting)
    monkeypatch.setattr(wiring, "SWEEP_EVERY_S", 0.02)
    return done


def test_a_sample_a_killed_command_line_left_is_finished_by_the_running_apps_sweep(
    messages_stub: MessagesStub, tmp_path: Path, counted_sweeps: list[int]
) -> None:
    url = f"sqlite:///{tmp_path / 'santa.db'}"
    env = cli_env(url, tmp_path)
    (tmp_path / "emails.csv").write_bytes(planted_csv(40, every=1)[0])  # every promo item makes the promise
    holder = Holder(messages_stub)
    holder.hold(lambda kind, body: kind == "review")  # the command line's reviews never come back
    repo = RunStore(init_db(url, mark_interrupted=False))
    desk = batch_desk(url)  # the app, open before the command line starts
    proc = start(
        env,
        tmp_path,
        "batch",
        "emails.csv",
        "--spec",
        SPEC,
        "--strata",
        "template",
        "--no-message-batches",
        "--reviewer-b",
        SONNET,
        "--reviewer-c",
        HAIKU,
        "--fixer",
        SONNET,
        "--concurrency",
        "2",
    )
    try:
        holder.wait_held(4)  # both reviews of its two runs in flight
        store = desk.batches.store
        [sample_id] = store.unfinished_samples()
        claims = repo.claims(store.run_ids(sample_id))
        assert len(claims) == 2 and {c.status for c in claims.values()} == {RunStatus.RUNNING}
        [cli] = {c.worker for c in claims.values()}
        assert cli != this_worker() and alive_on_this_host(cli)
        for run_id in claims:
            age(repo, run_id)  # untouched for an hour: only its live process keeps it
        seen = len(counted_sweeps)
        wait_for("three sweeps", lambda: len(counted_sweeps) >= seen + 3)
        # The live command line drives it: the app neither interrupts, resumes nor starts any of its reviews.
        assert repo.claims(store.run_ids(sample_id)).keys() == claims.keys()
        assert {(c.status, c.worker) for c in repo.claims(list(claims)).values()} == {(RunStatus.RUNNING, cli)}
        assert store.progress(sample_id).finished_at is None and not desk.batches.driving(sample_id)
    finally:
        proc.kill()
        proc.wait(30)
        holder.release.set()
    assert proc.returncode == -signal.SIGKILL
    # Killed mid-sample: the running app's sweep picks the sample up, with nobody on a page.
    wait_for("the sample to close", lambda: store.progress(sample_id).finished_at is not None)
    try:
        progress = store.progress(sample_id)
        runs = repo.claims(store.run_ids(sample_id))
        assert progress.done == progress.size == len(runs) and {c.status for c in runs.values()} <= set(DONE)
        for run_id in claims:  # the killed process's reviews: interrupted by the sweep, then resumed by the app
            notes = [h.note for h in repo.get_run_view(run_id).history]
            assert wiring.SWEPT_NOTE in notes
        assert progress.naughty
        [pattern] = store.patterns(progress.batch_id, sample_id)  # grouped as the app's driver closed it
        assert pattern.pattern["count"] == progress.naughty
    finally:
        desk.close()


def queued_by(worker: str, aged: bool = True) -> Make:
    """The sample's first review queued by `worker` an hour ago (`aged`, else a moment ago), nothing else started."""

    def make(desk: Desk, sample_id: int) -> list[int]:
        store = desk.batches.store
        run_id = store.start_review(sample_id, store.pending_items(sample_id)[0])
        if not aged:
            with desk.runs.engine.begin() as conn:
                conn.exec_driver_sql("UPDATE run SET worker = ? WHERE id = ?", (worker, run_id))
            return [run_id]
        return [left_behind_by(desk.runs, run_id, worker)]

    return make


def running_under(worker: str) -> Make:
    """The sample's first review claimed by `worker` an hour ago (`running`)."""

    def make(desk: Desk, sample_id: int) -> list[int]:
        store = desk.batches.store
        run_id = store.start_review(sample_id, store.pending_items(sample_id)[0])
        return [left_behind_by(desk.runs, run_id, worker, RunStatus.RUNNING)]

    return make


def all_in(quiet: bool) -> Make:
    """Every review of the sample in, the sample not closed (`quiet`: its last review ended an hour ago)."""

    def make(desk: Desk, sample_id: int) -> list[int]:
        store = desk.batches.store
        ids = [store.start_review(sample_id, item) for item in store.pending_items(sample_id)]
        for future in [desk.runner.submit(run_id) for run_id in ids]:
            future.result(timeout=60)
        if quiet:
            for run_id in ids:
                age(desk.runs, run_id)
        assert store.progress(sample_id).finished and store.progress(sample_id).finished_at is None
        return ids

    return make


def mixed(live: str) -> Make:
    """One review queued by a dead process an hour ago, the next running under a live one (which drives the
    sample: it takes the first up once a thread is free)."""

    def make(desk: Desk, sample_id: int) -> list[int]:
        first = queued_by(DEAD)(desk, sample_id)
        return first + running_under(live)(desk, sample_id)

    return make


def nothing_started(desk: Desk, sample_id: int) -> list[int]:
    """Drawn, no review started (a Message Batch still at the API looks the same): nothing tells who drives it."""
    return []


CASES: dict[str, tuple[Callable[[str], Make], bool, bool]] = {
    "queued-by-a-dead-process": (lambda live: queued_by(DEAD), False, True),
    "running-under-a-dead-process": (lambda live: running_under(DEAD), False, True),
    "all-in-not-closed-and-quiet": (lambda live: all_in(True), False, True),
    "queued-by-a-live-command-line": (lambda live: queued_by(live), False, False),
    "running-under-a-live-command-line": (lambda live: running_under(live), False, False),
    "queued-by-a-dead-process-while-a-live-one-runs-another": (mixed, False, False),
    "queued-by-a-dead-process-a-moment-ago": (lambda live: queued_by(DEAD, aged=False), False, False),
    "all-in-not-closed-a-moment-ago": (lambda live: all_in(False), False, False),
    "nothing-started": (lambda live: nothing_started, False, False),
    "queued-by-a-dead-process-of-a-paused-batch": (lambda live: queued_by(DEAD), True, False),
}
"""what was left -> (make it, given a live process's worker; the batch paused; the sweep takes the sample)."""


@pytest.fixture
def sweeping_desk(tmp_path: Path, live_worker: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Desk, str]]:
    """The app's desk, open before anything is left behind, its own sweep out of the way; and the worker of a live
    process on this host."""
    monkeypatch.setattr(wiring, "SWEEP_EVERY_S", 3600.0)
    # "a moment ago" stays a moment however slow the machine (CI flake: 5 s passed between queueing and the sweep)
    monkeypatch.setattr(wiring, "QUEUED_ORPHAN_S", 600.0)
    assert live_worker != this_worker() and alive_on_this_host(live_worker)
    desk = batch_desk(f"sqlite:///{tmp_path / 'santa.db'}")
    yield desk, live_worker
    desk.close()


@pytest.mark.parametrize("case", list(CASES))
def test_the_sweep_takes_a_sample_only_when_a_gone_process_left_it(sweeping_desk: tuple[Desk, str], case: str) -> None:
    desk, live = sweeping_desk
    make, paused, taken = CASES[case]
    file = read_batch(planted_csv(20, every=1)[0], "emails.csv", strata=["template"])
    batch_id = desk.batches.create(file, config(file), "cli")
    sample_id = desk.batches.draw(batch_id, "cli")
    before = make(live)(desk, sample_id)
    if paused:
        desk.batches.pause(batch_id, "cli")
    states = desk.runs.claims(before)
    wiring.sweep(desk.runs, desk.runner, desk.batches)
    store = desk.batches.store
    if not taken:
        assert not desk.batches.driving(sample_id)
        desk.runner.pool.shutdown(wait=True)  # whatever the sweep handed the runner has run
        assert store.progress(sample_id).finished_at is None and store.run_ids(sample_id) == before
        assert desk.runs.claims(before) == states  # untouched
        return
    progress = desk.batches.wait(sample_id, timeout=60)
    assert progress.finished_at is not None and progress.done == progress.size
    assert progress.naughty and store.patterns(batch_id, sample_id)  # closed by the driver: grouped


def test_the_desks_start_leaves_alone_a_sample_a_live_command_line_drives(
    tmp_path: Path, live_worker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At its start the app picks up what dead processes left (and groups a sample closed without its patterns),
    not what a live command line drives."""
    monkeypatch.setattr(wiring, "SWEEP_EVERY_S", 3600.0)
    url = f"sqlite:///{tmp_path / 'santa.db'}"
    before = batch_desk(url, mark_interrupted=False)  # the processes that made them
    file = read_batch(planted_csv(20, every=1)[0], "emails.csv", strata=["template"])
    samples = [before.batches.draw(before.batches.create(file, config(file), "cli"), "cli") for _ in range(3)]
    theirs = running_under(live_worker)(before, samples[0])
    dead = running_under(DEAD)(before, samples[1])
    all_in(True)(before, samples[2])
    assert before.batches.store.finish_sample(samples[2]).finished_at  # closed as before the driver grouped
    before.close()
    assert before.batches.store.ungrouped_samples() == [samples[2]]
    claims = RunStore(init_db(url, mark_interrupted=False)).claims(theirs)
    desk = batch_desk(url)  # the app starts
    try:
        assert desk.batches.wait(samples[1], timeout=60).finished_at is not None  # a dead process's: picked up
        assert desk.runs.load_run(dead[0]).state.status in DONE
        assert not desk.batches.driving(samples[0])
        desk.runner.pool.shutdown(wait=True)
        store = desk.batches.store
        assert store.run_ids(samples[0]) == theirs and desk.runs.claims(theirs) == claims  # the live one's: untouched
        assert store.progress(samples[0]).finished_at is None
        progress = store.progress(samples[2])
        [pattern] = store.patterns(progress.batch_id, samples[2])  # grouped at the start, with nobody on a page
        assert pattern.pattern["count"] == progress.naughty
    finally:
        desk.close()
