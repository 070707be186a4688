"""The app's desk: once it is opened, the long-lived objects are frozen out of the collector's scans, once per
process however many times the desk is asked for, reopened or switched."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from storage.runs import RunStore
from ui import app_desk


def test_the_long_lived_objects_are_frozen_once_after_the_desk_is_first_opened(
        desk_env: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    opened: list[str] = []
    real_open = app_desk.open_desk
    monkeypatch.setattr(app_desk, "gc", SimpleNamespace(collect=lambda: calls.append("collect"),
                                                        freeze=lambda: calls.append("freeze")))
    monkeypatch.setattr(app_desk, "open_desk", lambda url: (opened.append(url), real_open(url))[1])
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
