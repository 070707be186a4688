"""What a person does to a batch from the page, each with its outcome kept for the next rerun.

A click's outcome (done, or why the storage refused) is shown once, at the top of the batch, after
the rerun that follows the click: clicks often run as callbacks, before the page is drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from santa_core.batch.driver import BatchDriver
from santa_core.batch.file import BatchFileError
from santa_core.batch.store import BatchProblem
from santa_core.roles import PermissionDenied
from ui import app_desk, identity
from ui.safe import escape_markdown

FLASH = "batch_flash"
SHOW_PROGRESS = "batch_show_progress"
SCROLL_TO_TOP = (
    '<div id="batch-progress"></div><script>document.getElementById("batch-progress")'
    '.scrollIntoView({block: "start"});</script>'
)
"""A constant, never text from a file, a model or a person (tests/test_architecture.py holds every `st.html` to it)."""
POLL_S = 2.0
"""How often the page re-reads a sample under review, or one whose failures are being grouped."""
REFUSED = (BatchProblem, PermissionDenied, BatchFileError)
"""What the storage and the batch driver raise for a request that cannot be done as asked."""
T = TypeVar("T")


def driver() -> BatchDriver:
    """The desk's batch driver."""
    return app_desk.desk().batches


def flash(batch_id: int, kind: str, text: str) -> None:
    """Keep a message (markdown, already escaped) for the batch's next rerun; kind is success, info or error."""
    st.session_state[FLASH] = (batch_id, kind, text)


def show_flash(batch_id: int) -> None:
    """The message a click left for this batch, once."""
    kept = st.session_state.get(FLASH)
    if not kept or kept[0] != batch_id:
        return
    del st.session_state[FLASH]
    _, kind, text = kept
    {"success": st.success, "error": st.error}.get(kind, st.info)(text)


def show_progress_next(batch_id: int) -> None:
    """After Create: the batch's next render brings its progress into view (the form above it was long, and a rerun
    keeps the page's scroll, which left the view on Cost and Export with the progress out of sight)."""
    st.session_state[SHOW_PROGRESS] = batch_id


def progress_anchor(batch_id: int) -> None:
    """The top of the batch, scrolled into view once, on the render right after Create: its header, then the first
    sample's progress, in sight (scrolling to the progress itself put it under the app's top bar)."""
    if st.session_state.get(SHOW_PROGRESS) != batch_id:
        return
    del st.session_state[SHOW_PROGRESS]
    st.html(SCROLL_TO_TOP, unsafe_allow_javascript=True)


def attempt(batch_id: int, action: Callable[[], T], done: Callable[[T], str] | None = None) -> T | None:
    """Run an action; on success keep `done(result)`, on a refusal keep the reason. None when refused."""
    try:
        result = action()
    except REFUSED as exc:
        flash(batch_id, "error", escape_markdown(f"Not done: {exc}"))
        return None
    if done is not None:
        flash(batch_id, "success", done(result))
    return result


def start_sample(batch_id: int) -> int | None:
    """Draw the batch's next sample and start reviewing it in the background; the sample's id."""
    return attempt(
        batch_id,
        lambda: driver().sample(batch_id, identity.actor()),
        lambda sample_id: (
            f"Sample {driver().progress(sample_id).number} drawn: its items are being reviewed by both reviewers."
        ),
    )


def pause(batch_id: int) -> None:
    """A button callback: no new review starts; reviews already started finish and are kept."""
    attempt(
        batch_id,
        lambda: driver().pause(batch_id, identity.actor()),
        lambda _: "Paused: reviews already started finish and are kept; no new one starts until you resume.",
    )


def resume(batch_id: int) -> None:
    """A button callback: start reviewing again where the batch stopped."""
    attempt(batch_id, lambda: driver().resume(batch_id, identity.actor()), lambda _: "Resumed.")


def retry(batch_id: int) -> None:
    """A button callback: pick a stopped sample up again."""
    attempt(
        batch_id,
        lambda: driver().retry(batch_id, identity.actor()),
        lambda _: "Trying again: interrupted reviews resume where they stopped.",
    )
