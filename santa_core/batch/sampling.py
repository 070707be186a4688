"""Batch verification by sampling: who is sampled, and what a clean sample proves. Pure.

- `stratified_sample` draws a seeded, reproducible sample in which every stratum is represented
  and the sample is shared in proportion to the strata's sizes (largest remainders).
- `detection_probability` is the chance that a sample of n items out of N contains at least one
  of the D items showing a pattern (hypergeometric: items are drawn without replacement);
  `stratum_detection` is the same for a pattern confined to one stratum, with that stratum's share
  of the sample, and `stratified_detection` the exact chance for a pattern spread over strata.
- `defect_upper_bound` is the exact one-sided hypergeometric bound: after a sample with k failures,
  the largest number of failing items still plausible at the chosen confidence (right for a small
  batch as well as a large one). `stratified_upper_bound` is the same after a clean stratified
  sample, wherever the failures hide.
- `resample_rule` is the stopping rule as the samples were actually drawn: a resample is drawn
  without replacement from the items no earlier sample drew (`fresh_upper_bound` bounds those),
  and the items earlier samples did draw add what is known of them: failed and unchanged counts
  as failing, changed by a fix and not reviewed since counts as possibly failing.

The statistics come from `scipy.stats` (imported when first needed: it takes a moment to load).
docs/batch-sampling.md explains what the figures mean and where the method's claim holds.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

DEFAULT_RATE = 0.15
"""The share of a batch reviewed by both reviewers in each sample."""
MIN_SAMPLE = 5
"""No sample is smaller than this (or than the batch, if the batch is smaller)."""
CONFIDENCE = 0.95
"""The confidence of the stopping rule's bound."""


# --- who is sampled -------------------------------------------------------------------------


def sample_size(total: int, rate: float = DEFAULT_RATE, minimum: int = MIN_SAMPLE) -> int:
    """Items to sample out of `total`: the rate rounded up, at least `minimum`, at most everything."""
    _check_whole("batch size", total)
    _check_whole("minimum sample", minimum, low=1)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= 1:
        raise ValueError(f"sample rate must be a share above 0 and at most 1 (0.15 for 15 %), got {rate!r}")
    # Why the tolerance: 0.15 × 200 is 30.000000000000004 in floating point, not a reason for 31.
    wanted = math.ceil(rate * total - 1e-9)
    return min(total, max(minimum, wanted))


def allocate(sizes: Mapping[Hashable, int], n: int) -> dict[Hashable, int]:
    """How many of n sampled items each stratum gets: in proportion to its size, at least one.

    Every non-empty stratum gets at least one item when n ≥ 1, even when that makes the sample
    larger than n (a stratum never sampled could hide a pattern). A stratum whose proportional
    share is below one gets exactly one; the rest is shared in proportion to size by largest
    remainder (ties to the larger stratum, then to the first in sorted order), never more than a
    stratum holds. n = 0 samples nothing.
    """
    for stratum, size in sizes.items():
        _check_whole(f"size of stratum {stratum!r}", size)
    _check_whole("sample size", n)
    strata = sorted((k for k, size in sizes.items() if size > 0), key=repr)
    out: dict[Hashable, int] = {k: 0 for k in sizes}
    n = min(max(n, len(strata)) if n else 0, sum(sizes.values()))
    if n == 0:
        return out
    active, left = list(strata), n
    while True:  # strata whose share is below one get their one item and leave the sharing
        active_total = sum(sizes[k] for k in active)
        small = [k for k in active if left * sizes[k] < active_total]
        if not small:
            break
        out.update({k: 1 for k in small})
        raised = set(small)
        active, left = [k for k in active if k not in raised], left - len(small)
    _share_by_largest_remainder(out, {k: sizes[k] for k in active}, left, active)
    return out


def _share_by_largest_remainder(
    out: dict[Hashable, int], weight: dict[Hashable, int], left: int, strata: list[Hashable]
) -> None:
    """Add `left` items to `out` in proportion to `weight`, in exact integer arithmetic."""
    total = sum(weight.values())
    if left <= 0 or total == 0:
        return
    # Why no stratum overflows: left ≤ total, so a share is at most the stratum's size, and the
    # items left over after the floors go one each to strata whose share had a fraction.
    whole = {k: left * weight[k] // total for k in strata}
    rest = {k: left * weight[k] % total for k in strata}
    for k in strata:
        out[k] += whole[k]
    over = left - sum(whole.values())
    place = {k: i for i, k in enumerate(strata)}
    order = sorted(strata, key=lambda k: (-rest[k], -weight[k], place[k]))
    for k in order[:over]:
        out[k] += 1


def stratified_sample(items: Iterable[tuple[str, Hashable]], n: int, seed: int, avoid: Iterable[str] = ()) -> list[str]:
    """A reproducible stratified sample of item ids, in the order the items were given.

    `items` are (item id, stratum), ids unique. The same items, n and seed always give the same
    sample, whatever order the items come in. Ids in `avoid` (sampled before) are drawn only when
    their stratum has no fresh items left, so a resample looks at fresh items first while every
    stratum keeps its share.
    """
    given = list(items)
    by_stratum = _group_by_stratum(given)
    _check_whole("sample size", n)
    avoided = set(avoid)
    rank = _ranker(seed)
    picked: set[str] = set()
    for stratum, k in allocate({s: len(ids) for s, ids in by_stratum.items()}, n).items():
        # Why ranks by hash: each item's rank is SHA-256 of the seed and its id, so the draw does
        # not depend on input order, Python's version or PYTHONHASHSEED, and anyone can recompute
        # it. The k lowest ranks are a uniformly random k-subset of the stratum.
        ranked = sorted(by_stratum[stratum], key=lambda i: (i in avoided, rank(i)))
        picked.update(ranked[:k])
    return [item_id for item_id, _ in given if item_id in picked]


def _group_by_stratum(items: list[tuple[str, Hashable]]) -> dict[Hashable, list[str]]:
    """Item ids by stratum; a duplicate id is an error, as it would be sampled twice."""
    by_stratum: dict[Hashable, list[str]] = defaultdict(list)
    seen: set[str] = set()
    for item_id, stratum in items:
        if item_id in seen:
            raise ValueError(f"item id {item_id!r} appears twice: every item needs its own id")
        seen.add(item_id)
        by_stratum[stratum].append(item_id)
    return by_stratum


def _ranker(seed: int) -> Callable[[str], tuple[bytes, str]]:
    """An item's place in the seeded random order: SHA-256 of "santa-sample␟seed␟id" (the id breaks ties)."""
    prefix = hashlib.sha256(f"santa-sample\x1f{seed}\x1f".encode())

    def rank(item_id: str) -> tuple[bytes, str]:
        digest = prefix.copy()
        digest.update(str(item_id).encode())
        return digest.digest(), str(item_id)

    return rank


# --- what a sample catches ------------------------------------------------------------------


def detection_probability(population: int, defective: int, sample: int) -> float:
    """Chance that a sample without replacement holds at least one of `defective` items."""
    _check_counts(population, defective, sample, part_name="items showing the pattern")
    from scipy.stats import hypergeom

    return float(hypergeom.sf(0, population, defective, sample))


def stratified_detection(
    sizes: Mapping[Hashable, int], sampled: Mapping[Hashable, int], showing: Mapping[Hashable, int]
) -> float:
    """Chance a stratified sample catches at least one pattern item: strata are drawn independently."""
    _check_strata(sizes, sampled)
    unknown = set(showing) - set(sizes)
    if unknown:
        raise ValueError(f"pattern items in unknown strata {sorted(map(repr, unknown))}: every stratum needs a size")
    miss = 1.0
    for stratum, size in sizes.items():
        bad = showing.get(stratum, 0)
        _check_counts(size, bad, sampled[stratum], part_name=f"items of stratum {stratum!r} showing the pattern")
        miss *= 1.0 - detection_probability(size, bad, sampled[stratum])
    return 1.0 - miss


def defective_items(population: int, prevalence: float) -> int:
    """Items of a batch that show a pattern of the given prevalence (at least one if it is above 0)."""
    _check_whole("batch size", population)
    if not 0 <= prevalence <= 1:
        raise ValueError(f"prevalence must be a share between 0 and 1 (0.05 for 5 %), got {prevalence!r}")
    return 0 if prevalence == 0 or population == 0 else max(1, round(prevalence * population))


class Detection(NamedTuple):
    """One row of a detection table."""

    prevalence: float
    showing: int
    """Items showing the pattern."""
    chance: float
    """Chance the sample holds at least one of them."""


def detection_table(population: int, sample: int, prevalences: Sequence[float]) -> list[Detection]:
    """(prevalence, items showing it, chance the sample catches at least one) for each prevalence.

    For a pattern confined to one stratum, pass the stratum's size and its share of the sample.
    """
    _check_whole("sample size", sample)
    sample = min(sample, population)
    rows = []
    for p in prevalences:
        showing = defective_items(population, p)
        rows.append(Detection(p, showing, detection_probability(population, showing, sample)))
    return rows


@dataclass(frozen=True)
class StratumDetection:
    """The chance of catching a pattern that lives only inside one stratum."""

    stratum: Hashable
    size: int
    sampled: int
    prevalence: float
    showing: int
    chance: float

    def statement(self) -> str:
        """E.g. "A pattern in 20.0 % of stratum X (8 of its 40 items) is caught with probability 76.4 %…"."""
        parts = self.stratum if isinstance(self.stratum, tuple) else (self.stratum,)
        label = " / ".join(str(p) if str(p) else "(empty)" for p in parts)
        return (
            f"A pattern in {percent(self.prevalence)} of stratum {label} ({self.showing:,} of its {self.size:,} "
            f"items) is caught with probability {percent(self.chance)}: {self.sampled:,} of its items are sampled."
        )


def stratum_detection(sizes: Mapping[Hashable, int], n: int, prevalence: float) -> list[StratumDetection]:
    """Per stratum, the chance a pattern in `prevalence` of that stratum's items alone is caught."""
    shares = allocate(sizes, n)
    rows = []
    for stratum in sorted(sizes, key=repr):
        bad = defective_items(sizes[stratum], prevalence)
        chance = detection_probability(sizes[stratum], bad, shares[stratum])
        rows.append(StratumDetection(stratum, sizes[stratum], shares[stratum], prevalence, bad, chance))
    return rows


def sample_for_detection(population: int, prevalence: float, chance: float = 0.9) -> int:
    """The smallest sample that catches a pattern of `prevalence` with at least `chance`."""
    if not 0 < chance < 1:
        raise ValueError(f"chance must be a share above 0 and below 1 (0.9 for 90 %), got {chance!r}")
    bad = defective_items(population, prevalence)
    if bad == 0:
        raise ValueError(
            f"no item of a batch of {population} shows a pattern of prevalence {prevalence!r}: "
            "give a prevalence above 0 and a batch that is not empty"
        )
    low, high = 1, population  # a full review always catches it
    while low < high:  # the chance grows with the sample: find the first n that reaches it
        mid = (low + high) // 2
        if detection_probability(population, bad, mid) >= chance:
            high = mid
        else:
            low = mid + 1
    return low


# --- what a sample proves -------------------------------------------------------------------


def defect_upper_bound(population: int, sample: int, failed: int = 0, confidence: float = CONFIDENCE) -> int:
    """The most failing items the batch can plausibly hold after `failed` of `sample` failed.

    The largest D for which seeing `failed` or fewer failures in the sample still has a chance
    above 1 − confidence (an exact one-sided Clopper–Pearson-style bound on the hypergeometric).
    """
    _check_counts(population, failed, sample, part_name="failed items")
    _check_confidence(confidence)
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
    _check_strata(sizes, sampled)
    _check_confidence(confidence)
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
    _check_confidence(confidence)
    for stratum, d in draws.items():
        _check_counts(d.fresh, d.failed, d.drawn, part_name=f"failed items of stratum {stratum!r}")
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
    _check_counts(population, failed, sample, part_name="failed items")
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
    _check_whole("batch size", population)
    for name, value in (
        ("items drawn again", again),
        ("items drawn again that failed", again_failed),
        ("known failing items", known_failing),
        ("unreviewed items", unreviewed),
    ):
        _check_whole(name, value)
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


def percent(share: float) -> str:
    """A share as a percentage for people: one decimal, two significant digits below 1 %, never a false 100 %."""
    value = share * 100
    if 0 < value < 1:
        text = f"{value:.2g}"
        return "1.0 %" if text == "1" else f"{text} %"
    text = f"{value:.1f}"
    # Why: a 99.97 % chance of catching a pattern is not a certainty, and "100.0 %" would say it is.
    return "> 99.9 %" if text == "100.0" and value < 100 else f"{text} %"


# --- argument checks ------------------------------------------------------------------------


def _check_whole(name: str, value: object, low: int = 0) -> None:
    """A count must be a whole number (not a bool or a float) at least `low`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be a whole number ≥ {low}, got {value!r}")


def _check_counts(population: int, part: int, sample: int, part_name: str = "part") -> None:
    """0 ≤ part ≤ population and 0 ≤ sample ≤ population, each named in the message."""
    _check_whole("batch size", population)
    _check_whole(part_name, part)
    _check_whole("sample size", sample)
    if part > population:
        raise ValueError(f"{part_name} ({part}) cannot exceed the batch size ({population})")
    if sample > population:
        raise ValueError(f"sample size ({sample}) cannot exceed the batch size ({population})")


def _check_strata(sizes: Mapping[Hashable, int], sampled: Mapping[Hashable, int]) -> None:
    """Every stratum has a size and a sampled count no larger than it, and no sampled stratum is unknown."""
    if set(sampled) - set(sizes):
        raise ValueError(f"sampled counts for unknown strata {sorted(map(repr, set(sampled) - set(sizes)))}")
    for stratum, size in sizes.items():
        if stratum not in sampled:
            raise ValueError(f"stratum {stratum!r} has a size but no sampled count (give 0 if none was sampled)")
        _check_whole(f"size of stratum {stratum!r}", size)
        _check_whole(f"sampled count of stratum {stratum!r}", sampled[stratum])
        if sampled[stratum] > size:
            raise ValueError(f"stratum {stratum!r} has {sampled[stratum]} sampled items but holds only {size}")


def _check_confidence(confidence: float) -> None:
    """A confidence is a share strictly between 0 and 1."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be a share above 0 and below 1 (0.95 for 95 %), got {confidence!r}")
