"""A round nobody could judge (the model provider failed) is no iteration (issue 34).

Through the app's wiring (SQLite and PostgreSQL) against the loopback Messages API: one run NICE in its first round,
one whose screen failed, tried again and NICE in round 2. Both passed on their first judged round: first-pass rate
100 %, mean iterations 1.0; the failed round still counts in the rounds started and its screen call in the cost.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from desk.wiring import Desk
from santa_core.models import EscalationReason, RunStatus
from santa_core.reports.metrics import MetricsFilter
from santa_core.run import actions
from tests.core.run.test_unreviewed import DEFECTIVE, EDITOR, broken, claude_desk, run_once
from tests.support.messages_api import MessagesStub, repeat_key

OTHER = "Acme's rocket launched in 2018. Order now."
"""A second clean text: the screen of the first is reused for the same text, so the outage needs another."""


@pytest.fixture
def desk(db_url: str, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch) -> Iterator[Desk]:
    """The app's desk on a fresh database (SQLite, PostgreSQL)."""
    yield from claude_desk(db_url, messages_stub, monkeypatch)


def test_a_run_nice_after_try_again_passed_first_time(desk: Desk, messages_stub: MessagesStub) -> None:
    assert run_once(desk)[1].status == RunStatus.SHIPPED
    messages_stub.screen = broken
    outage, state = run_once(desk, output=OTHER)
    assert state.escalation_reason == EscalationReason.PROVIDER_FAILED
    messages_stub.screen = repeat_key
    actions.try_again(desk.runs, outage, EDITOR)
    assert desk.runner.execute(outage).status == RunStatus.SHIPPED
    h = desk.runs.metrics.report(MetricsFilter(), None).headline
    assert (h.finished, h.first_pass, h.first_pass_rate, h.nice_runs, h.mean_iterations) == (2, 2, 1.0, 2, 1.0)
    assert h.rounds == 3  # the failed round was started (and its screen call paid): cost per round sees it


def test_a_judged_naughty_round_is_still_an_iteration(desk: Desk, messages_stub: MessagesStub) -> None:
    """The fix loop: NAUGHTY with an issue, fixed, NICE in round 2 (not a first pass, two iterations)."""
    run_id, state = run_once(desk, output=DEFECTIVE)
    assert state.status == RunStatus.AWAITING_APPROVAL
    actions.approve_fix(desk.runs, run_id, EDITOR)
    assert (desk.runner.execute(run_id).status, desk.runs.load_run(run_id).state.round) == (RunStatus.SHIPPED, 2)
    h = desk.runs.metrics.report(MetricsFilter(), None).headline
    assert (h.finished, h.first_pass, h.first_pass_rate, h.mean_iterations) == (1, 0, 0.0, 2.0)
