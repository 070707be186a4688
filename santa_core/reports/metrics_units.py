"""The method's units (pure): rates from counts (first-pass rate, mean iterations, escape rate, agreement, Cohen's
kappa) and the time buckets of the over-time figures.

Defined in words in `santa_core.reports.metrics.DEFINITIONS`; importable from there as well.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Literal

Grain = Literal["hour", "day", "week", "month"]
HOUR_DAYS = 2
"""Auto picks hour buckets when the view covers at most this many calendar days (48 buckets at most): on a
first day of use every over-time chart would otherwise be one dot."""


def ratio(numerator: float, denominator: float) -> float | None:
    """numerator ÷ denominator, or None when there is nothing to divide by."""
    return numerator / denominator if denominator else None


def first_pass_rate(first_pass: int, finished: int) -> float | None:
    """Runs NICE in round 1 ÷ finished runs."""
    return ratio(first_pass, finished)


def mean_iterations(nice_rounds: int, nice_runs: int) -> float | None:
    """Mean round number of the runs that reached NICE."""
    return ratio(nice_rounds, nice_runs)


def escape_rate(escapes: int, shipped: int) -> float | None:
    """Escapes ÷ shipped runs."""
    return ratio(escapes, shipped)


def agreement(both: int, b_only: int, c_only: int) -> float | None:
    """Issues flagged by both ÷ flagged by either."""
    return ratio(both, both + b_only + c_only)


def cohens_kappa(pp: int, pf: int, fp: int, ff: int) -> float | None:
    """Cohen's kappa of B against C from the 2×2 table (None: no pairs, or chance agreement is 1)."""
    n = pp + pf + fp + ff
    if n == 0:
        return None
    # Counts scaled by n², one division at the end: in floats a kappa of exactly 0.40 (e.g. 20/5/10/15)
    # came out as 0.3999999999999999 and was flagged as "below 0.40".
    b_pass, c_pass = pp + pf, pp + fp
    expected = b_pass * c_pass + (n - b_pass) * (n - c_pass)
    if expected == n * n:
        return None  # both reviewers gave one answer throughout: kappa is undefined
    return (n * (pp + ff) - expected) / (n * n - expected)


def bucket_of(day: date, grain: Grain) -> date:
    """The start of the bucket `day` falls in: the hour's start (of a datetime), or the first day: the day itself,
    its ISO week's Monday, or its month's 1st."""
    if grain == "hour":
        if not isinstance(day, datetime):
            raise ValueError(f"an hour bucket needs a time of day, not the day {day}")
        return day.replace(minute=0, second=0, microsecond=0)
    if isinstance(day, datetime):
        day = day.date()
    if grain == "week":
        return day - timedelta(days=day.weekday())
    if grain == "month":
        return day.replace(day=1)
    return day


def auto_grain(first: date | None, last: date | None) -> Grain:
    """Hours for a view of up to two calendar days, days for up to two months, weeks up to a year, months beyond."""
    if first is None or last is None:
        return "day"
    if (last - first).days < HOUR_DAYS:
        return "hour"
    if (last - first).days <= 62:
        return "day"
    return "week" if (last - first).days <= 366 else "month"
