"""The Batch page without a batch open: what the page does, the past batches to reopen, and what it shows before
the first one."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from santa_core.batch.store import Batch
from ui import batch_upload, identity
from ui.batch_actions import driver


def intro() -> None:
    """What the page does, one click away."""
    with st.expander("How this works", expanded=False):
        st.markdown(
            "Upload many outputs at once (CSV or JSONL). Santa reviews a **sample** of them with both reviewers, "
            "groups the failures into **patterns**, and for each pattern the fix agent proposes **one fix** on a "
            "representative item. Once you approve it, it is applied to **every item of the batch** that shows the "
            "pattern; every other item stays byte-identical. Then a fresh sample is drawn, until one comes back "
            "clean — and the page states what that clean sample proves about the rest. How the sample is "
            "drawn and what its figures mean is written up in `docs/batch-sampling.md`."
        )


def state_of(batch: Batch, waiting: int) -> str:
    """Where a batch stands, in a few words (`waiting`: patterns that wait for a decision)."""
    latest = batch.latest
    if latest is None:
        return "no sample yet"
    if latest.finished_at is None:
        return ("paused" if batch.paused else "reviewing") + f" sample {latest.number} ({latest.done}/{latest.size})"
    if waiting:
        return f"sample {latest.number}: {waiting} pattern(s) to decide"
    if latest.clean:
        return f"clean after sample {latest.number}"
    return f"sample {latest.number}: {latest.naughty} failed, fixes decided — resample"


def batch_frame(batches: list[tuple[Batch, int]]) -> pd.DataFrame:
    """One row per batch (with its patterns waiting for a decision), newest first, with a link that opens it."""
    rows = []
    for b, waiting in batches:
        rows.append(
            {
                "batch": b.id,
                "file": b.name,
                "created (UTC)": f"{b.created_at:%Y-%m-%d %H:%M}",
                "by": identity.display(b.created_by),
                "items": b.items,
                "samples": len(b.samples),
                "state": state_of(b, waiting),
                "open": f"batch?batch={b.id}",
            }
        )
    return pd.DataFrame(rows)


def past_batches() -> list[tuple[Batch, int]]:
    """Every batch, newest first, with its patterns waiting for a decision."""
    return driver().overview()


def empty_state() -> None:
    """No batch yet and no file uploaded: what the page is for (once a file is in, the form below says the rest)."""
    if st.session_state.get(batch_upload.UPLOAD_KEY) is not None:
        return
    st.info(
        "No batches yet. Upload a CSV or JSONL file of outputs below to verify them by sampling: a sample is "
        "reviewed, its failures are grouped into patterns, each pattern is fixed across the whole batch, and "
        "a fresh sample checks the result."
    )


def batch_list(batches: list[tuple[Batch, int]]) -> None:
    """Past batches to reopen: a table with links, and a picker."""
    st.dataframe(
        batch_frame(batches),
        hide_index=True,
        width="stretch",
        column_config={"open": st.column_config.LinkColumn("open", display_text="open")},
    )
    names = {b.id: f"#{b.id} · {b.name}" for b, _ in batches}
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    pick = left.selectbox("Open a batch", list(names), format_func=names.get, key="batch_pick")
    if right.button("Open", key="batch_open"):
        st.query_params["batch"] = str(pick)
        st.rerun()
