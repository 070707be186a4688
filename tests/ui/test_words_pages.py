"""No internal code in what a page shows: every page rendered (AppTest) over runs in many statuses,
an escalation of every reason, a batch and saved settings, and its visible text (markdown, captions,
alerts, headings, table cells and headers, widget labels and options, metrics, tabs, expanders, links)
checked for every code with an underscore the enums and models define. Tooltips (`help=`) and code
blocks (exact texts, an audit event's JSON) may hold codes: a person asked for them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import get_args

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from santa_core import words
from santa_core.batch.patterns import PatternKind
from santa_core.config import Defaults, save_defaults
from santa_core.models import EscalationReason, RunState, RunStatus, ScreenVerdict
from santa_core.roles import Permission, Role
from santa_core.run.store import DecisionAction, Resolution
from storage.runs import RunStore
from tests.support.batch_page import seeded_batch
from tests.support.messages_api import MessagesStub, santa_scenario
from tests.ui.test_escalation_queue import DEFECTIVE, SPEC, drive, escalate

CODES = sorted(
    {
        c
        for group in (
            RunStatus,
            EscalationReason,
            Role,
            Permission,
            get_args(DecisionAction),
            get_args(Resolution),
            get_args(ScreenVerdict),
            get_args(PatternKind),
            words.setting_codes(),
            words.AUDIT_ACTION,
            words.PATTERN_STATUS,
        )
        for c in group
        if "_" in c
    }
)
"""Codes that are not words (`resolved_shipped`, `round_cap`, `max_rounds`, `escalation.due_set` …)."""
UNSHOWN = {"code", "json", "html", "exception", "help_info", "divider", "space", "image", "progress", "toast"}
"""Elements whose text is not page prose: code blocks show exact texts and JSON on purpose."""
PAGES = (
    "pages/home.py",
    "pages/review.py",
    "pages/batch.py",
    "pages/runs.py",
    "pages/inbox.py",
    "pages/escalations.py",
    "pages/audit.py",
    "pages/metrics.py",
    "pages/rubrics.py",
    "pages/people.py",
    "pages/settings.py",
)


def visible(node: object) -> Iterator[str]:
    """Every text a person reads in an AppTest element tree."""
    kind = getattr(node, "type", "")
    if isinstance(node, Block):
        if isinstance(getattr(node, "label", None), str):
            yield node.label  # tabs, expanders
        for child in node.children.values():
            yield from visible(child)
        return
    if kind in UNSHOWN:
        return
    if kind in ("dataframe", "table"):
        frame: pd.DataFrame = node.value  # type: ignore[attr-defined]
        yield from map(str, frame.columns)
        yield from (str(cell) for cell in frame.to_numpy().ravel())
        return
    for attr in ("label", "placeholder"):
        if isinstance(text := getattr(node, attr, None), str):
            yield text
    if isinstance(options := getattr(node, "options", None), list):
        yield from map(str, options)
    if kind == "metric":
        yield str(node.value)  # type: ignore[attr-defined]
    elif isinstance(value := getattr(getattr(node, "proto", None), "body", None), str):
        yield value  # markdown, captions, alerts, headings
    elif kind in ("text", "page_link", "download_button", "link_button"):
        yield str(getattr(node, "value", "") or getattr(node.proto, "label", ""))  # type: ignore[attr-defined]


def codes_shown(at: AppTest) -> dict[str, str]:
    """Each code found in the page's visible text, with the text it was found in."""
    found: dict[str, str] = {}
    for text in visible(at._tree):
        for code in CODES:
            if code not in found and re.search(rf"(?<![\w.]){re.escape(code)}(?![\w])", text):
                found[code] = text[:200]
    return found


def open_page(page: str, **params: str) -> AppTest:
    at = AppTest.from_file("../../app.py", default_timeout=60)
    at.run()
    at.switch_page(page)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, (page, at.exception)
    return at


def escalate_with(repo: RunStore, reason: EscalationReason) -> int:
    """A run escalated with `reason`, its note the engine's default (the reason's code)."""
    run_id = repo.create_run(
        spec=SPEC,
        output=f"An output that escalated: {words.reason(reason)}.",
        rubric=repo.rubrics.resolved("general"),
        reviewer_b="claude-sonnet-5-5",
        reviewer_c="claude-haiku-5-5",
        fixer="claude-opus-5-5",
        created_by="editor@example.com",
    )
    assert repo.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
    state = RunState(status=RunStatus.ESCALATED, escalation_reason=reason, note=reason.value)
    assert repo.transition(run_id, {RunStatus.RUNNING}, state, "gate")
    return run_id


@pytest.fixture
def desk_with_everything(desk_env: RunStore, messages_stub: MessagesStub) -> dict[str, int]:
    """Runs in most statuses, every escalation reason, resolutions, a batch and saved settings."""
    repo = desk_env
    runs: dict[str, int] = {}
    batch = seeded_batch(messages_stub, items=12)
    messages_stub.handler = santa_scenario

    def start(output: str, **kw: object) -> int:
        return repo.create_run(
            spec=SPEC,
            output=output,
            rubric=repo.rubrics.resolved("general"),
            reviewer_b=str(kw.pop("reviewer_b", "claude-sonnet-5-5")),
            reviewer_c=str(kw.pop("reviewer_c", "claude-haiku-5-5")),
            fixer="claude-opus-5-5",
            created_by="editor@example.com",
            **kw,
        )

    runs["shipped"] = start("Acme's rocket launched in 2018.")
    drive(repo, runs["shipped"])
    runs["awaiting_approval"] = start(DEFECTIVE)
    drive(repo, runs["awaiting_approval"])
    runs["awaiting_human_review"] = start("Acme's rocket is ready.", reviewer_c="person")
    drive(repo, runs["awaiting_human_review"])
    runs["queued"] = start("Not picked up yet.")
    runs["resolved_shipped"] = escalate(repo)
    repo.resolve_escalation(runs["resolved_shipped"], "ship_as_is", "officer@example.com", "Legal checked it.")
    runs["resolved_rejected"] = escalate(repo)
    repo.resolve_escalation(runs["resolved_rejected"], "reject", "officer@example.com", "Not fit to ship.")
    for reason in EscalationReason:
        runs[reason.value] = escalate_with(repo, reason)
    repo.assign_escalation(runs["round_cap"], "officer@example.com", "admin@example.com")
    save_defaults(repo, Defaults(max_rounds=4, budget_usd=2.0), "admin@example.com")
    assert {v.status for v in map(repo.get_run_view, runs.values())} >= {
        RunStatus.SHIPPED,
        RunStatus.AWAITING_APPROVAL,
        RunStatus.AWAITING_HUMAN_REVIEW,
        RunStatus.QUEUED,
        RunStatus.RESOLVED_SHIPPED,
        RunStatus.RESOLVED_REJECTED,
        RunStatus.ESCALATED,
    }
    return {**runs, "batch": batch}


def test_no_page_shows_an_internal_code(desk_with_everything: dict[str, int]) -> None:
    shown: dict[str, dict[str, str]] = {}
    for page in PAGES:
        shown[page] = codes_shown(open_page(page))
    for name in ("shipped", "awaiting_approval", "resolved_shipped", "round_cap", "disagreement"):
        shown[f"run {name}"] = codes_shown(open_page("pages/review.py", run=str(desk_with_everything[name])))
    shown["batch"] = codes_shown(open_page("pages/batch.py", batch=str(desk_with_everything["batch"])))
    shown["runs with batch samples"] = codes_shown(open_page("pages/runs.py", samples="shown"))
    assert {page: codes for page, codes in shown.items() if codes} == {}


def test_every_escalation_reason_reads_as_words_on_the_escalations_page(desk_with_everything: dict[str, int]) -> None:
    at = open_page("pages/escalations.py")
    queue = at.dataframe[0]
    reasons = queue.value["reason"].tolist()
    assert sorted(reasons) == sorted(words.reason(r) for r in EscalationReason)
    for row in range(len(reasons)):  # open each escalation by clicking its row
        at.session_state[queue.key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
        at.run()
        assert not at.exception, at.exception
        assert codes_shown(at) == {}, reasons[row]
        assert any(m.value.startswith("### Run #") and reasons[row] in m.value for m in at.markdown)
