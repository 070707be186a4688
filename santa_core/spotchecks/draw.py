"""The draw: which shipped runs a rule sends to a person, decided by a seeded hash, never by anyone.

A run's number is the first 8 bytes of sha256("<seed>:<run id>") read as an unsigned integer over 2**64: a
uniform number in [0, 1) that nobody can steer (the seed is made by the desk when the rule is saved, and a run's
id is fixed before it ships). A run is drawn when its number is below the rule's share, so each shipped run is
drawn with probability `share`, independently of its text, its reviewers or who looks at the queue; anyone with
the seed can recompute every draw. The weekly floor tops a complete week up with that week's lowest-numbered
runs not drawn yet: the same runs whenever the sweep runs, and still chosen by the hash alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

SCALE = 2**64


def draw_number(seed: str, run_id: int) -> float:
    """The run's uniform number in [0, 1) under this seed."""
    digest = hashlib.sha256(f"{seed}:{run_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / SCALE


def is_drawn(seed: str, share: float, run_id: int) -> bool:
    """Whether the share draw picks this run (number below the share)."""
    return draw_number(seed, run_id) < share


def week_of(at: datetime) -> date:
    """The Monday (UTC) of the week a time falls in: the floor's period."""
    day = at.astimezone(UTC).date()
    return day - timedelta(days=day.weekday())


def week_ended(week: date, now: datetime) -> bool:
    """Whether the week starting that Monday is over at `now` (the floor tops up only complete weeks, so the runs
    it picks do not depend on when the sweep ran)."""
    end = datetime.combine(week + timedelta(days=7), datetime.min.time(), tzinfo=UTC)
    return now.astimezone(UTC) >= end


def floor_top_up(seed: str, floor: int, week_runs: Iterable[int], chosen: Iterable[int]) -> list[int]:
    """The runs of one week to add so that at least `floor` of them are drawn: the lowest-numbered ones not
    chosen yet (ties by run id), none when the week already has enough or no runs are left."""
    runs = set(week_runs)
    have = runs & set(chosen)
    missing = floor - len(have)
    if missing <= 0:
        return []
    rest = sorted(runs - have, key=lambda r: (draw_number(seed, r), r))
    return rest[:missing]
