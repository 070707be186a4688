"""The app's desk: once it is opened, the long-lived objects are frozen out of the collector's scans, once per
process however many times the desk is asked for, reopened or switched."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
from streamlit.web.server.app_discovery import discover_asgi_app

from storage.runs import RunStore
from ui import app_desk


def test_the_long_lived_objects_are_frozen_once_after_the_desk_is_first_opened(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    opened: list[str] = []
    real_open = app_desk.open_desk
    monkeypatch.setattr(
        app_desk, "gc", SimpleNamespace(collect=lambda: calls.append("collect"), freeze=lambda: calls.append("freeze"))
    )
    monkeypatch.setattr(app_desk, "open_desk", lambda url, **kw: (opened.append(url), real_open(url, **kw))[1])
    monkeypatch.setattr(app_desk, "_frozen", False)  # as in a process that has not opened a desk yet

    at = AppTest.from_file("../../app.py", default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert len(opened) == 1 and calls == ["collect", "freeze"]  # garbage collected first, then the rest frozen
    at.run()
    at.switch_page("pages/runs.py").run()
    at.switch_page("pages/metrics.py").run()
    assert not at.exception, at.exception
    assert len(opened) == 1 and calls == ["collect", "freeze"]  # reruns reuse the cached desk: no second freeze

    st.cache_resource.clear()  # the desk opened again (a cleared cache, another database): still once a process
    at.switch_page("pages/home.py").run()
    assert not at.exception, at.exception
    assert len(opened) == 2 and calls == ["collect", "freeze"]


def test_the_server_start_opens_the_desk_the_pages_then_use_and_its_stop_stops_it(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`streamlit run app.py` serves app.py's `app`, whose lifespan opens the desk before any page is open;
    a session's script then gets that same desk, and the server's stop stops it."""
    found = discover_asgi_app(Path(__file__).resolve().parents[2] / "app.py")
    assert found.import_string == "app:app"  # what `streamlit run app.py` imports and serves

    opened: list[object] = []
    stopped: list[object] = []
    real_open = app_desk.open_desk
    monkeypatch.setattr(app_desk, "open_desk", lambda url, **kw: (opened.append(real_open(url, **kw)), opened[-1])[1])
    monkeypatch.setattr(app_desk, "stop_desk", stopped.append)
    monkeypatch.setattr(app_desk, "_opened", [])

    async def serve() -> None:
        async with app_desk.open_at_server_start(None):
            assert len(opened) == 1 and stopped == []  # opened at the start, nobody on a page
            at = AppTest.from_file("../../app.py", default_timeout=60)
            at.run()
            assert not at.exception, at.exception
            assert len(opened) == 1 and app_desk.desk() is opened[0]  # the page used the same desk
        assert stopped == opened  # the server's stop stopped it

    asyncio.run(serve())


def test_a_desk_that_will_not_open_at_server_start_leaves_the_server_up(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = app_desk.open_desk

    def refuse(url: str, **_: object) -> None:
        raise OSError("the database is down")

    monkeypatch.setattr(app_desk, "open_desk", refuse)
    monkeypatch.setattr(app_desk, "_opened", [])

    async def serve() -> None:
        async with app_desk.open_at_server_start(None):
            pass

    asyncio.run(serve())  # logged, not raised; the first page tries again (a failure is not cached)
    assert app_desk._opened == []
    monkeypatch.setattr(app_desk, "open_desk", real_open)
    assert app_desk.desk() is app_desk._opened[0]


def test_a_database_that_does_not_answer_does_not_hold_the_server_start(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The start waits OPEN_WAIT_S for the desk, then serves (the health check answers) while it goes on opening."""
    import threading
    import time

    answered = threading.Event()
    real_open = app_desk.open_desk
    monkeypatch.setattr(app_desk, "open_desk", lambda url, **kw: (answered.wait(30), real_open(url, **kw))[1])
    monkeypatch.setattr(app_desk, "_opened", [])
    monkeypatch.setattr(app_desk, "OPEN_WAIT_S", 0.2)

    async def serve() -> None:
        async with app_desk.open_at_server_start(None):
            assert app_desk._opened == []  # serving, the database still silent
            answered.set()
            deadline = time.monotonic() + 30
            while not app_desk._opened and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert len(app_desk._opened) == 1  # opened in the background once the database answered

    asyncio.run(serve())


def test_a_page_whose_database_will_not_open_says_why_and_a_reload_tries_again(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = app_desk.open_desk

    def refuse(url: str, **_: object) -> None:
        raise OSError("connection refused\nmore detail")

    monkeypatch.setattr(app_desk, "open_desk", refuse)
    at = AppTest.from_file("../../app.py", default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    [error] = [e.value for e in at.error]
    assert error.startswith("The review desk cannot open the database sqlite:///") and ": connection refused." in error
    monkeypatch.setattr(app_desk, "open_desk", real_open)
    at.run()  # the failure was not cached
    assert not at.exception and not at.error
