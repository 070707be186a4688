"""Driving the Batch page like a user, for its tests (tests/ui/test_batch_page_*.py): the stub's
answers as both reviewers and the fix agent (the planted promise FAILs compliance and is fixed),
opening the page, uploading a file, waiting for background work by polling the database and
re-running the page, what the page shows, and batches made below the page.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Callable

from sqlmodel import Session, col, func, select
from streamlit.runtime.media_file_storage import MediaFileKind
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from desk import open_desk
from santa_core.batch.file import read_batch
from santa_core.batch.store import BatchConfig, SampleProgress
from santa_core.rubrics.library import load_builtin
from storage.batches import BatchStore
from storage.runs import RunStore
from storage.tables import BatchItemRow, BatchSampleRow
from tests.core.batch.test_driver import DEFECT, FIXED, SPEC, planted_csv
from tests.support.messages_api import (
    MessagesStub,
    default_answer,
    fenced_output,
    fix_json,
    message,
    review_json,
    schema_properties,
)
from tests.ui.test_app import texts as page_texts

COMPLAINT = 'promises free shipping "guaranteed forever"'
"""What the stub reviewers say of the promise: it flags the words the defect is about, as reviewers do."""
TITLE = "Compliance with stated constraints: “guaranteed forever”"
"""The pattern's title: the criterion's name and the phrase the reviewers flagged (never their whole sentence)."""


def batch_answer(body: dict) -> dict:
    """The stub as both reviewers and the fix agent.

    Reviewers FAIL compliance on an output that makes the planted promise, quoting it (48 characters,
    over MIN_QUOTE_CHARS) and PASS every criterion otherwise; the fix agent replaces the promise.
    """
    model = body.get("model", "stub-model")
    if "edits" in schema_properties(body):
        return message(fix_json([(0, DEFECT, FIXED)]), model)
    if DEFECT in fenced_output(body):
        return message(
            review_json(
                "FAIL", [("compliance", "FAIL", "a promise we cannot keep")], [("compliance", COMPLAINT, DEFECT)]
            ),
            model,
        )
    return default_answer(body)


# --- helpers ---------------------------------------------------------------------------------------


def open_batch(batch: int | str | None = None, email: str | None = None) -> AppTest:
    """The Batch page as `email` (None: the local user, an admin), on `?batch=<batch>` when given."""
    at = AppTest.from_file("../../app.py", default_timeout=30)
    if email is not None:
        at.user = {"is_logged_in": True, "email": email, "name": email.split("@")[0].title()}
    at.run()
    at.switch_page("pages/batch.py")
    if batch is not None:
        at.query_params["batch"] = str(batch)
    at.run()
    assert not at.exception, at.exception
    return at


def upload(at: AppTest, data: bytes, name: str = "emails.csv", **choices: object) -> AppTest:
    """Upload a file, then set the form's widgets by key (batch_<name>)."""
    at.file_uploader(key="batch_file").set_value((name, data, "text/csv")).run()
    assert not at.exception, at.exception
    for key, value in choices.items():
        at.get_by_key(f"batch_{key}").set_value(value)
    at.run()
    assert not at.exception, at.exception
    return at


def wait_until(what: str, done: Callable[[], bool], at: AppTest | None = None) -> None:
    """Poll the database until `done`, then re-run the page (as its polling fragment would)."""
    deadline = time.monotonic() + 60
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
    if at is not None:
        at.run()
        assert not at.exception, at.exception


def sample_in(store: BatchStore, batch_id: int, number: int, at: AppTest) -> SampleProgress:
    """Wait until sample `number` of the batch is fully reviewed and marked finished."""

    def finished() -> bool:  # the samples' finish times only: a whole batch with every sample's progress is 12 ms
        with Session(store.engine) as s:
            ends = s.exec(
                select(BatchSampleRow.finished_at)
                .where(BatchSampleRow.batch_id == batch_id)
                .order_by(col(BatchSampleRow.number))
            ).all()
        return len(ends) >= number and ends[number - 1] is not None

    wait_until(f"sample {number}", finished, at)
    return store.get(batch_id).samples[number - 1]


def texts(at: AppTest) -> str:
    """What the page shows, as a reader sees it (escapes, bold and heading marks removed), progress bars included."""
    bars = [p.text for p in at.get("progress")]
    return "\n".join([page_texts(at).replace("**", "").replace("#### ", ""), *bars])


def keys(at: AppTest, kind: str = "button") -> set[str]:
    return {w.key for w in at.get(kind) if getattr(w, "key", None)}


def media_url(data: bytes, mimetype: str, file_name: str) -> str:
    """Where AppTest's media store keeps a download of exactly `data` (the id is a hash of the content)."""
    store = MemoryMediaFileStorage("/mock/media")
    return store.get_url(store.load_and_get_id(data, mimetype, MediaFileKind.DOWNLOADABLE, file_name))


def downloads(at: AppTest) -> dict[str, str]:
    return {d.proto.id.rsplit("-", 1)[-1]: d.proto.url for d in at.get("download_button")}


def rows(data: bytes) -> dict[str, dict[str, str]]:
    """A CSV's rows by id, every value as the csv module reads it."""
    return {r["id"]: r for r in csv.DictReader(io.StringIO(data.decode("utf-8"), newline=""))}


def stored_items(repo: RunStore) -> int:
    with Session(repo.engine) as s:
        return s.exec(select(func.count()).select_from(BatchItemRow)).one()


def create_batch(desk, data: bytes) -> int:  # noqa: ANN001 - desk.Desk
    """Store a batch file below the page, with the stub's models as reviewers and fix agent."""
    file = read_batch(data, "emails.csv", strata=["template"])
    config = BatchConfig(
        name="emails.csv",
        file_format=file.format,
        columns=file.columns,
        id_column=file.id_column,
        output_column=file.output_column,
        spec=SPEC,
        strata=file.strata,
        rubric=load_builtin("general"),
        reviewer_b="claude-sonnet-5-5",
        reviewer_c="claude-haiku-5-5",
        fixer="claude-opus-5-5",
    )
    return desk.batches.create(file, config, "ann")


def seeded_batch(
    messages_stub: MessagesStub, items: int = 40, every: int = 1, handler: Callable[[dict], object] = batch_answer
) -> int:
    """A batch with one finished sample, made below the page (the real adapters talk to the stub).

    With `every=1` every promo item carries the defect; every template is sampled, so the sample
    always holds a failing promo item and the batch has a pattern.
    """
    messages_stub.handler = handler
    desk = open_desk(mark_interrupted=False)
    try:
        data, _ = planted_csv(items, every)
        batch_id = create_batch(desk, data)
        sample_id = desk.batches.sample(batch_id, "ann")
        assert desk.batches.wait(sample_id, timeout=60).finished
        desk.batches.find_patterns(sample_id)
        return batch_id
    finally:
        desk.close()
