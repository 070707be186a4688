"""Where each setting of the desk comes from, for the Settings page: the value in effect and its source (an
environment variable, a save on the Settings page by whom and when, or the built-in default), and a lock on the
Settings widgets an environment variable sets.

The rule is `santa_core.config.effective_defaults`: the environment wins over Settings, which win over the default.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd
import streamlit as st

from desk.wiring import ENV_ONLY_SETTINGS
from santa_core import words
from santa_core.config import Effective, Saved, Source
from santa_core.providers import usable_model_ids
from ui import components, identity, providers
from ui.safe import escape_markdown

SLOTS = ("reviewer_b", "reviewer_c", "fixer")
"""The settings a reviewer or fix-agent picker sets."""


def shown(field: str, value: Any) -> str:
    """A setting's value as a person reads it."""
    if field == "screen":
        return "on" if value else "off"
    if field == "budget_usd":
        return words.usd(float(value))
    if field == "due_hours":
        return ", ".join(f"{words.reason(r)} {float(h):g} h" for r, h in dict(value).items())
    return str(value)


def saved_label(saved: Saved) -> str:
    """'saved by Ann <ann@…> at 2026-03-02 10:04 UTC'."""
    return f"saved by {identity.display(saved.saved_by)} at {saved.saved_at:%Y-%m-%d %H:%M} UTC"


def source_label(source: Source) -> str:
    """'environment SANTA_SCREEN=off', 'Settings (saved by … at …)' or 'default'."""
    if source.origin == "environment":
        return f"environment {source.variable}={source.text}"
    if source.origin == "settings" and source.saved is not None:
        return f"Settings ({saved_label(source.saved)})"
    return "default"


def overridden(field: str, source: Source) -> str | None:
    """What a person must know when the environment sets a setting: it wins, and a saved value (if any) waits."""
    if source.origin != "environment":
        return None
    said = f"The environment sets {source.variable}={source.text}, and the environment wins over Settings"
    if source.saved is not None:
        said += (
            f": the saved value ({shown(field, source.saved.value)}, {saved_label(source.saved)}) is not used "
            f"while {source.variable} is set"
        )
    return said + f". Unset {source.variable} to set it here."


def locked(effective: Effective, field: str) -> bool:
    """Under a Settings widget: why it is locked, when an environment variable sets it; True then."""
    source = effective.sources[field]
    if (note := overridden(field, source)) is None:
        return False
    st.caption(":material/lock: " + escape_markdown(note))
    return True


def sources_table(effective: Effective, local_name: str | None = None) -> None:
    """Every setting, its value in effect and where it comes from (the environment-only ones included). The local
    user's name is the one the People records hold (`local_name`) when there is one."""
    values = {**effective.defaults.model_dump(), **({"display_name": local_name} if local_name else {})}
    usable = usable_model_ids()
    for slot in SLOTS:  # what a new run starts on, as the pickers below and the Review page say
        if (start := providers.slot_start(values[slot], usable)) != values[slot]:
            values[slot] = f"{start} (no provider has a key; {values[slot]} once its provider has one)"
    rows = [
        {
            "setting": words.setting(field),
            "in effect": shown(field, values[field]),
            "from": source_label(effective.sources[field]),
        }
        for field in effective.sources
    ]
    for label, variable, value in ENV_ONLY_SETTINGS:
        text = os.environ.get(variable)
        rows.append(
            {
                "setting": label,
                "in effect": f"{value():g}",
                "from": f"environment {variable}={text}" if text else f"default (set {variable} to change)",
            }
        )
    components.full_table(pd.DataFrame(rows), wide=("in effect", "from"), breakable=("from",))
