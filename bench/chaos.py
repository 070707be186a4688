"""Chaos: runs through the real SDK against a loopback Messages API where a share of answers fail in each
of six ways (rate limit, overloaded, timeout, refusal, cut-off, malformed). Prints, for one answer per
slot (what the desk did before issue 16) and for the default bounded retry, how the runs ended, how many
calls were made and paid, and that no run shipped on a faulted answer.

    python bench/chaos.py [--runs 160] [--rate 0.10] [--attempts 1,4]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import wait
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from santa_core.models import ReviewStatus, RunStatus  # noqa: E402
from storage.runs import RunStore  # noqa: E402
from storage.startup import init_db  # noqa: E402
from tests.conftest import grant  # noqa: E402
from tests.core.run.test_runner import RUBRIC, SPEC  # noqa: E402
from tests.support.chaos import chaos_runner, unleash  # noqa: E402
from tests.support.messages_api import MessagesStub  # noqa: E402


def trial(runs: int, rate: float, attempts: int) -> None:
    stub = MessagesStub().start()
    chaos, _ = unleash(stub, rate=rate)
    repo = grant(RunStore(init_db(f"sqlite:///{Path(tempfile.mkdtemp()) / 'chaos.db'}")))
    runner = chaos_runner(stub, repo, attempts=attempts, workers=8)
    ids = [repo.create_run(spec=SPEC, output=f"Acme launched its rocket in {'DEFECT' if i % 3 == 0 else 2018}. #{i}",
                           rubric=RUBRIC, reviewer_b="claude-sonnet-5-5", reviewer_c="claude-haiku-5-5",
                           fixer="claude-sonnet-5-5", auto_approve=True) for i in range(runs)]
    start = time.perf_counter()
    wait([runner.submit(i) for i in ids])
    runner.shutdown()
    views = [repo.get_run_view(i) for i in ids]
    ends = Counter(v.state.escalation_reason.value if v.state.escalation_reason else v.status.value for v in views)
    faulted_ships = sum(1 for v in views if v.status == RunStatus.SHIPPED for r in v.rounds for o in r.reviews.values()
                        if o.status != ReviewStatus.OK or o.raw_response in chaos.faulty_texts)
    calls = sum(len(o.calls) for v in views for r in v.rounds for o in r.reviews.values())
    cost = sum(v.total_cost_usd for v in views)
    print(f"attempts={attempts}: {runs} runs in {time.perf_counter() - start:.1f} s; "
          f"{ends.get('reviewer_error', 0) / runs:.0%} escalated for a reviewer error; ends {dict(ends)}; "
          f"{calls} reviewer calls; ${cost:.4f}; runs shipped on a faulted answer: {faulted_ships}; "
          f"server answers {chaos.answers}, faults {dict(chaos.faulted)}")
    stub.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=160)
    parser.add_argument("--rate", type=float, default=0.10, help="chance of each fault kind per answer")
    parser.add_argument("--attempts", default="1,4", help="answer attempts per slot to compare")
    args = parser.parse_args()
    for attempts in map(int, args.attempts.split(",")):
        trial(args.runs, args.rate, attempts)


if __name__ == "__main__":
    main()
