"""A loopback Messages API that misbehaves: each answer is, with a set chance per fault kind, a rate
limit, an overloaded API, a timeout, a refusal, a cut-off or a malformed answer; else the scenario's
answer. Shared by tests/core/run/test_chaos.py and bench/chaos.py.

It remembers the text of every faulted answer, so a caller can prove that no shipped run was judged
on one.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic

from santa_core.models import EscalationReason, ReviewStatus, RunStatus
from santa_core.reviewers.anthropic import AnthropicFixer, AnthropicReviewer, AnthropicScreen
from santa_core.run.runner import Runner
from storage.runs import RunStore
from storage.startup import init_db
from storage.views import RunView
from tests.support.messages_api import FAST_RETRY, MessagesStub, Reply, error_reply, repeat_key, santa_scenario

FAULTS = ("rate_limited", "overloaded", "timeout", "refused", "cut_off", "malformed")
SCREEN_FAULTS = ("rate_limited", "overloaded", "timeout", "refused")
"""The faults a known-answer screen can meet. A cut-off or garbled screen answer is judged as it stands (a
model that ran past a short key has left the instruction behind), so it is no fault of the transport."""
CLIENT_TIMEOUT_S = 0.4
"""The chaos client's timeout: a `timeout` fault answers later than this."""


class Chaos:
    """A handler for MessagesStub: faults by chance (seeded), the santa scenario otherwise."""

    def __init__(
        self,
        rate: float = 0.10,
        seed: int = 16,
        scenario: Callable[[dict], Any] = santa_scenario,
        faults: tuple[str, ...] = FAULTS,
    ) -> None:
        self.rate, self.scenario, self.faults = rate, scenario, faults
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.faulted: Counter[str] = Counter()
        self.faulty_texts: set[str] = set()
        self.answers = 0

    def __call__(self, body: dict) -> Any:
        with self.lock:
            self.answers += 1
            draw = self.rng.random()
        kind = self.faults[int(draw / self.rate)] if draw < self.rate * len(self.faults) else None
        if kind is None:
            return self.scenario(body)
        with self.lock:
            self.faulted[kind] += 1
        return self.fault(kind, body)

    def fault(self, kind: str, body: dict) -> Any:
        good = self.scenario(body)
        text = good["content"][0]["text"]
        if kind == "rate_limited":
            return error_reply(429, "rate_limit_error", "slow down")
        if kind == "overloaded":
            return error_reply(529, "overloaded_error", "Overloaded")
        if kind == "timeout":
            return Reply(200, FAST_RETRY, good, delay_s=CLIENT_TIMEOUT_S * 2.5)
        malformed = text.replace('"verdict"', '"verdikt"') if '"verdict"' in text else "{" + text
        bad = {"refused": "", "cut_off": text[: len(text) // 2], "malformed": malformed}
        stop = {"refused": "refusal", "cut_off": "max_tokens"}.get(kind, "end_turn")
        with self.lock:
            self.faulty_texts.add(bad[kind])
        return {**good, "stop_reason": stop, "content": [{"type": "text", "text": bad[kind]}]}


def chaos_runner(stub: MessagesStub, store: Any, attempts: int, workers: int = 4) -> Runner:
    """A runner whose screen, reviewers and fix agent are the real SDK clients aimed at the stub, with short
    timeouts and the SDK's own retries, asking again after a bad answer up to `attempts` times."""
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=3, timeout=CLIENT_TIMEOUT_S)
    return Runner(
        store,
        lambda m: AnthropicReviewer(m, client=client, timeout=CLIENT_TIMEOUT_S, answer_attempts=attempts),
        lambda m: AnthropicFixer(m, client=client, timeout=CLIENT_TIMEOUT_S, answer_attempts=attempts),
        workers=workers,
        screen_for=lambda: AnthropicScreen(
            "claude-haiku-5-5", client=client, timeout=CLIENT_TIMEOUT_S, answer_attempts=attempts
        ),
    )


def unleash(stub: MessagesStub, rate: float = 0.10, seed: int = 16) -> tuple[Chaos, Chaos]:
    """Faults on the stub's answers: (reviewers and fix agent, known-answer screens)."""
    chaos, screens = Chaos(rate, seed), Chaos(rate, seed + 1, scenario=repeat_key, faults=SCREEN_FAULTS)
    stub.handler, stub.screen = chaos, screens
    return chaos, screens


@dataclass
class Trial:
    """How the runs of one chaos trial ended, with the faults that were served."""

    views: list[RunView]
    chaos: Chaos
    screens: Chaos

    def share(
        self,
        reasons: frozenset[EscalationReason] = frozenset(
            {EscalationReason.REVIEWER_ERROR, EscalationReason.PROVIDER_FAILED}
        ),
    ) -> float:
        """The share of runs that escalated for one of `reasons`: by default every run a reviewer or the screen gave
        no verdict for (a bad answer is a reviewer error; no answer at all, since issue 34, the provider failing)."""
        return sum(v.state.escalation_reason in reasons for v in self.views) / len(self.views)

    def shipped_faulty(self) -> int:
        """Runs shipped although a round's screen was not clean or a review was not a valid, unfaulted answer."""
        return sum(
            1
            for v in self.views
            if v.status == RunStatus.SHIPPED
            for rnd in v.rounds
            if any(sc.verdict != "clean" for sc in rnd.screens.values())
            or not rnd.screens
            or any(
                o.status != ReviewStatus.OK or o.raw_response in self.chaos.faulty_texts for o in rnd.reviews.values()
            )
        )


def chaos_trial(stub: MessagesStub, db_path: Path, attempts: int, runs: int, rate: float = 0.10) -> Trial:
    """`runs` runs (a third with a defect to fix, auto-approved) under `rate` of each fault, 8 at a time."""
    from tests.conftest import grant
    from tests.core.run.test_runner import RUBRIC, SPEC

    chaos, screens = unleash(stub, rate=rate)
    repo = grant(RunStore(init_db(f"sqlite:///{db_path}")))
    runner = chaos_runner(stub, repo, attempts=attempts, workers=8)
    ids = [
        repo.create_run(
            spec=SPEC,
            output=f"Acme launched its rocket in {'DEFECT' if i % 3 == 0 else 2018}. #{i}",
            rubric=RUBRIC,
            reviewer_b="claude-sonnet-5-5",
            reviewer_c="claude-haiku-5-5",
            fixer="claude-sonnet-5-5",
            auto_approve=True,
        )
        for i in range(runs)
    ]
    wait([runner.submit(i) for i in ids])
    runner.shutdown()
    return Trial([repo.get_run_view(i) for i in ids], chaos, screens)
