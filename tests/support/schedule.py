"""The order the suite's tests are handed to xdist's workers: the longest first, spread over the workers.

xdist's `worksteal` gives each worker one contiguous share of the collected tests at the start, and a worker that
runs out takes the back half of the longest queue. A long test near the back of a share starts late and runs on
while the other workers have nothing left (a browser walk takes two minutes on the 2-core CI machine). Put at the
head of each share, the long tests start first, each worker gets about the same weight of them, and what is
stolen at the end is short.

The weights are the seconds the slowest tests took (the 20 slowest are printed at the end of every run; a stale
weight only changes the order, never what runs).
"""

from __future__ import annotations

from collections.abc import Sequence

SLOW_S = {
    "tests/e2e/test_screens.py": 110,
    "tests/e2e/test_decision_desk.py": 80,
    "tests/e2e/test_batch_browser.py": 60,
    "tests/core/run/test_chaos.py": 55,
    "tests/cli/test_crash.py::test_killed_at_every_step_boundary": 45,
    "tests/cli/test_entrypoints.py::test_both_entry_points_answer_every_command_alike": 40,
    "tests/cli/test_injection_corpus.py::test_every_benign_text_ships_through_the_command_line": 38,
    "tests/workers/test_task_engine_pg.py::test_fifty_runs_settle": 35,
    "tests/workers/test_database_outage.py": 30,
    "tests/workers/test_recovery.py": 27,
    "tests/workers/test_batch_jobs_pg.py": 25,
    "tests/e2e/test_signin_oidc.py": 25,
    "tests/e2e/test_readme_walkthrough.py": 25,
    "tests/core/batch/test_varied_batch.py": 15,
    "tests/workers/test_worker_behaviour.py": 15,
    "tests/e2e/test_browser.py": 15,
    "tests/e2e/test_access_browser.py": 15,
}
"""Test id prefix -> seconds one of its tests takes (the first matching prefix counts)."""


def weight(test_id: str) -> float:
    return next((s for prefix, s in SLOW_S.items() if test_id.startswith(prefix)), 0.0)


def shares(total: int, workers: int) -> list[int]:
    """How many tests each worker gets at the start: xdist's own split (`WorkStealingScheduling.check_schedule`)."""
    sizes, left = [], total
    for i in range(workers):
        size = left // (workers - i)
        sizes.append(size)
        left -= size
    return sizes


def longest_first(ids: Sequence[str], workers: int) -> list[int]:
    """Indices of `ids` in the order to collect them: each worker's share opens with its long tests (longest first,
    each given to the share with the least weight so far), then short tests in their collected order."""
    if workers < 2:
        return list(range(len(ids)))
    sizes = shares(len(ids), workers)
    slow = sorted((i for i, t in enumerate(ids) if weight(t) > 0), key=lambda i: (-weight(ids[i]), i))
    heads: list[list[int]] = [[] for _ in sizes]
    load = [0.0] * workers
    for i in slow:
        open_shares = [w for w in range(workers) if len(heads[w]) < sizes[w]]
        w = min(open_shares, key=lambda w: (load[w], w))
        heads[w].append(i)
        load[w] += weight(ids[i])
    taken = set(slow)
    rest = iter(i for i in range(len(ids)) if i not in taken)
    order: list[int] = []
    for w, size in enumerate(sizes):
        order += heads[w] + [next(rest) for _ in range(size - len(heads[w]))]
    return order
