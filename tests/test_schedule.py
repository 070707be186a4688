"""The suite's order under xdist (tests/support/schedule.py): long tests open each worker's share."""

from __future__ import annotations

from tests.support.schedule import longest_first, shares

SCREENS = "tests/e2e/test_screens.py::test_screens_fit"
DESK = "tests/e2e/test_decision_desk.py::test_the_decision_desk"
CHAOS = "tests/core/run/test_chaos.py::test_no_faulted_answer_ships"


def test_shares_are_xdists_first_split() -> None:
    # WorkStealingScheduling.check_schedule: node i gets len(pending) // nodes_remaining
    assert shares(10, 3) == [3, 3, 4]
    assert shares(5000, 3) == [1666, 1667, 1667]


def test_each_share_opens_with_its_long_tests_and_nothing_is_lost() -> None:
    ids = [f"tests/core/test_{n}.py::t" for n in range(12)]
    ids[3], ids[7], ids[11] = DESK, SCREENS, CHAOS  # collected late: today they would start last
    order = longest_first(ids, 3)
    assert sorted(order) == list(range(12))
    firsts = [ids[order[start]] for start in (0, 4, 8)]  # shares of 4, 4, 4
    assert firsts == [SCREENS, DESK, CHAOS]  # longest first, one to a worker
    assert [ids[i] for i in order[1:4]] == [f"tests/core/test_{n}.py::t" for n in (0, 1, 2)]  # then in order


def test_one_worker_keeps_the_collected_order() -> None:
    ids = ["tests/core/a.py::t", SCREENS]
    assert longest_first(ids, 1) == [0, 1]


def test_the_long_tests_of_one_module_stay_together_in_one_share() -> None:
    outage = [f"tests/workers/test_database_outage.py::test_{n}" for n in range(4)]
    ids = [f"tests/core/test_{n}.py::t" for n in range(20)] + outage
    order = [ids[i] for i in longest_first(ids, 3)]
    first_share = order[:8]  # shares of 8, 8, 8
    assert first_share[:4] == outage  # one after another on one worker, not four clusters at once
