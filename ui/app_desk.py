"""The desk this app process works on: opened once per database URL, its defaults, and the
secrets file's values in the environment (where the API key and DATABASE_URL are read).

Kept out of `pages/` on purpose: Streamlit would list any module there as a page.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import streamlit as st
from streamlit.logger import get_logger

from desk import Desk, open_desk
from desk.wiring import stop_desk, stop_on_exit
from santa_core.config import Defaults, Effective, SettingError, export_to_env
from storage.db import cannot_open, database_url, redacted_url
from ui import access
from ui.safe import escape_markdown

log = get_logger(__name__)


def secrets_to_env() -> None:
    """Root-level secrets become environment variables (Streamlit does this too; done here
    explicitly so the key and DATABASE_URL are found however the app is started). No secrets file is fine;
    one that cannot be read raises `access.SecretsUnreadable`."""
    export_to_env(access.secrets())


def local_user_acts() -> bool:
    """Whether the local user may act: only where sign-in is not configured (SecretsUnreadable when unknown)."""
    return not access.auth_configured()


_frozen = False
_freeze_lock = threading.Lock()


def freeze_long_lived() -> None:
    """Once per process: move everything alive now (imported modules, SQLAlchemy metadata, pydantic models,
    the desk) out of the collector's reach.

    Why: a full collection otherwise walks these ~350,000 long-lived objects again, a pause of 200-350 ms in
    whichever page rerun triggers it; frozen, about 40 ms, and a third less time in the collector over many
    reruns (AppTest reruns of five pages). Collect first so startup garbage is freed, not frozen.
    """
    global _frozen
    with _freeze_lock:  # sessions run their scripts on threads of their own
        if _frozen:
            return
        _frozen = True
        gc.collect()
        gc.freeze()


_opened: list[Desk] = []
"""Every desk this process opened, for the server's stop (`open_at_server_start`)."""


@st.cache_resource(show_spinner="Opening the review desk…")
def desk_for(url: str) -> Desk:
    """One desk per database URL per process; the URL is the cache key so tests can switch. When the server
    stops, its runs in flight are marked interrupted (`desk.wiring.stop_on_exit`). Opened with the local user
    refused: `desk()` lets it act, page by page, only while sign-in is not configured."""
    # Nobody acts as the local user until a page has read the secrets and said whether it may (`desk`).
    desk = open_desk(url, local_user=False)
    stop_on_exit(desk)
    _opened.append(desk)
    freeze_long_lived()
    log.info("Desk opened (%s)", redacted_url(url))
    return desk


def desk() -> Desk:
    """The desk for the configured database, the local user acting on it only while sign-in is not configured; a
    database that will not open stops the page with why (a reload tries again)."""
    url = database_url()
    local_user = local_user_acts()  # secrets that cannot be read raise as such, not as a database that will not open
    try:
        opened = desk_for(url)
    except Exception as exc:  # noqa: BLE001 - a failed open is not cached: the next rerun tries again
        log.warning("The desk did not open: %s", cannot_open(url, exc))
        st.error(
            f"The review desk {cannot_open(url, exc)}. Check `DATABASE_URL` and that the database is up, "
            "then reload the page: nothing is lost."
        )
        st.stop()
    # The desk outlives a change to the secrets file (Streamlit reloads it): its role checks follow it, so sign-in
    # switched on refuses the local user from the next page on.
    opened.local_user = local_user
    return opened


OPEN_WAIT_S = 10.0
"""How long the server's start waits for the desk to open before it answers anyway (a database that does not
answer must not keep the health check down: the desk goes on opening in the background)."""


class _NoBareModeWarning(logging.Filter):
    """Drops Streamlit's "missing ScriptRunContext! This warning can be ignored…" for the thread opening the desk
    at server start: `desk_for`'s cache looks for a page's context to show its spinner, and there is none before
    any page runs. A normal start prints no warning line; the same message from any other thread still shows."""

    def __init__(self) -> None:
        super().__init__()
        self.thread = threading.get_ident()

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.thread == self.thread and "missing ScriptRunContext" in record.msg)


_CONTEXT_LOG = "streamlit.runtime.scriptrunner_utils.script_run_context"


def open_now() -> None:
    """Open the desk for the configured database (the secrets file's values exported first); logged, not
    raised, when it will not open: the server still starts, and the first page asks again and shows why. Not
    opened at all while the secrets cannot be read (they may name the database): every page says why instead."""
    try:
        secrets_to_env()
    except access.SecretsUnreadable as exc:
        log.error("Server start: the desk stays closed. %s", exc)
        return
    url = database_url()
    log.info("Server start: opening the desk (%s)", redacted_url(url))
    quiet = _NoBareModeWarning()
    logging.getLogger(_CONTEXT_LOG).addFilter(quiet)
    try:
        desk_for(url)
    except Exception as exc:  # noqa: BLE001 - a failed open is not cached: a page retries
        log.error(
            "The desk did not open at server start (%s); the first page will try again and say why",
            cannot_open(url, exc),
        )
        return
    finally:
        logging.getLogger(_CONTEXT_LOG).removeFilter(quiet)
    log.info("Server start: the desk is open (%s)", redacted_url(url))


def stop_all() -> None:
    """Stop every desk this process opened (`desk.wiring.stop_desk`)."""
    for opened in list(_opened):
        stop_desk(opened)


@asynccontextmanager
async def open_at_server_start(_app: object) -> AsyncIterator[None]:
    """The server's lifespan (`app` in app.py): open the desk as the server starts, before anyone opens a
    page, so runs a restart left queued are worked at once (on PostgreSQL, by the app's own worker) and dead
    runs are marked interrupted. Through `desk_for`'s cache, so sessions later get this same desk. On a
    thread: opening migrates and may wait for the database; the server answers once it is done, or after
    OPEN_WAIT_S while it goes on.

    When the server stops, so do the desks (one opened later by a page too): `stop_on_exit`'s hook at the
    process's exit does not run under this server, which ends the process by re-raising the SIGTERM it
    caught."""
    opening = asyncio.ensure_future(asyncio.to_thread(open_now))
    try:
        await asyncio.wait_for(asyncio.shield(opening), OPEN_WAIT_S)
    except TimeoutError:
        log.warning(
            "Server start: the database has not answered in %g s; serving meanwhile, the desk opens once it does",
            OPEN_WAIT_S,
        )
    try:
        yield
    finally:
        await asyncio.to_thread(stop_all)
        log.info("Server stop: the desk stopped")


def effective() -> Effective:
    """Defaults for new runs and where each comes from: SANTA_* variables, else what the Settings page saved, else
    built-ins. A variable set to an invalid value stops the page with its name (never a silent fallback)."""
    try:
        return desk().effective()
    except SettingError as exc:
        st.error(
            f"{escape_markdown(str(exc))}. Correct or unset the variable (environment or `.streamlit/secrets.toml`) "
            "and reload the page."
        )
        st.stop()


def defaults() -> Defaults:
    """Defaults for new runs: SANTA_* variables, else what the Settings page saved, else built-ins."""
    return effective().defaults
