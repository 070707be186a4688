"""What batch verification by sampling catches, and what it costs against full verification.

A simulated batch of --items items in five templates (40, 25, 20, 10 and 5 % of the items) is
sampled with `santa_core.batch.sampling` at rates of 5–30 %, with systematic patterns of 1–30 %
prevalence planted in it. Prints, next to the method's claim (about 15–20 % of the cost, over 90 %
of systematic issues caught):

1. the exact chance that the first sample catches a pattern (hypergeometric), and the sample
   needed for a 90 % or 95 % chance;
2. a seeded Monte Carlo check: patterns are planted once in random items (of the batch, or of one
   template); our `stratified_sample` then draws --trials samples of the same batch (only the seed
   changes) and counts how often each pattern is caught, against the exact chance for that
   placement (the product over templates of each template's hypergeometric miss chance);
3. a pattern confined to one template: the chance is set by that template's share of the sample;
4. the cost relative to full verification, and where the claim holds;
5. small batches, and what a clean sample proves (the stopping rule's bound);
6. the stopping rule's empirical coverage: many seeded batches with planted patterns and stray
   failures go through the real sampler (`sample_size`, `stratified_sample` avoiding the items
   sampled before, the seed of each sample as the store draws it), their patterns are fixed (a fix
   sometimes fails) and the batch resampled until a sample is clean; `rule_from_samples` (what the
   Batch page, CLI and export state) gives the bound, and the share of batches whose true number of
   failing items is at most the bound must be at least the confidence (95 %).

Cost model, in model calls: full verification is 2 reviewer calls (B and C) per item. Sampling is
2 reviewer calls per sampled item per sample round, plus one fix-agent call per pattern found
(applying the approved fix to the matching items costs no call; --apply-calls changes that). A
batch whose first sample is clean costs one round; a batch with a pattern that the sample catches
costs one fix and one more (clean) sample. The calls are counted, not priced: a fix-agent call
may cost several reviewer calls, but one call per pattern is negligible next to 2 per sampled item.

    python bench/batch_sampling.py [--items 1000] [--trials 2000] [--seed 1] [--batches 500]

Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Sequence

from santa_core.batch.sampling import (
    CONFIDENCE,
    allocate,
    defective_items,
    detection_probability,
    sample_for_detection,
    sample_size,
    stratified_detection,
    stratified_sample,
)
from santa_core.batch.stopping import defect_upper_bound, rule_from_samples, stratified_upper_bound
from storage.batch_samples import MAX_SEED, SEED_STEP

PREVALENCES = (0.01, 0.02, 0.05, 0.10, 0.20, 0.30)
RATES = (0.05, 0.10, 0.15, 0.20, 0.30)
TEMPLATE_SHARES = {"T1": 0.40, "T2": 0.25, "T3": 0.20, "T4": 0.10, "T5": 0.05}
CLAIM_COST, CLAIM_CATCH = 0.20, 0.90
DEFAULT_RATE = 0.15

Batch = list[tuple[str, str]]


def make_batch(items: int) -> tuple[Batch, dict[str, int]]:
    """Items `T<k>-<n>` in five templates of the shares above (the last one takes the rounding)."""
    sizes = {t: max(1, round(share * items)) for t, share in TEMPLATE_SHARES.items()}
    sizes["T5"] = max(1, items - sum(v for t, v in sizes.items() if t != "T5"))
    batch = [(f"{t}-{i:05d}", t) for t, size in sizes.items() for i in range(size)]
    return batch, sizes


def plant(batch: Batch, prevalence: float, rng: random.Random, only: str | None = None) -> dict[str, set[str]]:
    """A fixed pattern, per template: random items of the batch, or of template `only` alone."""
    pool = [(item_id, t) for item_id, t in batch if only is None or t == only]
    chosen = rng.sample(pool, defective_items(len(pool), prevalence))
    pattern: dict[str, set[str]] = {t: set() for _, t in batch}
    for item_id, t in chosen:
        pattern[t].add(item_id)
    return pattern


def pct(share: float) -> str:
    """A share as a percentage for table cells: one decimal, two digits below 1; never a false 100.0."""
    if 0 < share < 0.01:
        return f"{share * 100:.2g}"
    text = f"{share * 100:.1f}"
    return ">99.9" if text == "100.0" and share < 1 else text


def row(cells: Sequence[str], widths: Sequence[int]) -> str:
    """Right-aligned cells, the first one left-aligned."""
    head, *rest = cells
    return f"{head:<{widths[0]}}" + "".join(f"{c:>{w}}" for c, w in zip(rest, widths[1:], strict=True))


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], first: int = 14) -> None:
    """A titled, aligned table."""
    widths = [first] + [max(len(h), *(len(r[i]) for r in rows)) + 2 for i, h in enumerate(header) if i]
    print(f"\n{title}")
    print(row(header, widths))
    for cells in rows:
        print(row(cells, widths))


def rate_header(items: int, first: str) -> list[str]:
    """Column heads: each sample rate with its sample size."""
    return [first] + [f"{r * 100:g} % (n={sample_size(items, r)})" for r in RATES]


def exact_detection(items: int) -> None:
    """Section 1: the hypergeometric chance that the first sample catches a pattern."""
    rows = []
    for p in PREVALENCES:
        d = defective_items(items, p)
        rows.append(
            [f"{p * 100:g} % ({d})"] + [pct(detection_probability(items, d, sample_size(items, r))) for r in RATES]
        )
    print_table(
        f"1a. Chance (%) the first sample catches a pattern, exact (hypergeometric), {items:,} items",
        rate_header(items, "prevalence"),
        rows,
    )
    needed = []
    for p in PREVALENCES:
        n90, n95 = (sample_for_detection(items, p, c) for c in (0.90, 0.95))
        needed.append([f"{p * 100:g} %", f"{n90} ({pct(n90 / items)} %)", f"{n95} ({pct(n95 / items)} %)"])
    print_table(
        "1b. Smallest sample that catches a pattern with 90 % / 95 % chance", ["prevalence", "90 %", "95 %"], needed
    )


def monte_carlo(batch: Batch, sizes: dict[str, int], trials: int, seed: int) -> None:
    """Section 2: our sampler, many seeds, fixed planted patterns: caught how often, against exact."""
    rng = random.Random(seed)
    cases = [(f"{p * 100:g} %", plant(batch, p, rng)) for p in PREVALENCES]
    cases.append(("20 % of T5", plant(batch, 0.2, rng, only="T5")))
    cases.append(("5 % of T1", plant(batch, 0.05, rng, only="T1")))
    items = len(batch)
    cells: dict[str, list[str]] = {label: [label] for label, _ in cases}
    worst = 0.0
    for r in RATES:
        n = sample_size(items, r)
        sampled = allocate(sizes, n)
        hits = dict.fromkeys(cells, 0)
        for trial in range(trials):
            picked = set(stratified_sample(batch, n, seed=seed * 1_000_003 + trial))
            for label, pattern in cases:
                hits[label] += any(picked & ids for ids in pattern.values())
        for label, pattern in cases:
            exact = stratified_detection(sizes, sampled, {t: len(ids) for t, ids in pattern.items()})
            seen = hits[label] / trials
            se = math.sqrt(exact * (1 - exact) / trials) or 1 / trials
            worst = max(worst, abs(seen - exact) / se)
            cells[label].append(f"{pct(seen)} ({pct(exact)})")
    print_table(
        f"2. Our stratified_sample, {trials:,} seeds per cell, planted patterns fixed: "
        "caught % (exact % for this placement)",
        rate_header(items, "pattern"),
        list(cells.values()),
    )
    print(
        f"   largest gap between simulation and formula: {worst:.1f} standard errors "
        "(about 1 in 20 cells is expected beyond 2)"
    )


def confined(sizes: dict[str, int]) -> None:
    """Section 3: a pattern inside one template, at the default rate."""
    items = sum(sizes.values())
    n = sample_size(items, DEFAULT_RATE)
    sampled = allocate(sizes, n)
    shares = (0.05, 0.10, 0.20, 0.30, 0.50)
    rows = []
    for t, size in sizes.items():
        rows.append(
            [f"{t} ({size}, n={sampled[t]})"]
            + [pct(detection_probability(size, defective_items(size, s), sampled[t])) for s in shares]
        )
    print_table(
        f"3. Chance (%) of catching a pattern confined to one template, {DEFAULT_RATE * 100:g} % sample (n={n})",
        ["template"] + [f"{s * 100:g} % of it" for s in shares],
        rows,
        first=20,
    )


def cost(items: int, n: int, rounds: int, fixes: int, apply_calls: float, fixed_items: int = 0) -> float:
    """Model calls of sampling ÷ model calls of full verification (2 reviewer calls per item)."""
    return (2 * n * rounds + fixes + apply_calls * fixed_items) / (2 * items)


def costs(items: int, apply_calls: float) -> None:
    """Section 4: cost per scenario, expected cost with one pattern, and where the claim holds."""
    rows = []
    for r in RATES:
        n = sample_size(items, r)
        rows.append(
            [
                f"{r * 100:g} % (n={n})",
                pct(cost(items, n, 1, 0, apply_calls)),
                pct(cost(items, n, 2, 1, apply_calls, defective_items(items, 0.05))),
                pct(cost(items, n, 3, 2, apply_calls, 2 * defective_items(items, 0.05))),
            ]
        )
    print_table(
        "4a. Cost (%) of full verification (2 reviewer calls per item)",
        ["sample rate", "clean at once", "1 fix + clean resample", "2 fixes + clean resample"],
        rows,
    )
    grid = []
    for p in PREVALENCES:
        d = defective_items(items, p)
        cells = [f"{p * 100:g} %"]
        for r in RATES:
            n = sample_size(items, r)
            caught = detection_probability(items, d, n)
            expected = cost(items, n, 1, 0, apply_calls) + caught * cost(items, n, 1, 1, apply_calls, d)
            # "about 20 %": the fix call's 0.05 % does not break the claim
            mark = "ok" if caught >= CLAIM_CATCH and round(expected * 100) <= CLAIM_COST * 100 else "--"
            cells.append(f"{pct(caught)} / {pct(expected)} {mark}")
        grid.append(cells)
    print_table(
        f"4b. One pattern in the batch: caught % / expected cost % (caught: fix + clean resample); "
        f"ok = claim holds (caught ≥ {CLAIM_CATCH * 100:g} %, cost about {CLAIM_COST * 100:g} % or less)",
        rate_header(items, "prevalence"),
        grid,
    )
    fresh = []
    n = sample_size(items, DEFAULT_RATE)
    for p in PREVALENCES[:4]:
        d = defective_items(items, p)
        fresh.append(
            [
                f"{p * 100:g} %",
                pct(detection_probability(items, d, n)),
                pct(detection_probability(items, d, min(items, 2 * n))),
            ]
        )
    print_table(
        f"4c. A resample draws fresh items, so a pattern the first sample missed gets a second chance "
        f"({DEFAULT_RATE * 100:g} %, n={n})",
        ["prevalence", "first sample", "within two samples"],
        fresh,
    )


def small_batches() -> None:
    """Section 5a: the default rate on small batches."""
    rows = []
    for items in (20, 50, 100, 200, 500, 1000, 5000):
        n = sample_size(items, DEFAULT_RATE)
        bound = defect_upper_bound(items, n, 0, CONFIDENCE)
        rows.append(
            [f"{items:,}", str(n)]
            + [pct(detection_probability(items, defective_items(items, p), n)) for p in (0.02, 0.05, 0.10, 0.20)]
            + [pct(bound / items)]
        )
    print_table(
        f"5a. The default {DEFAULT_RATE * 100:g} % (at least 5 items) by batch size: chance (%) of catching "
        f"a pattern, and the clean sample's {CONFIDENCE * 100:g} % bound (%)",
        ["items", "n", "2 %", "5 %", "10 %", "20 %", "clean → at most"],
        rows,
        first=8,
    )


def bounds(sizes: dict[str, int]) -> None:
    """Section 5b: what a clean sample proves, per rate."""
    items = sum(sizes.values())
    rows = []
    for r in RATES:
        n = sample_size(items, r)
        srs = defect_upper_bound(items, n, 0, CONFIDENCE)
        strat = stratified_upper_bound(sizes, allocate(sizes, n), CONFIDENCE)
        rows.append(
            [
                f"{r * 100:g} % (n={n})",
                f"{srs} ({pct(srs / items)} %)",
                f"{strat} ({pct(strat / items)} %)",
                pct(1 - (1 - CONFIDENCE) ** (1 / n)),
            ]
        )
    print_table(
        f"5b. After a clean sample, with {CONFIDENCE * 100:g} % confidence at most … of {items:,} items fail review",
        ["sample rate", "simple random", "our strata, worst placement", "huge batch: 1-0.05^(1/n) %"],
        rows,
    )


COVERAGE_CASES = (  # (label, items, template shares, patterns as (prevalence, template or None), stray failure rate)
    ("200 items, one pattern in 41", 200, {"T": 1.0}, ((0.205, None),), 0.0),
    ("200 items, 5 templates, 2 patterns + 1 % stray", 200, TEMPLATE_SHARES, ((0.05, None), (0.2, "T4")), 0.01),
    (
        "1,000 items, 5 templates, 3 patterns + 0.5 % stray",
        1000,
        TEMPLATE_SHARES,
        ((0.02, None), (0.1, "T5"), (0.05, "T2")),
        0.005,
    ),
    ("60 items, 2 templates, 1 pattern + 2 % stray", 60, {"A": 0.7, "B": 0.3}, ((0.1, "B"),), 0.02),
)
FIX_WORKS = 0.8
"""The chance a pattern's fix makes one of its items pass (a failed fix leaves the item failing, changed)."""
MAX_SAMPLES = 6


def simulate(
    items: int, shares: dict[str, float], patterns: Sequence[tuple[float, str | None]], stray: float, seed: int
) -> list[tuple[int, int, int]]:
    """One batch verified to the end: (true failing items, stated bound, whole-batch bound) at each sample."""
    rng = random.Random(seed)
    sizes = {t: max(1, round(share * items)) for t, share in shares.items()}
    last = list(sizes)[-1]
    sizes[last] = max(1, items - sum(v for t, v in sizes.items() if t != last))
    batch = [(f"{t}-{i:05d}", t) for t, size in sizes.items() for i in range(size)]
    strata = dict(batch)
    groups = [set().union(*plant(batch, p, rng, only=t).values()) for p, t in patterns]
    failing = set().union(*groups) | {i for i, _ in batch if rng.random() < stray}
    n = sample_size(len(batch), DEFAULT_RATE)
    reviews: list[dict[str, bool]] = []
    changed: list[set[str]] = []
    seen: set[str] = set()
    out = []
    for number in range(1, MAX_SAMPLES + 1):
        # As the store draws it: the batch's seed stepped per sample, avoiding the items sampled before.
        drawn = stratified_sample(batch, n, (seed + (number - 1) * SEED_STEP) % MAX_SEED, seen)
        seen.update(drawn)
        reviews.append({i: i not in failing for i in drawn})
        rule = rule_from_samples(strata, reviews, changed)
        failed = sum(not ok for ok in reviews[-1].values())
        out.append((len(failing), rule.upper_items, defect_upper_bound(len(batch), len(drawn), failed)))
        if rule.clean:
            break
        fixed: set[str] = set()
        for group in groups:  # a pattern the sample caught is fixed wherever it shows; stray failures stay
            if group & set(drawn):
                fixed |= group
                failing -= {i for i in sorted(group) if rng.random() < FIX_WORKS}  # sorted: sets vary by hash seed
        changed.append(fixed)
    return out


def coverage(batches: int, seed: int) -> float:
    """Section 6: the stopping rule's empirical coverage over seeded batches; the worst case's share."""
    rows, worst = [], 1.0
    for label, items, shares, patterns, stray in COVERAGE_CASES:
        stop_ok = every_ok = every = old_ok = rounds = 0
        for b in range(batches):
            steps = simulate(items, shares, patterns, stray, seed * 1_000_003 + b)
            truth, bound, whole = steps[-1]
            stop_ok += truth <= bound
            old_ok += truth <= whole
            every_ok += sum(t <= u for t, u, _ in steps)
            every += len(steps)
            rounds += len(steps)
        worst = min(worst, stop_ok / batches, every_ok / every)
        rows.append(
            [
                label,
                f"{stop_ok / batches:.4f}",
                f"{every_ok / every:.4f}",
                f"{old_ok / batches:.4f}",
                f"{rounds / batches:.2f}",
            ]
        )
    print_table(
        f"6. The stopping rule's empirical coverage, {batches:,} seeded batches per row, "
        f"{DEFAULT_RATE * 100:g} % samples, fixes that work {FIX_WORKS * 100:g} % of the time, at most "
        f"{MAX_SAMPLES} samples: share of batches whose true number of failing items is at most the "
        f"stated {CONFIDENCE * 100:g} % bound",
        ["batch", "at the last sample", "at every sample", "old whole-batch bound", "samples"],
        rows,
        first=52,
    )
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1000, help="items in the simulated batch (default 1000)")
    parser.add_argument("--trials", type=int, default=2000, help="Monte Carlo samples per sample rate (default 2000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the planted patterns and the samples")
    parser.add_argument("--batches", type=int, default=500, help="seeded batches per coverage row (default 500)")
    parser.add_argument(
        "--apply-calls",
        type=float,
        default=0.0,
        help="model calls to apply an approved fix to one matching item (default 0)",
    )
    args = parser.parse_args()
    if args.items < 20 or args.trials < 1:
        parser.error("--items must be at least 20 (five templates) and --trials at least 1")
    start = time.perf_counter()
    batch, sizes = make_batch(args.items)
    print(
        f"Batch verification by sampling: {args.items:,} items in templates "
        + ", ".join(f"{t} {size}" for t, size in sizes.items())
        + f"; seed {args.seed}"
    )
    print(
        f"The method's claim: about 15–20 % of the cost of full verification, over {CLAIM_CATCH * 100:g} % of "
        "systematic issues caught."
    )
    exact_detection(args.items)
    monte_carlo(batch, sizes, args.trials, args.seed)
    confined(sizes)
    costs(args.items, args.apply_calls)
    small_batches()
    bounds(sizes)
    worst = coverage(args.batches, args.seed)
    verdict = "holds" if worst >= CONFIDENCE else "DOES NOT HOLD"
    print(f"\nSTOPPING RULE COVERAGE: {worst:.4f} (lowest row) against the stated {CONFIDENCE:.2f}: {verdict}")
    print(f"\n({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
