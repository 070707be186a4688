"""Comparing the figures of a metrics report: its criterion table as tuples of counts, equality
to 1e-9 through dicts and lists (PostgreSQL may sum floats in another order), and closeness to an
exact fraction.
"""

from __future__ import annotations

from fractions import Fraction

from santa_core.reports import metrics as m

Totals = tuple[int, int, int, int, int, int, int, int]


def table(report: m.MetricsReport) -> dict[str, Totals]:
    """criterion → (pp, pf, fp, ff, b_fail, c_fail, check_fail, unscored)."""
    return {
        c.criterion: (c.pass_both, c.c_only, c.b_only, c.both, c.b_fail, c.c_fail, c.check_fail, c.unscored)
        for c in report.criteria
    }


def same(a: object, b: object) -> bool:
    """Equal, floats to 1e-9 (PostgreSQL may sum floats in another order), through dicts and lists."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) < 1e-9
    return a == b


def close(value: float | None, expected: float | Fraction, tol: float = 1e-9) -> bool:
    return value is not None and abs(value - float(expected)) < tol
