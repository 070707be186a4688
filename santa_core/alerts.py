"""Alerts that reach people: the events the desk reports, how a hook is configured, the bodies it is sent (plain
JSON, Slack, Teams, e-mail), the signature a receiver checks, and when a failed delivery is tried again.

Pure: the storage writes an event in the transaction of what it reports (`storage.alerts`), the desk delivers it
(`desk.alerts`). Nothing here reads the clock, the network or the database.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

ESCALATION_OPENED = "escalation.opened"
ESCALATION_OVERDUE = "escalation.overdue"
ESCALATION_RESOLVED = "escalation.resolved"
RUN_SHIPPED = "run.shipped"
RUN_ESCALATED = "run.escalated"
SPOT_CHECK_DUE = "spot_check.due"
BUDGET_EXCEEDED = "budget.exceeded"
KINDS: dict[str, str] = {
    ESCALATION_OPENED: "An escalation was opened",
    ESCALATION_OVERDUE: "An escalation is overdue",
    ESCALATION_RESOLVED: "An escalation was resolved",
    RUN_SHIPPED: "A run shipped",
    RUN_ESCALATED: "A run escalated",
    SPOT_CHECK_DUE: "A spot-check is due",
    BUDGET_EXCEEDED: "A run spent its budget",
}
"""Every event kind, with the words of its headline."""

SIGNATURE_HEADER = "X-Santa-Signature"
TIMESTAMP_HEADER = "X-Santa-Timestamp"
EVENT_HEADER = "X-Santa-Event"
IDEMPOTENCY_HEADER = "Idempotency-Key"
Format = Literal["json", "slack", "teams", "email"]
EMAIL_HOOK = "email"
"""The name the SMTP channel's deliveries are logged under."""


class AlertConfigError(ValueError):
    """A setting of the alerts that cannot be used (its value is never repeated: it may hold a token)."""


class Hook(BaseModel):
    """One outgoing webhook: where, in which format, for which events (None: all)."""

    model_config = ConfigDict(extra="forbid")  # a misspelt key ("formt") would silently send the wrong format

    name: str = Field(min_length=1, max_length=60)
    url: str = Field(repr=False)  # a Slack or Teams address carries its token
    format: Literal["json", "slack", "teams"] = "json"
    events: list[str] | None = None

    @field_validator("url")
    @classmethod
    def _http(cls, url: str) -> str:
        parts = urlsplit(url)
        try:
            parts.port  # noqa: B018 - raises on a port out of range, which the page's mask would otherwise meet
        except ValueError:
            raise ValueError("a hook's url has a port that is not a number from 1 to 65535") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("a hook's url must be an http(s) address")
        return url

    @field_validator("events")
    @classmethod
    def _known(cls, events: list[str] | None) -> list[str] | None:
        unknown = sorted(set(events or ()) - set(KINDS))
        if unknown:  # the unknown names are named (an operator wrote them), never the hook's other values
            raise ValueError(f"unknown event kinds {', '.join(unknown)}; known: {', '.join(sorted(KINDS))}")
        return events

    def wants(self, kind: str) -> bool:
        """Whether this hook is sent events of `kind`."""
        return self.events is None or kind in self.events


class Smtp(BaseModel):
    """The SMTP server the overdue reminder is mailed through, and to whom."""

    host: str
    port: int = 587
    user: str | None = None
    password: str | None = Field(default=None, repr=False)
    sender: str
    to: list[str] = Field(min_length=1)
    starttls: bool = True
    events: list[str] = Field(default_factory=lambda: [ESCALATION_OVERDUE])

    def wants(self, kind: str) -> bool:
        """Whether this kind of event is mailed."""
        return kind in self.events


MAX_EVERY_S = 3600.0
"""The longest pause between alert passes (and the longest first backoff)."""
MAX_ATTEMPTS = 100
MAX_TIMEOUT_S = 300.0


class AlertSettings(BaseModel):
    """What the alerts are sent to, the secret they are signed with, and how delivery is paced."""

    hooks: list[Hook] = Field(default_factory=list)
    secret: str | None = Field(default=None, repr=False)
    smtp: Smtp | None = None
    # Bounded: 0 attempts would settle every event unsent, an infinite interval would stop the alert thread, a zero
    # timeout would fail every try.
    every_s: float = Field(default=10.0, ge=1.0, le=MAX_EVERY_S, allow_inf_nan=False)
    attempts: int = Field(default=6, ge=1, le=MAX_ATTEMPTS)
    backoff_s: float = Field(default=5.0, ge=0.0, le=MAX_EVERY_S, allow_inf_nan=False)
    backoff_cap_s: float = Field(default=600.0, ge=0.0, allow_inf_nan=False)
    timeout_s: float = Field(default=5.0, gt=0.0, le=MAX_TIMEOUT_S, allow_inf_nan=False)

    @model_validator(mode="after")
    def _signed(self) -> AlertSettings:
        if self.hooks and not self.secret:
            # Every webhook carries the signature header (Slack and Teams ignore it): a receiver can always check it.
            raise ValueError(f"{ENV['hooks']} is set without {ENV['secret']}; every webhook is signed")
        return self

    @property
    def configured(self) -> bool:
        """Whether anything is sent at all."""
        return bool(self.hooks) or self.smtp is not None

    def channels(self, kind: str) -> list[str]:
        """The names of the hooks (and the e-mail channel) an event of `kind` goes to."""
        names = [h.name for h in self.hooks if h.wants(kind)]
        return names + ([EMAIL_HOOK] if self.smtp is not None and self.smtp.wants(kind) else [])

    def secrets(self) -> list[str]:
        """Every value that must never be shown: the signing secret, the SMTP password, the hooks' addresses beyond
        their host (a Slack or Teams address carries its token in its path)."""
        found = [self.secret or "", self.smtp.password or "" if self.smtp else ""]
        for hook in self.hooks:
            parts = urlsplit(hook.url)
            found += [parts.path if len(parts.path) > 1 else "", parts.query, parts.password or ""]
        return sorted((s for s in found if s), key=len, reverse=True)


ENV = {
    "hooks": "SANTA_ALERT_HOOKS",
    "secret": "SANTA_ALERT_SECRET",
    "every_s": "SANTA_ALERT_EVERY_S",
    "attempts": "SANTA_ALERT_ATTEMPTS",
    "backoff_s": "SANTA_ALERT_BACKOFF_S",
    "timeout_s": "SANTA_ALERT_TIMEOUT_S",
}
"""The settings' variables (environment, or root-level keys of the secrets file)."""
SMTP_ENV = {
    "host": "SANTA_SMTP_HOST",
    "port": "SANTA_SMTP_PORT",
    "user": "SANTA_SMTP_USER",
    "password": "SANTA_SMTP_PASSWORD",
    "sender": "SANTA_SMTP_FROM",
    "to": "SANTA_SMTP_TO",
    "starttls": "SANTA_SMTP_STARTTLS",
}


def alert_settings(environ: Mapping[str, str]) -> AlertSettings:
    """The alert settings the variables say; AlertConfigError naming the variable when one cannot be used (never its
    value). SANTA_ALERT_HOOKS is a JSON list of {"name", "url", "format", "events"}; SANTA_SMTP_TO a comma list."""
    raw: dict[str, Any] = {}
    for field, var in ENV.items():
        if environ.get(var, "").strip():
            raw[field] = environ[var].strip()
    if "hooks" in raw:
        try:
            raw["hooks"] = json.loads(raw["hooks"])
        except json.JSONDecodeError as exc:
            raise AlertConfigError(
                f"{ENV['hooks']} is not valid JSON (line {exc.lineno}, column {exc.colno})"
            ) from None
    if environ.get(SMTP_ENV["host"], "").strip():
        smtp: dict[str, Any] = {f: environ[v].strip() for f, v in SMTP_ENV.items() if environ.get(v, "").strip()}
        smtp["to"] = [a.strip() for a in smtp.get("to", "").split(",") if a.strip()]
        if "starttls" in smtp:
            smtp["starttls"] = smtp["starttls"].lower() not in ("0", "false", "no", "off")
        raw["smtp"] = smtp
    try:
        settings = AlertSettings.model_validate(raw)
    except ValidationError as exc:
        where = "; ".join(f"{_name(e['loc'])}: {e['msg']}" if e["loc"] else e["msg"] for e in exc.errors())
        raise AlertConfigError(f"the alert settings cannot be used ({where}); see docs/operations.md, Alerts") from None
    names = [h.name for h in settings.hooks]
    if len(set(names)) != len(names) or EMAIL_HOOK in names:
        raise AlertConfigError(f"{ENV['hooks']}: each hook needs its own name, and '{EMAIL_HOOK}' is the e-mail's")
    return settings


def _name(loc: tuple[int | str, ...]) -> str:
    """Where a refused setting is: its variable's name when it has one ("SANTA_ALERT_ATTEMPTS"), else its path."""
    if len(loc) == 1 and loc[0] in ENV:
        return ENV[str(loc[0])]
    return ".".join(str(p) for p in loc)


def mask_url(url: str) -> str:
    """A hook's address as it may be shown: scheme and host only."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}/…"


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret replaced by a mask (an error of a delivery may quote the address it called)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "•••")
    return re.sub(r"(https?://[^/\s]+)/\S*", r"\1/…", text)


def envelope(key: str, kind: str, subject: str, created_at: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """The event as every format carries it: its id (the idempotency key), kind, subject, time and facts."""
    return {
        "id": key,
        "event": kind,
        "subject": subject,
        "created_at": created_at,
        "data": dict(data),
        "text": headline(kind, subject, data),
    }


def headline(kind: str, subject: str, data: Mapping[str, Any]) -> str:
    """One line a person reads in a chat or a mail subject."""
    facts = ", ".join(f"{k} {data[k]}" for k in ("reason", "resolution", "due_at", "status") if data.get(k))
    return f"Santa: {KINDS.get(kind, kind)} ({subject}{'; ' + facts if facts else ''})"


def body(fmt: Format, event: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body a hook of format `fmt` is sent: the envelope itself, Slack's `text` + blocks, or a Teams
    MessageCard (its `text` also read by Teams workflows)."""
    text = event["text"]
    if fmt == "slack":
        return {
            "text": text,
            "blocks": [
                {"type": "section", "text": {"type": "mrkdwn", "text": text}},
                {
                    "type": "context",
                    "elements": [{"type": "mrkdwn", "text": f"`{event['event']}` · id `{event['id']}`"}],
                },
            ],
        }
    if fmt == "teams":
        return {
            "@type": "MessageCard",
            "@context": "https://schema.org/extensions",
            "summary": text,
            "title": KINDS.get(event["event"], event["event"]),
            "text": text,
            "sections": [{"facts": [{"name": k, "value": str(v)} for k, v in event["data"].items()]}],
        }
    return dict(event)


def raw_body(fmt: Format, event: Mapping[str, Any]) -> bytes:
    """The exact bytes sent (and signed)."""
    return json.dumps(body(fmt, event), sort_keys=True, separators=(",", ":")).encode()


def signature(secret: str, raw: bytes) -> str:
    """The signature header's value: `sha256=` and the hex HMAC-SHA256 of the raw body under the secret."""
    return "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()


def headers(event: Mapping[str, Any], raw: bytes, secret: str | None, timestamp: int) -> dict[str, str]:
    """The request's headers: JSON, the event's kind and idempotency key, the time sent, the signature (the settings
    refuse hooks without a secret)."""
    out = {
        "Content-Type": "application/json",
        EVENT_HEADER: str(event["event"]),
        IDEMPOTENCY_HEADER: str(event["id"]),
        TIMESTAMP_HEADER: str(timestamp),
    }
    if secret:
        out[SIGNATURE_HEADER] = signature(secret, raw)
    return out


def email(event: Mapping[str, Any], smtp: Smtp) -> EmailMessage:
    """The reminder mail of an event."""
    msg = EmailMessage()
    msg["Subject"] = event["text"]
    msg["From"] = smtp.sender
    msg["To"] = ", ".join(smtp.to)
    msg["Message-ID"] = f"<{event['id']}@santa>"  # the same event mailed twice would carry the same id
    facts = "\n".join(f"{k}: {v}" for k, v in event["data"].items())
    msg.set_content(f"{event['text']}\n\n{facts}\n\nEvent id: {event['id']}\n")
    return msg


@dataclass(frozen=True)
class LoggedTry:
    """A row of the delivery log, as the Operations panel shows it."""

    at: datetime
    kind: str
    subject: str
    channel: str
    attempt: int
    status: str
    status_code: int | None
    error: str | None


def retry_delay_s(attempts: int, backoff_s: float, cap_s: float) -> float:
    """Seconds after the `attempts`-th failed try before the next: doubling from `backoff_s`, at most `cap_s`."""
    return min(cap_s, backoff_s * 2 ** max(0, attempts - 1))


def due(attempts: int, last_failed_s_ago: float | None, settings: AlertSettings) -> bool:
    """Whether a delivery that failed `attempts` times (the last `last_failed_s_ago` seconds ago) is tried now:
    never past `settings.attempts`, else once its backoff has passed."""
    if attempts >= settings.attempts:
        return False
    if attempts == 0 or last_failed_s_ago is None:
        return True
    return last_failed_s_ago >= retry_delay_s(attempts, settings.backoff_s, settings.backoff_cap_s)
