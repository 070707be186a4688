"""On SQLite the app delivers alerts itself from the moment the server opens the desk: an overdue escalation's
reminder reaches the receiver with nobody on a page, after the receiver's outage, and the server's stop stops the
alert thread."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
from datetime import timedelta

import pytest

from santa_core import alerts as core
from storage.runs import RunStore
from storage.times import utcnow
from tests.storage.test_alerts import escalate
from tests.support.receivers import WebhookReceiver
from tests.support.workers import wait_until
from ui import app_desk

SECRET = "whsec-at-start"


def alert_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "santa-alerts" and t.is_alive()]


def test_an_overdue_reminder_goes_out_with_nobody_on_a_page_and_the_stop_ends_the_thread(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = escalate(desk_env)
    desk_env.set_due(run_id, utcnow() - timedelta(minutes=1), "ann")
    receiver = WebhookReceiver(fail_first=1).start()  # down for the first try
    monkeypatch.setenv(
        "SANTA_ALERT_HOOKS", json.dumps([{"name": "ops", "url": receiver.url(), "events": [core.ESCALATION_OVERDUE]}])
    )
    monkeypatch.setenv("SANTA_ALERT_SECRET", SECRET)
    monkeypatch.setenv("SANTA_ALERT_EVERY_S", "1")  # the least allowed
    monkeypatch.setenv("SANTA_ALERT_BACKOFF_S", "0.1")
    monkeypatch.setattr(app_desk, "_opened", [])
    before = set(alert_threads())

    async def serve() -> None:
        async with app_desk.open_at_server_start(None):  # the server starts; no page is ever opened
            await asyncio.to_thread(wait_until, "the overdue reminder", lambda: receiver.accepted(), 30, 0.1)
        # the server stopped: the thread ends at its next wake-up
        await asyncio.to_thread(
            wait_until, "the alert thread to stop", lambda: not (set(alert_threads()) - before), 10, 0.1
        )

    try:
        asyncio.run(serve())
    finally:
        receiver.stop()
    [got] = receiver.accepted()
    body = json.loads(got.body)
    assert (body["event"], body["data"]["run_id"]) == (core.ESCALATION_OVERDUE, run_id)
    expected = "sha256=" + hmac.new(SECRET.encode(), got.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(expected, got.headers["X-Santa-Signature"])
    assert len(receiver.received) == 2  # the refused try, then the one taken; never again
