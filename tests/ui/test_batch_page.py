"""The Batch page driven like a user: upload, sample, patterns, fix across the batch, resample, export.

The reviewers and the fix agent are the real Anthropic adapters talking to the loopback stub
(`messages_stub`); background work is awaited by polling the database and re-running the page, as
the page's polling fragment would.
"""

from __future__ import annotations

import csv
import io
import threading
import time
from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlmodel import Session, func, select
from streamlit.runtime.media_file_storage import MediaFileKind
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from desk import open_desk
from santa_core.batch.driver import BatchDriver
from santa_core.batch.file import BatchFileError, read_batch
from santa_core.batch.store import BatchConfig, ItemIn, SampledReview, SampleProgress
from santa_core.rubrics.library import load_builtin
from storage.batches import BatchStore
from storage.runs import RunStore
from storage.tables import BatchItemRow, RunRow
from tests.core.batch.test_driver import DEFECT, FIXED, SPEC, planted_csv
from tests.support.messages_api import (
    MessagesStub,
    default_answer,
    error_reply,
    fenced_output,
    fix_json,
    message,
    review_json,
    schema_properties,
)
from tests.ui.test_app import plain
from tests.ui.test_app import texts as page_texts
from ui.batch import MIME, eta, export_name, result_of, state_of, stopped_why
from ui.batch_plan import detection_frame

SEED = 13
"""The draw is deterministic: SHA-256 ranks of seed and item id (the file's ids). With 5 templates of
40 items at 15 %, 6 promo items are sampled, so the planted 20 % (8 of 40 promo items) is caught with
probability 1 − C(32, 6)/C(40, 6) = 76.4 %. Seed 13 catches it with 3 of the 8, so the pattern has
several examples; seeds 1 (the default), 5, 11 and 12 miss it."""
CAUGHT = {"item-000", "item-125", "item-150"}
TITLE = "promises free shipping forever"


def batch_answer(body: dict) -> dict:
    """The stub as both reviewers and the fix agent.

    Reviewers FAIL compliance on an output that makes the planted promise, quoting it (48 characters,
    over MIN_QUOTE_CHARS) and PASS every criterion otherwise; the fix agent replaces the promise.
    """
    model = body.get("model", "stub-model")
    if "edits" in schema_properties(body):
        return message(fix_json([(0, DEFECT, FIXED)]), model)
    if DEFECT in fenced_output(body):
        return message(review_json("FAIL", [("compliance", "FAIL", "a promise we cannot keep")],
                                   [("compliance", TITLE, DEFECT)]), model)
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
    def finished() -> bool:
        samples = store.get(batch_id).samples
        return len(samples) >= number and samples[number - 1].finished_at is not None
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
    config = BatchConfig(name="emails.csv", file_format=file.format, columns=file.columns,
                         id_column=file.id_column, output_column=file.output_column, spec=SPEC,
                         strata=file.strata, rubric=load_builtin("general"), reviewer_b="claude-sonnet-5-5",
                         reviewer_c="claude-haiku-5-5", fixer="claude-opus-5-5")
    return desk.batches.create(file, config, "ann")


def seeded_batch(messages_stub: MessagesStub, items: int = 40, every: int = 1,
                 handler: Callable[[dict], object] = batch_answer) -> int:
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


# --- acceptance -------------------------------------------------------------------------------------


def test_a_planted_defect_is_found_fixed_across_the_batch_and_a_fresh_sample_is_clean(
        desk_env: RunStore, messages_stub: MessagesStub) -> None:
    messages_stub.handler = batch_answer
    store = BatchStore(desk_env)
    data, planted = planted_csv()  # 200 items, 5 templates of 40; 8 promo items (20 %) make the promise
    assert len(planted) == 8
    at = upload(open_batch(), data, strata=["template"], spec=SPEC, seed=SEED)
    shown = texts(at)
    assert "Detected CSV" in shown and "200 items" in shown and "id: id, output: output, spec: none" in shown
    # Before sampling: the sample size, the chances over the batch and inside the promo template, the cost.
    assert "What a sample of 30 of 200 items catches" in shown
    assert ("Least covered: A pattern in 20.0 % of stratum promo (8 of its 40 items) is caught with probability 76.4 %: "
            "6 of its items are sampled.") in shown
    assert {m.label for m in at.metric} >= {"One sample (estimated)", "Full verification (estimated)"}
    assert store.batches() == []  # nothing stored before the click

    at.button(key="batch_create").click().run()
    [batch] = store.batches()
    assert at.query_params["batch"] in (str(batch.id), [str(batch.id)])
    first = sample_in(store, batch.id, 1, at)

    # The sample found the planted defect as one pattern, with its strata, evidence and examples.
    reviews = store.reviews(first.id)
    assert first.size == 30 and {r.key for r in reviews if not r.nice} == CAUGHT
    [pattern] = store.patterns(batch.id, first.id)
    shown = texts(at)
    assert "Sample 1: 27 NICE, 3 NAUGHTY of 30" in shown
    assert TITLE in shown and "3 of 30 sampled items (10.0 %)" in shown and "template: promo 3" in shown
    assert any(c.value == DEFECT for c in at.code)  # the evidence, quoted
    runs = {r.key: r.run_id for r in reviews}
    links = {link.proto.query_string for link in at.get("page_link")}
    assert {f"run={runs[k]}" for k in CAUGHT} <= links  # each example opens its run

    # Ask the fix agent: its proposal as a diff on the representative, and what it would do to the batch.
    at.button(key=f"batch_propose_{pattern.id}").click().run()
    assert not at.exception, at.exception
    assert any(c.language == "diff" and f"+ {FIXED}" in c.value for c in at.code)
    assert "8 item(s) in the batch show this pattern: approving changes 8." in texts(at)
    at.text_input(key=f"batch_reason_{pattern.id}").set_value("the offer ended")
    at.button(key=f"batch_approve_{pattern.id}").click().run()
    assert "Fix applied: 8 item(s) of the batch changed." in texts(at)
    items = {it.key: it for it in store.items(batch.id)}
    assert {k for k, it in items.items() if it.changed} == planted

    # No pattern is open: resample; a fresh sample comes back clean and the stopping rule is stated.
    at.button(key="batch_resample").click().run()
    second = sample_in(store, batch.id, 2, at)
    assert second.clean and second.size == 30
    shown = texts(at)
    rule = BatchDriver(desk_env, BatchStore(desk_env), None, None).stopping_rule(batch.id)  # type: ignore[arg-type]
    assert rule is not None and rule.clean and rule.statement() in shown
    assert "The sample came back clean: with 95 % confidence at most" in shown

    # The export on the page: fixed items carry the fix, every other item is byte-identical to the upload.
    exporter = BatchDriver(desk_env, BatchStore(desk_env), None, None)  # type: ignore[arg-type] - export only reads
    csv_bytes, jsonl_bytes = exporter.export(batch.id, "csv"), exporter.export(batch.id, "jsonl")
    exporter.shutdown()
    offered = downloads(at)
    assert offered["batch_export_csv"] == media_url(csv_bytes, MIME["csv"], "emails-verified.csv")
    assert offered["batch_export_jsonl"] == media_url(jsonl_bytes, MIME["jsonl"], "emails-verified.jsonl")
    uploaded, exported = rows(data), rows(csv_bytes)
    assert list(exported) == list(uploaded)  # every item, in file order
    for key, row in uploaded.items():
        out = exported[key]
        assert (out["template"], out["locale"]) == (row["template"], row["locale"])
        if key in planted:
            assert out["output"].encode() == row["output"].replace(DEFECT, FIXED).encode()
            assert out["santa_original_output"].encode() == row["output"].encode()
            assert out["santa_pattern"] == TITLE and out["santa_status"] in ("fixed", "passed")
        else:
            assert out["output"].encode() == row["output"].encode()  # byte for byte
            assert out["santa_original_output"] == "" and out["santa_pattern"] == ""


# --- the other paths -------------------------------------------------------------------------------


def test_empty_state_says_what_the_page_is_for(desk_env: RunStore) -> None:
    at = open_batch()
    assert "No batches yet" in texts(at)
    assert [t.value for t in at.title] == ["🧺 Batch"]
    assert at.file_uploader(key="batch_file") is not None and not at.dataframe
    assert "batch_create" not in keys(at)  # nothing to create before a file is uploaded


LONG = "x" * 200_001


@pytest.mark.parametrize("name, data", [
    pytest.param("emails.csv", "id,output\n1,café\n".encode("latin-1"), id="not-utf8"),
    pytest.param("emails.csv", b"id,output\na,hello\na,world\nb,\n", id="duplicate-id-and-empty-output"),
    pytest.param("emails.csv", b"id,body\n1,hello\n", id="no-output-column"),
    pytest.param("emails.csv", f"id,output\n1,{LONG}\n".encode(), id="oversized-row"),
    pytest.param("emails.jsonl", b'{"id": "a", "output": "fine"}\n{"id": "b", "output": \n', id="bad-json-line"),
])
def test_a_bad_file_shows_every_problem_and_stores_nothing(desk_env: RunStore, name: str, data: bytes) -> None:
    with pytest.raises(BatchFileError) as caught:
        read_batch(data, name, spec_column="")  # the page reads with one spec for all by default
    at = upload(open_batch(), data, name)
    [error] = at.error
    shown = plain(error.value)
    assert "nothing was stored" in shown
    for problem in caught.value.errors:
        assert problem in shown
    assert "batch_create" not in keys(at)
    assert BatchStore(desk_env).batches() == [] and stored_items(desk_env) == 0


def test_a_missing_spec_is_refused_before_anything_is_stored(desk_env: RunStore) -> None:
    data, _ = planted_csv(40)
    at = upload(open_batch(), data)
    at.button(key="batch_create").click().run()
    assert any("Write the spec for every item" in e.value for e in at.error)
    assert BatchStore(desk_env).batches() == []


def test_pause_stops_new_reviews_and_resume_finishes_the_sample(desk_env: RunStore, messages_stub: MessagesStub) -> None:
    release = threading.Event()

    def held(body: dict) -> dict:
        release.wait(timeout=30)  # the first review waits here until the test has paused the batch
        return batch_answer(body)

    messages_stub.handler = held
    store = BatchStore(desk_env)
    try:
        at = upload(open_batch(), planted_csv(40)[0], spec=SPEC, concurrency=1)
        at.button(key="batch_create").click().run()
        [batch] = store.batches()
        sample = store.get(batch.id).latest
        assert sample is not None and sample.size == 6  # 15 % of 40, rounded up
        wait_until("the first review to start", lambda: len(store.run_ids(sample.id)) == 1, at)
        assert "Sample 1: 0 of 6 items reviewed" in texts(at)
        at.button(key="batch_pause").click().run()
        assert store.is_paused(batch.id) and "Paused" in texts(at) and "batch_resume" in keys(at)
    finally:
        release.set()
    # The review in flight finishes and is kept; with the batch paused, no other one starts.
    wait_until("the review in flight", lambda: store.progress(sample.id).done == 1, at)
    assert len(store.run_ids(sample.id)) == 1 and store.progress(sample.id).finished_at is None
    figures = {m.label: m.value for m in at.metric}
    assert "1 of 6 items reviewed" in texts(at) and figures["Time left"] == "paused"
    assert int(figures["NICE"]) + int(figures["NAUGHTY"]) == 1
    at.button(key="batch_resume").click().run()
    assert not store.is_paused(batch.id)
    done = sample_in(store, batch.id, 1, at)
    assert done.done == 6 and len(store.run_ids(sample.id)) == 6
    assert "Sample 1:" in texts(at) and "batch_pause" not in keys(at)


def test_a_sample_cut_short_by_a_restart_is_reviewed_when_the_app_starts_again(
        desk_env: RunStore, messages_stub: MessagesStub) -> None:
    messages_stub.handler = batch_answer
    data, _ = planted_csv(40)
    file = read_batch(data, "emails.csv", strata=["template"])
    config = BatchConfig(name="emails.csv", file_format=file.format, columns=file.columns, id_column="id",
                         output_column="output", spec=SPEC, strata=file.strata, rubric=load_builtin("general"),
                         reviewer_b="claude-sonnet-5-5", reviewer_c="claude-haiku-5-5", fixer="claude-opus-5-5")
    store = BatchStore(desk_env)
    batch_id = store.create(config, [ItemIn(key=it.key, output=it.output, strata=it.strata, record=it.record)
                                     for it in file.items], "ann")
    sample_id = store.draw_sample(batch_id, "ann")  # drawn, then the process died: no review started
    assert store.run_ids(sample_id) == []
    at = open_batch(batch_id)  # a new process: the desk opens and picks the sample up
    sample_in(store, batch_id, 1, at)
    assert len(store.run_ids(sample_id)) == 6 and "Sample 1:" in texts(at)


def test_the_url_reopens_a_batch_and_the_list_opens_one(desk_env: RunStore, messages_stub: MessagesStub) -> None:
    batch_id = seeded_batch(messages_stub)
    at = open_batch(batch_id)
    shown = texts(at)
    assert f"Batch #{batch_id} — emails.csv" in shown and "Patterns in sample 1" in shown and TITLE in shown
    # The list: every batch with where it stands, and a picker that puts the batch in the URL.
    listing = open_batch()
    frame = listing.dataframe[0].value
    assert list(frame["batch"]) == [batch_id] and list(frame["state"]) == ["sample 1: 1 pattern(s) to decide"]
    listing.selectbox(key="batch_pick").set_value(batch_id)
    listing.button(key="batch_open").click().run()
    assert listing.query_params["batch"] in (str(batch_id), [str(batch_id)])
    assert f"Batch #{batch_id} — emails.csv" in texts(listing)
    listing.button(key="batch_back").click().run()
    assert "batch" not in listing.query_params and "Past batches (1)" in str([t.label for t in listing.tabs])


@pytest.mark.parametrize("param, message", [
    pytest.param("abc", "abc is not a batch number.", id="not-a-number"),
    pytest.param("99", "Batch #99 does not exist.", id="unknown"),
])
def test_a_bad_batch_in_the_url_says_so(desk_env: RunStore, param: str, message: str) -> None:
    at = open_batch(param)
    assert message in [plain(e.value) for e in at.error]


def test_a_viewer_sees_the_batch_but_no_controls(desk_env: RunStore, messages_stub: MessagesStub) -> None:
    batch_id = seeded_batch(messages_stub)
    at = open_batch(batch_id, email="viewer@example.com")
    shown = texts(at)
    assert TITLE in shown and "Patterns in sample 1" in shown
    assert "To approve, edit or reject a fix you need to be" in shown
    assert keys(at) == {"batch_back"}  # no propose, approve, dismiss, pause or sample buttons
    assert not at.text_input and not at.text_area
    assert {"batch_export_csv", "batch_export_jsonl"} <= set(downloads(at))  # reading the result is allowed
    listing = open_batch(email="viewer@example.com")
    assert "To start a run you need to be" in texts(listing)
    assert not listing.file_uploader


def test_auto_approve_applies_the_fix_without_a_person(desk_env: RunStore, messages_stub: MessagesStub) -> None:
    messages_stub.handler = batch_answer
    store = BatchStore(desk_env)
    data, planted = planted_csv()
    at = upload(open_batch(), data, strata=["template"], spec=SPEC, seed=SEED, auto=True)
    at.button(key="batch_create").click().run()
    [batch] = store.batches()
    assert batch.config.auto_approve
    sample_in(store, batch.id, 1, at)
    [pattern] = store.patterns(batch.id)
    assert pattern.status == "applied" and pattern.reason.startswith("auto-approved")
    assert {it.key for it in store.items(batch.id) if it.changed} == planted
    shown = texts(at)
    assert "Auto-approved: 8 item(s) of the batch changed." in shown and "batch_resample" in keys(at)


def test_dismissing_needs_a_reason_and_leaves_a_caveat_on_the_stopping_rule(
        desk_env: RunStore, messages_stub: MessagesStub) -> None:
    batch_id = seeded_batch(messages_stub)
    store = BatchStore(desk_env)
    [pattern] = store.patterns(batch_id)
    at = open_batch(batch_id)
    at.button(key=f"batch_dismiss_{pattern.id}").click().run()
    assert "Not done: say why the pattern is dismissed" in texts(at)
    assert store.pattern(pattern.id).status == "open" and "batch_resample" not in keys(at)
    at.text_input(key=f"batch_reason_{pattern.id}").set_value("legal approved the promise")
    at.button(key=f"batch_dismiss_{pattern.id}").click().run()
    assert store.pattern(pattern.id).status == "dismissed" and not any(it.changed for it in store.items(batch_id))
    shown = texts(at)
    assert "Dismissed by local user (local). Reason: legal approved the promise" in shown
    assert "with 95 % confidence" not in shown  # no bound from a sample that had failures
    assert "once a sample comes back clean" in shown
    # The reviewers now accept the promise (as legal did): the next sample is clean, with a caveat.
    messages_stub.handler = default_answer
    at.button(key="batch_resample").click().run()
    assert sample_in(store, batch_id, 2, at).clean
    shown = texts(at)
    assert "The sample came back clean: with 95 % confidence at most" in shown
    assert f"Caveat: 1 pattern(s) were dismissed without a fix: “{TITLE}” (legal approved the promise)" in shown


def test_items_whose_review_failed_are_a_group_to_handle_by_hand(desk_env: RunStore, messages_stub: MessagesStub) -> None:
    def broken(body: dict) -> object:
        """A reviewer request about a promo output is refused (400: not retried): the review fails."""
        if DEFECT in fenced_output(body):
            return error_reply(400, "invalid_request_error", "stub refuses this request")
        return batch_answer(body)

    batch_id = seeded_batch(messages_stub, handler=broken)
    [bucket] = BatchStore(desk_env).patterns(batch_id)
    assert bucket.pattern["kind"] == "review_failed"
    at = open_batch(batch_id)
    shown = texts(at)
    assert "review failed" in shown and "fix or check them by hand, then mark the group handled" in shown
    assert f"batch_propose_{bucket.id}" not in keys(at)  # no fix agent for a group without an issue
    at.text_input(key=f"batch_reason_{bucket.id}").set_value("re-checked by hand: fine")
    at.button(key=f"batch_dismiss_{bucket.id}").click().run()
    assert BatchStore(desk_env).pattern(bucket.id).status == "dismissed" and "batch_resample" in keys(at)


def test_a_sample_through_the_message_batches_api_is_tracked_until_it_ends(
        desk_env: RunStore, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANTA_BATCH_POLL_S", "0.05")  # the desk polls the stub often (read when it opens)
    messages_stub.handler = batch_answer
    store = BatchStore(desk_env)
    at = upload(open_batch(), planted_csv(40)[0], spec=SPEC, message_batches=True)
    assert "through the Message Batches API (about half price)" in str([m.help for m in at.metric])
    at.button(key="batch_create").click().run()
    [batch] = store.batches()
    sample = store.get(batch.id).latest
    wait_until("the Message Batch", lambda: store.progress(sample.id).api_status == "in_progress", at)
    [api_id] = messages_stub.batch_ids()
    assert f"Message Batch {api_id}: in_progress" in texts(at)
    # Sent: Pause could not hold it back, so it is not offered (the page says why).
    assert "batch_pause" not in keys(at) and "A Message Batch that was sent cannot be paused" in texts(at)
    assert {m.label: m.value for m in at.metric}["Time left"] == "—"
    messages_stub.end_batch(api_id)
    done = sample_in(store, batch.id, 1, at)
    assert done.api_status == "ended" and done.done == done.size == 6
    assert f"Sample 1: {done.nice} NICE, {done.naughty} NAUGHTY of 6" in texts(at)
    assert not messages_stub.message_calls()  # every review came back through the batch, none one by one


# --- pure pieces -------------------------------------------------------------------------------------


def progress(done: int, size: int = 30, seconds: float = 0.0) -> SampleProgress:
    from datetime import UTC, datetime

    return SampleProgress(id=1, batch_id=1, number=1, seed=1, size=size, created_at=datetime.now(UTC),
                          finished_at=None, api_batch_id=None, api_status=None, done=done, nice=done, naughty=0,
                          errors=0, cost_usd=0.0, seconds_done=seconds)


@pytest.mark.parametrize("done, seconds, paused, api, expected", [
    pytest.param(0, 0.0, False, False, "—", id="nothing-yet"),
    pytest.param(10, 20.0, False, False, "~40 s", id="seconds"),  # 20 s / 10 × 20 left = 40 s
    pytest.param(3, 60.0, False, False, "~9 min", id="minutes"),  # 60 / 3 × 27 = 540 s = 9 min
    pytest.param(1, 600.0, False, False, "~4.8 h", id="hours"),  # 600 × 29 = 17,400 s = 4.83 h
    pytest.param(10, 20.0, True, False, "paused", id="paused"),
    pytest.param(10, 20.0, False, True, "—", id="message-batches"),
])
def test_eta_from_the_pace_so_far(done: int, seconds: float, paused: bool, api: bool, expected: str) -> None:
    assert eta(progress(done, seconds=seconds), paused, api) == expected


def test_names_and_results_for_people() -> None:
    from santa_core.models import RunStatus

    assert export_name("emails.csv", "jsonl") == "emails-verified.jsonl"
    assert export_name("in/items.tsv", "csv") == "items-verified.csv"
    review = SampledReview(item_id=1, key="a", run_id=3, status=RunStatus.SAMPLED, output="x", strata={},
                           reviewer_error=True)
    assert result_of(review) == "NAUGHTY (reviewer error)"
    assert result_of(review.model_copy(update={"status": None})) == "waiting"


def test_state_of_a_batch() -> None:
    from datetime import UTC, datetime

    from santa_core.batch.store import Batch

    config = BatchConfig(name="x.csv", file_format="csv", columns=["id", "output"], id_column="id",
                         output_column="output", spec=SPEC, rubric=load_builtin("general"), reviewer_b="b",
                         reviewer_c="c", fixer="f")
    batch = Batch(id=1, name="x.csv", created_at=datetime.now(UTC), created_by="ann", config=config, paused=False,
                  items=40, samples=[])
    assert state_of(batch, 0) == "no sample yet"
    running = progress(2, 6)
    assert state_of(batch.model_copy(update={"samples": [running]}), 0) == "reviewing sample 1 (2/6)"
    assert state_of(batch.model_copy(update={"samples": [running], "paused": True}), 0) == "paused sample 1 (2/6)"
    finished = running.model_copy(update={"done": 6, "nice": 6, "finished_at": datetime.now(UTC)})
    assert state_of(batch.model_copy(update={"samples": [finished]}), 0) == "clean after sample 1"
    failed = finished.model_copy(update={"nice": 4, "naughty": 2})
    assert state_of(batch.model_copy(update={"samples": [failed]}), 1) == "sample 1: 1 pattern(s) to decide"


def test_the_detection_table_over_the_whole_batch() -> None:
    frame = detection_frame(200, 30)
    assert list(frame["items showing it"]) == [2, 4, 10, 20, 40]  # 1, 2, 5, 10, 20 % of 200
    chances = list(frame["chance this sample catches it"])
    assert chances[0] == "27.8 %"  # 1 − C(198, 30)/C(200, 30) = 0.27814
    assert chances[2] == "81.1 %"  # 1 − C(190, 30)/C(200, 30) = 0.81106


def test_an_item_that_could_not_take_the_fix_leaves_a_caveat_on_the_stopping_rule(
        desk_env: RunStore, messages_stub: MessagesStub) -> None:
    batch_id = seeded_batch(messages_stub)
    store = BatchStore(desk_env)
    victim = "item-000"  # a promo item neither sample draws (the draw is deterministic)
    with Session(desk_env.engine) as s, s.begin():  # the file had the promise twice in this item
        row = s.exec(select(BatchItemRow).where(BatchItemRow.item_key == victim)).one()
        row.output = row.original_output = f"{row.output} {DEFECT}"
    [pattern] = store.patterns(batch_id)
    at = open_batch(batch_id)
    at.button(key=f"batch_propose_{pattern.id}").click().run()
    wait_until("the proposal", lambda: store.pattern(pattern.id).proposal is not None, at)
    at.button(key=f"batch_approve_{pattern.id}").click().run()
    assert store.pattern(pattern.id).status == "applied"
    messages_stub.handler = default_answer
    at.button(key="batch_resample").click().run()
    second = sample_in(store, batch_id, 2, at)
    assert second.clean and victim not in {r.key for r in store.reviews(second.id)}
    shown = texts(at)
    assert "The sample came back clean: with 95 % confidence at most" in shown
    assert (f"Caveat: 1 item(s) showed a fixed pattern but could not take its edit and still need a fix by hand: "
            f"{victim}.") in shown


def test_a_sample_whose_reviews_stopped_says_so_and_try_again_finishes_it(
        desk_env: RunStore, messages_stub: MessagesStub) -> None:
    from santa_core.run import engine
    from santa_core.run.runner import advance_run

    messages_stub.handler = batch_answer
    desk = open_desk(mark_interrupted=False)
    try:
        batch_id = create_batch(desk, planted_csv(40)[0])
        desk.batches.pause(batch_id, "ann")  # so the app's start does not pick the sample up
        sample_id = desk.batches.store.draw_sample(batch_id, "ann")
        run_id = desk.batches.store.start_review(sample_id, desk.batches.store.pending_items(sample_id)[0])
        state = advance_run(desk.repo, run_id, desk.repo.load_run(run_id).state, engine.Claim(), "worker")
        advance_run(desk.repo, run_id, state, engine.Interrupt(note="worker error: OperationalError"), "system")
    finally:
        desk.close()
    with Session(desk_env.engine) as s, s.begin():  # the worker error was a minute ago
        row = s.get(RunRow, run_id)
        row.updated_at = row.updated_at - timedelta(minutes=1)
    store = BatchStore(desk_env)
    at = open_batch(batch_id)
    assert "Reviewing stopped" not in texts(at) and "Paused" in texts(at)  # paused: not stalled
    store.set_paused(batch_id, False, "ann")  # unpaused elsewhere, with nobody driving the sample here
    at.run()
    shown = texts(at)
    assert ("Reviewing stopped: 1 review(s) stopped on a worker error and no review of this sample is running"
            in shown)
    assert "batch_pause" not in keys(at)
    assert any(e.label.startswith("Sampled items") for e in at.expander)  # with the links to their runs
    at.button(key="batch_retry").click().run()
    assert sample_in(store, batch_id, 1, at).finished
    assert store.progress(sample_id).interrupted == 0 and "Reviewing stopped" not in texts(at)
    assert [e.actor for e in desk_env.audit.events(action="batch.retried")] == ["local"]


def test_interrupted_reviews_another_process_may_still_retry_are_not_called_stopped() -> None:
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 1, 1, tzinfo=UTC)

    def why(driving: bool = False, active: int = 0, ago_s: float | None = 60, api_status: str | None = None,
            interrupted: int = 1, api: bool = False, done: int = 2) -> str | None:
        p = progress(done).model_copy(update={
            "interrupted": interrupted, "active": active, "api_status": api_status, "created_at": now - timedelta(1),
            "last_activity": None if ago_s is None else now - timedelta(seconds=ago_s)})
        return stopped_why(p, driving, api, now)

    assert why() == "1 review(s) stopped on a worker error and no review of this sample is running"
    assert why(driving=True) is None  # this process drives it
    assert why(active=2) is None  # another process's reviews are running
    assert why(ago_s=5) is None  # a driver may be waiting to retry (2, 4, 8 s)
    assert why(done=30) is None  # finished
    assert why(interrupted=0) == "no review of this sample is running (the process reviewing it stopped)"
    assert why(interrupted=0, ago_s=None) is not None  # drawn a day ago, never started
    assert why(interrupted=0, api=True) is None  # a Message Batch has no runs until it is collected
    assert why(api_status="error: rate limited; trying again", interrupted=0, api=True) is None  # still polling
    assert why(api_status="stopped: not found", interrupted=0, api=True) == (
        "the Message Batches API kept failing (above)")



@pytest.mark.parametrize("value, expected", [
    pytest.param(None, 4, id="default"), pytest.param("2", 2, id="set"), pytest.param("0", 1, id="at-least-one"),
    pytest.param("500", 64, id="at-most-64"), pytest.param("many", 4, id="not-a-number"),
])
def test_workers_come_from_santa_workers(monkeypatch: pytest.MonkeyPatch, value: str | None, expected: int) -> None:
    from desk.wiring import runner_workers

    if value is None:
        monkeypatch.delenv("SANTA_WORKERS", raising=False)
    else:
        monkeypatch.setenv("SANTA_WORKERS", value)
    assert runner_workers() == expected


def test_reviews_at_a_time_names_the_desks_workers(desk_env: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANTA_WORKERS", "2")  # read when the desk opens
    at = upload(open_batch(), planted_csv(40)[0])
    box = at.number_input(key="batch_concurrency")
    assert box.value == 2 and "works on 2 runs at a time in all" in box.help
