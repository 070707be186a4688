"""Reviewer agreement, Cohen's κ and escape rate split by the panel's family pair.

Models of one family share training data and methods, so they share blind spots: two reviewers of one
family tend to miss the same defects, and what both miss ships. Two families whose misses are independent
should show a lower escape rate than one family. This split lets a team see whether that holds on its own
history: the same figures as the headline (`santa_core.reports.metrics`: `agreement`, `cohens_kappa`,
`escape_rate`, nothing re-derived), one row per family pair.

A family pair is unordered: Claude (B) + GPT (C) and GPT (B) + Claude (C) are one pair, "Claude + GPT".
A one-family panel ("Claude + Claude") is a pair of its own, the one to compare against. A person in a
slot is their own family ("person").

Pure: storage sums the counts per stored panel (reviewer B's and C's model ids) in SQL and hands the rows
here; this module maps each panel to its family pair, sums per pair, and divides.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from santa_core.providers import UNKNOWN_FAMILY, family
from santa_core.reports.metrics import agreement, cohens_kappa, escape_rate

JOIN = " + "
"""Between the two family names of a pair."""


class PanelTotals(BaseModel):
    """Sums over the runs of one stored panel (B's and C's model ids as the run row holds them).

    Storage may send a panel's run counts and its criterion counts as separate rows (from separate fact
    tables); rows of one pair are summed field by field, so either way gives the same figures.
    """

    reviewer_b: str
    reviewer_c: str
    runs: int = 0
    shipped: int = 0
    escapes: int = 0
    escaped_runs: int = 0
    pp: int = 0
    """Both reviewers PASS."""
    pf: int = 0
    """B PASS, C FAIL (C only)."""
    fp: int = 0
    """B FAIL, C PASS (B only)."""
    ff: int = 0
    """Both FAIL."""
    unscored: int = 0


SUMMED = ("runs", "shipped", "escapes", "escaped_runs", "pp", "pf", "fp", "ff", "unscored")
"""The counts of PanelTotals summed per family pair."""


class FamilyPairFigures(BaseModel):
    """Agreement, κ and escape rate over the runs of one family pair."""

    pair: str
    """"Claude + GPT": the two families in name order (B and C swapped are one pair)."""
    two_families: bool
    """False for a one-family panel ("Claude + Claude")."""
    runs: int
    shipped: int
    escapes: int
    escaped_runs: int
    pairs: int
    """Compared PASS/FAIL pairs of B against C (criterion and round)."""
    both: int
    b_only: int
    c_only: int
    pass_both: int
    unscored: int
    agreement: float | None
    kappa: float | None
    escape_rate: float | None


def family_pair(reviewer_b: str, reviewer_c: str) -> tuple[str, str]:
    """The families of a panel in name order: (B, C) and (C, B) give the same pair."""
    first, second = sorted((family(reviewer_b), family(reviewer_c)))
    return first, second


def pair_name(pair: tuple[str, str]) -> str:
    """'Claude + GPT'."""
    return JOIN.join(pair)


def family_pair_figures(rows: Iterable[PanelTotals]) -> list[FamilyPairFigures]:
    """One row per family pair in the rows, most runs first (then by name), each with the headline's
    definitions of agreement, Cohen's κ and escape rate applied to the pair's sums."""
    sums: dict[tuple[str, str], dict[str, int]] = {}
    for row in rows:
        into = sums.setdefault(family_pair(row.reviewer_b, row.reviewer_c), dict.fromkeys(SUMMED, 0))
        for name in SUMMED:
            into[name] += getattr(row, name)
    out = [
        FamilyPairFigures(
            pair=pair_name(pair),
            two_families=pair[0] != pair[1] and not any(f.startswith(UNKNOWN_FAMILY) for f in pair),
            runs=s["runs"],
            shipped=s["shipped"],
            escapes=s["escapes"],
            escaped_runs=s["escaped_runs"],
            pairs=s["pp"] + s["pf"] + s["fp"] + s["ff"],
            both=s["ff"],
            b_only=s["fp"],
            c_only=s["pf"],
            pass_both=s["pp"],
            unscored=s["unscored"],
            agreement=agreement(s["ff"], s["fp"], s["pf"]),
            kappa=cohens_kappa(s["pp"], s["pf"], s["fp"], s["ff"]),
            escape_rate=escape_rate(s["escapes"], s["shipped"]),
        )
        for pair, s in sums.items()
    ]
    return sorted(out, key=lambda p: (-p.runs, p.pair))
