"""The Operations panel's alerts: where the desk's events are sent (addresses masked, secrets never shown), who
sends them, and the delivery log (every try, refused ones included), refreshed every few seconds."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from desk.alerts import settings_now
from santa_core import alerts as core
from ui import app_desk, components
from ui.safe import escape_markdown

REFRESH_S = 5
LOG_ROWS = 20


def hook_rows(settings: core.AlertSettings) -> pd.DataFrame:
    """One row per channel: its name, masked address, format, events and whether it is signed."""
    rows = [
        {
            "channel": h.name,
            "address": core.mask_url(h.url),
            "format": h.format,
            "events": "all" if h.events is None else ", ".join(core.KINDS.get(e, e) for e in h.events),
            "signed": "yes" if settings.secret else "no (SANTA_ALERT_SECRET not set)",
        }
        for h in settings.hooks
    ]
    if settings.smtp is not None:
        smtp = settings.smtp
        rows.append(
            {
                "channel": core.EMAIL_HOOK,
                "address": f"smtp://{smtp.host}:{smtp.port} → {', '.join(smtp.to)}",
                "format": "e-mail",
                "events": ", ".join(core.KINDS.get(e, e) for e in smtp.events),
                "signed": f"login {'as ' + smtp.user if smtp.user else 'none'}"
                f"{', password set' if smtp.password else ''}",
            }
        )
    return pd.DataFrame(rows)


def log_rows(tries: list[core.LoggedTry]) -> pd.DataFrame:
    """The delivery log, newest first: when, which event, to which channel, which try, and how it went."""
    return pd.DataFrame(
        [
            {
                "at": t.at.strftime("%Y-%m-%d %H:%M:%S UTC"),
                "event": core.KINDS.get(t.kind, t.kind),
                "subject": t.subject,
                "channel": t.channel,
                "try": t.attempt,
                "outcome": t.status,
                "HTTP": "" if t.status_code is None else str(t.status_code),
                "error": t.error or "",
            }
            for t in tries
        ]
    )


@st.fragment(run_every=REFRESH_S)
def alerts_section() -> None:
    """Where alerts go, who sends them, and the newest tries."""
    try:
        settings = settings_now()
    except core.AlertConfigError as exc:  # its words name the variable, never its value
        st.error(escape_markdown(f"Alerts are not sent: {exc}."), icon=":material/error:")
        return
    desk = app_desk.desk()
    if not settings.configured:
        st.caption(
            "Alerts: none configured. Set `SANTA_ALERT_HOOKS` (webhooks: plain JSON, Slack or Teams) and "
            "`SANTA_SMTP_*` (the overdue reminder by e-mail) in the environment or `.streamlit/secrets.toml` — "
            "see *Alerts* in docs/operations.md."
        )
        return
    who = (
        "the workers' periodic task `santa.alerts`"
        if desk.task_engine is not None
        else "this app, on a thread of its own"
    )
    st.caption(
        f"Alerts are sent by {who} every {settings.every_s:g} s, each try logged; a refused or failed try is "
        f"tried again after {settings.backoff_s:g} s, doubling, {settings.attempts} tries at most. "
        "Addresses are shown up to their host; the signing secret and the SMTP password are never shown."
    )
    components.full_table(hook_rows(settings), wide=("address", "events"))
    tries = desk.alerts.log(LOG_ROWS)
    if tries:
        components.full_table(log_rows(tries), wide=("event", "subject", "error"))
    else:
        st.caption("No delivery tried yet.")
