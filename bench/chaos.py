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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.chaos import chaos_trial  # noqa: E402
from tests.support.messages_api import MessagesStub  # noqa: E402


def trial(runs: int, rate: float, attempts: int) -> None:
    stub = MessagesStub().start()
    start = time.perf_counter()
    result = chaos_trial(stub, Path(tempfile.mkdtemp()) / "chaos.db", attempts, runs, rate)
    views = result.views
    ends = Counter(v.state.escalation_reason.value if v.state.escalation_reason else v.status.value for v in views)
    calls = sum(len(o.calls) for v in views for r in v.rounds for o in r.reviews.values())
    cost = sum(v.total_cost_usd for v in views)
    print(
        f"attempts={attempts}: {runs} runs in {time.perf_counter() - start:.1f} s; "
        f"{result.share():.0%} escalated for a reviewer error or a provider failure; ends {dict(ends)}; "
        f"{calls} reviewer calls; ${cost:.4f}; runs shipped on a faulted answer: {result.shipped_faulty()}; "
        f"server answers {result.chaos.answers}, faults {dict(result.chaos.faulted)}"
    )
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
