"""Rates stated with confidence: the exact binomial interval (Clopper–Pearson) and the spot-check escape rate.

Spot-checks are the one unbiased sample of shipped work (drawn at random, judged blind by a person), so only
they give an escape rate that can carry an interval. Reported escapes count what someone noticed and took the
trouble to report, so they are biased low; they stay a separate series (`santa_core.reports.metrics`).

Clopper–Pearson is exact: it inverts two one-sided binomial tests, so its coverage is at least the stated level
for every n and true rate (conservative for small n, never too narrow). n = 0 is no figure at all, not 0 %.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date, timedelta
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, computed_field
from scipy.special import betaincinv

from santa_core.reports.labels import SpotCheckOutcome
from santa_core.reports.metrics_families import family_pair, pair_name

CONFIDENCE = 0.95
"""The level of every interval the desk states."""


@cache
def clopper_pearson(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The exact binomial interval of k successes in n trials; None when n = 0 (nothing observed).

    The bounds are beta quantiles, B(α/2; k, n − k + 1) and B(1 − α/2; k + 1, n − k), what
    `scipy.stats.binomtest(k, n).proportion_ci(method="exact")` returns (the tests hold them equal), read from
    the inverse incomplete beta function: a hundred times faster than binomtest's root search, and the
    calibration table states three intervals per model and criterion."""
    if n == 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"{k} successes out of {n} trials is not a count")
    alpha = 1 - confidence
    low = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, alpha / 2))
    high = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - alpha / 2))
    return low, high


class Rate(BaseModel):
    """k of n, with its value and exact interval (all None when n = 0)."""

    model_config = ConfigDict(frozen=True)

    k: int
    n: int
    low: float | None = None
    high: float | None = None

    @computed_field  # type: ignore[prop-decorator]  # mypy does not type a decorated property; pydantic's documented form
    @property
    def value(self) -> float | None:
        """k ÷ n, or None when nothing was observed."""
        return self.k / self.n if self.n else None


def rate(k: int, n: int) -> Rate:
    """k of n with its Clopper–Pearson interval."""
    ci = clopper_pearson(k, n)
    return Rate(k=k, n=n) if ci is None else Rate(k=k, n=n, low=ci[0], high=ci[1])


def complement(r: Rate) -> Rate:
    """The other side of a rate (a miss rate from a recall): n − k of n, the interval mirrored."""
    return rate(r.n - r.k, r.n)


Grouping = Literal["all", "rubric", "family_pair", "model_pair", "week", "month"]
"""How spot-check outcomes are grouped for the escape rate."""

GROUPINGS: tuple[Grouping, ...] = ("all", "rubric", "family_pair", "model_pair", "week", "month")


def panel_of(outcome: SpotCheckOutcome) -> tuple[str, ...]:
    """The outcome's reviewer models in name order (B and C swapped are one panel); a third reviewer D is part of it,
    since an escape there is a miss of all three."""
    return tuple(sorted(m for m in (outcome.reviewer_b, outcome.reviewer_c, outcome.reviewer_d) if m))


def week_of(day: date) -> str:
    """The ISO week a day falls in, named by its Monday (YYYY-MM-DD)."""
    return (day - timedelta(days=day.weekday())).isoformat()


KEYS: dict[Grouping, Callable[[SpotCheckOutcome], str]] = {
    "all": lambda o: "all",
    "rubric": lambda o: o.rubric_name,
    "family_pair": lambda o: pair_name(family_pair(o.reviewer_b, o.reviewer_c)),
    "model_pair": lambda o: " + ".join(panel_of(o)),
    "week": lambda o: week_of(o.submitted_at.date()),
    "month": lambda o: o.submitted_at.strftime("%Y-%m"),
}
"""The group key of an outcome for each grouping (periods by the day the spot-check was submitted, UTC)."""


class EscapeRate(BaseModel):
    """The spot-check escape rate of one group: escaped spot-checks of spot-checks, with its interval."""

    grouping: Grouping
    key: str
    escapes: Rate


def escape_rates(outcomes: Iterable[SpotCheckOutcome], grouping: Grouping) -> list[EscapeRate]:
    """One row per group of the outcomes (periods oldest first, others most spot-checks first)."""
    counts: dict[str, list[int]] = {}
    for o in outcomes:
        kn = counts.setdefault(KEYS[grouping](o), [0, 0])
        kn[0] += o.escaped
        kn[1] += 1
    rows = [EscapeRate(grouping=grouping, key=key, escapes=rate(k, n)) for key, (k, n) in counts.items()]
    if grouping in ("week", "month"):
        return sorted(rows, key=lambda r: r.key)
    return sorted(rows, key=lambda r: (-r.escapes.n, r.key))


def criterion_escapes(outcomes: Iterable[SpotCheckOutcome]) -> dict[tuple[tuple[str, ...], str], Rate]:
    """Per panel and criterion: spot-checks that failed the criterion of those that judged it."""
    counts: dict[tuple[tuple[str, ...], str], list[int]] = {}
    for o in outcomes:
        for criterion in o.judged:
            kn = counts.setdefault((panel_of(o), criterion), [0, 0])
            kn[0] += criterion in o.failed
            kn[1] += 1
    return {key: rate(k, n) for key, (k, n) in counts.items()}
