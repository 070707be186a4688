"""The Runs page: search, a text preview, batch samples hidden by default, the filters in the URL, the
open link first, and a click on a row that opens the run."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant, migrated_sqlite
from tests.support.batch_page import seeded_batch
from tests.support.messages_api import MessagesStub, santa_scenario
from tests.ui.test_app import texts
from tests.ui.test_escalation_queue import SPEC, escalate
from ui import run_list

LONG = "Acme's rocket launched in 2018 from the northern pad, and the crew   of four\nreturned safely " * 4


def open_runs(**params: str) -> AppTest:
    at = AppTest.from_file("../../app.py", default_timeout=60)
    at.run()
    at.switch_page("pages/runs.py")
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    return at


def listed(at: AppTest) -> list[int]:
    return [int(r.rsplit("=", 1)[1]) for r in at.dataframe[0].value["run"].tolist()] if at.dataframe else []


def start(repo: RunStore, output: str, rubric: str = "general", by: str = "editor@example.com") -> int:
    return repo.create_run(
        spec=SPEC,
        output=output,
        rubric=repo.rubrics.resolved(rubric),
        reviewer_b="claude-sonnet-5-5",
        reviewer_c="claude-haiku-5-5",
        fixer="claude-opus-5-5",
        created_by=by,
    )


def make_history(repo: RunStore, messages_stub: MessagesStub) -> dict[str, object]:
    """Three runs of our own (one by a named person, one of another rubric, one escalated) and a batch."""
    batch = seeded_batch(messages_stub, items=12)
    messages_stub.handler = santa_scenario
    repo.people.sign_in("edith@example.com", "Edith Okafor")
    repo.people.set_roles("edith@example.com", ["editor"], "admin@example.com")
    runs = {
        "long": start(repo, LONG),
        "content": start(repo, "A short piece of copy about 100% oats.", rubric="content", by="edith@example.com"),
        "escalated": escalate(repo),
    }
    samples = [r.id for r in repo.list_runs(limit=500) if r.batch_id is not None]
    assert samples, "the batch reviewed its sample as runs"
    return {**runs, "samples": samples, "batch": batch}


@pytest.fixture(scope="module")
def history_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """`make_history` once per module, in a database file of its own, as `desk_env` would make it (a fresh migrated
    database with the test people, a stand-in model): a batch sample and an escalated run are most of each test's
    time, and the tests only read them (each gets a copy: whatever its page's desk does stays in that copy)."""
    path = tmp_path_factory.mktemp("runs-history") / "santa.db"
    with pytest.MonkeyPatch.context() as env:
        stub = MessagesStub().start()
        env.setenv("ANTHROPIC_BASE_URL", stub.url)
        env.setenv("ANTHROPIC_API_KEY", "test")
        env.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        env.setenv("DATABASE_URL", migrated_sqlite(path))
        repo = grant(RunStore(init_db(f"sqlite:///{path}", mark_interrupted=False)))
        try:
            made = make_history(repo, stub)
        finally:
            repo.engine.dispose()
            stub.stop()
    return path, made


@pytest.fixture
def history(
    history_file: tuple[Path, dict[str, object]], desk_env: RunStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, object]:
    """A copy of the module's history for this test; the pages open it (desk_env: the stand-in model, no desk
    cached, the opened desks stopped afterwards)."""
    source, made = history_file
    copy = tmp_path / "history.db"
    src, dst = sqlite3.connect(source), sqlite3.connect(copy)
    try:
        src.backup(dst)  # the whole database, what is still in the write-ahead log too
    finally:
        src.close()
        dst.close()
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{copy}")
    return made


def test_batch_samples_are_hidden_until_asked_for_and_the_choice_is_in_the_url(
    history: dict[str, object], desk_env: RunStore
) -> None:
    ours = sorted([history["long"], history["content"], history["escalated"]], reverse=True)
    at = open_runs()
    assert listed(at) == ours and at.toggle(key="runs_hide_samples").value is True
    assert "samples" not in at.query_params  # the default leaves no trace
    at.toggle(key="runs_hide_samples").set_value(False).run()
    assert set(listed(at)) == {*ours, *history["samples"]}  # type: ignore[misc]
    assert at.query_params["samples"] == "shown"
    by = dict(zip(listed(at), at.dataframe[0].value["by"].tolist(), strict=True))
    assert all(by[s].endswith(" (batch sample)") for s in history["samples"])  # type: ignore[attr-defined]
    assert not any("(" in by[r] for r in ours)  # runs started in the app say only who started them
    fresh = open_runs(samples="shown")  # a reload or a copied link keeps the choice
    assert fresh.toggle(key="runs_hide_samples").value is False and set(listed(fresh)) == set(listed(at))


def test_search_finds_runs_by_number_text_rubric_and_who_started_them(history: dict[str, object]) -> None:
    at = open_runs()
    for query, expected in [
        (f"#{history['long']}", [history["long"]]),
        ("NORTHERN PAD", [history["long"]]),
        ("content", [history["content"]]),
        ("Okafor", [history["content"]]),
        ("edith@", [history["content"]]),
        ("100%", [history["content"]]),
        ("0_", []),
        ("returned SAFELY", [history["long"]]),
    ]:
        at.text_input(key="runs_q").set_value(query).run()
        assert listed(at) == expected, query
        assert at.query_params["q"] == query
    at.text_input(key="runs_q").set_value("no such words anywhere").run()
    assert listed(at) == [] and "No run matches these filters" in texts(at)
    at.text_input(key="runs_q").set_value("").run()
    assert "q" not in at.query_params and len(listed(at)) == 3


def test_status_and_search_come_back_from_the_url(history: dict[str, object]) -> None:
    at = open_runs(status="escalated", q="rocket")
    assert at.selectbox(key="runs_status").value == "escalated" and at.text_input(key="runs_q").value == "rocket"
    assert listed(at) == [history["escalated"]]
    assert at.dataframe[0].value["status"].tolist() == ["escalated: still NAUGHTY after the last round"]
    at.selectbox(key="runs_status").set_value("all").run()
    assert "status" not in at.query_params and at.query_params["q"] == "rocket"
    assert open_runs(status="no_such_status").selectbox(key="runs_status").value == "all"


def test_the_list_shows_a_preview_of_the_text_and_the_runs_number_as_its_link_first(history: dict[str, object]) -> None:
    at = open_runs()
    table = at.dataframe[0].value
    assert list(table.columns[:2]) == ["run", "status"]
    row = table[table["run"] == f"./review?run={history['long']}"].iloc[0]
    assert row["text"] == " ".join(LONG.split())[:120]  # one line, cut short
    config = json.loads(at.dataframe[0].proto.columns)
    assert config["run"]["type_config"]["type"] == "link" and config["run"]["width"] == run_list.WIDTHS["run"]
    shown = config["run"]["type_config"]["display_text"]  # the link reads as the run's number
    assert re.search(shown, f"./review?run={history['long']}").group(1) == str(history["long"])


def test_a_run_opens_one_way_its_link(history: dict[str, object]) -> None:
    """Three ways to open a run were two too many: no row selection, no picker and Open button beside the link."""
    at = open_runs()
    assert not list(at.dataframe[0].proto.selection_mode)
    assert not [w for w in (*at.selectbox, *at.button) if "open" in w.label.lower()]
    assert "Click a run's number to open it." in texts(at)


def test_started_by_keeps_the_name_a_person_had_when_the_run_started(desk_env: RunStore) -> None:
    desk_env.people.sign_in("edith@example.com", "Edith Okafor")
    desk_env.people.set_roles("edith@example.com", ["editor"], "admin@example.com")
    before = start(desk_env, "Copy written before the rename.", by="edith@example.com")
    desk_env.people.sign_in("edith@example.com", "Edith Stone")  # she renamed herself at her provider
    after = start(desk_env, "Copy written after the rename.", by="edith@example.com")
    at = open_runs()
    by = dict(zip(listed(at), at.dataframe[0].value["by"].tolist(), strict=True))
    assert by == {before: "Edith Okafor <edith@example.com>", after: "Edith Stone <edith@example.com>"}
