"""The Batch page's view of one batch, from its first sample to its export (the list of batches:
`ui.batch_list`).

One batch moves through: no sample yet → a sample being reviewed (live progress, pause, resume) →
the finished sample's patterns (a fix approved or dismissed for each) → the stopping rule and the
next sample, until a sample comes back clean. The database holds every step, so `?batch=<id>`
shows the same view after a reload, in another tab, or after a restart.

Each render reads the batch once (`BatchDriver.view`, a `BatchView`) and hands that view to every
part of the page; the live progress fragment reads a fresh view each time it reruns.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import PurePath

import pandas as pd
import streamlit as st

from santa_core import words
from santa_core.batch.report import BatchView
from santa_core.batch.sample_batch import STOPPED
from santa_core.batch.sampling import percent
from santa_core.batch.store import Batch, BatchProblem, SampledReview, SampleProgress
from santa_core.models import RunStatus
from santa_core.roles import Permission
from ui import (
    app_desk,
    batch_actions,
    batch_patterns,
    batch_plan,
    batch_reach,
    components,
    cost_estimate,
    identity,
)
from ui import providers as providers_ui
from ui.batch_actions import POLL_S, driver
from ui.safe import escape_markdown

QUIET_S = 30.0
"""Seconds without a review changing state before a sample nobody reviews counts as stopped (a
driver's automatic retries wait 2, 4 and 8 s)."""
MIME = {"csv": "text/csv", "jsonl": "application/x-ndjson"}
RESULT = {
    RunStatus.SHIPPED: "NICE",
    RunStatus.SAMPLED: "NAUGHTY",
    RunStatus.QUEUED: "reviewing",
    RunStatus.RUNNING: "reviewing",
    RunStatus.INTERRUPTED: "interrupted (resumes)",
}


# --- one batch ------------------------------------------------------------------------------------


def header(batch: Batch) -> None:
    """Title line: the file, its items, rubric, reviewers and sampling settings."""
    c = batch.config
    st.subheader(escape_markdown(f"Batch #{batch.id} — {batch.name}"))
    strata = ", ".join(c.strata) or "none"
    st.caption(
        escape_markdown(
            f"{batch.items:,} items · rubric {c.rubric.name} v{c.rubric.version} · B {c.reviewer_b} · "
            f"C {c.reviewer_c} · fix agent {c.fixer} · sample rate {percent(c.sample_rate)} (at least "
            f"{c.min_sample} items) · strata {strata} · seed {c.seed} · {c.concurrency} reviews at a time"
            + (" · Message Batches API" if c.message_batches else "")
            + (" · auto-approve" if c.auto_approve else "")
            + f" · created by {identity.display(batch.created_by)} {batch.created_at:%Y-%m-%d %H:%M} UTC"
        )
    )
    components.rubric_table(c.rubric)


def next_plan(view: BatchView, key: str) -> None:
    """What the next sample catches, from the stored items."""
    sizes: dict[tuple[str, ...], int] = {}
    for item in view.items:
        sizes[item.stratum] = sizes.get(item.stratum, 0) + 1
    batch_plan.detection(len(view.items), view.estimate.sample, sizes, key=key)


def start_button(batch: Batch, number: int, label: str) -> None:
    """Draw the next sample (for people who may start runs)."""
    if not identity.can(Permission.START_RUN):
        st.info(escape_markdown(identity.refusal(Permission.START_RUN)))
        return
    blocked = providers_ui.screen_notice(app_desk.desk().runner, batch.config.reviewer_b, batch.config.reviewer_c)
    if st.button(label, type="primary", key="batch_start" if number == 1 else "batch_resample", disabled=bool(blocked)):
        batch_actions.start_sample(batch.id)
        st.rerun()


def first_sample_step(view: BatchView) -> None:
    """Before the first sample: what it will catch and cost, and the button to draw it."""
    st.markdown("#### Before sampling")
    next_plan(view, "batch_prevalence_view")
    start_button(view.batch, 1, "Start sample 1")


def eta(progress: SampleProgress, paused: bool, message_batches: bool) -> str:
    """Time left, from the pace so far (reviews run concurrently, so it is the sample's own pace); short."""
    if paused:
        return "paused"
    left = progress.seconds_left
    if message_batches or left is None:
        return "—"  # a Message Batch has no pace to measure; nor has a sample before its first review
    if left < 90:
        return f"~{max(1, round(left))} s"
    return f"~{round(left / 60)} min" if left < 5400 else f"~{left / 3600:.1f} h"


def progress_panel(progress: SampleProgress, paused: bool, message_batches: bool) -> None:
    """Progress bar, counts, ETA and cost so far; the Message Batch's status when one is used."""
    st.progress(
        progress.done / progress.size if progress.size else 1.0,
        text=f"Sample {progress.number}: {progress.done} of {progress.size} items reviewed",
    )
    cols = st.columns(5)
    cols[0].metric("NICE", progress.nice)
    cols[1].metric("NAUGHTY", progress.naughty)
    cols[2].metric("Reviewer errors", progress.errors, help="Counted as NAUGHTY: a failed review is never a pass.")
    cols[3].metric(
        "Time left",
        eta(progress, paused, message_batches),
        help="From the pace of the reviews so far; none for a Message Batch, which the API answers within 24 hours.",
    )
    cols[4].metric("Spent on this sample", components.usd(progress.cost_usd))
    if paused:
        st.warning("Paused: no new review starts; reviews already started finish and are kept. Resume to go on.")
    if message_batches:
        where = f"Message Batch {progress.api_batch_id}" if progress.api_batch_id else "The Message Batch"
        status = progress.api_status or "being submitted"
        st.info(
            escape_markdown(
                f"{where}: {status}. The API answers within 24 hours, usually much sooner; the desk keeps "
                "tracking it across restarts."
            )
        )


def controls(batch_id: int, paused: bool) -> None:
    """Pause or resume (for people who may start runs)."""
    if not identity.can(Permission.START_RUN):
        return
    if paused:
        st.button("Resume", key="batch_resume", type="primary", on_click=batch_actions.resume, args=(batch_id,))
    else:
        st.button(
            "Pause",
            key="batch_pause",
            on_click=batch_actions.pause,
            args=(batch_id,),
            help="No new review starts; those already started finish and are kept.",
        )


def stopped_why(
    progress: SampleProgress, driving: bool, message_batches: bool = False, now: datetime | None = None
) -> str | None:
    """Why nobody reviews the sample any more (worker errors, the API kept failing, a driver that died);
    None while someone does.

    Judged from the database, so a sample another process (the command line) reviews is not called
    stopped: no review of it queued or running, and none changed state for QUIET_S (longer than a
    driver waits between its automatic retries). A Message Batch has no runs until it is collected,
    so only its own `stopped:` status says it stopped.
    """
    if driving or progress.finished:
        return None
    if (progress.api_status or "").startswith(STOPPED):
        return "the Message Batches API kept failing (above)"
    if message_batches:
        return None
    now = now or datetime.now(UTC)
    quiet = progress.active == 0 and (now - (progress.last_activity or progress.created_at)).total_seconds() > QUIET_S
    if not quiet:
        return None
    if progress.interrupted:
        return f"{progress.interrupted} review(s) stopped on a worker error and no review of this sample is running"
    return "no review of this sample is running (the process reviewing it stopped)"


def stalled(progress: SampleProgress, driving: bool, message_batches: bool) -> bool:
    """A stopped sample: say why and offer to try again (True), or nothing (False)."""
    why = stopped_why(progress, driving, message_batches)
    if why is None:
        return False
    st.warning(
        escape_markdown(
            f"Reviewing stopped: {why}. Nothing is lost; Try again picks up where it stopped (an app "
            "restart does too). The runs linked under Sampled items say what failed."
        )
    )
    if identity.can(Permission.RESUME_RUN):
        st.button(
            "Try again", key="batch_retry", type="primary", on_click=batch_actions.retry, args=(progress.batch_id,)
        )
    return True


def closing(paused: bool, driving: bool) -> None:
    """Every review is in and the sample is not closed yet: who closes it (never this page: reading never writes)."""
    if paused and not driving:
        st.info("All reviews are in; the sample is closed and its failures grouped once the batch is resumed.")
    else:
        st.info("All reviews are in; the sample is being closed and its failures grouped…")


def reviewing_step(view: BatchView) -> None:
    """A sample under review: re-read from the database every couple of seconds until the driver closes it."""
    first = [view]  # the full run hands its view to the fragment; fragment reruns read a fresh one
    batch_id, message_batches = view.batch.id, view.batch.config.message_batches

    @st.fragment(run_every=POLL_S)
    def live() -> None:
        now = first.pop() if first else driver().view(batch_id)
        progress = now.latest
        if progress.finished_at is not None:
            st.rerun()  # closed (by its driver, or the desk's sweep for one a dead process left): the whole page
        batch_actions.show_flash(batch_id)
        paused = now.batch.paused
        reviews = now.reviews.get(progress.id, [])
        progress_panel(progress, paused, message_batches)
        if progress.finished:  # all in, not closed yet: keep reading (a rerun of the whole page would only loop)
            closing(paused, now.driving)
        elif not paused and stalled(progress, now.driving, message_batches):
            sampled_items(reviews)
            return
        if message_batches and progress.api_batch_id:
            st.caption("A Message Batch that was sent cannot be paused: the API finishes it and the desk collects it.")
        else:
            controls(batch_id, paused)
        sampled_items(reviews)

    live()


def result_of(review: SampledReview) -> str:
    """A sampled item's result in the page's words."""
    if review.status is None:
        return "waiting"
    label = RESULT.get(review.status, words.status(review.status))
    return f"{label} (reviewer error)" if review.reviewer_error else label


def sampled_items(reviews: list[SampledReview]) -> None:
    """Every sampled item with its result, its issues and a link to its run."""
    rows = [
        {
            "item": r.key,
            "stratum": batch_plan.stratum_label(tuple(r.strata.values())),
            "result": result_of(r),
            "issues": "; ".join(f"[{i.criterion}] {i.description}" for i in r.issues),
            "run": f"review?run={r.run_id}" if r.run_id else None,
        }
        for r in reviews
    ]
    with st.expander(f"Sampled items ({len(reviews)})"):
        st.dataframe(
            pd.DataFrame(rows, columns=["item", "stratum", "result", "issues", "run"]),
            hide_index=True,
            width="stretch",
            column_config={"run": st.column_config.LinkColumn("run", display_text=r"run=(\d+)")},
        )


def finished_step(view: BatchView) -> None:
    """A finished sample: its result, its patterns, then the stopping rule and the next sample."""
    sample = view.latest
    st.markdown(f"#### Sample {sample.number}: {sample.nice} NICE, {sample.naughty} NAUGHTY of {sample.size}")
    reviews = view.reviews.get(sample.id, [])
    sampled_items(reviews)
    records = batch_patterns.patterns_for(view)
    if records is None:  # the driver groups them as it closes a sample (the desk's start or sweep, one left behind)
        batch_patterns.grouping(view)
        batch_reach.needs_person(view)
        return
    batch_patterns.section(view, records, {r.key: r.run_id for r in reviews})
    batch_reach.needs_person(view)
    if not batch_patterns.pending(records):
        next_step(view)


def next_step(view: BatchView) -> None:
    """Every pattern decided: after a clean sample what it proves; either way, the next sample."""
    batch, sample = view.batch, view.latest
    st.subheader("Stopping rule")
    rule = view.stopping_rule if sample.clean else None
    if rule is not None:
        dismissed = [p for p in view.patterns if p.status == "dismissed"]
        batch_plan.stopping_rule(rule, dismissed, view.needs_fix)
        st.caption("The batch can ship as exported below. Another sample is optional: it tightens the bound.")
        label = f"Draw another sample (sample {sample.number + 1})"
    else:
        # Why no bound here: the sample's failures were fixed or dismissed since, so a bound from it would
        # describe the batch before the fixes. Only a fresh, clean sample says something about what is left.
        st.info(
            f"Sample {sample.number} found failures and every pattern is decided. Draw a fresh sample to check "
            "what is left: once a sample comes back clean, the page states the bound on the items still failing."
        )
        label = f"Resample: draw sample {sample.number + 1}"
    with st.expander("What the next sample catches"):
        next_plan(view, "batch_prevalence_next")
    start_button(batch, sample.number + 1, label)


def history(view: BatchView) -> None:
    """Every sample so far and every pattern decision."""
    batch = view.batch
    if len(batch.samples) < 2 and all(p.waiting for p in view.patterns):
        return
    changed: dict[int, int] = {}
    for change in view.applied:
        changed[change.pattern_id] = changed.get(change.pattern_id, 0) + 1
    number = {s.id: s.number for s in batch.samples}
    samples = [
        {
            "sample": s.number,
            "seed": s.seed,
            "items": s.size,
            "NICE": s.nice,
            "NAUGHTY": s.naughty,
            "reviewer errors": s.errors,
            "cost": components.usd(s.cost_usd),
        }
        for s in batch.samples
    ]
    decisions = [
        {
            "sample": number.get(p.sample_id),
            "pattern": p.title,
            "criterion": p.criterion,
            "status": words.pattern_status(p.status),
            "by": identity.display(p.decided_by) if p.decided_by else "",
            "reason": p.reason,
            "items changed": changed.get(p.id, 0),
        }
        for p in view.patterns
    ]
    with st.expander(f"History: {len(batch.samples)} sample(s), {len(decisions)} pattern(s)"):
        st.dataframe(pd.DataFrame(samples), hide_index=True, width="stretch")
        if decisions:
            st.dataframe(pd.DataFrame(decisions), hide_index=True, width="stretch")


def cost_section(view: BatchView) -> None:
    """Estimated against actual against full verification."""
    st.subheader("Cost")
    specs, outputs = [len(it.spec) for it in view.items], [len(it.output) for it in view.items]
    priced, per_item = cost_estimate.sample_estimate(view.estimate, view.batch.config, specs, outputs)
    batch_plan.cost(priced, view.cost_usd)
    cost_estimate.show_sample(priced, per_item)


def export_name(name: str, fmt: str) -> str:
    """The download's file name: the uploaded file's stem, '-verified', the format."""
    return f"{PurePath(name).stem or 'batch'}-verified.{fmt}"


@st.cache_data(max_entries=8, show_spinner="Writing the export…")
def _export(url: str, batch_id: int, fmt: str, version: tuple) -> bytes:
    """The export, written once per state of the batch (`version` changes with every review and fix)."""
    return driver().export(batch_id, fmt)


def export_section(view: BatchView) -> None:
    """Download the verified batch as CSV or JSONL."""
    st.subheader("Export")
    st.caption(
        "Every item with its original fields, the output column holding the current text, and "
        "`santa_status` (verified, fixed, fixed by hand, needs fix, failed or not sampled), `santa_pattern` (the patterns the item "
        "showed), `santa_fix` (each edit, or why none was made) and `santa_original_output` (for changed items). "
        "Items no fix touched keep their text byte for byte."
    )
    batch = view.batch
    version = (
        len(view.changes),
        tuple((s.id, s.done) for s in batch.samples),
        tuple((p.id, p.status) for p in view.patterns),
    )
    for column, fmt in zip(st.columns(2), ("csv", "jsonl"), strict=True):
        column.download_button(
            f"Download {fmt.upper()}",
            _export(app_desk.desk().url, batch.id, fmt, version),
            file_name=export_name(batch.name, fmt),
            mime=MIME[fmt],
            key=f"batch_export_{fmt}",
            on_click="ignore",
            icon=":material/download:",
        )


def _load(batch_id: int) -> BatchView | None:
    try:
        return driver().view(batch_id)
    except BatchProblem:
        st.error(f"Batch #{batch_id} does not exist.")
        return None


def render_batch(batch_id: int) -> None:
    """The whole batch view, from one read of the batch."""
    view = _load(batch_id)
    if view is None:
        return
    batch_actions.progress_anchor(batch_id)  # after Create: the batch from its top, its progress just below
    header(view.batch)
    batch_actions.show_flash(batch_id)
    latest = view.latest
    if latest is None:
        first_sample_step(view)
    elif latest.finished_at is None:
        reviewing_step(view)
    else:
        finished_step(view)
    history(view)
    cost_section(view)
    export_section(view)
