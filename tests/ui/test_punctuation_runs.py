"""Long runs of punctuation on the Review page: they ship when nothing else is wrong, and while one run's checks
work on a 200,000-character adversarial text, another person's page still reruns."""

from __future__ import annotations

import threading

import pytest
from streamlit.testing.v1 import AppTest

from santa_core.checks import bounded
from santa_core.checks.injection import UNFINISHED
from santa_core.models import EscalationReason, RunStatus
from santa_core.run import runner as runner_module
from storage.runs import RunStore
from tests.support.messages_api import MessagesStub
from tests.support.text_checks import STALLING, stall_the_detector
from tests.ui.test_app import CLEAN, latest_run, open_app, start_run, wait_for

SEPARATORS = "\n".join(c * 80 for c in "-=_~*#—")
"""The separators of e-mails, logs, Markdown and code comments, one a line."""
BRACKETS = "[" * 5000 + "\n" + "<" * 5000
ADVERSARIAL = "".join(
    unit * (18_000 // len(unit)) for unit in ["-", "[", "<", "\n-", "=", "#", "a.", "l|1", "'a ", "—", "*"]
)
"""Runs that made the desk's patterns backtrack before; with the output's own lines, about 200,000 characters."""


def test_separators_and_bracket_runs_ship_when_nothing_else_is_wrong(desk_env: RunStore) -> None:
    at = open_app()
    start_run(at, f"{CLEAN}\n{SEPARATORS}\n{BRACKETS}\nAcme Ltd")
    run_id = latest_run(desk_env)
    assert wait_for(desk_env, run_id, lambda s: s not in (RunStatus.QUEUED, RunStatus.RUNNING), at) == RunStatus.SHIPPED
    assert desk_env.get_run_view(run_id).rounds[0].gate.issues == []


def test_another_page_reruns_while_a_run_checks_a_200k_adversarial_text(
    desk_env: RunStore, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One more pattern that would never finish on the text's line of dashes: only the detector's budget stops it,
    # so the check is still working when the other page has rerun, and then it fails closed.
    stall_the_detector(monkeypatch, budget_s=3)
    # The stalled search's own timeout, a backstop on the process's CPU clock, at twice the budget rather than 3x: it
    # is what the stalled search burns (about 2 x 3 s of CPU, less what the linear patterns took first), and it
    # counts the other page's CPU too, which needs well under 2 s for its two runs: the check is still working when
    # that page is done, on a loaded machine too (both clocks are CPU clocks). A budget of 6 s spent 12 s of CPU.
    monkeypatch.setattr(bounded, "BACKSTOP", 2.0)
    checking, checked = threading.Event(), threading.Event()
    real_precheck = runner_module.precheck_issues

    def precheck(*args: object, **kwargs: object) -> object:
        checking.set()
        try:
            return real_precheck(*args, **kwargs)
        finally:
            checked.set()

    monkeypatch.setattr(runner_module, "precheck_issues", precheck)
    output = f"{CLEAN}\n{ADVERSARIAL}\n{STALLING}\nAcme Ltd"
    assert 190_000 < len(output) <= 200_000

    first = open_app()
    start_run(first, output)
    run_id = latest_run(desk_env)
    assert checking.wait(30), "the run's checks never started"

    second = AppTest.from_file("../../app.py", default_timeout=30)  # another person's session on the same server
    second.run()
    second.switch_page("pages/runs.py").run()
    assert not second.exception, second.exception
    assert f"./review?run={run_id}" in second.dataframe[0].value["run"].tolist()  # it lists the run being checked
    assert not checked.is_set(), "the check had finished before the other page reran: nothing was shown"

    # The budget is the check thread's CPU time: on a loaded machine it takes longer on the clock.
    status = wait_for(desk_env, run_id, lambda s: s not in (RunStatus.QUEUED, RunStatus.RUNNING), within_s=180)
    state = desk_env.load_run(run_id).state
    assert (status, state.escalation_reason) == (RunStatus.ESCALATED, EscalationReason.INJECTION)
    assert state.note.startswith(UNFINISHED), state.note
    assert messages_stub.message_calls() == [], "a reviewer or the screen was paid for a text nobody could check"
