"""Chaos: 100 runs through the real SDK against a loopback API where 10 % of answers fail in each of six
ways (rate limit, overloaded, timeout, refusal, cut-off, malformed; the known-answer screen, on as by
default, meets the first four). Nothing faulted ever ships, and asking
again after a bad answer keeps the runs that escalate for a reviewer error to at most a third of the 54 %
measured before it (issue 16). bench/chaos.py prints the figures with and without asking again.
"""

from __future__ import annotations

from concurrent.futures import wait
from pathlib import Path

from santa_core.models import EscalationReason, ReviewStatus, RunStatus
from santa_core.reviewers.anthropic import DEFAULT_ANSWER_ATTEMPTS
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant
from tests.core.run.test_runner import RUBRIC, SPEC
from tests.support.chaos import chaos_runner, unleash
from tests.support.messages_api import MessagesStub

RUNS = 100
BEFORE = 0.54
"""The share of chaos runs that escalated for a reviewer error when one bad answer was enough."""


def test_no_faulted_answer_ships_and_reviewer_error_escalations_drop_to_a_third(
    tmp_path: Path, messages_stub: MessagesStub
) -> None:
    chaos, screens = unleash(messages_stub, rate=0.10)
    repo = grant(RunStore(init_db(f"sqlite:///{tmp_path / 'santa.db'}")))
    runner = chaos_runner(messages_stub, repo, attempts=DEFAULT_ANSWER_ATTEMPTS, workers=8)
    outputs = [f"Acme launched its rocket in {'DEFECT' if i % 3 == 0 else 2018}. Item {i}." for i in range(RUNS)]
    ids = [repo.create_run(spec=SPEC, output=o, rubric=RUBRIC, reviewer_b="claude-sonnet-5-5",
                           reviewer_c="claude-haiku-5-5", fixer="claude-sonnet-5-5", auto_approve=True)
           for o in outputs]
    wait([runner.submit(i) for i in ids])
    runner.shutdown()
    assert sum(chaos.faulted.values()) > RUNS  # the faults happened, of every kind
    assert set(chaos.faulted) == {"rate_limited", "overloaded", "timeout", "refused", "cut_off", "malformed"}
    views = [repo.get_run_view(i) for i in ids]
    assert all(v.status in (RunStatus.SHIPPED, RunStatus.ESCALATED) for v in views)  # none lost or stuck
    assert screens.faulted  # the screens met faults too
    for view in (v for v in views if v.status == RunStatus.SHIPPED):
        for rnd in view.rounds:
            assert [sc.verdict for sc in rnd.screens.values()] == ["clean"]
            for outcome in rnd.reviews.values():
                assert outcome.status == ReviewStatus.OK and outcome.raw_response not in chaos.faulty_texts
    errors = sum(v.state.escalation_reason == EscalationReason.REVIEWER_ERROR for v in views)
    assert errors / RUNS <= BEFORE / 3, f"{errors} of {RUNS} runs escalated for a reviewer error"
