"""The Operations panel of the Settings page: where runs are worked, and on PostgreSQL the task engine's queue
depth, job ages and workers (the figures of `santa worker --status`), refreshed every few seconds."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from desk.engine_status import EngineStatus
from desk.workers import workers_in_app
from santa_core.models import RunStatus
from ui import app_desk
from ui.safe import escape_markdown

REFRESH_S = 5
QUEUE_LABEL = {"runs": "runs (interactive, first)", "batch": "batch reviews"}
WAITING_AGE, WORKING_AGE = "oldest waiting (since due)", "oldest working (since started)"


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def queue_rows(status: EngineStatus) -> pd.DataFrame:
    """One row per queue: waiting and working jobs, the oldest waiting since it became due and the oldest working
    since it started (the figures of `santa worker --status`)."""
    return pd.DataFrame(
        [
            {
                "queue": QUEUE_LABEL.get(q.queue, q.queue),
                "waiting": q.waiting,
                WAITING_AGE: _age(q.oldest_waiting_s),
                "working": q.working,
                WORKING_AGE: _age(q.oldest_working_s),
            }
            for q in status.queues
        ]
    )


@st.fragment(run_every=REFRESH_S)
def operations_section() -> None:
    """Where this desk's runs are worked, and how the queue stands now."""
    desk = app_desk.desk()
    engine = desk.task_engine
    if engine is None:
        active = [r for r in desk.runs.runs_to_resume() if r.status == RunStatus.QUEUED]
        working = len(desk.runs.list_runs(limit=1000, status=RunStatus.RUNNING))
        st.caption(
            f"Runs are worked inside this app process (SQLite, the embedded default): {working} running, "
            f"{len(active)} queued now, at most {desk.runner.workers} at once (`SANTA_WORKERS`). To spread "
            "runs over worker machines, point `DATABASE_URL` at PostgreSQL and start `santa worker` "
            "processes — see docs/deployment.md."
        )
        return
    try:
        status = engine.status()
    except Exception as exc:  # noqa: BLE001 - the database may be restarting: say so, the page stays up
        st.warning(escape_markdown(f"The queue's figures cannot be read right now: {type(exc).__name__}: {exc}"))
        return
    cols = st.columns(3)
    cols[0].metric(
        "Live workers",
        status.live_workers,
        help=f"Processes working jobs that heartbeat at least every {status.stalled_after_s:g} s.",
    )
    cols[1].metric(
        "Silent workers",
        status.silent_workers,
        help="Workers that stopped heartbeating; their jobs are retried by another worker.",
    )
    cols[2].metric(
        "Stalled jobs",
        status.stalled_jobs,
        help="Jobs held by a silent worker, about to be retried (their runs are taken over).",
    )
    st.dataframe(queue_rows(status), hide_index=True, width="stretch")
    here = "this app works jobs too" if workers_in_app() else "this app only enqueues (SANTA_WORKERS_IN_APP=0)"
    st.caption(
        f"Task engine on PostgreSQL: {here}. Waiting jobs are the due ones (one scheduled for later is not "
        "counted), aged since they became due: queued, put back for a retry, or their scheduled time; working "
        "jobs since they started (a retried job since its latest start). A worker silent for "
        f"{status.stalled_after_s:g} s counts as dead; its runs are back in the queue within "
        f"{status.recovery_bound_s:g} s, for the next free worker. `santa worker --status` prints the same "
        "figures."
    )
    if status.live_workers == 0 and any(q.waiting for q in status.queues):
        st.warning(
            "Jobs are waiting and no worker is heartbeating: start `santa worker` (or set "
            "SANTA_WORKERS_IN_APP=1 for this app) so queued runs are worked."
        )
