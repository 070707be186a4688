"""Reviewer calibration against people, and the method's claim checked against the spot-checks.

Every person judgement the desk holds is a label (`santa_core.reports.labels.PersonLabel`): a person's verdict
on one criterion of one round's text. Joined with what each model said of the same criterion of the same round
(`ModelVerdict`), per model and criterion:

- recall = model FAIL ÷ person FAIL (caught ÷ should have been caught); its miss rate q = 1 − recall;
- false-alarm rate = model FAIL ÷ person PASS;

each with its Clopper–Pearson interval and n. Where two people labelled one criterion of one round, the newest
label counts (a later, closer look supersedes). Slots are generic: a third reviewer's slot "D" is one more model.

The method's claim: a panel ships a defect only when every reviewer misses it. If they miss independently, the
chance that a defective criterion gets past the panel is the product of their miss rates (q_B × q_C). A
spot-check's failed criterion is such a defect that got past, and a text holds the defect at most always, so a
panel's spot-check escape rate on a criterion is at most that product when misses are independent. An escape
rate whose interval lies above the product's interval says the reviewers miss together (correlated misses).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import prod

from pydantic import BaseModel

from santa_core.reports.confidence import Rate, complement, criterion_escapes, rate
from santa_core.reports.labels import LabelSource, ModelVerdict, PersonLabel, SpotCheckOutcome

MIN_LABELS = 20
"""Person FAIL labels a model needs on a criterion before the desk states its miss rate in a sentence (Settings),
or proposes it as a third reviewer: below this the interval is too wide to say anything useful (at n = 20 and
no miss, the upper bound is still 17 %)."""

Key = tuple[int, int, str]
"""(run, round, criterion): what one label judges."""


class CalibrationRow(BaseModel):
    """How one model did on one criterion against people."""

    model: str
    criterion: str
    recall: Rate
    """k = person FAIL the model FAILed too, n = person FAIL."""
    miss: Rate
    """1 − recall: k = person FAIL the model PASSed."""
    false_alarm: Rate
    """k = person PASS the model FAILed, n = person PASS."""
    sources: dict[str, int]
    """Labels behind the row, by where the person's judgement came from."""


def newest_labels(labels: Iterable[PersonLabel]) -> dict[Key, PersonLabel]:
    """One label per run, round and criterion: the newest (a later look at the same text supersedes)."""
    out: dict[Key, PersonLabel] = {}
    for label in labels:
        key = (label.run_id, label.round_no, label.criterion)
        if key not in out or label.at >= out[key].at:
            out[key] = label
    return out


def calibrate(labels: Iterable[PersonLabel], verdicts: Iterable[ModelVerdict]) -> list[CalibrationRow]:
    """One row per model and criterion that has at least one label, model name then criterion order."""
    truth = newest_labels(labels)
    counts: dict[tuple[str, str], list[int]] = {}  # caught, person FAIL, false alarms, person PASS
    sources: dict[tuple[str, str], dict[str, int]] = {}
    seen: set[tuple[int, int, str, str]] = set()
    for v in verdicts:
        label = truth.get((v.run_id, v.round_no, v.criterion))
        if label is None or (v.run_id, v.round_no, v.slot, v.criterion) in seen:
            continue
        seen.add((v.run_id, v.round_no, v.slot, v.criterion))
        c = counts.setdefault((v.model, v.criterion), [0, 0, 0, 0])
        if label.verdict == "FAIL":
            c[0] += v.verdict == "FAIL"
            c[1] += 1
        else:
            c[2] += v.verdict == "FAIL"
            c[3] += 1
        by_source = sources.setdefault((v.model, v.criterion), {})
        by_source[label.source] = by_source.get(label.source, 0) + 1
    rows = []
    for (model, criterion), (caught, fails, alarms, passes) in sorted(counts.items()):
        recall = rate(caught, fails)
        rows.append(
            CalibrationRow(
                model=model,
                criterion=criterion,
                recall=recall,
                miss=complement(recall),
                false_alarm=rate(alarms, passes),
                sources=sources[(model, criterion)],
            )
        )
    return rows


def miss_rates(rows: Iterable[CalibrationRow]) -> dict[tuple[str, str], Rate]:
    """Each model's miss rate per criterion, by (model, criterion)."""
    return {(r.model, r.criterion): r.miss for r in rows}


def weakest(rows: Iterable[CalibrationRow], model: str, minimum: int = MIN_LABELS) -> CalibrationRow | None:
    """The model's criterion with the highest miss rate over at least `minimum` person FAIL labels."""
    mine = [r for r in rows if r.model == model and r.miss.n >= minimum]
    return max(mine, key=lambda r: (r.miss.value or 0.0, r.miss.n), default=None)


class PanelClaim(BaseModel):
    """One panel on one criterion: the spot-check escape rate against the product of its reviewers' miss rates."""

    panel: tuple[str, ...]
    criterion: str
    escapes: Rate
    """Spot-checks of the panel that failed the criterion, of those that judged it."""
    misses: dict[str, Rate]
    """Each reviewer's miss rate on the criterion (q_X), by model, from the labels that are not spot-checks (which
    would count the escapes tested here as misses); a model with no such label is missing."""
    product: float | None = None
    """Π q_X: the escape rate on the criterion the panel can have at most if its reviewers miss independently."""
    product_low: float | None = None
    product_high: float | None = None
    """Π of the lower and of the upper bounds: holds the product whenever every q_X's interval holds its q_X."""
    correlated: bool = False
    """The escape rate's interval lies wholly above the product's: the reviewers miss together."""
    third: str | None = None
    """The calibrated model outside the panel that misses the criterion least (at least MIN_LABELS labels)."""
    with_third: float | None = None
    """The product with that third reviewer (all must pass): what it buys on this criterion."""


def panel_claims(outcomes: Sequence[SpotCheckOutcome], rows: Sequence[CalibrationRow]) -> list[PanelClaim]:
    """One claim per panel and criterion the spot-checks judged, most spot-checks first."""
    q = miss_rates(rows)
    claims = []
    for (panel, criterion), escapes in criterion_escapes(outcomes).items():
        misses = {m: q[(m, criterion)] for m in panel if (m, criterion) in q and q[(m, criterion)].n}
        claim = PanelClaim(panel=panel, criterion=criterion, escapes=escapes, misses=misses)
        if len(misses) == len(set(panel)):
            claim = _with_product(claim, [misses[m] for m in panel], rows)
        claims.append(claim)
    return sorted(claims, key=lambda c: (-c.escapes.n, c.panel, c.criterion))


def _with_product(claim: PanelClaim, misses: list[Rate], rows: Sequence[CalibrationRow]) -> PanelClaim:
    """The claim with its product, the product's bounds, the correlation flag and the best third reviewer."""
    product = prod(r.value or 0.0 for r in misses)
    low, high = prod(r.low or 0.0 for r in misses), prod(r.high or 0.0 for r in misses)
    outside = [
        r for r in rows if r.criterion == claim.criterion and r.model not in claim.panel and r.miss.n >= MIN_LABELS
    ]
    best = min(outside, key=lambda r: (r.miss.value or 0.0, -r.miss.n, r.model), default=None)
    return claim.model_copy(
        update={
            "product": product,
            "product_low": low,
            "product_high": high,
            "correlated": claim.escapes.low is not None and claim.escapes.low > high,
            "third": None if best is None else best.model,
            "with_third": None if best is None else product * (best.miss.value or 0.0),
        }
    )


def label_counts(labels: Iterable[PersonLabel]) -> dict[LabelSource, int]:
    """How many labels (one per run, round and criterion) come from each source."""
    out: dict[LabelSource, int] = {}
    for label in newest_labels(labels).values():
        out[label.source] = out.get(label.source, 0) + 1
    return out
