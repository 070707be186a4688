"""Batch verification by sampling: who is sampled, and what a sample catches. Pure.

- `stratified_sample` draws a seeded, reproducible sample in which every stratum is represented
  and the sample is shared in proportion to the strata's sizes (largest remainders).
- `detection_probability` is the chance that a sample of n items out of N contains at least one
  of the D items showing a pattern (hypergeometric: items are drawn without replacement);
  `stratum_detection` is the same for a pattern confined to one stratum, with that stratum's share
  of the sample, and `stratified_detection` the exact chance for a pattern spread over strata.
- What a sample proves (the exact bound on failing items and the stopping rule) is `santa_core.batch.stopping`'s.

The statistics come from `scipy.stats` (imported when first needed: it takes a moment to load).
docs/batch-sampling.md explains what the figures mean and where the method's claim holds.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
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
    check_whole("batch size", total)
    check_whole("minimum sample", minimum, low=1)
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
        check_whole(f"size of stratum {stratum!r}", size)
    check_whole("sample size", n)
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
    check_whole("sample size", n)
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
    check_counts(population, defective, sample, part_name="items showing the pattern")
    from scipy.stats import hypergeom

    return float(hypergeom.sf(0, population, defective, sample))


def stratified_detection(
    sizes: Mapping[Hashable, int], sampled: Mapping[Hashable, int], showing: Mapping[Hashable, int]
) -> float:
    """Chance a stratified sample catches at least one pattern item: strata are drawn independently."""
    check_strata(sizes, sampled)
    unknown = set(showing) - set(sizes)
    if unknown:
        raise ValueError(f"pattern items in unknown strata {sorted(map(repr, unknown))}: every stratum needs a size")
    miss = 1.0
    for stratum, size in sizes.items():
        bad = showing.get(stratum, 0)
        check_counts(size, bad, sampled[stratum], part_name=f"items of stratum {stratum!r} showing the pattern")
        miss *= 1.0 - detection_probability(size, bad, sampled[stratum])
    return 1.0 - miss


def defective_items(population: int, prevalence: float) -> int:
    """Items of a batch that show a pattern of the given prevalence (at least one if it is above 0)."""
    check_whole("batch size", population)
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
    check_whole("sample size", sample)
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


def check_whole(name: str, value: object, low: int = 0) -> None:
    """A count must be a whole number (not a bool or a float) at least `low`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be a whole number ≥ {low}, got {value!r}")


def check_counts(population: int, part: int, sample: int, part_name: str = "part") -> None:
    """0 ≤ part ≤ population and 0 ≤ sample ≤ population, each named in the message."""
    check_whole("batch size", population)
    check_whole(part_name, part)
    check_whole("sample size", sample)
    if part > population:
        raise ValueError(f"{part_name} ({part}) cannot exceed the batch size ({population})")
    if sample > population:
        raise ValueError(f"sample size ({sample}) cannot exceed the batch size ({population})")


def check_strata(sizes: Mapping[Hashable, int], sampled: Mapping[Hashable, int]) -> None:
    """Every stratum has a size and a sampled count no larger than it, and no sampled stratum is unknown."""
    if set(sampled) - set(sizes):
        raise ValueError(f"sampled counts for unknown strata {sorted(map(repr, set(sampled) - set(sizes)))}")
    for stratum, size in sizes.items():
        if stratum not in sampled:
            raise ValueError(f"stratum {stratum!r} has a size but no sampled count (give 0 if none was sampled)")
        check_whole(f"size of stratum {stratum!r}", size)
        check_whole(f"sampled count of stratum {stratum!r}", sampled[stratum])
        if sampled[stratum] > size:
            raise ValueError(f"stratum {stratum!r} has {sampled[stratum]} sampled items but holds only {size}")


def check_confidence(confidence: float) -> None:
    """A confidence is a share strictly between 0 and 1."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be a share above 0 and below 1 (0.95 for 95 %), got {confidence!r}")
