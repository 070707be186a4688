"""The pure side of alerts (`santa_core.alerts`): the settings read from the environment (an unusable one named,
never repeated), the retry schedule, the formats, the signature and the masks."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from santa_core import alerts as core

TOKEN_URL = "https://hooks.slack.example/services/T000/B000/XXXXsecrettoken"


def test_settings_come_from_the_variables_and_an_unusable_one_is_named_without_its_value() -> None:
    hooks = [
        {"name": "chat", "url": TOKEN_URL, "format": "slack", "events": ["escalation.overdue"]},
        {"name": "ops", "url": "http://127.0.0.1:8080/in"},
    ]
    got = core.alert_settings(
        {
            "SANTA_ALERT_HOOKS": json.dumps(hooks),
            "SANTA_ALERT_SECRET": "s3cr3t",
            "SANTA_SMTP_HOST": "mail.example",
            "SANTA_SMTP_FROM": "santa@example.com",
            "SANTA_SMTP_TO": "a@example.com, b@example.com",
            "SANTA_SMTP_PASSWORD": "pw-123",
            "SANTA_SMTP_STARTTLS": "off",
            "SANTA_ALERT_ATTEMPTS": "3",
        }
    )
    assert [h.name for h in got.hooks] == ["chat", "ops"] and got.attempts == 3
    assert got.smtp.to == ["a@example.com", "b@example.com"] and got.smtp.starttls is False
    assert got.channels(core.ESCALATION_OVERDUE) == ["chat", "ops", "email"]
    assert got.channels(core.RUN_SHIPPED) == ["ops"]
    for shown in (repr(got), str(got)):
        assert "s3cr3t" not in shown and "pw-123" not in shown and "secrettoken" not in shown
    for broken in (
        '[{"name": "x", "url": "' + TOKEN_URL + '", "format": "fax"}]',
        TOKEN_URL + " {",
        '[{"name": "x", "url": "ftp://' + TOKEN_URL[8:] + '"}]',
        '[{"name": "x", "url": "' + TOKEN_URL + '", "events": ["run.deleted"]}]',
    ):
        with pytest.raises(core.AlertConfigError) as err:
            core.alert_settings({"SANTA_ALERT_HOOKS": broken, "SANTA_ALERT_SECRET": "s3cr3t"})
        assert "secrettoken" not in str(err.value) and "alert" in str(err.value).lower()
    with pytest.raises(core.AlertConfigError, match="its own name"):
        core.alert_settings({"SANTA_ALERT_HOOKS": json.dumps([hooks[1], hooks[1]]), "SANTA_ALERT_SECRET": "s3cr3t"})


HOOK = json.dumps([{"name": "ops", "url": TOKEN_URL}])


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("SANTA_ALERT_ATTEMPTS", "0"),
        ("SANTA_ALERT_ATTEMPTS", "-3"),
        ("SANTA_ALERT_ATTEMPTS", "1000"),
        ("SANTA_ALERT_EVERY_S", "inf"),
        ("SANTA_ALERT_EVERY_S", "nan"),
        ("SANTA_ALERT_EVERY_S", "0.5"),
        ("SANTA_ALERT_EVERY_S", "3601"),
        ("SANTA_ALERT_TIMEOUT_S", "0"),
        ("SANTA_ALERT_TIMEOUT_S", "inf"),
        ("SANTA_ALERT_TIMEOUT_S", "-1"),
        ("SANTA_ALERT_BACKOFF_S", "-1"),
        ("SANTA_ALERT_BACKOFF_S", "inf"),
    ],
)
def test_a_pacing_setting_out_of_bounds_is_refused_by_its_name(var: str, value: str) -> None:
    with pytest.raises(core.AlertConfigError) as err:
        core.alert_settings({"SANTA_ALERT_HOOKS": HOOK, "SANTA_ALERT_SECRET": "s3cr3t", var: value})
    assert var in str(err.value) and "secrettoken" not in str(err.value) and "s3cr3t" not in str(err.value)


def test_the_pacing_bounds_themselves_are_accepted() -> None:
    got = core.alert_settings(
        {
            "SANTA_ALERT_HOOKS": HOOK,
            "SANTA_ALERT_SECRET": "s3cr3t",
            "SANTA_ALERT_ATTEMPTS": "1",
            "SANTA_ALERT_EVERY_S": "1",
            "SANTA_ALERT_TIMEOUT_S": "0.5",
            "SANTA_ALERT_BACKOFF_S": "0",
        }
    )
    assert (got.attempts, got.every_s, got.timeout_s, got.backoff_s) == (1, 1.0, 0.5, 0.0)
    assert core.alert_settings({"SANTA_ALERT_EVERY_S": "3600"}).every_s == 3600.0


def test_hooks_without_a_signing_secret_are_a_configuration_error_naming_it() -> None:
    with pytest.raises(core.AlertConfigError, match="SANTA_ALERT_SECRET") as err:
        core.alert_settings({"SANTA_ALERT_HOOKS": HOOK})
    assert "secrettoken" not in str(err.value)
    with pytest.raises(ValueError, match="SANTA_ALERT_SECRET"):  # built in code, not read: the same rule
        core.AlertSettings(hooks=[core.Hook(name="ops", url=TOKEN_URL)])
    assert core.alert_settings({"SANTA_ALERT_HOOKS": "[]"}).hooks == []  # no hook: nothing to sign


@pytest.mark.parametrize(
    ("hook", "named"),
    [
        ({"name": "chat", "url": TOKEN_URL, "formt": "slack"}, "hooks.0.formt"),
        ({"name": "chat", "url": TOKEN_URL.replace("example/", "example:99999/", 1)}, "hooks.0.url"),
        ({"name": "chat", "url": TOKEN_URL.replace("example/", "example:x/", 1)}, "hooks.0.url"),
        (
            {"name": "chat", "url": TOKEN_URL, "events": ["run.shipped", "run.deleted"]},
            "unknown event kinds run.deleted;",
        ),
    ],
)
def test_a_hook_entry_that_cannot_be_used_is_refused_when_read_without_echoing_it(hook: dict, named: str) -> None:
    with pytest.raises(core.AlertConfigError) as err:
        core.alert_settings({"SANTA_ALERT_HOOKS": json.dumps([hook]), "SANTA_ALERT_SECRET": "s3cr3t"})
    assert named in str(err.value) and "secrettoken" not in str(err.value) and "s3cr3t" not in str(err.value)


def test_retries_back_off_doubling_to_a_cap_and_stop_at_the_attempts() -> None:
    assert [core.retry_delay_s(n, 5.0, 60.0) for n in range(1, 7)] == [5.0, 10.0, 20.0, 40.0, 60.0, 60.0]
    config = core.AlertSettings(attempts=3, backoff_s=5.0)
    assert core.due(0, None, config)
    assert not core.due(1, 4.9, config) and core.due(1, 5.0, config)
    assert not core.due(2, 9.9, config) and core.due(2, 10.0, config)
    assert not core.due(3, 10_000.0, config)  # gave up


def test_the_signature_is_the_hmac_of_the_exact_bytes_sent() -> None:
    event = core.envelope("k-1", core.RUN_SHIPPED, "run 4", "2026-12-05T10:00:00+00:00", {"run_id": 4})
    for fmt in ("json", "slack", "teams"):
        raw = core.raw_body(fmt, event)
        sent = core.headers(event, raw, "topsecret", 1_765_000_000)
        assert sent["X-Santa-Signature"] == "sha256=" + hmac.new(b"topsecret", raw, hashlib.sha256).hexdigest()
        assert sent["Idempotency-Key"] == "k-1" and sent["X-Santa-Timestamp"] == "1765000000"
    assert "X-Santa-Signature" not in core.headers(event, b"{}", None, 0)  # no secret set: unsigned, said in docs


def test_the_formats_carry_the_headline_where_each_receiver_reads_it() -> None:
    event = core.envelope(
        "k-2",
        core.ESCALATION_OVERDUE,
        "escalation 7",
        "2026-12-05T10:00:00+00:00",
        {"run_id": 3, "reason": "round_cap", "due_at": "2026-12-05T09:00:00+00:00"},
    )
    line = "Santa: An escalation is overdue (escalation 7; reason round_cap, due_at 2026-12-05T09:00:00+00:00)"
    assert event["text"] == line
    assert json.loads(core.raw_body("json", event)) == {**event, "data": event["data"]}
    slack = core.body("slack", event)
    assert slack["text"] == line and slack["blocks"][0]["text"]["text"] == line
    teams = core.body("teams", event)
    assert (teams["@type"], teams["text"], teams["summary"]) == ("MessageCard", line, line)
    assert {"name": "run_id", "value": "3"} in teams["sections"][0]["facts"]


def test_addresses_and_secrets_are_masked_wherever_they_could_show() -> None:
    assert core.mask_url(TOKEN_URL) == "https://hooks.slack.example/…"
    config = core.AlertSettings(hooks=[core.Hook(name="chat", url=TOKEN_URL)], secret="topsecret")
    error = f"ConnectError: cannot reach {TOKEN_URL} (key topsecret)"
    scrubbed = core.scrub(error, config.secrets())
    assert "secrettoken" not in scrubbed and "topsecret" not in scrubbed and "hooks.slack.example" in scrubbed
