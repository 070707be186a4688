"""The desk this app process works on: opened once per database URL, its defaults, and the
secrets file's values in the environment (where the API key and DATABASE_URL are read).

Kept out of `pages/` on purpose: Streamlit would list any module there as a page.
"""

from __future__ import annotations

import gc
import threading

import streamlit as st

from desk import Desk, open_desk
from desk.wiring import stop_on_exit
from santa_core.config import Defaults, export_to_env
from storage.db import database_url


def secrets_to_env() -> None:
    """Root-level secrets become environment variables (Streamlit does this too; done here
    explicitly so the key and DATABASE_URL are found however the app is started)."""
    try:
        values = dict(st.secrets.items())
    except Exception:  # noqa: BLE001 - no secrets file at all is fine
        return
    export_to_env(values)


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


@st.cache_resource(show_spinner="Opening the review desk…")
def desk_for(url: str) -> Desk:
    """One desk per database URL per process; the URL is the cache key so tests can switch. When the server
    stops, its runs in flight are marked interrupted (`desk.wiring.stop_on_exit`)."""
    desk = open_desk(url)
    stop_on_exit(desk)
    freeze_long_lived()
    return desk


def desk() -> Desk:
    """The desk for the configured database."""
    return desk_for(database_url())


def defaults() -> Defaults:
    """Defaults for new runs: what the Settings page saved, else SANTA_* variables, else built-ins."""
    return desk().defaults()
