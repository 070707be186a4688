"""Reading never writes: opening a run's page (`?run=N`) changes nothing, whatever the run waits for. A run queued
long ago by a process that is gone, one interrupted, one still `running` under a dead process, a queued review
of a paused batch: the page says what is going on, and every table's rows and the audit chain's head are the same
before and after, with everything the page might have handed the desk's runner run to its end. The desk picks
such runs up on its own (tests/cli/test_crash.py), never because someone looked.

The Batch page likewise: a sample whose reviews are all in but which is not closed, and a closed sample whose
failures are not grouped yet, are shown as such, and closed and grouped by the desk's sweep, not by the page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, inspect, text
from streamlit.testing.v1 import AppTest

from desk import Desk, wiring
from santa_core.batch.file import read_batch
from santa_core.models import RunState, RunStatus
from storage.runs import RunStore
from storage.workers import host_name
from tests.core.batch.test_driver import config, planted_csv
from tests.support.batch_page import TITLE, batch_answer, open_batch
from tests.support.batch_page import texts as batch_texts
from tests.support.messages_api import MessagesStub
from tests.ui.test_run_page import CLEAN, EDITOR, MODEL_B, MODEL_C, SPEC, texts

DEAD = f"{host_name()}:999999999:1"
"""A process on this host that is not running (no such pid)."""
AN_HOUR_AGO = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S")


def snapshot(engine: Engine) -> dict[str, object]:
    """Row counts of every table, the audit chain's head, and every run's and batch's state."""
    with engine.connect() as conn:
        found: dict[str, object] = {
            t: conn.execute(text(f'SELECT count(*) FROM "{t}"')).scalar() for t in inspect(engine).get_table_names()
        }
        found["audit head"] = conn.execute(text("SELECT * FROM audit_head")).all()
        found["runs"] = conn.execute(text("SELECT id, status, note, worker, updated_at FROM run ORDER BY id")).all()
        found["batches"] = conn.execute(text("SELECT id, paused FROM batch ORDER BY id")).all()
        found["samples"] = conn.execute(text("SELECT id, finished_at, api_status FROM batch_sample ORDER BY id")).all()
    return found


def left(repo: RunStore, run_id: int, worker: str | None = DEAD) -> int:
    """The run as a process that died an hour ago left it."""
    with repo.engine.begin() as conn:
        conn.execute(
            text("UPDATE run SET updated_at = :at, worker = :w WHERE id = :id"),
            {"at": AN_HOUR_AGO, "w": worker, "id": run_id},
        )
    return run_id


def new_run(repo: RunStore) -> int:
    return repo.create_run(SPEC, CLEAN, repo.rubrics.resolved("general"), MODEL_B, MODEL_C, MODEL_B, created_by=EDITOR)


def queued(repo: RunStore, desk: Desk) -> int:
    return left(repo, new_run(repo))


def interrupted(repo: RunStore, desk: Desk) -> int:
    run_id = new_run(repo)
    assert repo.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
    state = repo.load_run(run_id).state
    assert repo.transition(
        run_id,
        {RunStatus.RUNNING},
        state.model_copy(update={"status": RunStatus.INTERRUPTED, "note": "the server stopped"}),
        "system",
    )
    return left(repo, run_id, None)


def running_under_a_dead_process(repo: RunStore, desk: Desk) -> int:
    run_id = new_run(repo)
    assert repo.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
    return left(repo, run_id)


def review_of_a_paused_batch(repo: RunStore, desk: Desk) -> int:
    file = read_batch(planted_csv(20)[0], "emails.csv", strata=["template"])
    batch_id = desk.batches.create(
        file, config(file).model_copy(update={"reviewer_b": MODEL_B, "reviewer_c": MODEL_C, "fixer": MODEL_B}), "ann"
    )
    sample_id = desk.batches.draw(batch_id, "ann")
    run_id = desk.batches.store.start_review(sample_id, desk.batches.store.pending_items(sample_id)[0])
    desk.batches.pause(batch_id, "ann")
    return left(repo, run_id)


CASES: dict[str, tuple[Callable[[RunStore, Desk], int], str]] = {
    "queued-left-by-a-dead-process": (
        queued,
        "waiting for a worker. A run whose process stopped is picked up by the desk on its own",
    ),
    "interrupted": (interrupted, "Interrupted: the server stopped. Nothing committed was lost."),
    "running-under-a-dead-process": (running_under_a_dead_process, " — reviewing"),
    "queued-review-of-a-paused-batch": (
        review_of_a_paused_batch,
        "which is paused. It starts when the batch is resumed on the Batch page.",
    ),
}
"""what the run waits for -> (make such a run, what its page says)."""


@pytest.fixture
def app_desk_open(desk_env: RunStore, monkeypatch: pytest.MonkeyPatch) -> Iterator[Desk]:
    """The app's desk, opened (its start done) before the runs are left behind, its sweep out of the way."""
    from ui import app_desk

    monkeypatch.setattr(wiring, "SWEEP_EVERY_S", 3600.0)
    monkeypatch.setenv("SANTA_ALERT_EVERY_S", "3600")  # the alert pass sweeps (reminders, the draw) even with no hook
    desk = app_desk.desk_for(str(desk_env.engine.url))
    yield desk
    desk.close()


def open_run(person: str | None, run_id: int | None) -> AppTest:
    """The Review page on `?run=<run_id>`, as a signed-in person (None: the local admin)."""
    at = AppTest.from_file("../../app.py", default_timeout=30)
    if person:
        at.user = {"is_logged_in": True, "email": person, "name": "Ed"}
    if run_id is not None:
        at.query_params["run"] = str(run_id)
    at.run()
    at.switch_page("pages/review.py").run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("case", list(CASES))
def test_opening_a_run_page_writes_nothing_and_says_what_the_run_waits_for(
    desk_env: RunStore, app_desk_open: Desk, messages_stub: MessagesStub, case: str
) -> None:
    make, says = CASES[case]
    run_id = make(desk_env, app_desk_open)
    open_run(EDITOR, None)  # signed in before (a first sign-in registers the person: sign-in's write, not reading's)
    before = snapshot(desk_env.engine)
    for person in (None, EDITOR):  # the local admin, and an editor who may resume
        assert says in texts(open_run(person, run_id))
    app_desk_open.runner.pool.shutdown(wait=True)  # whatever a page handed the runner has run to its end
    app_desk_open.batches.pool.shutdown(wait=True)
    assert snapshot(desk_env.engine) == before
    assert messages_stub.calls == []


def reviewed_not_closed(repo: RunStore, desk: Desk, auto_approve: bool = False) -> tuple[int, int]:
    """A batch whose sample has every review in but is not closed, as a driver that died just before closing it
    left it an hour ago (every promo item fails, so the sample has failures to group); (batch, sample)."""
    file = read_batch(planted_csv(20, every=1)[0], "emails.csv", strata=["template"])
    batch_id = desk.batches.create(
        file,
        config(file).model_copy(
            update={"reviewer_b": MODEL_B, "reviewer_c": MODEL_C, "fixer": MODEL_B, "auto_approve": auto_approve}
        ),
        "ann",
    )
    sample_id = desk.batches.draw(batch_id, "ann")
    store = desk.batches.store
    for future in [desk.runner.submit(store.start_review(sample_id, item)) for item in store.pending_items(sample_id)]:
        future.result(timeout=60)
    for run_id in store.run_ids(sample_id):
        left(repo, run_id, None)
    progress = store.progress(sample_id)
    assert progress.finished and progress.naughty and progress.finished_at is None
    return batch_id, sample_id


def closed_not_grouped(repo: RunStore, desk: Desk) -> tuple[int, int]:
    """A closed sample with failures and no stored pattern, as a driver before this desk grouped left it."""
    batch_id, sample_id = reviewed_not_closed(repo, desk)
    assert desk.batches.store.finish_sample(sample_id).finished_at is not None  # the store's close: no grouping
    return batch_id, sample_id


BATCH_CASES: dict[str, tuple[Callable[[RunStore, Desk], tuple[int, int]], str]] = {
    "all-reviews-in-not-closed": (reviewed_not_closed, "All reviews are in; the sample is being closed"),
    "closed-not-grouped": (closed_not_grouped, "failures are being grouped into patterns"),
}


def opened_with_nothing_written_or_sent(
    desk_env: RunStore, app_desk_open: Desk, messages_stub: MessagesStub, batch_id: int
) -> list[str]:
    """The batch's page as the local admin and as an editor: what each is shown, once every table and the model
    server are found as they were (whatever a page handed the desk has run to its end)."""
    open_batch(None, EDITOR)  # signed in before (a first sign-in registers the person)
    calls = len(messages_stub.calls)
    before = snapshot(desk_env.engine)
    pages = [batch_texts(open_batch(batch_id, person)) for person in (None, EDITOR)]
    app_desk_open.runner.pool.shutdown(wait=True)
    app_desk_open.batches.pool.shutdown(wait=True)
    assert snapshot(desk_env.engine) == before
    assert len(messages_stub.calls) == calls
    return pages


@pytest.mark.parametrize("case", list(BATCH_CASES))
def test_opening_a_batch_page_writes_nothing_and_the_sweep_closes_and_groups(
    desk_env: RunStore, app_desk_open: Desk, messages_stub: MessagesStub, case: str
) -> None:
    messages_stub.handler = batch_answer
    make, says = BATCH_CASES[case]
    batch_id, sample_id = make(desk_env, app_desk_open)
    pages = opened_with_nothing_written_or_sent(desk_env, app_desk_open, messages_stub, batch_id)
    assert all(says in shown and "Patterns in sample 1" not in shown for shown in pages)
    # What the desk does on its own (every SWEEP_EVERY_S, with nobody on a page): the page then shows it.
    wiring.sweep(app_desk_open.runs, app_desk_open.runner, app_desk_open.batches)
    progress = app_desk_open.batches.store.progress(sample_id)
    assert progress.finished_at is not None
    [pattern] = app_desk_open.batches.store.patterns(batch_id, sample_id)
    shown = batch_texts(open_batch(batch_id, EDITOR))
    assert f"Sample 1: {progress.nice} NICE, {progress.naughty} NAUGHTY of {progress.size}" in shown
    assert "Patterns in sample 1" in shown and TITLE in shown and pattern.title in shown
    assert says not in shown


def test_opening_the_batch_page_of_an_auto_approve_batch_sends_nothing_and_records_nothing(
    desk_env: RunStore, app_desk_open: Desk, messages_stub: MessagesStub
) -> None:
    """An auto-approve batch whose pattern waits with no proposal (grouped by a desk before the driver fixed, or by a
    driver that stopped between grouping and fixing): opening its page asks the fix agent nothing, writes nothing,
    for the local admin and an editor alike. The driver fixes it when it groups a sample (the sweep, below)."""
    messages_stub.handler = batch_answer
    batch_id, sample_id = reviewed_not_closed(desk_env, app_desk_open, auto_approve=True)
    store = app_desk_open.batches.store
    store.finish_sample(sample_id)
    [pattern] = app_desk_open.batches.find_patterns(sample_id)  # grouped, not taken up by auto-approve
    pages = opened_with_nothing_written_or_sent(desk_env, app_desk_open, messages_stub, batch_id)
    assert all(pattern.title in shown for shown in pages)
    assert store.pattern(pattern.id).status == "open" and store.pattern(pattern.id).proposal is None


EVERY_PAGE = [
    "pages/home.py",
    "pages/review.py",
    "pages/batch.py",
    "pages/runs.py",
    "pages/inbox.py",
    "pages/escalations.py",
    "pages/audit.py",
    "pages/metrics.py",
    "pages/rubrics.py",
    "pages/people.py",
    "pages/settings.py",
]


def test_opening_every_page_writes_nothing_whatever_was_left_behind(
    desk_env: RunStore, app_desk_open: Desk, messages_stub: MessagesStub
) -> None:
    """Every run and batch state above at once; each of the eleven pages opened as it first shows, and each run's and
    batch's page, by the local admin and by an editor: nothing changes and no model is asked."""
    messages_stub.handler = batch_answer
    runs = [make(desk_env, app_desk_open) for make, _ in CASES.values()]
    batches = [make_batch(desk_env, app_desk_open)[0] for make_batch, _ in BATCH_CASES.values()]
    deep_links = [("pages/review.py", "run", r) for r in runs] + [("pages/batch.py", "batch", b) for b in batches]
    open_run(EDITOR, None)  # signed in before (a first sign-in registers the person)
    calls = len(messages_stub.calls)
    before = snapshot(desk_env.engine)
    for person in (None, EDITOR):
        at = AppTest.from_file("../../app.py", default_timeout=30)
        if person:
            at.user = {"is_logged_in": True, "email": person, "name": "Ed"}
        at.run()
        for page in EVERY_PAGE:
            at.switch_page(page).run()
            assert not at.exception, (page, at.exception)
        for page, param, value in deep_links:  # and each run's and batch's own page
            at.switch_page(page)
            at.query_params[param] = str(value)
            at.run()
            assert not at.exception, (page, value, at.exception)
            at.query_params.pop(param)
    app_desk_open.runner.pool.shutdown(wait=True)  # whatever a page handed the desk has run to its end
    app_desk_open.batches.pool.shutdown(wait=True)
    assert snapshot(desk_env.engine) == before
    assert len(messages_stub.calls) == calls
