"""Batch sampling statistics: who is sampled, what a sample catches, what a clean sample proves.

Reference values are computed independently of the module: exact fractions with math.comb for the
hypergeometric, the Clopper–Pearson closed forms (scipy.stats.beta) for the binomial limit, and
brute-force enumeration for the stratified bound. scipy.stats.hypergeom is only a cross-check.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from fractions import Fraction
from math import comb

import pytest
from scipy.stats import beta, hypergeom

from santa_core.batch.sampling import (
    Detection,
    allocate,
    defective_items,
    detection_probability,
    detection_table,
    percent,
    sample_for_detection,
    sample_size,
    stratified_detection,
    stratified_sample,
    stratum_detection,
)
from santa_core.batch.stopping import (
    FreshDraw,
    StoppingRule,
    defect_upper_bound,
    fresh_upper_bound,
    resample_rule,
    rule_from_samples,
    stopping_rule,
    stratified_upper_bound,
)

TOL = 1e-6


def exact_miss(population: int, defective: int, sample: int) -> Fraction:
    """P(no pattern item in the sample) = C(N−D, n) / C(N, n), exactly."""
    return Fraction(comb(population - defective, sample), comb(population, sample))


def exact_cdf(failed: int, population: int, defective: int, sample: int) -> Fraction:
    """P(at most `failed` failing items in the sample), exactly."""
    hits = sum(comb(defective, j) * comb(population - defective, sample - j) for j in range(failed + 1))
    return Fraction(hits, comb(population, sample))


def batch(sizes: dict[str, int]) -> list[tuple[str, str]]:
    """Items `<stratum>-<n>` for strata of the given sizes."""
    return [(f"{stratum}-{i:04d}", stratum) for stratum, size in sizes.items() for i in range(size)]


# --- sample size and allocation -------------------------------------------------------------


@pytest.mark.parametrize(
    ("total", "rate", "minimum", "expected"),
    [
        pytest.param(200, 0.15, 5, 30, id="15-percent-of-200"),  # 0.15 × 200 = 30 (not 31 from float noise)
        pytest.param(1000, 0.15, 5, 150, id="15-percent-of-1000"),
        pytest.param(101, 0.15, 5, 16, id="rounds-up"),  # 0.15 × 101 = 15.15 → 16
        pytest.param(10, 0.15, 5, 5, id="minimum"),  # 1.5 → 2, raised to the minimum 5
        pytest.param(3, 0.15, 5, 3, id="tiny-batch-everything"),
        pytest.param(0, 0.15, 5, 0, id="empty"),
        pytest.param(7, 1.0, 1, 7, id="rate-one"),
    ],
)
def test_sample_size(total: int, rate: float, minimum: int, expected: int) -> None:
    assert sample_size(total, rate, minimum) == expected


def test_sample_size_defaults_are_15_percent_and_5() -> None:
    assert sample_size(400) == 60 and sample_size(20) == 5


@pytest.mark.parametrize(
    ("sizes", "n", "expected"),
    [
        # quotas 6 × 40/200 = 6 each
        pytest.param({"a": 40, "b": 40, "c": 40, "d": 40, "e": 40}, 30, {s: 6 for s in "abcde"}, id="equal"),
        # quotas 3.6 and 2.4 → floors 3, 2 → the one left goes to the larger remainder (A)
        pytest.param({"A": 12, "B": 8}, 6, {"A": 4, "B": 2}, id="largest-remainder"),
        # e's quota 30 × 5/200 = 0.75 < 1 → 1; the 29 left over 195: 14.87, 7.44, 4.46, 2.23 → 14, 7, 4, 2
        # and two more to the largest remainders (a .87, c .46)
        pytest.param(
            {"a": 100, "b": 50, "c": 30, "d": 15, "e": 5},
            30,
            {"a": 15, "b": 7, "c": 5, "d": 2, "e": 1},
            id="small-stratum-gets-one",
        ),
        pytest.param({"x": 1, "y": 1, "z": 50}, 2, {"x": 1, "y": 1, "z": 1}, id="more-strata-than-n"),
        pytest.param({"x": 3, "y": 2}, 99, {"x": 3, "y": 2}, id="n-over-total-everything"),
        pytest.param({"x": 3, "empty": 0}, 2, {"x": 2, "empty": 0}, id="empty-stratum-zero"),
        pytest.param({"x": 3, "y": 2}, 0, {"x": 0, "y": 0}, id="n-zero-nothing"),
        pytest.param({}, 5, {}, id="no-strata"),
        # 5 equal remainders of 0.2 → ties to the first in sorted order
        pytest.param(
            {"e": 2, "d": 2, "c": 2, "b": 2, "a": 2}, 6, {"a": 2, "b": 1, "c": 1, "d": 1, "e": 1}, id="ties-sorted"
        ),
    ],
)
def test_allocate(sizes: dict[str, int], n: int, expected: dict[str, int]) -> None:
    assert allocate(sizes, n) == expected


def test_allocation_sums_represents_every_stratum_and_never_overflows() -> None:
    rng = random.Random(6)
    for _ in range(3000):
        sizes = {f"s{i}": rng.randint(0, rng.choice([3, 30, 300])) for i in range(rng.randint(0, 8))}
        total, nonempty = sum(sizes.values()), sum(1 for v in sizes.values() if v)
        n = rng.randint(0, total + 3)
        got = allocate(sizes, n)
        assert set(got) == set(sizes)
        assert sum(got.values()) == (min(max(n, nonempty), total) if n else 0), (sizes, n, got)
        assert all(0 <= got[k] <= sizes[k] for k in sizes)
        assert all(got[k] >= 1 for k in sizes if sizes[k] and n)


def test_allocation_is_proportional_when_every_share_is_at_least_one() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        sizes = {f"s{i}": rng.randint(1, 200) for i in range(rng.randint(1, 6))}
        total = sum(sizes.values())
        n = rng.randint(1, total)
        if any(n * size < total for size in sizes.values()):
            continue  # a share below one is raised to one; covered by the table above
        got = allocate(sizes, n)
        assert all(abs(got[k] - n * sizes[k] / total) < 1 for k in sizes), (sizes, n, got)


# --- the sample -----------------------------------------------------------------------------


def test_pinned_sample_never_changes() -> None:
    # The sample of a stored batch must be recomputable: ranks are SHA-256 of seed and id, so this
    # holds across Python versions and hash seeds. A change here breaks every stored batch's replay.
    items = [(f"item-{i:02d}", "A" if i < 12 else "B") for i in range(20)]
    assert stratified_sample(items, 6, seed=7) == ["item-00", "item-05", "item-08", "item-09", "item-12", "item-19"]


def test_same_seed_same_sample_whatever_the_input_order() -> None:
    items = batch({"t1": 120, "t2": 60, "t3": 20})
    first = stratified_sample(items, 30, seed=11)
    shuffled = list(items)
    random.Random(1).shuffle(shuffled)
    assert set(stratified_sample(shuffled, 30, seed=11)) == set(first)
    assert stratified_sample(items, 30, seed=11) == first


def test_sample_keeps_the_input_order() -> None:
    items = batch({"t1": 50, "t2": 50})[::-1]
    picked = stratified_sample(items, 10, seed=3)
    positions = [i for i, (item_id, _) in enumerate(items) if item_id in picked]
    assert picked == [items[i][0] for i in positions]


def test_different_seed_different_sample() -> None:
    items = batch({"t1": 600, "t2": 400})
    samples = {frozenset(stratified_sample(items, 150, seed=s)) for s in range(5)}
    assert len(samples) == 5


def test_sample_respects_strata() -> None:
    sizes = {"t1": 100, "t2": 50, "t3": 30, "t4": 15, "t5": 5}
    items = batch(sizes)
    stratum_of = dict(items)
    picked = stratified_sample(items, 30, seed=5)
    assert Counter(stratum_of[i] for i in picked) == Counter(allocate(sizes, 30))
    assert len(set(picked)) == len(picked) == 30


def test_every_item_is_equally_likely_within_its_stratum() -> None:
    # 2,000 seeds, 5 of 20 items: each item is expected 500 times, standard deviation
    # sqrt(2000 × 0.25 × 0.75) ≈ 19.4; 100 is five of those.
    items = batch({"only": 20})
    counts = Counter(i for seed in range(2000) for i in stratified_sample(items, 5, seed))
    assert len(counts) == 20 and all(abs(c - 500) < 100 for c in counts.values()), counts


def test_sampler_catches_a_pattern_as_often_as_the_hypergeometric_says() -> None:
    # A fixed pattern of 6 items among 60, samples of 9: exact chance 1 − C(54,9)/C(60,9) ≈ 0.6565.
    # Over 3,000 seeds the standard error is about 0.0087; 0.04 is over four of those.
    items = batch({"only": 60})
    pattern = {item_id for item_id, _ in items[::10]}
    caught = sum(bool(pattern & set(stratified_sample(items, 9, seed))) for seed in range(3000))
    assert caught / 3000 == pytest.approx(1 - float(exact_miss(60, 6, 9)), abs=0.04)


def test_resample_avoids_items_sampled_before_while_fresh_items_remain() -> None:
    items = batch({"t1": 60, "t2": 40})
    first = stratified_sample(items, 20, seed=1)
    second = stratified_sample(items, 20, seed=1, avoid=first)
    assert len(second) == 20 and not set(first) & set(second)
    third = stratified_sample(items, 20, seed=2, avoid=first + second)
    assert not set(third) & (set(first) | set(second))


def test_a_stratum_out_of_fresh_items_draws_only_its_shortfall_from_earlier_samples() -> None:
    items = batch({"big": 90, "small": 10})
    stratum_of = dict(items)
    small_seen = [i for i, s in items if s == "small"][:9]  # one fresh item left in "small"
    picked = stratified_sample(items, 20, seed=4, avoid=small_seen)
    # allocation 18 / 2: "small" takes its one fresh item and one seen item; "big" stays fresh
    assert Counter(stratum_of[i] for i in picked) == {"big": 18, "small": 2}
    assert len(set(picked) & set(small_seen)) == 1
    assert "small-0009" in picked


@pytest.mark.parametrize(
    ("n", "expected"), [pytest.param(3, 3, id="n-equals-total"), pytest.param(50, 3, id="n-over-total")]
)
def test_tiny_batch_is_sampled_whole(n: int, expected: int) -> None:
    items = batch({"a": 2, "b": 1})
    assert stratified_sample(items, n, seed=0) == [i for i, _ in items]


def test_empty_batch_and_zero_sample() -> None:
    assert stratified_sample([], 5, seed=0) == []
    assert stratified_sample(batch({"a": 3}), 0, seed=0) == []


# --- detection ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("population", "defective", "sample"),
    [
        pytest.param(10, 2, 3, id="hand"),  # 1 − C(8,3)/C(10,3) = 1 − 56/120 = 8/15 ≈ 0.533333
        pytest.param(40, 8, 6, id="template-of-40"),  # 1 − 906192/3838380 ≈ 0.763911
        pytest.param(200, 2, 30, id="1-percent-of-200"),
        pytest.param(1000, 10, 150, id="1-percent-of-1000"),
        pytest.param(1000, 50, 150, id="5-percent-of-1000"),
        pytest.param(5000, 1, 750, id="single-item"),  # exactly n/N = 0.15
        pytest.param(10, 0, 5, id="no-pattern"),
        pytest.param(10, 3, 0, id="no-sample"),
        pytest.param(10, 3, 10, id="full-review"),
        pytest.param(10, 8, 3, id="pattern-everywhere"),  # only 2 clean items: a sample of 3 must hit
    ],
)
def test_detection_matches_exact_fractions(population: int, defective: int, sample: int) -> None:
    expected = 1 - exact_miss(population, defective, sample)
    got = detection_probability(population, defective, sample)
    assert got == pytest.approx(float(expected), abs=TOL)
    assert got == pytest.approx(float(hypergeom.sf(0, population, defective, sample)), abs=TOL)


def test_detection_hand_values() -> None:
    assert detection_probability(10, 2, 3) == pytest.approx(8 / 15, abs=TOL)
    assert detection_probability(40, 8, 6) == pytest.approx(1 - 906192 / 3838380, abs=TOL)
    assert detection_probability(5000, 1, 750) == pytest.approx(0.15, abs=TOL)


@pytest.mark.parametrize(
    ("prevalence", "sample"),
    [
        pytest.param(0.01, 150, id="1pct-n150"),
        pytest.param(0.02, 100, id="2pct-n100"),
        pytest.param(0.20, 6, id="20pct-n6"),
    ],
)
def test_detection_tends_to_the_binomial_closed_form(prevalence: float, sample: int) -> None:
    # For N → ∞ without replacement is with replacement: 1 − (1 − p)^n. The gap is about
    # p·n²/(2N) of the miss chance: 2.5e-6 at N = 10^7 for p = 1 %, n = 150, so take N = 10^9.
    population = 1_000_000_000
    got = detection_probability(population, round(prevalence * population), sample)
    assert got == pytest.approx(1 - (1 - prevalence) ** sample, abs=TOL)


def test_detection_grows_with_prevalence_and_sample() -> None:
    for population in (40, 200, 1000):
        for sample in range(0, population + 1, max(1, population // 20)):
            chances = [detection_probability(population, d, sample) for d in range(0, population + 1, population // 40)]
            assert all(a <= b + 1e-12 for a, b in itertools.pairwise(chances))
        for d in (1, population // 50 or 1, population // 5):
            chances = [detection_probability(population, d, n) for n in range(population + 1)]
            assert all(a <= b for a, b in itertools.pairwise(chances))
            # strictly more until the chance is a certainty (in floating point, well before n = N − d + 1)
            assert all(a < b for a, b in itertools.pairwise(chances) if b < 1 - 1e-9)
            assert chances[population - d + 1] == 1.0


def test_detection_table_rows() -> None:
    rows = detection_table(200, 30, [0.0, 0.01, 0.2, 1.0])
    assert [r.showing for r in rows] == [0, 2, 40, 200]
    assert rows[1] == Detection(0.01, 2, pytest.approx(float(1 - exact_miss(200, 2, 30)), abs=TOL))
    assert rows[0].chance == 0 and rows[3].chance == 1
    # a sample larger than the batch is the whole batch
    assert detection_table(10, 50, [0.1])[0].chance == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("population", "prevalence", "expected"),
    [
        pytest.param(200, 0.0, 0, id="none"),
        pytest.param(200, 0.001, 1, id="rare-is-one"),
        pytest.param(200, 0.2, 40, id="twenty-percent"),
        pytest.param(0, 0.5, 0, id="empty"),
    ],
)
def test_defective_items(population: int, prevalence: float, expected: int) -> None:
    assert defective_items(population, prevalence) == expected


def test_stratum_detection_is_the_strata_own_hypergeometric() -> None:
    # 200 items in five templates of 40, 15 % → 6 per template. A pattern in 20 % of one template
    # is 8 items of 40: caught with 1 − C(32,6)/C(40,6) ≈ 76.4 %, not the 99 % a 20 % batch-wide
    # pattern would get.
    rows = stratum_detection({f"T{i}": 40 for i in range(5)}, 30, 0.2)
    assert [(r.size, r.sampled, r.showing) for r in rows] == [(40, 6, 8)] * 5
    assert rows[0].chance == pytest.approx(float(1 - exact_miss(40, 8, 6)), abs=TOL)
    assert rows[0].statement() == (
        "A pattern in 20.0 % of stratum T0 (8 of its 40 items) is caught with "
        "probability 76.4 %: 6 of its items are sampled."
    )


def test_stratum_detection_small_stratum_and_tuple_label() -> None:
    sizes = {("X", "en"): 100, ("Y", "de"): 95, ("Z", "fr"): 5}
    rows = {r.stratum: r for r in stratum_detection(sizes, 30, 0.4)}
    z = rows[("Z", "fr")]
    # Z's quota 30 × 5/200 = 0.75 → one item; 40 % of 5 is 2 items: caught with 2/5
    assert (z.sampled, z.showing) == (1, 2) and z.chance == pytest.approx(0.4, abs=TOL)
    assert "stratum Z / fr (2 of its 5 items)" in z.statement()


def test_stratified_detection_is_the_product_over_strata() -> None:
    sizes, sampled, showing = {"a": 40, "b": 30, "c": 10}, {"a": 6, "b": 4, "c": 2}, {"a": 3, "c": 1}
    miss = exact_miss(40, 3, 6) * exact_miss(30, 0, 4) * exact_miss(10, 1, 2)
    assert stratified_detection(sizes, sampled, showing) == pytest.approx(float(1 - miss), abs=TOL)
    assert stratified_detection({"a": 40}, {"a": 6}, {"a": 8}) == pytest.approx(detection_probability(40, 8, 6))


def test_sample_for_detection_is_the_smallest_sample_that_reaches_the_chance() -> None:
    for population, prevalence, chance in ((1000, 0.02, 0.9), (200, 0.2, 0.9), (40, 0.2, 0.95), (1000, 0.01, 0.5)):
        n = sample_for_detection(population, prevalence, chance)
        d = defective_items(population, prevalence)
        assert 1 - exact_miss(population, d, n) >= chance > 1 - exact_miss(population, d, n - 1)


# --- the stopping rule ----------------------------------------------------------------------


def test_bound_hand_values() -> None:
    # N=20, n=10, clean: P(clean | D) = C(20−D,10)/C(20,10), C(20,10) = 184756.
    # D=3: 19448/184756 ≈ 0.105 > 0.05; D=4: 8008/184756 ≈ 0.043 ≤ 0.05 → at most 3.
    assert defect_upper_bound(20, 10, 0, 0.95) == 3
    # One failure: P(≤1 | D) = (C(20−D,10) + D·C(20−D,9)) / 184756.
    # D=6: (1001 + 6·2002)/184756 ≈ 0.070 > 0.05; D=7: (286 + 7·715)/184756 ≈ 0.029 → at most 6.
    assert defect_upper_bound(20, 10, 1, 0.95) == 6


@pytest.mark.parametrize(
    ("population", "sample", "failed", "confidence"),
    [
        pytest.param(20, 10, 0, 0.95, id="hand"),
        pytest.param(200, 30, 0, 0.95, id="200-clean"),
        pytest.param(200, 30, 2, 0.95, id="200-two-failed"),
        pytest.param(200, 30, 0, 0.99, id="200-clean-99"),
        pytest.param(1000, 150, 0, 0.95, id="1000-clean"),
        pytest.param(1000, 150, 5, 0.90, id="1000-five-failed-90"),
        pytest.param(50, 5, 0, 0.95, id="minimum-sample"),
        pytest.param(12, 12, 3, 0.95, id="full-review-is-exact"),
    ],
)
def test_bound_defining_inequality_holds_at_d_and_fails_at_d_plus_one(
    population: int, sample: int, failed: int, confidence: float
) -> None:
    alpha = 1 - Fraction(confidence).limit_denominator(1000)
    bound = defect_upper_bound(population, sample, failed, confidence)
    assert exact_cdf(failed, population, bound, sample) > alpha
    if bound + 1 <= population - (sample - failed):
        assert exact_cdf(failed, population, bound + 1, sample) <= alpha
    else:  # the sample's passing items cap the bound: every unseen item fails
        assert bound == population - (sample - failed)
    assert hypergeom.cdf(failed, population, bound, sample) > 1 - confidence


def test_bound_on_known_values() -> None:
    assert defect_upper_bound(200, 30, 0) == 17  # "at most 17 of 200 (8.5 %)"
    assert defect_upper_bound(1000, 150, 0) == 18
    assert defect_upper_bound(12, 12, 3) == 3  # a full review knows the count
    assert defect_upper_bound(12, 0, 0) == 12  # no sample knows nothing


@pytest.mark.parametrize(
    ("sample", "failed"),
    [
        pytest.param(100, 0, id="clean"),
        pytest.param(100, 2, id="two"),
        pytest.param(50, 1, id="one"),
        pytest.param(300, 5, id="five"),
    ],
)
def test_bound_tends_to_clopper_pearson(sample: int, failed: int) -> None:
    # For a large batch the bound's rate is the binomial Clopper–Pearson upper limit, the
    # (1 − α) quantile of Beta(k + 1, n − k); for k = 0 that is 1 − α^(1/n).
    population = 10_000_000
    rate = defect_upper_bound(population, sample, failed) / population
    limit = beta.ppf(0.95, failed + 1, sample - failed)
    assert rate == pytest.approx(limit, abs=TOL)
    assert rate <= limit  # sampling without replacement knows a little more
    if failed == 0:
        assert limit == pytest.approx(1 - 0.05 ** (1 / sample), abs=1e-12)


def test_bound_falls_as_the_sample_grows() -> None:
    for population, failed in ((200, 0), (200, 2), (60, 1)):
        bounds = [defect_upper_bound(population, n, failed) for n in range(failed, population + 1)]
        assert all(a >= b for a, b in itertools.pairwise(bounds))
        assert bounds[0] == population and bounds[-1] == failed


def test_bound_rises_with_confidence_and_failures() -> None:
    assert (
        defect_upper_bound(200, 30, 0, 0.90)
        <= defect_upper_bound(200, 30, 0, 0.95)
        <= defect_upper_bound(200, 30, 0, 0.99)
    )
    bounds = [defect_upper_bound(200, 30, k) for k in range(31)]
    assert all(a < b for a, b in itertools.pairwise(bounds))


def brute_force_stratified_bound(sizes: dict[str, int], sampled: dict[str, int], alpha: Fraction) -> int:
    """Largest D such that some placement of D failing items leaves a clean sample more likely than alpha."""
    unseen = [range(sizes[s] - sampled[s] + 1) for s in sizes]
    best = 0
    for split in itertools.product(*unseen):
        clean = Fraction(1)
        for s, d in zip(sizes, split, strict=True):
            clean *= exact_miss(sizes[s], d, sampled[s])
        if clean > alpha:
            best = max(best, sum(split))
    return best


@pytest.mark.parametrize(
    ("sizes", "sampled"),
    [
        pytest.param({"a": 6, "b": 4, "c": 3}, {"a": 2, "b": 1, "c": 1}, id="three-strata"),
        pytest.param({"a": 12, "b": 8}, {"a": 4, "b": 2}, id="pinned-batch"),
        pytest.param({"a": 10, "b": 10, "c": 2}, {"a": 3, "b": 3, "c": 1}, id="tiny-stratum"),
        pytest.param({"a": 9, "b": 5}, {"a": 9, "b": 0}, id="unsampled-stratum"),
        pytest.param({"a": 30}, {"a": 5}, id="one-stratum"),
    ],
)
def test_stratified_bound_is_the_worst_placement(sizes: dict[str, int], sampled: dict[str, int]) -> None:
    for confidence in (0.8, 0.95):
        alpha = 1 - Fraction(confidence).limit_denominator(100)
        expected = brute_force_stratified_bound(sizes, sampled, alpha)
        assert stratified_upper_bound(sizes, sampled, confidence) == expected


def test_stratified_bound_with_one_stratum_is_the_plain_bound() -> None:
    for population, sample in ((20, 10), (200, 30), (1000, 150), (37, 1)):
        assert stratified_upper_bound({"x": population}, {"x": sample}) == defect_upper_bound(population, sample)


def test_stratified_bound_sees_an_undersampled_stratum() -> None:
    # The big stratum is sampled at 15/100 while the batch is at 30/200: failures hiding there are
    # missed more often than a simple random sample says, so the honest bound is higher.
    sizes = {"a": 100, "b": 50, "c": 30, "d": 15, "e": 5}
    sampled = allocate(sizes, 30)
    assert stratified_upper_bound(sizes, sampled) == 18 > defect_upper_bound(200, 30) == 17


def test_stopping_rule_statement_after_a_clean_sample() -> None:
    rule = stopping_rule(20, 10)
    assert rule == StoppingRule(20, 10, 0, 0.95, 3, fresh_sampled=10, fresh_upper=3)
    assert rule.clean and rule.upper_rate == pytest.approx(0.15)
    assert (
        rule.statement()
        == "The sample came back clean: with 95 % confidence at most 3 of 20 items (15.0 %) fail review."
    )


def test_stopping_rule_statement_after_failures() -> None:
    rule = stopping_rule(20, 10, failed=1, confidence=0.9)
    assert not rule.clean
    assert rule.statement().startswith("1 of 10 sampled items failed: with 90 % confidence at most ")


def test_a_stratified_first_sample_uses_the_stratified_bound() -> None:
    sizes = {"a": 100, "b": 50, "c": 30, "d": 15, "e": 5}
    shares = allocate(sizes, 30)
    rule = resample_rule(200, {k: FreshDraw(sizes[k], shares[k]) for k in sizes})
    assert rule.stratified and rule.upper_items == 18 and rule.fresh is None
    assert (
        rule.statement()
        == "The sample came back clean: with 95 % confidence at most 18 of 200 items (9.0 %) fail review."
    )


def brute_bound(population: int, sample: int, failed: int, alpha: Fraction) -> int:
    """Largest D with P(at most `failed` failures in the sample) > alpha, by exact enumeration."""
    return max(
        d
        for d in range(population + 1)
        if d >= failed and population - d >= sample - failed and exact_cdf(failed, population, d, sample) > alpha
    )


def test_fresh_bound_after_failures_is_the_strata_bounds_at_a_shared_confidence() -> None:
    # Two strata not drawn whole share α = 0.05 (0.025 each); a stratum drawn whole adds its failures exactly.
    draws = {"a": FreshDraw(30, 6, 1), "b": FreshDraw(20, 4, 0), "c": FreshDraw(3, 3, 2)}
    half = Fraction(1, 40)
    assert fresh_upper_bound(draws) == brute_bound(30, 6, 1, half) + brute_bound(20, 4, 0, half) + 2
    assert fresh_upper_bound({"a": FreshDraw(30, 6, 1)}) == brute_bound(30, 6, 1, Fraction(1, 20))


@pytest.mark.parametrize(
    ("sizes", "sampled"),
    [
        pytest.param({"a": 6, "b": 4, "c": 3}, {"a": 2, "b": 1, "c": 1}, id="three-strata"),
        pytest.param({"a": 10, "b": 10, "c": 2}, {"a": 3, "b": 3, "c": 2}, id="one-drawn-whole"),
    ],
)
def test_fresh_bound_of_a_clean_draw_is_the_worst_placement(sizes: dict[str, int], sampled: dict[str, int]) -> None:
    expected = brute_force_stratified_bound(sizes, sampled, Fraction(1, 20))
    assert fresh_upper_bound({k: FreshDraw(sizes[k], sampled[k]) for k in sizes}) == expected


def test_a_resample_counts_what_earlier_samples_left_known() -> None:
    strata = {f"i{n}": "t" for n in range(12)}
    first = {"i0": False, "i1": False, "i2": True, "i3": True}  # i0 fixed after, i1 dismissed, i2 changed by a fix
    second = {"i4": True, "i5": True, "i6": True, "i3": True}  # i3 drawn again
    rule = rule_from_samples(strata, [first, second], [{"i0", "i2"}])
    fresh_bound = brute_bound(8, 3, 0, Fraction(1, 20))
    assert (rule.fresh, rule.fresh_sampled, rule.fresh_upper) == (8, 3, fresh_bound)
    assert (rule.unreviewed, rule.known_failing, rule.sample, rule.failed) == (2, 1, 4, 0)
    assert rule.upper_items == fresh_bound + 2 + 1
    assert rule.statement() == (
        f"The sample came back clean: with 95 % confidence at most {fresh_bound + 3} of 12 items "
        f"({percent((fresh_bound + 3) / 12)}) fail review. Of the bound: this sample drew 3 of the 8 items no earlier "
        f"sample drew, and at most {fresh_bound} of those fail; 1 item drawn again counts by this sample's review; "
        "2 items changed by a fix after an earlier sample reviewed them count as possibly failing (not reviewed "
        "since); 1 item an earlier sample failed stands unchanged and counts as failing."
    )


def test_a_review_after_the_change_makes_an_item_known_again() -> None:
    strata = {f"i{n}": "t" for n in range(10)}
    rule = rule_from_samples(strata, [{"i0": False}, {"i0": True, "i1": True}, {"i2": True}], [{"i0"}, set()])
    assert (rule.unreviewed, rule.known_failing, rule.fresh) == (0, 0, 8)


@pytest.mark.parametrize("still_failing", [0, 1, 2], ids=lambda n: f"{n}-fixes-failed")
@pytest.mark.parametrize("fresh_failing", range(8))
def test_the_resample_rule_covers_the_truth_over_every_possible_draw(still_failing: int, fresh_failing: int) -> None:
    # A batch of 14: sample 1 drew i0..i3 and failed i0, i1 (both fixed since, `still_failing` of the fixes
    # did not work) and i2 (dismissed, still failing). Sample 2 draws 4 of the 10 fresh items, each 4-subset
    # equally likely (what the seeded sampler does); `fresh_failing` of them fail. Every draw is enumerated.
    strata = {f"i{n}": "t" for n in range(14)}
    first = {"i0": False, "i1": False, "i2": False, "i3": True}
    fresh = [f"i{n}" for n in range(4, 14)]
    failing = set(fresh[:fresh_failing])
    truth = fresh_failing + still_failing + 1
    draws = list(itertools.combinations(fresh, 4))
    covered = sum(
        truth <= rule_from_samples(strata, [first, {i: i not in failing for i in draw}], [{"i0", "i1"}]).upper_items
        for draw in draws
    )
    assert Fraction(covered, len(draws)) >= Fraction(19, 20)


def test_a_stratified_resample_rule_covers_the_truth_over_every_possible_draw() -> None:
    # Strata A (10 items) and B (6): sample 1 drew a0, b0, b1 and failed a0 (fixed since; the fix may not have
    # worked). Sample 2 draws 1 of A's 9 fresh items and 3 of B's 4, each stratum's subset equally likely: A is
    # thinly drawn, so failures hide there better than a pooled draw of 4 from 13 would say. Every placement of
    # failing fresh items and every draw is enumerated: clean draws and draws with failures.
    strata = {f"a{n}": "A" for n in range(10)} | {f"b{n}": "B" for n in range(6)}
    first = {"a0": False, "b0": True, "b1": True}
    fresh_a, fresh_b = [f"a{n}" for n in range(1, 10)], [f"b{n}" for n in range(2, 6)]
    draws = [{a} | set(b) for a in fresh_a for b in itertools.combinations(fresh_b, 3)]
    for fail_a, fail_b, still_failing in itertools.product(range(10), range(5), (0, 1)):
        failing = set(fresh_a[:fail_a]) | set(fresh_b[:fail_b])
        truth = fail_a + fail_b + still_failing
        covered = sum(
            truth <= rule_from_samples(strata, [first, {i: i not in failing for i in draw}], [{"a0"}]).upper_items
            for draw in draws
        )
        assert Fraction(covered, len(draws)) >= Fraction(19, 20), (fail_a, fail_b, still_failing)


def test_stopping_rule_statement_of_a_large_batch() -> None:
    # 15 % of 1,000 is 150; the bound's rate tends to 1 − 0.05^(1/150) ≈ 2.0 %, a little less without replacement
    assert stopping_rule(1000, 150).statement() == (
        "The sample came back clean: with 95 % confidence at most 18 of 1,000 items (1.8 %) fail review."
    )


def test_stopping_rule_of_an_empty_batch() -> None:
    rule = stopping_rule(0, 0)
    assert rule.upper_items == 0 and rule.upper_rate == 0.0


@pytest.mark.parametrize(
    ("share", "text"),
    [
        pytest.param(0.0, "0.0 %", id="zero"),
        pytest.param(1.0, "100.0 %", id="all"),
        pytest.param(0.085, "8.5 %", id="one-decimal"),
        pytest.param(0.005, "0.5 %", id="below-one"),
        pytest.param(0.000123, "0.012 %", id="two-significant"),
        pytest.param(0.0099999, "1.0 %", id="rounds-to-one"),
        pytest.param(0.99996, "> 99.9 %", id="never-a-false-certainty"),
        pytest.param(0.9994, "99.9 %", id="near-all"),
    ],
)
def test_percent(share: float, text: str) -> None:
    assert percent(share) == text


# --- invalid arguments ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        pytest.param(lambda: sample_size(-1), "batch size must be a whole number ≥ 0, got -1", id="negative-total"),
        pytest.param(lambda: sample_size(100, 0), "sample rate must be a share above 0", id="rate-zero"),
        pytest.param(lambda: sample_size(100, 15), r"sample rate .* got 15", id="rate-as-percent"),
        pytest.param(lambda: sample_size(100, 0.15, 0), "minimum sample must be a whole number ≥ 1", id="minimum-zero"),
        pytest.param(
            lambda: allocate({"x": -2}, 3),
            "size of stratum 'x' must be a whole number ≥ 0, got -2",
            id="negative-stratum",
        ),
        pytest.param(lambda: allocate({"x": 2}, 1.5), "sample size must be a whole number", id="fractional-n"),
        pytest.param(
            lambda: stratified_sample([("a", 1), ("a", 2)], 1, 0), "item id 'a' appears twice", id="duplicate-id"
        ),
        pytest.param(
            lambda: stratified_sample([("a", 1)], -1, 0), "sample size must be a whole number ≥ 0", id="negative-n"
        ),
        pytest.param(
            lambda: detection_probability(10, 11, 2),
            r"items showing the pattern \(11\) cannot exceed "
            r"the batch size \(10\)",
            id="more-pattern-than-batch",
        ),
        pytest.param(
            lambda: detection_probability(10, 1, 12),
            r"sample size \(12\) cannot exceed the batch size",
            id="sample-over-batch",
        ),
        pytest.param(lambda: defective_items(10, 1.5), "prevalence must be a share between 0 and 1", id="prevalence"),
        pytest.param(
            lambda: defect_upper_bound(100, 10, 11),
            r"failed items \(11\) cannot exceed the sampled",
            id="failed-over-sample",
        ),
        pytest.param(
            lambda: defect_upper_bound(100, 10, 0, 95),
            "confidence must be a share above 0 and below 1",
            id="confidence-as-percent",
        ),
        pytest.param(
            lambda: stratified_upper_bound({"a": 5}, {"a": 6}),
            "stratum 'a' has 6 sampled items but holds only 5",
            id="stratum-oversampled",
        ),
        pytest.param(
            lambda: stratified_upper_bound({"a": 5}, {}),
            "stratum 'a' has a size but no sampled count",
            id="stratum-missing",
        ),
        pytest.param(
            lambda: stratified_upper_bound({"a": 5}, {"a": 1, "b": 1}),
            "sampled counts for unknown strata",
            id="stratum-unknown",
        ),
        pytest.param(
            lambda: stratified_detection({"a": 5}, {"a": 1}, {"z": 1}),
            "pattern items in unknown strata",
            id="pattern-unknown-stratum",
        ),
        pytest.param(
            lambda: fresh_upper_bound({"a": FreshDraw(5, 2, 3)}),
            "stratum 'a' has 3 failed items but only 2",
            id="fresh-failed-over-drawn",
        ),
        pytest.param(
            lambda: resample_rule(10, {"a": FreshDraw(8, 2)}, known_failing=3),
            "more than the batch's 10",
            id="groups-over-batch",
        ),
        pytest.param(
            lambda: rule_from_samples({"x": "t"}, [{"y": True}]),
            "are not items of the batch",
            id="sampled-unknown-item",
        ),
        pytest.param(lambda: rule_from_samples({"x": "t"}, []), "a stopping rule needs a sample", id="no-sample"),
        pytest.param(
            lambda: sample_for_detection(100, 0.0),
            "no item of a batch of 100 shows a pattern of prevalence 0",
            id="zero-prevalence",
        ),
        pytest.param(lambda: sample_for_detection(0, 0.1), "no item of a batch of 0", id="empty-batch"),
        pytest.param(
            lambda: sample_for_detection(100, 0.1, 1.0), "chance must be a share above 0 and below 1", id="certainty"
        ),
    ],
)
def test_invalid_arguments_raise_clear_errors(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
