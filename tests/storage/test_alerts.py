"""Alerts (`storage.alerts`, `desk.alerts`): an event exists exactly when what it reports committed; overdue
reminders are emitted once per due time; a loopback receiver gets each event once, signed, after an outage, and
the delivery log shows every try; secrets are never shown. On SQLite, and on PostgreSQL when
SANTA_TEST_POSTGRES_URL is set.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
from datetime import timedelta

import httpx
import pytest

from desk import alerts as alerts_module
from desk.alerts import deliver
from santa_core import alerts as core
from santa_core.models import EscalationReason, RunState
from storage.alerts import AlertStore
from storage.errors import EscalationNotOpen
from storage.runs import RunStore
from storage.times import utcnow
from tests.support import runs
from tests.support.receivers import SmtpReceiver, WebhookReceiver
from tests.support.runs import S, escalated, new_run

engine, repo = runs.engine, runs.repo  # the fixtures (an imported name would trip ruff's F811)
SECRET = "whsec-test-0123456789"


def settings(*hooks: core.Hook, smtp: core.Smtp | None = None, attempts: int = 6) -> core.AlertSettings:
    """Settings with no wait between tries (the schedule itself is tested in tests/core/test_alerts.py)."""
    return core.AlertSettings(hooks=list(hooks), secret=SECRET, smtp=smtp, attempts=attempts, backoff_s=0.0)


def escalate(repo: RunStore, reason: EscalationReason = EscalationReason.ROUND_CAP) -> int:
    """A run that escalated: queued, running, escalated."""
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(run_id, {S.RUNNING}, escalated(reason), "gate")
    return run_id


def kinds(repo: RunStore) -> list[str]:
    return [(a.kind) for a in AlertStore(repo).events()]


def test_each_event_is_written_with_the_move_it_reports_and_a_refused_move_writes_none(repo: RunStore) -> None:
    budget_run = escalate(repo, EscalationReason.BUDGET)
    assert kinds(repo) == [core.RUN_ESCALATED, core.BUDGET_EXCEEDED, core.ESCALATION_OPENED]
    [esc] = repo.list_escalations()
    # Refused: no justification; the escalation looked at is not the open one. Nothing committed, no event.
    with pytest.raises(ValueError):
        repo.resolve_escalation(budget_run, "ship_as_is", "ann", " ")
    with pytest.raises(EscalationNotOpen):
        repo.resolve_escalation(budget_run, "ship_as_is", "ann", "fine", escalation_id=esc.id + 1)
    assert len(kinds(repo)) == 3
    repo.resolve_escalation(budget_run, "ship_as_is", "ann", "checked it myself")
    assert kinds(repo)[3:] == [core.RUN_SHIPPED, core.ESCALATION_RESOLVED]
    shipped = new_run(repo)
    repo.transition(shipped, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(shipped, {S.RUNNING}, RunState(status=S.SHIPPED), "gate")
    events = AlertStore(repo).events()
    assert [(a.kind, a.run_id) for a in events[5:]] == [(core.RUN_SHIPPED, shipped)]
    resolved = events[4]
    assert resolved.payload == {
        "escalation_id": esc.id,
        "run_id": budget_run,
        "reason": "budget",
        "resolution": "ship_as_is",
        "resolved_by": "ann",
    }
    assert len({a.key for a in events}) == len(events)  # each its own idempotency key


def test_an_overdue_escalation_is_reminded_once_per_due_time(repo: RunStore) -> None:
    run_id = escalate(repo)
    store = AlertStore(repo)
    assert store.sweep() == 0  # not due yet (the default due time is hours away)
    repo.set_due(run_id, utcnow() - timedelta(minutes=5), "ann")
    assert (store.sweep(), store.sweep()) == (1, 0)
    repo.set_due(run_id, utcnow() - timedelta(minutes=1), "ann")  # re-dated: a new due time, a new reminder
    assert (store.sweep(), store.sweep()) == (1, 0)
    overdue = store.events(core.ESCALATION_OVERDUE)
    assert [a.payload["run_id"] for a in overdue] == [run_id, run_id]
    repo.resolve_escalation(run_id, "reject", "ann", "wrong brief")
    assert store.sweep() == 0  # resolved: nothing is overdue


def signed_by(received: object) -> bool:
    """The receiver's own check: HMAC-SHA256 of the raw body under the shared secret, compared in constant time."""
    expected = "sha256=" + hmac.new(SECRET.encode(), received.body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, received.headers["X-Santa-Signature"])


def test_a_receiver_in_an_outage_gets_each_event_once_signed_and_the_log_shows_every_try(repo: RunStore) -> None:
    escalate(repo)  # run.escalated, escalation.opened; and a run that ships: run.shipped
    shipped = new_run(repo)
    repo.transition(shipped, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(shipped, {S.RUNNING}, RunState(status=S.SHIPPED), "gate")
    plain, slack = WebhookReceiver(fail_first=2).start(), WebhookReceiver(fail_first=1).start()
    try:
        config = settings(
            core.Hook(name="ops", url=plain.url()),
            core.Hook(name="chat", url=slack.url(), format="slack", events=[core.RUN_SHIPPED]),
        )
        store = AlertStore(repo)
        passes = [deliver(store, config) for _ in range(4)]
        # ops refuses its first two requests: a refusal leaves the rest of its events for the next pass (a receiver
        # down costs one try a pass); chat refuses its first
        assert passes == [0, 1, 3, 0]
        ids = [a.key for a in store.events()]
        assert sorted(json.loads(r.body)["id"] for r in plain.accepted()) == sorted(ids)
        assert all(r.headers["Idempotency-Key"] == json.loads(r.body)["id"] for r in plain.received)
        assert [json.loads(r.body)["text"] for r in slack.accepted()] == [
            f"Santa: A run shipped (run {shipped}; status shipped)"
        ]
        for got in plain.received + slack.received:
            assert signed_by(got)
            assert got.headers["Idempotency-Key"] in ids
            assert got.headers["X-Santa-Timestamp"].isdigit()
        slack_body = json.loads(slack.accepted()[0].body)
        assert set(slack_body) == {"text", "blocks"} and slack_body["blocks"][0]["type"] == "section"
        log = sorted((t.channel, t.subject, t.attempt, t.status, t.status_code) for t in store.log())
        first = store.events()[0].subject
        assert [row for row in log if row[3] == "failed"] == [
            ("chat", f"run {shipped}", 1, "failed", 503),
            ("ops", first, 1, "failed", 503),
            ("ops", first, 2, "failed", 503),
        ]
        assert sum(row[3] == "ok" for row in log) == 4  # 3 to ops, 1 to chat
        assert all(a.done for a in store.events())
    finally:
        plain.stop()
        slack.stop()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_receiver_that_is_down_is_tried_again_and_no_secret_or_token_is_logged(repo: RunStore) -> None:
    escalate(repo)
    port = free_port()
    down = WebhookReceiver(port=port)
    config = settings(core.Hook(name="ops", url=down.url(), events=[core.ESCALATION_OPENED]))
    store = AlertStore(repo)
    assert deliver(store, config) == 0  # nobody listening
    [failed] = store.log()
    assert (failed.status, failed.status_code) == ("failed", None)
    assert "ConnectError" in failed.error and "T0KEN" not in failed.error and SECRET not in failed.error
    down.start()
    try:
        assert (deliver(store, config), deliver(store, config)) == (1, 0)
        assert [t.status for t in store.log()] == ["ok", "failed"]
        assert len(down.received) == 1 and signed_by(down.received[0])
    finally:
        down.stop()


def test_delivery_gives_up_after_its_attempts(repo: RunStore) -> None:
    escalate(repo)
    refusing = WebhookReceiver(fail_first=10**6).start()
    try:
        config = settings(core.Hook(name="ops", url=refusing.url(), events=[core.ESCALATION_OPENED]), attempts=3)
        store = AlertStore(repo)
        for _ in range(5):
            deliver(store, config)
        assert len(refusing.received) == 3 and [t.attempt for t in store.log()] == [3, 2, 1]
        assert all(a.done for a in store.events())
    finally:
        refusing.stop()


def test_a_try_is_claimed_once_and_a_delivered_event_is_never_sent_again(repo: RunStore) -> None:
    escalate(repo)
    store = AlertStore(repo)
    config = settings(core.Hook(name="ops", url="http://127.0.0.1:9/x", events=[core.ESCALATION_OPENED]))
    [due] = store.due(config)
    first = store.claim(due)
    assert first is not None and store.claim(due) is None  # a second deliverer finds it under way
    assert store.due(config) == []
    store.finish(first, True, 200, None)
    assert store.due(config) == [] and store.claim(due) is None


def test_the_overdue_reminder_is_mailed(repo: RunStore) -> None:
    run_id = escalate(repo)
    repo.set_due(run_id, utcnow() - timedelta(minutes=5), "ann")
    mail = SmtpReceiver().start()
    try:
        smtp = core.Smtp(
            host="127.0.0.1",
            port=mail.port,
            sender="santa@example.com",
            to=["officer@example.com", "lead@example.com"],
            starttls=False,
        )
        store = AlertStore(repo)
        store.sweep()
        assert deliver(store, settings(smtp=smtp)) == 1
        assert deliver(store, settings(smtp=smtp)) == 0
        [msg] = mail.mails
        assert msg["Subject"].startswith("Santa: An escalation is overdue (escalation ")
        assert mail.envelopes == [("santa@example.com", ["officer@example.com", "lead@example.com"])]
        assert f"run_id: {run_id}" in msg.get_payload()
        assert [(t.channel, t.status) for t in store.log()] == [("email", "ok")]
    finally:
        mail.stop()


def test_a_pass_makes_its_http_client_for_its_first_webhook_only(
    repo: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An idle desk passes every few seconds: a pass with nothing due makes no client (its TLS context costs some
    26 ms of CPU), a pass with several webhooks due makes one and closes it."""
    made: list[httpx.Client] = []

    class Counted(httpx.Client):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(alerts_module.httpx, "Client", Counted)
    receiver = WebhookReceiver().start()
    try:
        config = settings(core.Hook(name="ops", url=receiver.url()))
        store = AlertStore(repo)
        assert (deliver(store, config), made) == (0, [])  # nothing has happened: nothing due
        escalate(repo)  # two events: run.escalated, escalation.opened
        assert deliver(store, config) == 2
        assert len(made) == 1 and made[0].is_closed
        assert (deliver(store, config), len(made)) == (0, 1)
    finally:
        receiver.stop()


def test_a_client_that_cannot_be_made_fails_the_pass_and_spends_no_attempt(
    repo: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing SSL_CERT_FILE makes httpx raise when a client is made: the pass fails as a whole (the caller logs it)
    before anything is claimed, so no delivery loses one of its attempts to the machine's setup."""

    def broken(*args, **kwargs) -> httpx.Client:
        raise FileNotFoundError("no such file: /nonexistent/ca.pem")

    monkeypatch.setattr(alerts_module.httpx, "Client", broken)
    config = settings(core.Hook(name="ops", url="http://127.0.0.1:9/hook"))
    store = AlertStore(repo)
    escalate(repo)
    with pytest.raises(FileNotFoundError):
        deliver(store, config)
    assert store.log() == [] and not any(a.done for a in store.events())
