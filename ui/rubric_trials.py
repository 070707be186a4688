"""The Rubrics page's "Try it" tab (a sample against the draft) and "Re-check history" tab."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import streamlit as st

from desk import Desk
from santa_core import words
from santa_core.models import MAX_TEXT_CHARS, CheckOutcome, Review, Rubric
from santa_core.providers import usable_model_ids
from santa_core.reviewers.base import PERSON
from santa_core.roles import PermissionDenied
from santa_core.rubrics import actions as rubric_actions
from santa_core.rubrics import trials
from santa_core.text import text_problem
from ui import components, kept, review_cards
from ui import providers as providers_ui
from ui.safe import escape_markdown

MAX_RECHECK = 20
"""Runs re-checked with a reviewer per click: each costs one model call."""
FINISHED = ("shipped", "resolved_shipped", "resolved_rejected", "escalated")


def try_tab(desk: Desk, rubric: Rubric | None, problem: str | None, actor: str, refusal: str | None = None) -> None:
    """Paste a sample: checks run at once; one click asks one reviewer with the draft rubric.

    `refusal` (the person may not try rubrics with a reviewer): the checks still run, since they
    cost nothing and store nothing, but no reviewer is asked.
    """
    st.caption("Checks run on every change. Nothing here creates a run; reviewer trials are kept with their cost.")
    if refusal:
        st.caption(escape_markdown(f"{refusal} The deterministic checks still run on your sample; nothing is kept."))
    for widget in ("try_output", "try_spec"):
        kept.keep(widget)
    output = st.text_area(
        "Sample output",
        key="try_output",
        height=180,
        max_chars=MAX_TEXT_CHARS,
        placeholder="Paste an output this rubric should judge",
    )
    spec = st.text_area("Spec (optional, for the reviewer)", key="try_spec", height=90, max_chars=MAX_TEXT_CHARS)
    if rubric is None:
        st.warning(escape_markdown(problem or "Fix the draft's errors to try it."))
        return
    if not output.strip():
        return
    # the one input rule of every entry point (a run, the command line, a batch file)
    if problem := text_problem(output, "The sample output") or (spec.strip() and text_problem(spec, "The spec")):
        st.error(escape_markdown(problem))
        return
    checks, blocking = trials.run_checks(rubric, output, spec)
    failed = [c for c in checks if c.result == "FAIL"]
    if blocking:
        st.error(
            f"{len(blocking)} blocking finding{'s' if len(blocking) != 1 else ''}: a run would be NAUGHTY "
            "whatever the reviewers say."
        )
    elif failed:
        st.warning(f"{len(failed)} suggestion check{'s' if len(failed) != 1 else ''} fail; they do not block.")
    elif checks:
        st.success(f"All {len(checks)} deterministic checks pass.")
    components.checks_table(checks, {c.id: c.name for c in rubric.criteria})
    injections = [i for i in blocking if i.criterion == "injection"]
    for issue in injections:
        st.error(escape_markdown(f"Injection detector: {issue.description} — “{issue.evidence}”"))
    if refusal:
        return
    if trials.injected_in(blocking):  # a run would ask no reviewer either: the text is built to take one over
        st.info("No reviewer is asked about a text that addresses its reviewers: a run would not ask one either.")
        return
    _ask_reviewer(desk, rubric, output, spec, actor)


NO_MODEL = "Asking a reviewer needs a model provider's key (see Settings). The checks above need none."


def model_choice(desk: Desk, key: str) -> str:
    """A model to review with, of every usable provider: Settings' reviewer B first unless that slot is a person
    (kept, and marked, even when its provider has no key)."""
    default = desk.defaults().reviewer_b
    options = providers_ui.model_options(keep=[default] if default != PERSON else [])
    return providers_ui.model_picker(
        st, "Reviewer model", options, default, key, help="The model that reviews, as in a run's slot."
    )


def _ask_reviewer(desk: Desk, rubric: Rubric, output: str, spec: str, actor: str) -> None:
    if not usable_model_ids():
        st.info(NO_MODEL)
        return
    model = model_choice(desk, "try_model")
    if providers_ui.model_problem(model):  # said under the picker
        return
    if not st.button(
        "Ask one reviewer",
        key="try_review",
        help="One reviewer judges the sample with this draft rubric, as in a real run (costs one call).",
    ):
        return
    try:
        with st.spinner(escape_markdown(f"{model} is reviewing the sample…")):
            trial = rubric_actions.try_rubric(
                desk.rubrics, rubric, output, actor, spec, desk.runner.reviewer_for(model)
            )
    except PermissionDenied as exc:  # roles changed since the page was drawn; the sample stays in the box
        st.error(escape_markdown(f"No reviewer was asked: {exc}"))
        return
    verdict = trial.verdict
    if trial.reviewer_failed:
        st.warning(
            escape_markdown(
                f"The reviewer gave no valid review ({words.review_status(trial.outcome.status)}): "  # type: ignore[union-attr]
                f"{trial.outcome.error or 'no verdict'}. A run would count this as FAIL; try again."
            )
        )  # type: ignore[union-attr]
    else:
        (st.success if verdict == "PASS" else st.error)(f"With this draft the sample is {verdict or 'FAIL'}.")
    review_cards.review_card(trial.outcome, "B", model, rubric)
    for note in disagreements(rubric, trial.checks, trial.outcome.review if trial.outcome else None):
        st.info(escape_markdown(note))


def disagreements(rubric: Rubric, checks: list[CheckOutcome], review: Review | None) -> list[str]:
    """A note for each criterion whose deterministic check and reviewer give different results, saying why both
    are shown and which one a run would follow (they sit side by side and would otherwise read as a contradiction)."""
    said = {c.criterion: c.result for c in review.checks} if review else {}
    by_id = {c.id: c for c in rubric.criteria}
    notes = []
    for check in checks:
        if said.get(check.criterion, check.result) == check.result or check.criterion not in by_id:
            continue
        criterion = by_id[check.criterion]
        if check.result == "FAIL":
            counts = (
                "a run would be NAUGHTY whatever the reviewers say"
                if criterion.severity == "critical"
                else "it is reported and does not block, as this criterion is a suggestion"
            )
            notes.append(
                f"{criterion.name}: the check fails and the reviewer passes it. The check reads the exact "
                f"text ({check.detail}); the reviewer judges the wording as a whole. The failed check "
                f"counts: {counts}."
            )
        else:
            notes.append(
                f"{criterion.name}: the check passes and the reviewer fails it. The check tests only what it "
                "is configured for; the reviewer judges the whole pass condition, and a run counts the "
                "reviewer's FAIL."
            )
    return notes


def past_trials(desk: Desk, name: str) -> None:
    """Earlier re-checks and reviewer trials of this rubric, newest first (they are kept with their cost)."""
    rows = [
        {
            "when": t.created_at,
            "kind": t.kind,
            "run": t.run_id,
            "version": t.rubric_version,
            "verdict": t.verdict or "checks pass",
            "reviewer": t.reviewer or "—",
            "failed checks": ", ".join(c.criterion for c in t.checks if c.result == "FAIL"),
            "cost": words.usd(t.cost_usd),
            "by": t.actor,
        }
        for t in desk.rubrics.trials(rubric=name, limit=100)
    ]
    with st.expander(f"Earlier trials and re-checks ({len(rows)})"):
        if rows:
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        else:
            st.caption("None yet.")


def recheck_tab(desk: Desk, name: str, actor: str, refusal: str | None = None) -> None:
    """Re-judge past runs' final outputs under a chosen version: what would it catch or pass?

    `refusal` (the person may not try rubrics): checks only, and nothing is kept.
    """
    past_trials(desk, name)
    runs = [r for r in desk.runs.list_runs(limit=300) if r.status in FINISHED]
    if not runs:
        st.info("No finished runs yet. Re-checks run past runs' final outputs under a rubric version.")
        return
    versions = [v.version for v in desk.rubrics.versions(name)]
    version = st.selectbox("Re-check under", versions, key="rck_version", format_func=lambda n: f"{name} v{n}")
    labels = {
        r.id: f"run {r.id} · {components.status_label(r.status)} · {r.rubric_name} v{r.rubric_version}" for r in runs
    }
    default = [r.id for r in runs if r.rubric_name == name][:10]
    picked = st.multiselect("Past runs", list(labels), default=default, key="rck_runs", format_func=labels.get)
    if refusal:
        st.caption(
            escape_markdown(
                f"{refusal} You can still re-check with the deterministic checks; the results are shown, not kept."
            )
        )
        with_reviewer = False
    else:
        with_reviewer = st.checkbox(
            f"Also ask one reviewer per run (at most {MAX_RECHECK} runs, one call each)",
            key="rck_with_reviewer",
            disabled=not usable_model_ids(),
            help=None if usable_model_ids() else NO_MODEL,
        )
    model = model_choice(desk, "rck_model") if with_reviewer else None
    uncallable = providers_ui.model_problem(model)  # said under the picker
    if not st.button("Re-check", key="rck_go", type="primary", disabled=not picked or bool(uncallable)) or uncallable:
        return
    rubric = desk.rubrics.resolved(name, version)
    status = {r.id: r.status.value for r in runs}
    try:
        rows = _recheck(desk, rubric, version, picked, status, model, None if refusal else actor)
    except PermissionDenied as exc:  # roles changed since the page was drawn
        st.error(escape_markdown(f"Nothing was re-checked or kept, and no reviewer was asked: {exc}"))
        return
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    caught = sum(r["effect"] == "would now be caught" for r in rows)
    passed = sum(r["effect"] == "would now pass" for r in rows)
    st.markdown(
        f"Under {escape_markdown(name)} v{version}: **{caught}** shipped run(s) would now be caught, "
        f"**{passed}** rejected or escalated run(s) would now pass."
    )


def _recheck(
    desk: Desk,
    rubric: Rubric,
    version: int,
    run_ids: list[int],
    status: dict[int, str],
    model: str | None,
    actor: str | None,
) -> list[dict]:
    """Checks for every picked run; reviewers (bounded, concurrently) when asked. Each trial is stored
    (unless `actor` is None: a check-only re-check by someone who may not try rubrics)."""
    outputs = desk.rubrics.final_outputs(run_ids)
    ids = [i for i in run_ids if i in outputs][: MAX_RECHECK if model else None]
    progress = st.progress(0.0, text="Re-checking…")

    def one(run_id: int) -> trials.Trial:
        spec, text = outputs[run_id]
        if actor is None:  # checks only: free, and nothing is kept
            return trials.try_rubric(rubric, text, spec)
        reviewer = desk.runner.reviewer_for(model) if model else None
        return rubric_actions.try_rubric(
            desk.rubrics, rubric, text, actor, spec, reviewer, run_id=run_id, stored_version=version
        )

    rows = []
    with ThreadPoolExecutor(max_workers=4) as pool:
        for n, (run_id, trial) in enumerate(zip(ids, pool.map(one, ids), strict=True), start=1):
            progress.progress(n / len(ids), text=f"Re-checked {n} of {len(ids)}")
            failed = [c.criterion for c in trial.checks if c.result == "FAIL"]
            rows.append(
                {
                    "run": run_id,
                    "was": words.status(status[run_id]),
                    "checks now": ", ".join(failed) or "all pass",
                    "reviewer now": (
                        "error"
                        if trial.outcome is not None and trial.outcome.review is None
                        else trial.reviewer_verdict or "—"
                    ),
                    "verdict now": trial.verdict or "checks pass",
                    "effect": trials.effect(status[run_id], trial.verdict, trial.reviewer_failed),
                }
            )
    progress.empty()
    return rows
