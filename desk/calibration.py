"""Gathers what the confidence figures are computed from: the spot-checks, every label, the models' verdicts.

The spot-check queue has its own store (`SpotCheckStore`: `outcomes()` and `labels()`); calibration adds the
labels of person reviews and resolved escalations (`LabelStore`).
"""

from __future__ import annotations

from typing import Protocol

from santa_core.reports.labels import PersonLabel, SpotCheckOutcome
from santa_core.reports.spot_figures import ConfidenceFigures, confidence_figures
from storage.labels import LabelStore
from storage.spot_checks import SpotCheckStore
from storage.transactions import Database, StoreBase


class SpotCheckSource(Protocol):
    """What the spot-check store gives the figures."""

    def outcomes(self) -> list[SpotCheckOutcome]:
        """Every submitted spot-check."""
        ...

    def labels(self) -> list[PersonLabel]:
        """Every criterion a person judged in a spot-check."""
        ...


def spot_checks(db: Database | StoreBase) -> SpotCheckSource:
    """The desk's spot-check store."""
    return SpotCheckStore(db)


def figures(db: Database | StoreBase, spot: SpotCheckSource | None = None) -> ConfidenceFigures:
    """The spot-check escape rate and the reviewers' calibration over the whole history (four reads)."""
    spot = spot_checks(db) if spot is None else spot
    store = LabelStore(db)
    labels = store.labels() + spot.labels()
    verdicts = store.model_verdicts({(label.run_id, label.round_no) for label in labels})
    return confidence_figures(spot.outcomes(), labels, verdicts)


def criterion_names(db: Database | StoreBase) -> dict[str, str]:
    """Criterion id → name for the figures' tables and sentences."""
    return LabelStore(db).criterion_names()
