"""Who delivers the alerts: one pass sweeps for what fell due (overdue escalations, spot-checks) and sends every
delivery due now, each try claimed and logged in `alert_delivery` first (`storage.alerts.AlertStore`).

On PostgreSQL the pass is a procrastinate periodic task worked by the workers (`desk.task_engine`, `santa.alerts`,
one at a time across all of them); on SQLite the app runs it on a thread of its own from the moment the server
opens the desk (`start_alerting`), so a reminder goes out with nobody on a page.
"""

from __future__ import annotations

import logging
import math
import os
import smtplib
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

import httpx
from sqlalchemy import Engine

from santa_core import alerts as core
from storage.alerts import AlertStore, Delivery

log = logging.getLogger(__name__)


def settings_now(environ: Mapping[str, str] | None = None) -> core.AlertSettings:
    """The alert settings the environment (and the secrets file's root keys, exported there) says now."""
    return core.alert_settings(os.environ if environ is None else environ)


def send_hook(
    hook: core.Hook, delivery: Delivery, settings: core.AlertSettings, client: httpx.Client
) -> tuple[bool, int | None, str | None]:
    """POST the event to the hook in its format, signed; (delivered, HTTP status, error). Any 2xx is delivered."""
    raw = core.raw_body(hook.format, delivery.event)
    headers = core.headers(delivery.event, raw, settings.secret, int(time.time()))
    response = client.post(hook.url, content=raw, headers=headers)
    ok = 200 <= response.status_code < 300
    return ok, response.status_code, None if ok else f"HTTP {response.status_code}"


def send_mail(smtp: core.Smtp, delivery: Delivery, timeout_s: float) -> tuple[bool, int | None, str | None]:
    """Mail the event through the SMTP server (STARTTLS when set, login when a user is set)."""
    with smtplib.SMTP(smtp.host, smtp.port, timeout=timeout_s) as server:
        if smtp.starttls:
            server.starttls()
        if smtp.user:
            server.login(smtp.user, smtp.password or "")
        server.send_message(core.email(delivery.event, smtp))
    return True, None, None


HTTP_LOGGERS = ("httpx", "httpcore")
"""The loggers that write a request's full address (httpx at INFO: "HTTP Request: POST <url>")."""


class _Masked(logging.Filter):
    """Rewrites a record with its addresses cut to their host and the secrets masked (a hook's path is its token)."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep the line, masked."""
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a record that cannot be formatted shows nothing of ours either
            return True
        record.msg, record.args = core.scrub(text, self.secrets), ()
        return True


@contextmanager
def _hooks_masked_in_logs(secrets: list[str]) -> Iterator[None]:
    """While deliveries run, the HTTP loggers' lines are masked (at any level a deployment or SANTA_DEBUG sets)."""
    masked = _Masked(secrets)
    loggers = [logging.getLogger(name) for name in HTTP_LOGGERS]
    for logger in loggers:
        logger.addFilter(masked)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(masked)


def deliver(store: AlertStore, settings: core.AlertSettings, client: httpx.Client | None = None) -> int:
    """Try every delivery due now, each claimed first (never sent twice); how many were delivered. An error is
    logged with the secrets masked, never raised: the next pass tries again after the backoff. A channel that fails
    is not tried again in the same pass, so a receiver that is down costs one timeout a pass, not one per event
    (on PostgreSQL the pass holds a worker's slot meanwhile)."""
    hooks = {h.name: h for h in settings.hooks}
    delivered, failing = 0, set()
    with _hooks_masked_in_logs(settings.secrets()):
        due = store.due(settings)
        # The pass's own client, made only when a webhook is due (a client's TLS context costs some 26 ms of CPU, and
        # an idle desk passes every few seconds); made before anything is claimed, so a client that cannot be made
        # (a missing SSL_CERT_FILE) fails the pass as a whole and spends no delivery's attempt.
        own = client is None and any(d.channel != core.EMAIL_HOOK for d in due)
        if own:
            client = httpx.Client(timeout=settings.timeout_s, follow_redirects=False)
        try:
            for delivery in due:
                if delivery.channel in failing:
                    continue  # down this pass: its events wait for the next
                try_id = store.claim(delivery)
                if try_id is None:
                    continue  # delivered or under way elsewhere
                try:
                    if delivery.channel == core.EMAIL_HOOK:
                        if settings.smtp is None:  # listed only with a server set (`AlertSettings.channels`)
                            raise ValueError("no SMTP server is set")
                        outcome = send_mail(settings.smtp, delivery, settings.timeout_s)
                    else:
                        assert client is not None  # a webhook is due: made above
                        outcome = send_hook(hooks[delivery.channel], delivery, settings, client)
                except Exception as exc:  # noqa: BLE001 - a receiver away, refusing or slow: logged, tried again
                    outcome = (False, None, core.scrub(f"{type(exc).__name__}: {exc}", settings.secrets()))
                store.finish(try_id, *outcome)
                delivered += outcome[0]
                if not outcome[0]:
                    failing.add(delivery.channel)
                    log.warning(
                        "alert %s to %s: try %d failed (%s)",
                        delivery.event["id"],
                        delivery.channel,
                        delivery.attempt,
                        outcome[2],
                    )
        finally:
            if own and client is not None:
                client.close()
    return delivered


DRAW_EVERY_S = 3600.0
"""The spot-checks' draw runs at most this often per process and database: shipping draws its own run, so the sweep
only catches what a shipping missed and tops weeks up to the floor (weekly), and it reads every shipped run."""
_drawn_at: weakref.WeakKeyDictionary[Engine, float] = weakref.WeakKeyDictionary()
"""When this process last swept the draw, by database engine (monotonic seconds)."""


def alert_pass(
    store: AlertStore, settings: core.AlertSettings | None = None, clock: Callable[[], float] = time.monotonic
) -> int:
    """One pass: sweep for what fell due, then deliver what is due; how many were delivered. The sweep runs whether
    or not any channel is configured, since the spot-checks' draw (the weekly floor) lives in it; its draw part
    runs at most once every DRAW_EVERY_S, the reminders every pass. With no channel, events just settle."""
    now, last = clock(), _drawn_at.get(store.engine)
    draw = last is None or now - last >= DRAW_EVERY_S
    store.sweep(draw=draw)
    if draw:
        _drawn_at[store.engine] = now  # only once it committed: a failed sweep is tried again next pass
    return deliver(store, settings or settings_now())


def every_s() -> float:
    """Seconds between passes (SANTA_ALERT_EVERY_S, default 10); unreadable settings: the default."""
    try:
        return settings_now().every_s
    except core.AlertConfigError:
        return 10.0


def _interval(every: Callable[[], float]) -> float:
    """`every()` as a pause `Event.wait` takes: within [0.2 s, an hour]; the default when it fails or is not a
    finite number (an infinite wait raises OverflowError, which would end the thread)."""
    try:
        seconds = float(every())
    except Exception as exc:  # noqa: BLE001 - whatever the interval's source does, the reminders keep going
        log.warning("the alert interval cannot be read (%s); using 10 s", type(exc).__name__)
        return 10.0
    return min(core.MAX_EVERY_S, max(0.2, seconds)) if math.isfinite(seconds) else 10.0


def start_alerting(store: AlertStore, stop: threading.Event, every: Callable[[], float] = every_s) -> threading.Thread:
    """Run a pass every `every()` seconds on a daemon thread until `stop` is set (the app on SQLite)."""

    def loop() -> None:
        # The interval is read inside the loop's guard (`_interval` never raises): a bad value cannot end the thread.
        while not stop.wait(_interval(every)):
            try:
                alert_pass(store)
            except core.AlertConfigError as exc:
                log.error("alerts are not sent: %s", exc)
            except Exception as exc:  # noqa: BLE001 - the database busy or away: the next pass tries again
                log.warning("an alert pass failed (%s); trying again", type(exc).__name__)

    thread = threading.Thread(target=loop, name="santa-alerts", daemon=True)
    thread.start()
    return thread
