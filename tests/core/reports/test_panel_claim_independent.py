"""The method's claim (a panel's spot-check escape rate against q_B × q_C) takes its miss rates from labels that are
not the spot-checks themselves: every spot-check label is a round both reviewers passed, so counting it would make
each escape a miss of both and lift the product to the rate it is tested against. Counts written out by hand."""

from __future__ import annotations

from datetime import UTC, datetime

from santa_core.reports.labels import ModelVerdict, PersonLabel, SpotCheckOutcome
from santa_core.reports.spot_figures import confidence_figures

AT = datetime(2026, 12, 1, tzinfo=UTC)
B, C = "claude-haiku-4-5", "gpt-5.4-nano"


def person_reviews() -> tuple[list[PersonLabel], list[ModelVerdict]]:
    """60 rounds a person failed on x; B misses 3 of them and C 3 others (q = 0.05 each, product 0.0025)."""
    labels, verdicts = [], []
    for r in range(1, 61):
        labels.append(
            PersonLabel(run_id=r, round_no=1, criterion="x", verdict="FAIL", source="person_review", person="p", at=AT)
        )
        verdicts += [
            ModelVerdict(run_id=r, round_no=1, slot="B", model=B, criterion="x", verdict="PASS" if r <= 3 else "FAIL"),
            ModelVerdict(
                run_id=r, round_no=1, slot="C", model=C, criterion="x", verdict="PASS" if 4 <= r <= 6 else "FAIL"
            ),
        ]
    return labels, verdicts


def spot_checks() -> tuple[list[SpotCheckOutcome], list[PersonLabel], list[ModelVerdict]]:
    """100 spot-checks of shipped rounds (both passed x), 20 of them failed on x: 20 % escapes."""
    outcomes, labels, verdicts = [], [], []
    for i in range(100):
        run, bad = 1000 + i, i < 20
        outcomes.append(
            SpotCheckOutcome(
                spot_check_id=i + 1,
                run_id=run,
                round_no=1,
                rubric_name="r",
                rubric_version=1,
                domain="",
                reviewer_b=B,
                reviewer_c=C,
                submitted_at=AT,
                judged=("x",),
                failed=("x",) if bad else (),
            )
        )
        labels.append(
            PersonLabel(
                run_id=run,
                round_no=1,
                criterion="x",
                verdict="FAIL" if bad else "PASS",
                source="spot_check",
                person="p",
                at=AT,
            )
        )
        verdicts += [
            ModelVerdict(run_id=run, round_no=1, slot=s, model=m, criterion="x", verdict="PASS")
            for s, m in (("B", B), ("C", C))
        ]
    return outcomes, labels, verdicts


def test_a_panel_that_misses_together_is_flagged_although_its_spot_checks_are_labels_too() -> None:
    labels, verdicts = person_reviews()
    outcomes, spot_labels, spot_verdicts = spot_checks()
    figures = confidence_figures(outcomes, labels + spot_labels, verdicts + spot_verdicts)
    [claim] = figures.spot_check_escape_rate.panels
    assert {m: (r.k, r.n) for m, r in claim.misses.items()} == {B: (3, 60), C: (3, 60)}
    assert claim.product == 0.05 * 0.05
    assert (claim.escapes.k, claim.escapes.n) == (20, 100) and claim.correlated
    # The calibration table itself still counts every label: the spot-checks' 20 misses of each model are in it.
    row_b = next(r for r in figures.calibration.rows if r.model == B)
    assert (row_b.miss.k, row_b.miss.n) == (3 + 20, 60 + 20)
