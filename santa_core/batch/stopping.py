"""What a sample proves: the most failing items a batch can still hold, and the stopping rule. Pure.

- `defect_upper_bound` is the exact one-sided hypergeometric bound: after a sample with k failures,
  the largest number of failing items still plausible at the chosen confidence (right for a small
  batch as well as a large one). `stratified_upper_bound` is the same after a clean stratified
  sample, wherever the failures hide.
- `resample_rule` is the stopping rule as the samples were actually drawn: a resample is drawn
  without replacement from the items no earlier sample drew (`fresh_upper_bound` bounds those),
  and the items earlier samples did draw add what is known of them: failed and unchanged counts
  as failing, changed by a fix and not reviewed since counts as possibly failing.

Who is sampled and what a sample catches are `santa_core.batch.sampling`'s. The statistics come from `scipy.stats`
(imported when first needed: it takes a moment to load). docs/batch-sampling.md explains what the figures mean.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from santa_core.batch.sampling import (
    CONFIDENCE,
    check_confidence,
    check_counts,
    check_strata,
    check_whole,
    percent,
)


def defect_upper_bound(population: int, sample: int, failed: int = 0, confidence: float = CONFIDENCE) -> int:
    """The most failing items the batch can plausibly hold after `failed` of `sample` failed.

    The largest D for which seeing `failed` or fewer failures in the sample still has a chance
    above 1 − confidence (an exact one-sided Clopper–Pearson-style bound on the hypergeometric).
    """
    check_counts(population, failed, sample, part_name="failed items")
    check_confidence(confidence)
    if failed > sample:
        raise ValueError(f"failed items ({failed}) cannot exceed the sampled items ({sample})")
    from scipy.stats import hypergeom

    alpha = 1 - confidence
    low, high = failed, population - (sample - failed)  # the sample itself pins these down
    # cdf(failed) falls as D grows: find the last D where it is still above alpha.
    while low < high:
        mid = (low + high + 1) // 2
        if hypergeom.cdf(failed, population, mid, sample) > alpha:
            low = mid
        else:
            high = mid - 1
    return low


def stratified_upper_bound(
    sizes: Mapping[Hashable, int], sampled: Mapping[Hashable, int], confidence: float = CONFIDENCE
) -> int:
    """After a clean stratified sample: the most failing items still plausible, wherever they hide.

    The largest D such that some way of placing D failing items in the strata still leaves a
    chance above 1 − confidence that the sample came back clean.
    """
    check_strata(sizes, sampled)
    check_confidence(confidence)
    alpha = 1 - confidence
    # Why greedy is exact: a stratum's chance of a clean draw falls by a factor that shrinks with
    # every failing item it holds (log-concave), so adding failures one at a time where they are
    # least likely to be seen gives the most hidden placement for every total D.
    order = [(-_miss_factor(sizes[s], sampled[s], 0), i, s) for i, s in enumerate(sizes)]
    heap = [entry for entry in order if entry[0] < 0]
    heapq.heapify(heap)
    bad: dict[Hashable, int] = defaultdict(int)
    clean, total = 1.0, 0
    while heap and clean * -heap[0][0] > alpha:
        factor, i, stratum = heapq.heappop(heap)
        clean, total = clean * -factor, total + 1
        bad[stratum] += 1
        nxt = _miss_factor(sizes[stratum], sampled[stratum], bad[stratum])
        if nxt > 0:
            heapq.heappush(heap, (-nxt, i, stratum))
    return total


def _miss_factor(size: int, sampled: int, bad: int) -> float:
    """How much one more failing item (after `bad`) lowers a stratum's chance of a clean draw."""
    # C(N−D−1, n) / C(N−D, n) = (N − D − n) / (N − D)
    return (size - bad - sampled) / (size - bad) if size > bad else 0.0


@dataclass(frozen=True)
class FreshDraw:
    """One stratum's part of a sample: `drawn` of its `fresh` items (those no earlier sample drew), `failed` of them failed."""

    fresh: int
    drawn: int
    failed: int = 0


def fresh_upper_bound(draws: Mapping[Hashable, FreshDraw], confidence: float = CONFIDENCE) -> int:
    """The most failing items the fresh items can plausibly hold, those the sample found included.

    Each stratum's fresh items were drawn without replacement, uniformly, from the items of that
    stratum no earlier sample drew. A stratum drawn whole is known exactly. When the others came
    back clean the bound is the worst placement among them (`stratified_upper_bound`); after
    failures in them it is each stratum's exact hypergeometric bound at confidence 1 − α/S, summed
    over the S strata not drawn whole (Bonferroni: every stratum's bound holds at once with chance
    at least 1 − α), and with one such stratum simply its bound.
    """
    check_confidence(confidence)
    for stratum, d in draws.items():
        check_counts(d.fresh, d.failed, d.drawn, part_name=f"failed items of stratum {stratum!r}")
        if d.failed > d.drawn:
            raise ValueError(f"stratum {stratum!r} has {d.failed} failed items but only {d.drawn} drawn")
    whole = sum(d.failed for d in draws.values() if d.drawn == d.fresh)
    open_ = {s: d for s, d in draws.items() if d.drawn < d.fresh}
    if not any(d.failed for d in open_.values()):
        return whole + stratified_upper_bound(
            {s: d.fresh for s, d in open_.items()}, {s: d.drawn for s, d in open_.items()}, confidence
        )
    alpha = (1 - confidence) / len(open_)
    return whole + sum(defect_upper_bound(d.fresh, d.drawn, d.failed, 1 - alpha) for d in open_.values())


@dataclass(frozen=True)
class StoppingRule:
    """What a sample says about the batch as it stood when the sample was drawn, in words a person can check.

    The bound adds up what is known and what the draw says: the items this sample failed, the items
    an earlier sample failed that stand as they were reviewed (`known_failing`), the items an earlier
    sample reviewed that a fix changed since, not reviewed again (`unreviewed`, counted as possibly
    failing: no draw covers them), and the bound on the items no earlier sample drew (`fresh_upper`,
    from this sample's draw among them).
    """

    population: int
    sample: int
    failed: int
    confidence: float
    upper_items: int
    stratified: bool = False
    """The bound holds wherever the failures hide among the strata (clean stratified sample)."""
    unverified_fixes: int = 0
    """Items fixed after this sample was drawn: the bound does not count them as verified."""
    fresh: int | None = None
    """Items no earlier sample drew (None: this is the first sample, every item was fresh)."""
    fresh_sampled: int = 0
    """Of the fresh items, those this sample drew."""
    fresh_upper: int = 0
    """The most failing items the fresh items can plausibly hold (those the sample found included)."""
    known_failing: int = 0
    """Items an earlier sample failed that stand unchanged and this sample did not draw again."""
    unreviewed: int = 0
    """Items an earlier sample reviewed that a fix changed before this sample, not reviewed again."""

    @property
    def upper_rate(self) -> float:
        """The bound as a share of the batch."""
        return self.upper_items / self.population if self.population else 0.0

    @property
    def clean(self) -> bool:
        """No sampled item failed: the rule lets the batch stop."""
        return self.failed == 0

    def statement(self) -> str:
        """The bound as a sentence, e.g. "…with 95 % confidence at most 9 of 200 items (4.5 %) fail review."."""
        conf = f"{self.confidence * 100:g} %"
        head = (
            "The sample came back clean"
            if self.clean
            else f"{self.failed:,} of {self.sample:,} sampled item{'s' if self.sample != 1 else ''} failed"
        )
        said = (
            f"{head}: with {conf} confidence at most {self.upper_items:,} of {self.population:,} items "
            f"({percent(self.upper_rate)}) fail review."
        )
        if self.fresh is not None:
            said += f" {self._parts()}"
        if self.unverified_fixes:
            n = self.unverified_fixes
            said += (
                f" {n:,} item{'s' if n != 1 else ''} fixed since {'are' if n != 1 else 'is'} not counted as "
                "verified: draw another sample to verify the fixes."
            )
        return said

    def _parts(self) -> str:
        """How a resample's bound adds up: the fresh items' bound and what earlier samples left known."""
        fresh, drawn = self.fresh or 0, self.fresh_sampled
        parts = [
            f"this sample drew {drawn:,} of the {fresh:,} item{'s' if fresh != 1 else ''} no earlier sample "
            f"drew, and at most {self.fresh_upper:,} of those fail"
        ]
        again = self.sample - drawn
        if again:
            parts.append(
                f"{again:,} item{'s' if again != 1 else ''} drawn again "
                f"{'count' if again != 1 else 'counts'} by this sample's review"
            )
        if self.unreviewed:
            n = self.unreviewed
            parts.append(
                f"{n:,} item{'s' if n != 1 else ''} changed by a fix after an earlier sample reviewed "
                f"{'them' if n != 1 else 'it'} {'count' if n != 1 else 'counts'} as possibly failing "
                "(not reviewed since)"
            )
        if self.known_failing:
            n = self.known_failing
            parts.append(
                f"{n:,} item{'s' if n != 1 else ''} an earlier sample failed "
                f"{'stand' if n != 1 else 'stands'} unchanged and {'count' if n != 1 else 'counts'} as failing"
            )
        return "Of the bound: " + "; ".join(parts) + "."


def stopping_rule(population: int, sample: int, failed: int = 0, confidence: float = CONFIDENCE) -> StoppingRule:
    """The stopping rule's figures for a first sample drawn as a simple random sample of the whole batch.

    A stratified sample, or a resample, is `resample_rule`'s (with one `FreshDraw` per stratum).
    """
    check_counts(population, failed, sample, part_name="failed items")
    return resample_rule(population, {(): FreshDraw(population, sample, failed)}, confidence)


def resample_rule(
    population: int,
    draws: Mapping[Hashable, FreshDraw],
    confidence: float = CONFIDENCE,
    *,
    again: int = 0,
    again_failed: int = 0,
    known_failing: int = 0,
    unreviewed: int = 0,
) -> StoppingRule:
    """The stopping rule's figures for any sample, from what was actually drawn and what is known.

    `draws` are the sample's fresh part per stratum (drawn from the items no earlier sample drew);
    `again` items of the sample had been drawn before (a stratum out of fresh items), `again_failed`
    of them failed now; `known_failing` and `unreviewed` are items of earlier samples this one did
    not draw again (see `StoppingRule`). Every item of the batch is in exactly one of these groups.
    """
    check_whole("batch size", population)
    for name, value in (
        ("items drawn again", again),
        ("items drawn again that failed", again_failed),
        ("known failing items", known_failing),
        ("unreviewed items", unreviewed),
    ):
        check_whole(name, value)
    if again_failed > again:
        raise ValueError(f"items drawn again that failed ({again_failed}) cannot exceed those drawn again ({again})")
    fresh = sum(d.fresh for d in draws.values())
    if fresh + again + known_failing + unreviewed > population:
        raise ValueError(
            f"{fresh} fresh, {again} drawn again, {known_failing} known failing and {unreviewed} "
            f"unreviewed items are more than the batch's {population}"
        )
    fresh_upper = fresh_upper_bound(draws, confidence)
    drawn = sum(d.drawn for d in draws.values())
    failed = sum(d.failed for d in draws.values()) + again_failed
    first = again == known_failing == unreviewed == 0 and fresh == population
    return StoppingRule(
        population,
        drawn + again,
        failed,
        confidence,
        fresh_upper + again_failed + known_failing + unreviewed,
        stratified=len(draws) > 1 and failed == 0,
        fresh=None if first else fresh,
        fresh_sampled=drawn,
        fresh_upper=fresh_upper,
        known_failing=known_failing,
        unreviewed=unreviewed,
    )


def rule_from_samples(
    strata: Mapping[Hashable, Hashable],
    reviews: Sequence[Mapping[Hashable, bool]],
    changed: Sequence[Iterable[Hashable]] = (),
    confidence: float = CONFIDENCE,
) -> StoppingRule:
    """The stopping rule of the last of a batch's samples, from what each sample drew and what changed between.

    `strata` maps every item of the batch to its stratum; `reviews[j]` is sample j's items, each
    with whether it passed; `changed[j]` the items a fix changed after sample j was drawn and
    before the next one was (later changes are not the bound's business: see `unverified_fixes`).
    """
    if not reviews:
        raise ValueError("a stopping rule needs a sample")
    *earlier, now = reviews
    seen: dict[Hashable, bool | None] = {}  # item → passed, as its latest earlier review said; None: changed since
    for j, sample in enumerate(earlier):
        seen.update(sample)
        for item in changed[j] if j < len(changed) else ():
            if item in seen:
                seen[item] = None  # a fix changed it after its review: what the review said no longer holds
    fresh: Counter[Hashable] = Counter()
    drawn: Counter[Hashable] = Counter()
    failed: Counter[Hashable] = Counter()
    for item, s in strata.items():
        if item not in seen:
            fresh[s] += 1
            drawn[s] += item in now
            failed[s] += now.get(item) is False
    unknown = set(now) - set(strata)
    if unknown:
        raise ValueError(f"sampled items {sorted(map(repr, unknown))[:5]} are not items of the batch")
    again = [i for i in now if i in seen]
    rest = [passed for i, passed in seen.items() if i not in now]
    return resample_rule(
        len(strata),
        {s: FreshDraw(fresh[s], drawn[s], failed[s]) for s in fresh},
        confidence,
        again=len(again),
        again_failed=sum(not now[i] for i in again),
        known_failing=rest.count(False),
        unreviewed=rest.count(None),
    )
