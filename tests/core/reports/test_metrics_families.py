"""The split by family pair (`santa_core.reports.metrics_families`): a panel's pair is unordered (Claude + GPT
and GPT + Claude are one pair), a one-family panel is a pair of its own, a person is their own family, and each
pair's agreement, Cohen's κ and escape rate are the headline's definitions over the pair's sums.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from santa_core.reports import metrics as m
from santa_core.reports.metrics_families import PanelTotals, family_pair, family_pair_figures
from tests.support.report_figures import close

OPUS, HAIKU, SONNET = "claude-opus-5", "claude-haiku-4-5", "anthropic:claude-sonnet-5-5"
MINI, GPT55 = "openai:gpt-5.4-mini", "openai:gpt-5.5"


@pytest.mark.parametrize(
    ("b", "c", "pair"),
    [
        pytest.param(OPUS, MINI, ("Claude", "GPT"), id="claude-b-gpt-c"),
        pytest.param(MINI, OPUS, ("Claude", "GPT"), id="gpt-b-claude-c-is-the-same-pair"),
        pytest.param(OPUS, HAIKU, ("Claude", "Claude"), id="one-family"),
        pytest.param(SONNET, SONNET, ("Claude", "Claude"), id="one-model-one-family"),
        pytest.param(MINI, GPT55, ("GPT", "GPT"), id="one-other-family"),
        pytest.param("person", OPUS, ("Claude", "person"), id="a-person-is-their-own-family"),
        pytest.param("local:qwen3:32b", MINI, ("GPT", "Qwen"), id="name-order"),
    ],
)
def test_a_family_pair_is_unordered(b: str, c: str, pair: tuple[str, str]) -> None:
    assert family_pair(b, c) == family_pair(c, b) == pair


# Two Claude-only panels and a Claude/GPT panel in both slot orders (counts chosen by hand):
#
#   panel (B / C)          runs shipped escapes | pp pf fp ff unscored
#   opus / haiku            3     2      2      |  6  1  1  0   1
#   sonnet / sonnet         1     1      1      |  2  0  0  1   0
#   sonnet / gpt-5.4-mini   2     2      0      |  5  1  0  2   0
#   gpt-5.5 / opus          2     1      1      |  3  0  1  1   2
#   opus / person           1     1      0      |  4  0  0  0   0
#
# Claude + Claude: runs 4, shipped 3, escapes 3 (2 runs); pp 8 pf 1 fp 1 ff 1 → 11 pairs
#   agreement 1 ÷ (1 + 1 + 1) = 1/3; B PASS 9, C PASS 9 → chance (81 + 4)/121 → κ (99 − 85)/(121 − 85) = 7/18
#   escape rate 3/3 = 1
# Claude + GPT: runs 4, shipped 3, escapes 1 (1 run); pp 8 pf 1 fp 1 ff 3 → 13 pairs
#   agreement 3 ÷ (3 + 1 + 1) = 3/5; B PASS 9, C PASS 9 → chance (81 + 16)/169 → κ (143 − 97)/(169 − 97) = 23/36
#   escape rate 1/3
# Claude + person: runs 1; pp 4 only → agreement and κ undefined; escape rate 0/1 = 0
PANELS = [
    PanelTotals(
        reviewer_b=OPUS, reviewer_c=HAIKU, runs=3, shipped=2, escapes=2, escaped_runs=1, pp=6, pf=1, fp=1, unscored=1
    ),
    PanelTotals(reviewer_b=SONNET, reviewer_c=SONNET, runs=1, shipped=1, escapes=1, escaped_runs=1, pp=2, ff=1),
    PanelTotals(reviewer_b=SONNET, reviewer_c=MINI, runs=2, shipped=2, pp=5, pf=1, ff=2),
    PanelTotals(
        reviewer_b=GPT55, reviewer_c=OPUS, runs=2, shipped=1, escapes=1, escaped_runs=1, pp=3, fp=1, ff=1, unscored=2
    ),
    PanelTotals(reviewer_b=OPUS, reviewer_c="person", runs=1, shipped=1, pp=4),
]


def test_split_by_family_pair_with_known_verdicts() -> None:
    pairs = family_pair_figures(PANELS)
    assert [(p.pair, p.two_families, p.runs, p.shipped, p.escapes, p.escaped_runs) for p in pairs] == [
        ("Claude + Claude", False, 4, 3, 3, 2),  # 4 runs each: then by name
        ("Claude + GPT", True, 4, 3, 1, 1),  # both slot orders in one row
        ("Claude + person", True, 1, 1, 0, 0),
    ]
    same, two, person = pairs
    assert (same.pairs, same.both, same.b_only, same.c_only, same.pass_both, same.unscored) == (11, 1, 1, 1, 8, 1)
    assert (two.pairs, two.both, two.b_only, two.c_only, two.pass_both, two.unscored) == (13, 3, 1, 1, 8, 2)
    assert close(same.agreement, Fraction(1, 3)) and close(same.kappa, Fraction(7, 18)) and same.escape_rate == 1.0
    assert close(two.agreement, Fraction(3, 5)) and close(two.kappa, Fraction(23, 36))
    assert close(two.escape_rate, Fraction(1, 3))
    assert (person.agreement, person.kappa, person.escape_rate) == (None, None, 0.0)


def test_each_pair_uses_the_headline_definitions() -> None:
    for p in family_pair_figures(PANELS):
        assert p.agreement == m.agreement(p.both, p.b_only, p.c_only)
        assert p.kappa == m.cohens_kappa(p.pass_both, p.c_only, p.b_only, p.both)
        assert p.escape_rate == m.escape_rate(p.escapes, p.shipped)


def test_run_rows_and_criterion_rows_of_one_panel_sum_to_the_same_figures() -> None:
    """Storage sends a panel's run counts and its criterion counts as two rows: the split is the same."""
    apart = []
    for row in PANELS:
        runs = {k: getattr(row, k) for k in ("runs", "shipped", "escapes", "escaped_runs")}
        apart += [
            PanelTotals(reviewer_b=row.reviewer_b, reviewer_c=row.reviewer_c, **runs),
            row.model_copy(update=dict.fromkeys(runs, 0)),
        ]
    assert family_pair_figures(reversed(apart)) == family_pair_figures(PANELS)


def test_pairs_add_up_to_the_whole_view() -> None:
    pairs = family_pair_figures(PANELS)
    assert sum(p.runs for p in pairs) == sum(r.runs for r in PANELS) == 9
    assert sum(p.pairs for p in pairs) == sum(r.pp + r.pf + r.fp + r.ff for r in PANELS) == 28


def test_no_panels_no_pairs() -> None:
    assert family_pair_figures([]) == []
    [one] = family_pair_figures([PanelTotals(reviewer_b=OPUS, reviewer_c=HAIKU, runs=1)])
    assert (one.pair, one.runs, one.agreement, one.kappa, one.escape_rate) == ("Claude + Claude", 1, None, None, None)
