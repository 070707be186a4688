"""Batch lanes: how many batch runs may be queued or running at once per provider, across all workers, so a large
batch cannot take the rate limit the editors need (`desk.task_engine`)."""

from __future__ import annotations

from desk.engine_timing import env_float
from santa_core import providers
from santa_core.reviewers.base import PERSON


def batch_lanes() -> int:
    """Batch runs queued or running at most per provider, across all workers: SANTA_BATCH_LANES, default 4 (also
    the lanes per provider pair of the runs' jobs)."""
    return int(env_float("SANTA_BATCH_LANES", 4, 1, 256))


def providers_called(reviewer_b: str, reviewer_c: str) -> set[str]:
    """The providers a run's reviewers call (a person calls none)."""
    names = set()
    for model in (reviewer_b, reviewer_c):
        if model != PERSON:
            provider = providers.provider_of(model)
            names.add(provider.name if provider is not None else "unknown")
    return names


def provider_pair(reviewer_b: str, reviewer_c: str) -> str:
    """The providers a run's reviewers call, sorted and joined."""
    return "+".join(sorted(providers_called(reviewer_b, reviewer_c))) or "person"


def batch_room(active: list[tuple[str, str]], reviewer_b: str, reviewer_c: str) -> int:
    """How many more batch runs with these reviewers may start: for each provider they call, SANTA_BATCH_LANES less
    the batch runs queued or running that call it (`active`: their reviewer pairs), the least of those."""
    wanted = providers_called(reviewer_b, reviewer_c)
    if not wanted:
        return batch_lanes()  # people review: no provider's rate limit to keep
    busy = {name: 0 for name in wanted}
    for pair in active:
        for name in providers_called(*pair) & wanted:
            busy[name] += 1
    return max(0, batch_lanes() - max(busy.values()))
