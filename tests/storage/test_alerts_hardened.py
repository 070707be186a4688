"""Alerts under bad settings and loud logging: the SQLite alert thread outlives an interval it cannot use, and a
hook's address (its path is its token) never reaches a log line, at any level. On SQLite, and on PostgreSQL when
SANTA_TEST_POSTGRES_URL is set."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from desk.alerts import deliver, start_alerting
from santa_core import alerts as core
from storage.alerts import AlertStore
from storage.runs import RunStore
from tests.storage.test_alerts import escalate, settings
from tests.support import runs
from tests.support.receivers import WebhookReceiver

engine, repo = runs.engine, runs.repo


def _broken() -> float:
    raise RuntimeError("the settings file is being rewritten")


@pytest.mark.parametrize("every", [lambda: float("inf"), lambda: float("nan"), _broken], ids=["inf", "nan", "raises"])
def test_the_alert_thread_outlives_an_interval_it_cannot_use_and_still_stops(repo: RunStore, every) -> None:
    stop = threading.Event()
    thread = start_alerting(AlertStore(repo), stop, every=every)
    time.sleep(0.3)  # the thread has read the interval and is waiting (before the fix: dead of OverflowError)
    alive = thread.is_alive()
    stop.set()
    thread.join(5)
    assert alive and not thread.is_alive()


@pytest.mark.parametrize("level", [logging.INFO, logging.DEBUG])
def test_a_hooks_token_never_reaches_the_log(repo: RunStore, caplog: pytest.LogCaptureFixture, level: int) -> None:
    escalate(repo)
    receiver = WebhookReceiver(fail_first=1).start()  # one refused try: its warning names the channel, not the url
    try:
        hook = core.Hook(name="chat", url=receiver.url(), format="slack")
        with caplog.at_level(level):
            deliver(AlertStore(repo), settings(hook))
            deliver(AlertStore(repo), settings(hook))
    finally:
        receiver.stop()
    assert receiver.accepted(), "nothing was delivered: the test would prove nothing"
    lines = [r.getMessage() for r in caplog.records]
    assert any("HTTP Request" in line and f"127.0.0.1:{receiver.port}" in line for line in lines), lines
    assert "T0KEN" not in caplog.text, [line for line in lines if "T0KEN" in line]
    assert not logging.getLogger("httpx").filters  # the mask is taken off after the deliveries
