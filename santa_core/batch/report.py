"""What a batch says: the cost of a sample against full verification, each item's status, the
stopping rule, the export, and the one view of a batch the Batch page renders. Pure over the store.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from statistics import fmean

from santa_core import pricing
from santa_core.batch import sampling, stopping
from santa_core.batch.file import BatchItemOut, write_batch
from santa_core.batch.formats import batch_format
from santa_core.batch.store import (
    Batch,
    BatchChange,
    BatchConfig,
    Item,
    PatternRecord,
    SampledReview,
    SampleProgress,
    Store,
)
from santa_core.models import Rubric

VERIFIED, FAILED, FIXED, FIXED_BY_HAND, NEEDS_FIX, NOT_SAMPLED = (
    "verified",
    "failed",
    "fixed",
    "fixed by hand",
    "needs fix",
    "not sampled",
)
"""An item's status in the export: `verified` (a sample passed it as it stands), `fixed` (a pattern's fix
changed it), `fixed by hand`, `needs fix` (a fix could not reach it), `failed` (undecided), `not sampled`."""


@dataclass
class CostEstimate:
    """What reviewing one sample costs against reviewing every item with both reviewers (USD, about), and what
    full verification would cost with the fixes it would need (to set against what a batch actually spent)."""

    items: int
    sample: int
    sample_usd: float
    full_usd: float
    """Every item reviewed by both reviewers, one call at a time."""
    message_batches: bool
    failing: int | None = None
    """Items full verification would find failing: the first finished sample's failure share of all items
    (None before a sample is in)."""
    fix_usd: float = 0.0
    """The fix agent calls full verification would need: one per failing item, at the average item's size."""

    @property
    def share(self) -> float:
        """One sample's review cost as a share of full verification's (reviews on both sides)."""
        return self.sample_usd / self.full_usd if self.full_usd else 0.0

    @property
    def full_with_fixes_usd(self) -> float:
        """Full verification with its fixes: every item reviewed by both reviewers plus a fix call per failing item."""
        return self.full_usd + self.fix_usd

    def spent_share(self, spent_usd: float) -> float | None:
        """What a batch spent (its reviews and its fixes) as a share of full verification with its fixes."""
        return spent_usd / self.full_with_fixes_usd if self.full_with_fixes_usd else None

    def how(self) -> str:
        """How the share of full verification is computed, for the page and the command line."""
        if self.failing is None:
            fixes = "no fixes yet (how many items fail is known once a sample is in)"
        else:
            fixes = f"a fix agent call for each of the about {self.failing:,} items the first sample says fail"
        return (
            f"Full verification is all {self.items:,} items reviewed by both reviewers plus {fixes}; what was "
            "spent is every call of this batch: its samples' reviews and screens and its fixes, failed and "
            "cut-off calls at their estimate."
        )


@dataclass(frozen=True)
class BatchView:
    """One batch as the page shows it, read from the store once per render."""

    batch: Batch
    items: list[Item]
    patterns: list[PatternRecord]
    changes: list[BatchChange]
    """Every change a fix recorded, the items that could not take it included."""
    reviews: dict[int, list[SampledReview]]
    """Sample id → its sampled items and where their reviews stand."""
    cost_usd: float
    driving: bool
    """Whether this process reviews the latest sample right now."""

    @property
    def latest(self) -> SampleProgress | None:
        """The newest sample."""
        return self.batch.latest

    @property
    def applied(self) -> list[BatchChange]:
        """The changes that changed an item."""
        return [c for c in self.changes if c.before_hash != c.after_hash]

    def patterns_of(self, sample_id: int) -> list[PatternRecord]:
        """The patterns found in one sample."""
        return [p for p in self.patterns if p.sample_id == sample_id]

    @property
    def waiting(self) -> list[PatternRecord]:
        """Patterns still waiting for a decision."""
        return [p for p in self.patterns if p.waiting]

    @property
    def estimate(self) -> CostEstimate:
        """The next sample's review cost against reviewing every item with both reviewers (and the fixes full
        verification would need, from the first finished sample's failure share)."""
        first = next((s for s in self.batch.samples if s.finished and s.done), None)
        return estimate(
            self.batch.config,
            [len(it.spec) + len(it.output) for it in self.items],
            [it.stratum for it in self.items],
            None if first is None else first.naughty / first.done,
        )

    @property
    def stopping_rule(self) -> stopping.StoppingRule | None:
        """What the latest finished sample says about the batch as it stood when drawn (None before any is in).

        Built from what was drawn: the sample's items no earlier sample drew, per stratum (a uniform
        draw without replacement among them), and what earlier samples left known of the others.
        """
        done = [s for s in self.batch.samples if s.finished]
        if not done:
            return None
        last = done[-1]
        samples = [s for s in self.batch.samples if s.number <= last.number]
        drawn = [_utc(s.created_at) for s in samples]
        changed = [
            {c.item_id for c in self.applied if drawn[j] < _utc(c.created_at) <= drawn[j + 1]}
            for j in range(len(samples) - 1)
        ]
        rule = stopping.rule_from_samples(
            {it.id: it.stratum for it in self.items},
            [{r.item_id: r.nice for r in self.reviews.get(s.id, [])} for s in samples],
            changed,
            self.batch.config.confidence,
        )
        return dataclasses.replace(rule, unverified_fixes=self.unverified_fixes)

    @property
    def statuses(self) -> dict[int, str]:
        """Each item's latest word, replaying its reviews and changes in the order they happened.

        A review says `verified` (passed) or `failed`; a change after it says what was done: `fixed`
        by a pattern, `fixed by hand`, or `needs fix` when a pattern's fix could not reach the item (a
        later fix by another pattern does not hide that). So `verified` only stands for an item a
        sample's reviewers passed as it now stands.
        """
        events: list[tuple[datetime, int, int, str]] = []  # (when, order, item, word)
        for sample in self.batch.samples:
            for review in self.reviews.get(sample.id, []):
                if review.done:  # a sample's reviews come after every change made before it was drawn
                    events.append((_utc(sample.created_at), 0, review.item_id, VERIFIED if review.nice else FAILED))
        for change in self.changes:
            word = FIXED_BY_HAND if change.by_hand else NEEDS_FIX if change.before_hash == change.after_hash else FIXED
            events.append((_utc(change.created_at), 1, change.item_id, word))
        out: dict[int, str] = {}
        for _, _, item_id, word in sorted(events, key=lambda e: (e[0], e[1])):
            if word == FIXED and out.get(item_id) == NEEDS_FIX:
                continue  # another pattern's fix leaves the defect its pattern could not reach
            out[item_id] = word
        return out

    @property
    def unverified_fixes(self) -> int:
        """Items changed since the latest finished sample was drawn: no reviewer has seen them as they stand."""
        done = [s for s in self.batch.samples if s.finished]
        if not done:
            return 0
        drawn = _utc(done[-1].created_at)
        return len({c.item_id for c in self.applied if _utc(c.created_at) > drawn})

    @property
    def needs_fix(self) -> list[str]:
        """Items that showed a fixed pattern but could not take its edit: they still need a fix by hand."""
        status = self.statuses
        return [it.key for it in self.items if status.get(it.id) == NEEDS_FIX]


def _utc(when: datetime) -> datetime:
    """Stored times are UTC; SQLite hands them back naive."""
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def batch_view(store: Store, batch_id: int, driving: Callable[[int], bool] = lambda sample_id: False) -> BatchView:
    """Read one batch for the page: the batch, its items, patterns, changes, every sample's reviews and cost."""
    batch = store.get(batch_id)
    latest = batch.latest
    return BatchView(
        batch=batch,
        items=store.items(batch_id),
        patterns=store.patterns(batch_id),
        changes=store.changes(batch_id, skipped=True),
        reviews={s.id: store.reviews(s.id) for s in batch.samples},
        cost_usd=store.cost(batch_id),
        driving=latest is not None and driving(latest.id),
    )


def export(view: BatchView, fmt: str | None = None) -> bytes:
    """The verified batch as CSV or JSONL: every item with its status, pattern and fix."""
    batch, items, status = view.batch, view.items, view.statuses
    titles = {p.id: p.title for p in view.patterns}
    notes: dict[int, dict[int, tuple[str, str]]] = {}  # item → pattern → (pattern, fix) notes
    for change in view.changes:
        notes.setdefault(change.item_id, {})[change.pattern_id] = (titles.get(change.pattern_id, ""), _fix_note(change))
    ids = {it.key: it.id for it in items}
    for record in view.patterns:  # a failed item names its patterns even where no fix changed it, and why
        for key in record.pattern.get("items", []):
            if key in ids:
                notes.setdefault(ids[key], {}).setdefault(record.id, (record.title, _undecided_note(record)))
    out = [
        BatchItemOut(
            record=it.record,
            original_output=it.original_output,
            output=it.output,
            status=status.get(it.id, NOT_SAMPLED),
            pattern="; ".join(p for p, _ in notes[it.id].values()) if it.id in notes else None,
            fix="; ".join(f for _, f in notes[it.id].values()) if it.id in notes else None,
        )
        for it in items
    ]
    layout = batch.config.layout
    chosen = batch_format(fmt or batch.config.file_format)
    return write_batch(
        out,
        chosen,
        output_column=batch.config.output_column,
        columns=batch.config.columns,
        newline=layout.get("newline", "\n"),
        delimiter=layout.get("delimiter", ",") if chosen == batch.config.file_format else ",",
        bom=bool(layout.get("bom")) and chosen == "csv",
    )


def estimate(
    config: BatchConfig, item_chars: Sequence[int], strata: Sequence[tuple] = (), failing_share: float | None = None
) -> CostEstimate:
    """Sample versus full verification for a batch of items of these sizes (spec + output characters); with the
    share of items that fail (`failing_share`, from a uniform sample), full verification's fix calls too."""
    rubric_chars = len(Rubric.model_validate(config.rubric).model_dump_json())

    def review(chars: int, batch_api: bool) -> float:
        return sum(
            pricing.estimate_review_usd(m, rubric_chars + chars, batch=batch_api)
            for m in (config.reviewer_b, config.reviewer_c)
        )

    full = sum(review(c, False) for c in item_chars)
    size = sampling.sample_size(len(item_chars), config.sample_rate, config.min_sample)
    if strata:  # every stratum gets an item, even past the rate
        size = sum(sampling.allocate(Counter(strata), size).values())
    mean = full / len(item_chars) if item_chars else 0.0
    per_item = mean * ((1 - pricing.load_rates().batch_discount) if config.message_batches else 1.0)
    failing = None if failing_share is None else round(failing_share * len(item_chars))
    # A fix call reads the spec and the output (and the issues) and answers edits: about a review call's size.
    fix = pricing.estimate_review_usd(config.fixer, round(fmean(item_chars))) if item_chars else 0.0
    return CostEstimate(
        items=len(item_chars),
        sample=size,
        sample_usd=per_item * size,
        full_usd=full,
        message_batches=config.message_batches,
        failing=failing,
        fix_usd=(failing or 0) * fix,
    )


def _undecided_note(record: PatternRecord) -> str:
    """The export's word on a pattern that did not change an item it was found in: why not."""
    if record.status == "applied":
        return "the approved fix made no change here (already fixed, or its quote is not in this item)"
    if record.status == "dismissed":
        handled = record.pattern.get("kind", "issue") != "issue"
        return f"{'handled by hand' if handled else 'dismissed, not fixed'}: {record.reason}"
    return "not fixed yet: the pattern awaits a decision"


def _fix_note(change: BatchChange) -> str:
    """What a pattern's fix did to one item, for the export: each edit, or why none applied."""
    if change.before_hash == change.after_hash:
        reasons = "; ".join(str(r.get("reason", "")) for r in change.skipped) or "the approved edit did not apply"
        return f"needs a fix by hand: {reasons}"
    return "; ".join(f"{e['before']!r} → {e['after']!r}" for e in change.applied) or "fixed"
