"""Everything the desk states with confidence, in one document: the spot-check escape rate by group, the panels'
claim against their reviewers' miss rates, and reviewer calibration (the Metrics page and `metrics --json`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from santa_core.reports.calibration import MIN_LABELS, CalibrationRow, PanelClaim, calibrate, label_counts, panel_claims
from santa_core.reports.confidence import CONFIDENCE, GROUPINGS, EscapeRate, Grouping, Rate, escape_rates
from santa_core.reports.labels import LabelSource, ModelVerdict, PersonLabel, SpotCheckOutcome
from santa_core.reports.metrics import MetricsReport


class SpotCheckEscapeRate(BaseModel):
    """`metrics --json`'s `spot_check_escape_rate`: escaped spot-checks ÷ spot-checks, by group, and the panels."""

    confidence: float = CONFIDENCE
    method: str = "Clopper-Pearson exact binomial interval"
    overall: Rate
    groups: dict[Grouping, list[EscapeRate]]
    panels: list[PanelClaim]


class Calibration(BaseModel):
    """`metrics --json`'s `calibration`: each model's recall and false-alarm rate per criterion against people."""

    confidence: float = CONFIDENCE
    min_labels: int = MIN_LABELS
    labels: dict[LabelSource, int]
    """Labels (one per run, round and criterion) by where the person's judgement came from."""
    rows: list[CalibrationRow]


class ConfidenceFigures(BaseModel):
    """The two documents together."""

    spot_check_escape_rate: SpotCheckEscapeRate
    calibration: Calibration


def confidence_figures(
    outcomes: Sequence[SpotCheckOutcome], labels: Iterable[PersonLabel], verdicts: Iterable[ModelVerdict]
) -> ConfidenceFigures:
    """The figures of the outcomes (escape rate) and of the labels joined with the models' verdicts (calibration; the
    panels' claim from the labels that are not spot-checks)."""
    labels, verdicts = list(labels), list(verdicts)
    rows = calibrate(labels, verdicts)
    groups: dict[Grouping, list[EscapeRate]] = {g: escape_rates(outcomes, g) for g in GROUPINGS if g != "all"}
    overall = escape_rates(outcomes, "all")
    # The claim tests the spot-checks' escapes against miss rates that must not contain them: a spot-check label is
    # a round both reviewers passed, so its every FAIL is a miss of both and would lift the product to the escape
    # rate it is tested against, hiding the correlated misses the claim is there to catch.
    independent = calibrate([label for label in labels if label.source != "spot_check"], verdicts)
    escape = SpotCheckEscapeRate(
        overall=overall[0].escapes if overall else Rate(k=0, n=0),
        groups=groups,
        panels=panel_claims(outcomes, independent),
    )
    return ConfidenceFigures(
        spot_check_escape_rate=escape, calibration=Calibration(labels=label_counts(labels), rows=rows)
    )


def document(report: MetricsReport, figures: ConfidenceFigures) -> str:
    """The metrics report with the two keys beside its own (`metrics --json` and the page's JSON download)."""
    whole = json.loads(report.model_dump_json()) | figures.model_dump(mode="json")
    return json.dumps(whole, indent=2, ensure_ascii=False)
