"""The Operations panel's alerts on the Settings page: the channels with their addresses masked, the delivery log
with every try, and no secret anywhere on the page (the signing secret, the SMTP password, a hook's token)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from desk.alerts import deliver, settings_now
from santa_core import alerts as core
from storage.alerts import AlertStore
from storage.runs import RunStore
from tests.storage.test_alerts import escalate
from tests.support.receivers import WebhookReceiver
from tests.ui.test_app import open_app, texts

SECRETS = ("whsec-panel-secret", "smtp-pass-word", "T0KEN-in-the-path")


def everything(at: AppTest) -> str:
    """All the page shows: its texts and every table's cells."""
    cells = [df.value.to_csv() for df in at.dataframe]
    return texts(at) + "\n" + "\n".join(cells)


def test_the_panel_shows_channels_masked_and_every_try_and_never_a_secret(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    escalate(desk_env)
    receiver = WebhookReceiver(fail_first=1).start()
    try:
        monkeypatch.setenv(
            "SANTA_ALERT_HOOKS",
            json.dumps([{"name": "ops", "url": receiver.url(), "format": "teams", "events": [core.ESCALATION_OPENED]}]),
        )
        monkeypatch.setenv("SANTA_ALERT_SECRET", SECRETS[0])
        monkeypatch.setenv("SANTA_ALERT_BACKOFF_S", "0")
        for var, value in (
            ("HOST", "127.0.0.1"),
            ("PORT", "9"),
            ("USER", "santa"),
            ("PASSWORD", SECRETS[1]),
            ("FROM", "santa@example.com"),
            ("TO", "officer@example.com"),
        ):
            monkeypatch.setenv(f"SANTA_SMTP_{var}", value)
        store = AlertStore(desk_env)
        deliver(store, settings_now())  # refused
        deliver(store, settings_now())  # taken
        at = open_app("pages/settings.py")
    finally:
        receiver.stop()
    [hooks] = [df.value for df in at.dataframe if "signed" in df.value.columns]
    [log] = [df.value for df in at.dataframe if "outcome" in df.value.columns]
    assert hooks[["channel", "address", "format"]].values.tolist() == [
        ["ops", f"http://127.0.0.1:{receiver.port}/…", "teams"],
        ["email", "smtp://127.0.0.1:9 → officer@example.com", "e-mail"],
    ]
    assert hooks["signed"].tolist() == ["yes", "login as santa, password set"]
    assert log[["event", "channel", "try", "outcome", "HTTP"]].values.tolist() == [
        ["An escalation was opened", "ops", 2, "ok", "200"],
        ["An escalation was opened", "ops", 1, "failed", "503"],
    ]
    shown = everything(at)
    assert "this app, on a thread of its own" in shown
    for secret in SECRETS:
        assert secret not in shown


def test_settings_that_cannot_be_used_are_named_on_the_panel_without_their_value(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "SANTA_ALERT_HOOKS", '[{"name": "ops", "url": "https://hooks.example/T0KEN-in-the-path", "format": "pager"}]'
    )
    at = open_app("pages/settings.py")
    shown = everything(at)
    assert "Alerts are not sent: the alert settings cannot be used (hooks.0.format" in shown
    assert SECRETS[2] not in shown
