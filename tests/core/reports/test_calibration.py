"""Calibration equals the truth of a seeded history; the panel's claim against the product of miss rates."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from santa_core.reports.calibration import MIN_LABELS, calibrate, panel_claims, weakest
from santa_core.reports.confidence import clopper_pearson
from santa_core.reports.labels import ModelVerdict, PersonLabel, SpotCheckOutcome
from santa_core.reports.spot_figures import confidence_figures

T0 = datetime(2026, 11, 2, tzinfo=UTC)


def label(run: int, criterion: str, verdict: str, at: datetime = T0, source: str = "person_review") -> PersonLabel:
    return PersonLabel(
        run_id=run, round_no=1, criterion=criterion, verdict=verdict, source=source, person="ann@example.com", at=at
    )


def said(run: int, model: str, criterion: str, verdict: str, slot: str = "C") -> ModelVerdict:
    return ModelVerdict(run_id=run, round_no=1, slot=slot, model=model, criterion=criterion, verdict=verdict)


def test_a_stand_in_reviewer_is_calibrated_to_its_truth() -> None:
    # A stand-in reviewer misses `accuracy` with probability 0.2 and raises a false alarm on `tone` with
    # probability 0.05; people fail 40 % of the texts on each criterion. Fixed seed, 1,000 rounds.
    rng = random.Random(35)
    labels, verdicts, truth = [], [], {"caught": 0, "fails": 0, "alarms": 0, "passes": 0}
    for run in range(1000):
        for criterion, miss_p, alarm_p in (("accuracy", 0.2, 0.0), ("tone", 0.0, 0.05)):
            defect = rng.random() < 0.4
            labels.append(label(run, criterion, "FAIL" if defect else "PASS"))
            flags = (rng.random() >= miss_p) if defect else (rng.random() < alarm_p)
            verdicts.append(said(run, "stand-in", criterion, "FAIL" if flags else "PASS"))
            if criterion == "accuracy" and defect:
                truth["caught"] += flags
                truth["fails"] += 1
            if criterion == "tone" and not defect:
                truth["alarms"] += flags
                truth["passes"] += 1
    rows = {r.criterion: r for r in calibrate(labels, verdicts)}
    accuracy, tone = rows["accuracy"], rows["tone"]
    assert (accuracy.recall.k, accuracy.recall.n) == (truth["caught"], truth["fails"])
    assert (tone.false_alarm.k, tone.false_alarm.n) == (truth["alarms"], truth["passes"])
    assert accuracy.miss.low < 0.2 < accuracy.miss.high  # the true miss rate lies within the stated interval
    assert tone.false_alarm.low < 0.05 < tone.false_alarm.high
    assert accuracy.false_alarm.k == 0 and tone.recall.k == tone.recall.n
    assert accuracy.sources == {"person_review": 1000}


def test_the_newest_label_counts_and_a_slot_counts_once() -> None:
    labels = [label(1, "tone", "PASS", T0), label(1, "tone", "FAIL", T0 + timedelta(hours=1), "escalation")]
    verdicts = [said(1, "m", "tone", "PASS"), said(1, "m", "tone", "PASS"), said(2, "m", "tone", "FAIL")]
    (row,) = calibrate(labels, verdicts)
    assert (row.recall.k, row.recall.n, row.false_alarm.n) == (0, 1, 0)
    assert row.sources == {"escalation": 1}


def test_no_fail_label_is_no_recall() -> None:
    (row,) = calibrate([label(1, "tone", "PASS")], [said(1, "m", "tone", "FAIL")])
    assert (row.recall.n, row.recall.value, row.miss.value, row.recall.low) == (0, None, None, None)
    assert (row.false_alarm.k, row.false_alarm.n, row.false_alarm.value) == (1, 1, 1.0)
    assert calibrate([], []) == []


def misses(model: str, criterion: str, missed: int, of: int, first_run: int) -> tuple[list, list]:
    """`of` person FAIL labels on `criterion`, `missed` of them PASSed by `model`."""
    labels = [label(first_run + i, criterion, "FAIL") for i in range(of)]
    verdicts = [said(first_run + i, model, criterion, "PASS" if i < missed else "FAIL") for i in range(of)]
    return labels, verdicts


def spot(i: int, b: str, c: str, failed: bool, d: str | None = None) -> SpotCheckOutcome:
    return SpotCheckOutcome(
        spot_check_id=i,
        run_id=100_000 + i,
        round_no=1,
        rubric_name="general",
        rubric_version=1,
        domain="general",
        reviewer_b=b,
        reviewer_c=c,
        reviewer_d=d,
        submitted_at=T0,
        judged=("accuracy",),
        failed=("accuracy",) if failed else (),
    )


def test_the_panel_against_the_product_of_its_miss_rates() -> None:
    labels, verdicts = [], []
    for model, missed, first in (
        ("claude-haiku-4-5", 100, 0),
        ("openai:gpt-5.4-nano", 200, 1000),
        ("gemini-2.5-flash", 40, 2000),
    ):
        more = misses(model, "accuracy", missed, 400, first)
        labels += more[0]
        verdicts += more[1]
    rows = calibrate(labels, verdicts)
    # q_B = 100/400, q_C = 200/400: both miss 1/8 of defects if they miss independently. 30 of 100 spot-checks
    # escaping is far above: their misses go together.
    outcomes = [spot(i, "claude-haiku-4-5", "openai:gpt-5.4-nano", i < 30) for i in range(100)]
    (claim,) = panel_claims(outcomes, rows)
    assert claim.product == pytest.approx(0.25 * 0.5)
    assert claim.product_high == pytest.approx(clopper_pearson(100, 400)[1] * clopper_pearson(200, 400)[1])
    assert claim.product_low == pytest.approx(clopper_pearson(100, 400)[0] * clopper_pearson(200, 400)[0])
    assert (claim.escapes.k, claim.escapes.n) == (30, 100)
    assert claim.correlated
    assert claim.third == "gemini-2.5-flash" and claim.with_third == pytest.approx(0.125 * 0.1)
    calm = [spot(i, "claude-haiku-4-5", "openai:gpt-5.4-nano", i < 5) for i in range(100)]
    assert not panel_claims(calm, rows)[0].correlated  # 5 % is within what independence allows


def test_a_third_reviewer_is_part_of_the_panel_and_of_its_product() -> None:
    labels, verdicts = [], []
    for model, missed, first in (("b-model", 100, 0), ("c-model", 200, 1000), ("d-model", 40, 2000)):
        more = misses(model, "accuracy", missed, 400, first)
        labels += more[0]
        verdicts += more[1]
    rows = calibrate(labels, verdicts)
    # Runs judged by B, C and D are not pooled with B and C alone: an escape there is a miss of all three.
    outcomes = [spot(i, "b-model", "c-model", i < 2, d="d-model") for i in range(50)]
    outcomes += [spot(100 + i, "c-model", "b-model", i < 5) for i in range(50)]
    claims = {c.panel: c for c in panel_claims(outcomes, rows)}
    trio, pair = claims[("b-model", "c-model", "d-model")], claims[("b-model", "c-model")]
    assert (trio.escapes.k, trio.escapes.n, pair.escapes.k, pair.escapes.n) == (2, 50, 5, 50)
    assert trio.product == pytest.approx(0.25 * 0.5 * 0.1) and pair.product == pytest.approx(0.25 * 0.5)
    assert set(trio.misses) == {"b-model", "c-model", "d-model"}


def test_a_panel_with_an_uncalibrated_reviewer_states_no_product() -> None:
    labels, verdicts = misses("claude-haiku-4-5", "accuracy", 1, 4, 0)
    (claim,) = panel_claims([spot(1, "claude-haiku-4-5", "mistral-small", True)], calibrate(labels, verdicts))
    assert claim.product is None and not claim.correlated and list(claim.misses) == ["claude-haiku-4-5"]


def test_the_weakest_criterion_needs_enough_labels() -> None:
    few = misses("m", "tone", 3, MIN_LABELS - 1, 0)
    many = misses("m", "accuracy", 4, MIN_LABELS, 100)
    rows = calibrate(few[0] + many[0], few[1] + many[1])
    found = weakest(rows, "m")
    assert found is not None and found.criterion == "accuracy"  # tone misses more, but over too few labels
    assert weakest(rows, "other") is None


def test_the_document_has_both_keys() -> None:
    labels, verdicts = misses("m", "accuracy", 1, 3, 0)
    doc = confidence_figures([spot(1, "m", "m", False)], labels, verdicts).model_dump(mode="json")
    assert doc["spot_check_escape_rate"]["overall"] == {
        "k": 0,
        "n": 1,
        "low": 0.0,
        "high": pytest.approx(0.975),
        "value": 0.0,
    }
    assert doc["calibration"]["labels"] == {"person_review": 3}
    assert doc["calibration"]["rows"][0]["miss"]["k"] == 1
    empty = confidence_figures([], [], []).model_dump(mode="json")
    assert empty["spot_check_escape_rate"]["overall"]["value"] is None
