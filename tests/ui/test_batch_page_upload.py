"""The Batch page driven like a user, from the empty page to a stored batch: a bad file shows every
problem and stores nothing, a missing spec is refused, the URL reopens a batch and the list opens
one, a bad batch in the URL says so, a viewer reads but controls nothing, the detection table
over the batch, and the reviews at a time the desk's workers allow. The reviewers and the fix agent are the real Anthropic adapters talking to the loopback stub
(`messages_stub`); background work is awaited by polling the database and re-running the page, as
the page's polling fragment would.
"""

from __future__ import annotations

import pytest

from santa_core.batch.file import BatchFileError, read_batch
from storage.batches import BatchStore
from storage.runs import RunStore
from tests.core.batch.test_driver import planted_csv
from tests.support.batch_page import TITLE, downloads, keys, open_batch, seeded_batch, stored_items, texts, upload
from tests.support.messages_api import MessagesStub
from tests.ui.test_app import plain
from ui.batch_plan import detection_frame

# --- the other paths -------------------------------------------------------------------------------


def test_empty_state_says_what_the_page_is_for(desk_env: RunStore) -> None:
    at = open_batch()
    assert "No batches yet" in texts(at)
    assert [t.value for t in at.title] == [":material/inventory_2: Batch"]
    assert at.file_uploader(key="batch_file") is not None and not at.dataframe
    assert "batch_create" not in keys(at)  # nothing to create before a file is uploaded


LONG = "x" * 200_001


@pytest.mark.parametrize(
    "name, data",
    [
        pytest.param("emails.csv", "id,output\n1,café\n".encode("latin-1"), id="not-utf8"),
        pytest.param("emails.csv", b"id,output\na,hello\na,world\nb,\n", id="duplicate-id-and-empty-output"),
        pytest.param("emails.csv", b"id,body\n1,hello\n", id="no-output-column"),
        pytest.param("emails.csv", f"id,output\n1,{LONG}\n".encode(), id="oversized-row"),
        pytest.param("emails.jsonl", b'{"id": "a", "output": "fine"}\n{"id": "b", "output": \n', id="bad-json-line"),
    ],
)
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


@pytest.mark.parametrize(
    "param, message",
    [
        pytest.param("abc", "abc is not a batch number.", id="not-a-number"),
        pytest.param("99", "Batch #99 does not exist.", id="unknown"),
    ],
)
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


def test_the_detection_table_over_the_whole_batch() -> None:
    frame = detection_frame(200, 30)
    assert list(frame["items showing it"]) == [2, 4, 10, 20, 40]  # 1, 2, 5, 10, 20 % of 200
    chances = list(frame["chance this sample catches it"])
    assert chances[0] == "27.8 %"  # 1 − C(198, 30)/C(200, 30) = 0.27814
    assert chances[2] == "81.1 %"  # 1 − C(190, 30)/C(200, 30) = 0.81106


def test_the_detection_table_has_one_row_per_number_of_items() -> None:
    """In 50 items, 1 % and 2 % are both one item: one row, labelled by the share one item really is."""
    frame = detection_frame(50, 8)
    assert list(frame["items showing it"]) == [1, 2, 5, 10]  # 1 and 2 % → 1; 5 % → 2; 10 % → 5; 20 % → 10
    assert list(frame["a pattern in"]) == [
        "2.0 % of the batch",
        "4.0 % of the batch",
        "10.0 % of the batch",
        "20.0 % of the batch",
    ]
    chances = list(frame["chance this sample catches it"])
    assert chances[:2] == ["16.0 %", "29.7 %"]  # 8/50; 1 − (42 × 41)/(50 × 49) = 1 − 1722/2450 = 0.29714


@pytest.mark.parametrize(
    "value, expected",
    [
        pytest.param(None, 4, id="default"),
        pytest.param("2", 2, id="set"),
        pytest.param("0", 1, id="at-least-one"),
        pytest.param("500", 64, id="at-most-64"),
        pytest.param("many", 4, id="not-a-number"),
    ],
)
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
