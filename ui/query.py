"""Numbers read from the page's URL (`?run=3`, `?batch=2`); a bad one is said, never guessed."""

from __future__ import annotations

import streamlit as st

from ui.safe import escape_markdown


def number_param(name: str, what: str) -> int | None:
    """The query parameter `name` as an int, or None (an error is shown when it is not a number)."""
    raw = st.query_params.get(name)
    try:
        return int(raw) if raw else None
    except ValueError:
        st.error(f"{escape_markdown(raw)} is not a {what} number.")
        return None


def run_id() -> int | None:
    """The `run` query parameter as an int, or None."""
    return number_param("run", "run")


def batch_id() -> int | None:
    """The `batch` query parameter as an int, or None."""
    return number_param("batch", "batch")
