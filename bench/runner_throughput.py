"""How much the desk itself costs per run: storage + engine + gate + fixer, with instant reviewers.

Prints runs per second and milliseconds of overhead per round on a fresh SQLite file, for
clean runs (1 round) and runs that need one auto-approved fix (2 rounds), with 1 and 4 workers.
Real reviewer calls take seconds, so this is the ceiling the desk puts on top of them.

    python bench/runner_throughput.py [--runs 200]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from santa_core.models import FixEdit, FixPlan
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer, failing, passing
from santa_core.rubrics.library import load_builtin
from santa_core.run.runner import Runner
from storage.runs import RunStore
from storage.startup import init_db


def judge(request):
    """FAIL while the output says 2019."""
    if "2019" in request.output:
        return failing(request, "factual_accuracy", "wrong year", "2019")
    return passing(request)


def measure(runs: int, workers: int, output: str) -> tuple[float, int]:
    """Seconds to drive `runs` runs to a stop, and the rounds they took."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = RunStore(init_db(f"sqlite:///{Path(tmp) / 'bench.db'}"))
        fixer = FunctionFixer("f", lambda r: FixPlan(edits=[FixEdit(issue=0, before="2019", after="2018")]))
        runner = Runner(repo, lambda n: FunctionReviewer(n, judge), lambda n: fixer, workers=workers)
        rubric = load_builtin("general")
        ids = [
            repo.create_run(
                spec="Say when Acme launched (2018).",
                output=output,
                rubric=rubric,
                reviewer_b="b",
                reviewer_c="c",
                fixer="f",
                auto_approve=True,
            )
            for _ in range(runs)
        ]
        start = time.perf_counter()
        for fut in [runner.submit(i) for i in ids]:
            fut.result()
        elapsed = time.perf_counter() - start
        rounds = sum(repo.load_run(i).state.round for i in ids)
        runner.shutdown()
        return elapsed, rounds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    print(f"{'case':<28}{'workers':>8}{'runs/s':>10}{'ms/round':>10}")
    for label, output in (
        ("clean (1 round)", "Acme launched in 2018."),
        ("one fix (2 rounds)", "Acme launched in 2019."),
    ):
        for workers in (1, 4):
            elapsed, rounds = measure(args.runs, workers, output)
            print(f"{label:<28}{workers:>8}{args.runs / elapsed:>10.1f}{1000 * elapsed / rounds:>10.2f}")


if __name__ == "__main__":
    main()
