"""Chaos: 100 runs through the real SDK against a loopback API where 10 % of answers fail in each of six
ways (rate limit, overloaded, timeout, refusal, cut-off, malformed; the known-answer screen, on as by
default, meets the first four). Nothing faulted ever ships, and asking
again after a bad answer keeps the runs that escalate for a reviewer error to at most a third of those
measured the same way with one answer per slot (the desk before issue 16; the issue measured 54 % on its
own harness, this one is harsher). bench/chaos.py prints the figures.
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


def chaos_trial(tmp_path: Path, stub: MessagesStub, attempts: int) -> tuple[float, int]:
    """100 runs (a third with a defect to fix) under 10 % of each fault; (share escalated for a reviewer error,
    runs shipped on a faulted answer or screen)."""
    chaos, screens = unleash(stub, rate=0.10)
    repo = grant(RunStore(init_db(f"sqlite:///{tmp_path / f'chaos{attempts}.db'}")))
    runner = chaos_runner(stub, repo, attempts=attempts, workers=8)
    outputs = [f"Acme launched its rocket in {'DEFECT' if i % 3 == 0 else 2018}. Item {i}." for i in range(RUNS)]
    ids = [repo.create_run(spec=SPEC, output=o, rubric=RUBRIC, reviewer_b="claude-sonnet-5-5",
                           reviewer_c="claude-haiku-5-5", fixer="claude-sonnet-5-5", auto_approve=True)
           for o in outputs]
    wait([runner.submit(i) for i in ids])
    runner.shutdown()
    assert set(chaos.faulted) == {"rate_limited", "overloaded", "timeout", "refused", "cut_off", "malformed"}
    assert screens.faulted  # the screens met faults too
    views = [repo.get_run_view(i) for i in ids]
    assert all(v.status in (RunStatus.SHIPPED, RunStatus.ESCALATED) for v in views)  # none lost or stuck
    faulted_ships = sum(
        1 for v in views if v.status == RunStatus.SHIPPED for rnd in v.rounds
        if [sc.verdict for sc in rnd.screens.values()] != ["clean"]
        or any(o.status != ReviewStatus.OK or o.raw_response in chaos.faulty_texts for o in rnd.reviews.values()))
    errors = sum(v.state.escalation_reason == EscalationReason.REVIEWER_ERROR for v in views)
    return errors / RUNS, faulted_ships


def test_no_faulted_answer_ships_and_asking_again_cuts_reviewer_error_escalations_to_under_a_third(
    tmp_path: Path, messages_stub: MessagesStub
) -> None:
    one_answer, shipped_faulty = chaos_trial(tmp_path, messages_stub, attempts=1)  # the desk before issue 16
    assert shipped_faulty == 0
    bounded, shipped_faulty = chaos_trial(tmp_path, messages_stub, attempts=DEFAULT_ANSWER_ATTEMPTS)
    assert shipped_faulty == 0
    assert one_answer > 0.5  # the faults bite: about 75-80 % of runs escalate with one answer per slot
    assert bounded <= one_answer / 3, f"{bounded:.0%} escalated for a reviewer error (one answer: {one_answer:.0%})"
