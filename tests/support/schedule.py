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
    "tests/workers/test_task_engine_pg.py::test_two_dozen_runs_settle": 20,
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


def prefix_of(test_id: str) -> str | None:
    """The SLOW_S entry a test falls under (None: a short test)."""
    return next((prefix for prefix in SLOW_S if test_id.startswith(prefix)), None)


def weight(test_id: str) -> float:
    prefix = prefix_of(test_id)
    return 0.0 if prefix is None else SLOW_S[prefix]


def shares(total: int, workers: int) -> list[int]:
    """How many tests each worker gets at the start: xdist's own split (`WorkStealingScheduling.check_schedule`)."""
    sizes, left = [], total
    for i in range(workers):
        size = left // (workers - i)
        sizes.append(size)
        left -= size
    return sizes


def longest_first(ids: Sequence[str], workers: int) -> list[int]:
    """Indices of `ids` in the order to collect them: each worker's share opens with its long tests, then short
    tests in their collected order. The long tests of one entry (a module's outage tests, each on its own database
    cluster) stay together in one share, one after another, so they do not load the machine at the same time; the
    heaviest entries go first, each to the share with the least weight so far."""
    if workers < 2:
        return list(range(len(ids)))
    sizes = shares(len(ids), workers)
    groups: dict[str, list[int]] = {}
    for i, test_id in enumerate(ids):
        prefix = prefix_of(test_id)
        if prefix is not None:
            groups.setdefault(prefix, []).append(i)
    heads: list[list[int]] = [[] for _ in sizes]
    load = [0.0] * workers
    for prefix, members in sorted(groups.items(), key=lambda g: (-SLOW_S[g[0]] * len(g[1]), g[0])):
        fits = [w for w in range(workers) if len(heads[w]) + len(members) <= sizes[w]] or list(range(workers))
        w = min(fits, key=lambda w: (load[w], w))
        heads[w] += members
        load[w] += SLOW_S[prefix] * len(members)
    # A group larger than the room left (a run of a few tests) goes where it is least over: the order stays a
    # permutation, only the shares' openings are then less even.
    taken = {i for head in heads for i in head}
    rest = [i for i in range(len(ids)) if i not in taken]
    order: list[int] = []
    for w, size in enumerate(sizes):
        room = max(0, size - len(heads[w]))
        order += heads[w] + rest[:room]
        rest = rest[room:]
    return order + rest
