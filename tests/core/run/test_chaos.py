"""Chaos: 60 runs through the real SDK against a loopback API where 10 % of answers fail in each of six
ways (rate limit, overloaded, timeout, refusal, cut-off, malformed; the known-answer screen, on as by
default, meets the first four). Nothing faulted ever ships, and asking
again after a bad answer keeps the runs that escalate for a reviewer error to at most a third of those
measured the same way with one answer per slot (the desk before issue 16; the issue measured 54 % on its
own harness, this one is harsher). bench/chaos.py prints the figures.
"""

from __future__ import annotations

from pathlib import Path

from santa_core.reviewers.anthropic import DEFAULT_ANSWER_ATTEMPTS
from tests.support.chaos import chaos_trial
from tests.support.messages_api import MessagesStub

RUNS = 60
"""Was 100. What is asserted (every fault kind served, no faulted answer shipped, none lost, one answer per slot
escalating over half, asking again cutting that to a third) holds by a wide margin at 60: three runs of
`bench/chaos.py --runs 60` gave 77 %, 83 %, 78 % with one answer and 8 %, 13 %, 8 % asking again (bound: a third,
26-28 %), every fault kind served 9-55 times per trial. Each run costs about 0.14 CPU-s (mostly its storage)."""


def test_no_faulted_answer_ships_and_asking_again_cuts_reviewer_error_escalations_to_under_a_third(
    tmp_path: Path, messages_stub: MessagesStub
) -> None:
    shares = []
    for attempts in (1, DEFAULT_ANSWER_ATTEMPTS):  # one answer per slot: the desk before issue 16
        trial = chaos_trial(messages_stub, tmp_path / f"chaos{attempts}.db", attempts, RUNS)
        assert set(trial.chaos.faulted) == {"rate_limited", "overloaded", "timeout", "refused", "cut_off", "malformed"}
        assert trial.screens.faulted  # the screens met faults too
        assert all(v.status.value in ("shipped", "escalated") for v in trial.views)  # none lost or stuck
        assert trial.shipped_faulty() == 0
        shares.append(trial.share())
    one_answer, bounded = shares
    assert one_answer > 0.5  # the faults bite: about 75-80 % of runs escalate with one answer per slot
    assert bounded <= one_answer / 3, f"{bounded:.0%} escalated for a reviewer error (one answer: {one_answer:.0%})"
