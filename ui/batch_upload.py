"""The new-batch form of the Batch page: upload, check, choose columns and strata, reviewers, sampling.

Nothing is stored until the person clicks the create button: a bad file shows every problem the
reader found and leaves the database untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from santa_core.batch import sampling
from santa_core.batch.fields import LENGTH_STRATUM
from santa_core.batch.file import BatchFile, BatchFileError, BatchLayout, read_batch, sniff
from santa_core.batch.report import estimate
from santa_core.batch.store import BatchConfig
from santa_core.models import Rubric
from santa_core.panels import default_panel
from santa_core.providers import message_batches_problem, usable_model_ids
from santa_core.reviewers.base import PERSON
from santa_core.roles import Permission
from ui import app_desk, batch_actions, batch_plan, cost_estimate, identity
from ui import providers as providers_ui
from ui.safe import escape_markdown

FILE_TYPES = ["csv", "tsv", "jsonl", "ndjson", "json"]
UPLOAD_KEY = "batch_file"
NO_KEY = (
    "A batch is reviewed by models, and no model provider has a key (no Anthropic API key, no OpenAI key). Set "
    "`ANTHROPIC_API_KEY` or `OPENAI_API_KEY` in the environment or in `.streamlit/secrets.toml` (an "
    "OpenAI-compatible endpoint: see Settings) and restart the app; you can still check a file here."
)
FORMAT_HELP = (
    "CSV (a header row; comma, semicolon or tab) or JSONL (one JSON object per line), UTF-8. One row per "
    "item: an id, the output to review, optionally a spec per item and any columns to stratify by "
    "(template, locale…)."
)


@dataclass(frozen=True)
class Columns:
    """Which columns hold the id, the output and the spec, the one spec for all, and the strata."""

    id: str | None
    output: str | None
    spec: str | None
    """None: one spec for every item (`spec_text`)."""
    spec_text: str
    strata: tuple[str, ...]


@dataclass(frozen=True)
class Options:
    """How the batch is reviewed and sampled."""

    rubric: Rubric
    reviewer_b: str
    reviewer_c: str
    fixer: str
    sample_rate: float
    min_sample: int
    seed: int
    concurrency: int
    message_batches: bool
    auto_approve: bool


@st.cache_data(max_entries=4, show_spinner=False)
def _layout(data: bytes, name: str) -> BatchLayout:
    """The file's format and columns (cached: the page reruns on every choice)."""
    return sniff(data, name)


@st.cache_data(max_entries=4, show_spinner="Reading the file…")
def _file(
    data: bytes,
    name: str,
    id_column: str | None,
    output_column: str | None,
    spec_column: str | None,
    strata: tuple[str, ...],
) -> BatchFile:
    """Every item of the file under the chosen columns (cached per choice; spec None: one spec for all)."""
    return read_batch(
        data,
        name,
        id_column=id_column,
        output_column=output_column,
        spec_column="" if spec_column is None else spec_column,
        strata=strata,
    )


def file_errors(exc: BatchFileError) -> None:
    """Every problem the reader found, one per line; nothing was stored."""
    lines = "\n".join(f"- {escape_markdown(e)}" for e in exc.errors)
    count = f"{exc.count} problems" if exc.count != 1 else "1 problem"
    st.error(
        f"**This file cannot be used ({count}); nothing was stored.** Fix the file, or the column choices "
        f"above, and upload it again:\n{lines}"
    )


def _drop_stale(key: str, options: Sequence[object]) -> None:
    """Forget a choice that the newly uploaded file no longer offers (the picker falls back to its default)."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]


def _picker(where, label: str, options: list, default: object, key: str, help: str, **kw) -> object:  # noqa: ANN001
    _drop_stale(key, options)
    index = options.index(default) if default in options else None
    return where.selectbox(label, options, index=index, key=key, help=help, placeholder="choose a column", **kw)


def column_pickers(layout: BatchLayout) -> Columns:
    """Id, output and spec columns (guessed from their names), the one spec for all, and the strata."""
    cols = layout.columns
    left, middle, right = st.columns(3)
    id_col = _picker(left, "Id column", cols, layout.id_column, "batch_id_column", "Unique per item.")
    output_col = _picker(
        middle,
        "Output column",
        cols,
        layout.output_column,
        "batch_output_column",
        "The text the reviewers judge and the fix agent edits.",
    )
    spec_col = _picker(
        right,
        "Spec column",
        [None, *cols],
        layout.spec_column,
        "batch_spec_column",
        "The task each output was generated from; or one spec for every item.",
        format_func=lambda c: "— one spec for all items —" if c is None else c,
    )
    spec_text = ""
    if spec_col is None:
        spec_text = st.text_area(
            "Spec for every item", key="batch_spec", height=100, placeholder="What were the outputs supposed to be?"
        )
    chosen = (id_col, output_col, spec_col)
    options = [c for c in cols if c not in chosen] + ([LENGTH_STRATUM] if LENGTH_STRATUM not in cols else [])
    if "batch_strata" in st.session_state:
        st.session_state["batch_strata"] = [s for s in st.session_state["batch_strata"] if s in options]
    strata = st.multiselect(
        "Stratify by",
        options,
        key="batch_strata",
        placeholder="no strata: one group",
        help="Every combination of these columns' values is a stratum, and every stratum is "
        "sampled. `length` splits the outputs into short / medium / long by characters.",
    )
    return Columns(id_col, output_col, spec_col, spec_text, tuple(strata))


def detected(layout: BatchLayout) -> None:
    """What the reader found: format, item count, columns and the guesses."""
    fmt = "JSONL" if layout.format == "jsonl" else f"CSV (delimiter {layout.delimiter!r})"
    guesses = ", ".join(
        f"{what}: {col or 'none'}"
        for what, col in (("id", layout.id_column), ("output", layout.output_column), ("spec", layout.spec_column))
    )
    st.caption(
        escape_markdown(
            f"Detected {fmt}, {layout.rows:,} items, columns: {', '.join(layout.columns)}. "
            f"Guessed columns by name — {guesses}."
        )
    )


def file_summary(file: BatchFile) -> None:
    """The first items, the warnings and the strata's sizes."""
    st.dataframe(pd.DataFrame(file.preview()), hide_index=True, width="stretch")
    for warning in file.warnings:
        st.warning(escape_markdown(warning))
    if file.length_rule:
        st.caption(escape_markdown(file.length_rule))
    sizes = file.strata_sizes()
    if file.strata:
        frame = pd.DataFrame([{"stratum": batch_plan.stratum_label(k), "items": n} for k, n in sizes.items()])
        with st.expander(escape_markdown(f"{len(sizes)} strata by {', '.join(file.strata)}")):
            st.dataframe(frame, hide_index=True, width="stretch")


def _rubric_choice(default: str) -> Rubric:
    """A stored rubric and version (the latest by default)."""
    store = app_desk.desk().rubrics
    names = store.names()
    left, right = st.columns([3, 1])
    name = left.selectbox("Rubric", names, index=names.index(default) if default in names else 0, key="batch_rubric")
    versions = [v.version for v in store.versions(name)]
    _drop_stale("batch_rubric_version", versions)
    version = right.selectbox(
        "Version",
        versions,
        key="batch_rubric_version",
        format_func=lambda v: f"v{v} (latest)" if v == versions[0] else f"v{v}",
    )
    return store.resolved(name, version)


def _model(where, label: str, default: str, key: str, help: str) -> str:  # noqa: ANN001 - a column or st
    """Every usable provider's models; the default stays offered (and marked) when its provider has no key."""
    options = providers_ui.model_options(keep=[default])
    return providers_ui.model_picker(where, label, options, default, key, help=help)


def _models() -> tuple[Rubric, str, str, str]:
    """Rubric, reviewers B and C and the fix agent: models only (a person reviews single runs)."""
    d = app_desk.defaults()
    rubric = _rubric_choice(d.rubric)
    # A person may be the saved default for single runs; a batch falls back to the configured providers' panel then.
    models = [
        saved if saved != PERSON else fallback
        for saved, fallback in zip((d.reviewer_b, d.reviewer_c, d.fixer), default_panel(), strict=True)
    ]
    b, c, f = st.columns(3)
    reviewer_b = _model(b, "Reviewer B", models[0], "batch_reviewer_b", "Reviews every sampled item.")
    reviewer_c = _model(c, "Reviewer C", models[1], "batch_reviewer_c", "Reviews every sampled item, independently.")
    fixer = _model(
        f, "Fix agent", models[2], "batch_fixer", "Proposes one fix per pattern, on its representative item."
    )
    providers_ui.panel_notes(reviewer_b, reviewer_c)
    return rubric, reviewer_b, reviewer_c, fixer


def options_form() -> Options:
    """Rubric, models and the sampling settings."""
    rubric, reviewer_b, reviewer_c, fixer = _models()
    r, m, s, c = st.columns(4)
    rate = r.number_input(
        "Sample rate (%)",
        1.0,
        100.0,
        sampling.DEFAULT_RATE * 100,
        step=1.0,
        key="batch_rate",
        help="Share of the batch each sample reviews.",
    )
    minimum = m.number_input("At least (items)", 1, 10_000, sampling.MIN_SAMPLE, key="batch_min")
    seed = s.number_input(
        "Seed", 0, 2**31 - 2, 1, key="batch_seed", help="The same file, rate and seed always draw the same sample."
    )
    workers = app_desk.desk().runner.workers
    concurrency = c.number_input(
        "Reviews at a time",
        1,
        64,
        min(4, workers),
        key="batch_concurrency",
        help=f"At most this many of the sample's items are under review at once. The desk "
        f"works on {workers} runs at a time in all (single runs included; "
        "SANTA_WORKERS sets it), so a higher number only queues.",
    )
    api = st.toggle(
        "Use the Message Batches API (about half price; results within 24 h, often minutes)",
        key="batch_message_batches",
        help="The whole sample goes to the API in one request; the page "
        "tracks it until it ends, across restarts. Anthropic's API: Claude reviewers only.",
    )
    if api and (problem := message_batches_problem(reviewer_b, reviewer_c)):
        st.error(escape_markdown(f"Cannot start with Message Batches: {problem}."))
    may_decide = identity.can(Permission.DECIDE_FIX)
    auto = st.checkbox(
        "Auto-approve each pattern's fix (no person approves it)",
        value=False,
        key="batch_auto",
        disabled=not may_decide,
        help=None if may_decide else identity.refusal(Permission.DECIDE_FIX),
    )
    return Options(
        rubric,
        reviewer_b,
        reviewer_c,
        fixer,
        float(rate) / 100,
        int(minimum),
        int(seed),
        int(concurrency),
        bool(api),
        bool(auto and may_decide),
    )


def start_problems(options: Options) -> list[str]:
    """Why the batch cannot start with these models: a model whose provider cannot be called, or Message
    Batches with a reviewer that is not on Anthropic's API (the command line refuses the same)."""
    problems = [
        p for m in (options.reviewer_b, options.reviewer_c, options.fixer) if (p := providers_ui.model_problem(m))
    ]
    if options.message_batches and (p := message_batches_problem(options.reviewer_b, options.reviewer_c)):
        problems.append(p)
    return problems


def batch_config(file: BatchFile, name: str, columns: Columns, options: Options) -> BatchConfig:
    """The batch's configuration from the file and the form."""
    return BatchConfig(
        name=name,
        file_format=file.format,
        columns=file.columns,
        id_column=file.id_column,
        output_column=file.output_column,
        spec_column=file.spec_column,
        spec=columns.spec_text,
        strata=file.strata,
        rubric=options.rubric,
        reviewer_b=options.reviewer_b,
        reviewer_c=options.reviewer_c,
        fixer=options.fixer,
        sample_rate=options.sample_rate,
        min_sample=options.min_sample,
        seed=options.seed,
        concurrency=options.concurrency,
        message_batches=options.message_batches,
        auto_approve=options.auto_approve,
        source="app",
    )


def plan(file: BatchFile, config: BatchConfig) -> None:
    """Before anything is stored: the first sample's size, what it catches and what it costs."""
    st.markdown("#### Before sampling")
    n = sampling.sample_size(len(file.items), config.sample_rate, config.min_sample)
    batch_plan.detection(len(file.items), n, file.strata_sizes(), key="batch_prevalence")
    specs = [len(it.spec if it.spec is not None else config.spec) for it in file.items]
    outputs = [len(it.output) for it in file.items]
    base = estimate(
        config,
        [s + o for s, o in zip(specs, outputs, strict=True)],
        [it.stratum for it in file.items] if file.strata else (),
    )
    priced, per_item = cost_estimate.sample_estimate(base, config, specs, outputs)
    batch_plan.cost(priced)
    cost_estimate.show_sample(priced, per_item)


def _read(uploaded) -> tuple[BatchFile, Columns] | None:  # noqa: ANN001 - streamlit's UploadedFile
    """The uploaded file read under the chosen columns, or None after showing why it cannot be used."""
    data = uploaded.getvalue()
    try:
        layout = _layout(data, uploaded.name)
    except BatchFileError as exc:
        file_errors(exc)
        return None
    detected(layout)
    columns = column_pickers(layout)
    try:
        return _file(data, uploaded.name, columns.id, columns.output, columns.spec, columns.strata), columns
    except BatchFileError as exc:
        file_errors(exc)
        return None


def _create(file: BatchFile, config: BatchConfig) -> int | None:
    """Store the batch and draw its first sample; the batch's id (None when the storage refused)."""
    batch_driver = batch_actions.driver()
    try:
        batch_id = batch_driver.create(file, config, identity.actor())
    except batch_actions.REFUSED as exc:
        st.error(escape_markdown(f"Nothing was stored: {exc}"))
        return None
    batch_actions.start_sample(batch_id)
    batch_actions.show_progress_next(batch_id)
    return batch_id


def new_batch_form() -> int | None:
    """Upload, check and configure a batch (for people who may start runs); the new batch's id once created."""
    if not identity.can(Permission.START_RUN):
        st.info(escape_markdown(identity.refusal(Permission.START_RUN)))
        return None
    uploaded = st.file_uploader("Batch file (CSV or JSONL)", type=FILE_TYPES, key=UPLOAD_KEY, help=FORMAT_HELP)
    if uploaded is None:
        st.caption(FORMAT_HELP)
        return None
    read = _read(uploaded)
    if read is None:
        return None
    file, columns = read
    file_summary(file)
    options = options_form()
    config = batch_config(file, uploaded.name, columns, options)
    plan(file, config)
    usable = usable_model_ids()
    if not usable:
        st.info(NO_KEY)
    blocked = start_problems(options)
    # A batch cannot start while its screen cannot run: each item would stop at the screen (the reason is shown here).
    if screen_problem := providers_ui.screen_notice(app_desk.desk().runner, options.reviewer_b, options.reviewer_c):
        blocked.append(screen_problem)
    first = batch_plan.drawn(
        sampling.sample_size(len(file.items), config.sample_rate, config.min_sample), file.strata_sizes()
    )
    label = f"Create the batch and review sample 1 ({first:,} of {len(file.items):,} items)"
    if not st.button(label, type="primary", key="batch_create", disabled=bool(blocked) or not usable):
        return None
    if blocked:  # shown above the button already; a click that arrives anyway starts nothing
        st.error(escape_markdown(f"Nothing was stored: {blocked[0]}"))
        return None
    if file.spec_column is None and not config.spec.strip():
        st.error("Write the spec for every item, or choose the column that holds each item's spec. Nothing was stored.")
        return None
    return _create(file, config)
