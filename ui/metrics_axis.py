"""The time axis of the Metrics page's over-time charts: ticks no finer than the chart's buckets.

Left to itself, Plotly picks date ticks for the span it is given: one day of data spans a few
milliseconds around midnight, so it labelled the axis "23:59:59.999 Dec 2, 2026 · 23:59:59.9995 ·
00:00:00 Dec 3". Here the axis is set from the buckets instead: its range runs from half a bucket
before the first to half a bucket after the last (one bucket: one tick, the bucket itself), the step
between ticks is a whole number of buckets or of months, at most `MAX_TICKS` of them, and the labels
say no more than the step can tell apart (a day, a month, a year; never a time of day).

`time_ticks` reads an axis back from a figure (pure, so a test can check a chart without a browser).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from santa_core.reports.metrics import Grain

DAY_MS = 86_400_000
"""Plotly's date axes count in milliseconds."""
MAX_TICKS = 8
"""At most this many labelled ticks on an axis (half a page wide, a label every 60 px or more)."""
HOUR_TICKS = 5
"""At most this many on an axis of hours: their two-line labels ("06:00 / Mar 2") stay level in a chart half of a
1,024 px window wide (Plotly turns labels on their side when they crowd)."""
BUCKET_DAYS: dict[Grain, float] = {"hour": 1 / 24, "day": 1, "week": 7, "month": 28}
"""The shortest bucket of each grain, in days (February for months)."""
MONTH_DAYS = 30.44
"""A month's mean length: how many ticks a span of months holds."""
STEPS: dict[Grain, tuple[tuple[str, int], ...]] = {
    "hour": (("H", 1), ("H", 2), ("H", 3), ("H", 4), ("H", 6), ("H", 12), ("D", 1)),
    "day": (("D", 1), ("D", 2), ("D", 7), ("D", 14), ("M", 1), ("M", 2), ("M", 3), ("M", 6), ("M", 12)),
    "week": (("D", 7), ("D", 14), ("D", 28), ("M", 2), ("M", 3), ("M", 6), ("M", 12)),
    "month": (("M", 1), ("M", 2), ("M", 3), ("M", 6), ("M", 12)),
}
"""Tick steps from fine to coarse, each a whole number of the grain's buckets or of months; the first
that fits `MAX_TICKS` ticks in the span is used. (A month is no finer than a week's bucket.)"""
FORMATS = {"H": "%H:%M\n%b %-d", "D": "%b %-d\n%Y", "M": "%b\n%Y", "Y": "%Y"}
"""Tick labels (d3-time-format, which Plotly uses; a newline breaks a label in two) by kind of step."""
HOVER = {"hour": "%b %-d, %H:00–%H:59 UTC", "day": "%b %-d, %Y", "week": "week of %b %-d, %Y", "month": "%B %Y"}
"""How a bucket is written in hover labels."""
UNIT_DAYS = {
    "L": 1 / 86_400_000,
    "f": 1 / 86_400_000_000,
    "Q": 1 / 86_400_000,
    "s": 1 / 86_400,
    "S": 1 / 86_400,
    "M": 1 / 1440,
    "I": 1 / 24,
    "H": 1 / 24,
    "p": 0.5,
    "d": 1,
    "e": 1,
    "j": 1,
    "a": 1,
    "A": 1,
    "u": 1,
    "w": 1,
    "U": 7,
    "W": 7,
    "V": 7,
    "b": 28,
    "B": 28,
    "m": 28,
    "q": 90,
    "y": 365,
    "Y": 365,
}
"""Days told apart by each d3-time-format directive (a time-of-day directive is less than a day)."""


def _start(day: date) -> datetime:
    """A bucket's start as a datetime (a day bucket starts at midnight)."""
    return day if isinstance(day, datetime) else datetime.combine(day, datetime.min.time())


def axis_settings(grain: Grain, first: date, last: date) -> dict[str, Any]:
    """Plotly x-axis settings for buckets of `grain` from `first` to `last` (bucket starts: days, or the hours'
    first moments)."""
    span = (_start(last) - _start(first)) / timedelta(days=1) + BUCKET_DAYS[grain]
    most = HOUR_TICKS if grain == "hour" else MAX_TICKS
    kind, n = next(
        ((k, n) for k, n in STEPS[grain] if span / (n / 24 if k == "H" else n if k == "D" else n * MONTH_DAYS) <= most),
        STEPS[grain][-1],
    )
    half = timedelta(days=BUCKET_DAYS[grain] / 2 if grain != "month" else 15)
    start, end = _start(first) - half, _start(last) + half
    if kind == "H":
        tick0, dtick, fmt = _start(first).replace(hour=0), n * DAY_MS // 24, FORMATS["H"]  # from midnight
    elif kind == "D":
        tick0, dtick, fmt = _start(first).replace(hour=0), n * DAY_MS, FORMATS["D" if grain != "hour" else "H"]
    else:
        tick0, dtick, fmt = _start(first).replace(day=1, hour=0), f"M{n}", FORMATS["Y" if n == 12 else "M"]
        if n == 12:
            tick0 = tick0.replace(month=1)
    return {
        "type": "date",
        "tickmode": "linear",
        "tick0": _iso(tick0),
        "dtick": dtick,
        "tickformat": fmt,
        "hoverformat": HOVER[grain],
        "range": [start.isoformat(), end.isoformat()],
    }


def _iso(at: datetime) -> str:
    """A tick's origin as Plotly reads it: the day alone at midnight (as before hours), else day and time."""
    return at.date().isoformat() if at.time() == datetime.min.time() else at.isoformat()


def bar_width_ms(grain: Grain) -> float:
    """A bar's width on a date axis: 80 % of the shortest bucket (Plotly makes a lone bar a hairline)."""
    return 0.8 * BUCKET_DAYS[grain] * DAY_MS


# --- reading an axis back (pure; for tests and the browser test's checks) --------------------------


@dataclass(frozen=True)
class TimeTicks:
    """What a date x-axis shows: the step between ticks, the label format, and the labels in its range."""

    step_days: float
    """Days between two ticks (a month counts `MONTH_DAYS`)."""
    format: str
    """The d3-time-format of the labels ('' when Plotly picks it)."""
    format_days: float
    """The finest unit the format tells apart, in days (1 for a day, 1/24 for an hour, 28 for a month)."""
    labels: list[str]
    """The labels of the ticks inside the axis range, as the format writes them (lines joined by a space)."""


def format_days(fmt: str) -> float:
    """The finest unit a d3-time-format string tells apart, in days (inf when it names no date part)."""
    return min((UNIT_DAYS[d] for d in re.findall(r"%[-_0]?([A-Za-z])", fmt) if d in UNIT_DAYS), default=float("inf"))


def _parse(value: Any) -> datetime:
    text = str(value).replace("T", " ")
    return (
        datetime.fromisoformat(text) if " " in text else datetime.combine(date.fromisoformat(text), datetime.min.time())
    )


def _add_months(day: datetime, months: int) -> datetime:
    year, month = divmod(day.month - 1 + months, 12)
    return day.replace(year=day.year + year, month=month + 1)


def time_ticks(fig: Any) -> TimeTicks:
    """The x-axis ticks of a figure with a date axis set by `axis_settings`; an axis left to Plotly reads as
    step 0 and format '' (Plotly would pick, and may pick a time of day)."""
    axis = fig.layout.xaxis
    if axis.dtick is None or axis.range is None or axis.tick0 is None:
        return TimeTicks(0.0, axis.tickformat or "", format_days(axis.tickformat or ""), [])
    fmt = axis.tickformat or ""
    start, end = _parse(axis.range[0]), _parse(axis.range[1])
    tick, months = _parse(axis.tick0), None
    if isinstance(axis.dtick, str) and axis.dtick.startswith("M"):
        months = int(axis.dtick[1:])
        step_days = MONTH_DAYS * months
    else:
        step_days = float(axis.dtick) / DAY_MS
    if months:
        first = ((start.year - tick.year) * 12 + start.month - tick.month) // months - 1
    else:
        first = int((start - tick) / timedelta(days=step_days)) - 1
    labels = []
    for i in range(first, first + 100_000):
        at = _add_months(tick, i * months) if months else tick + timedelta(days=i * step_days)
        if at > end:
            break
        if at >= start:
            labels.append(at.strftime(fmt).replace("\n", " "))
    return TimeTicks(step_days, fmt, format_days(fmt), labels)
