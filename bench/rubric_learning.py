"""What rubric learning costs at its worst: the Suggestions tab and `rubric suggestions` group a rubric's failures
on every view (cached a minute), and grouping compares a criterion's issues pairwise.

Times `santa_core.rubrics.learning.suggestions` on escapes of one criterion whose quotes share no phrase (no two
join, so every pair is compared), with quotes of the spot-check maximum (4,000 characters), of 50 words, and ten
to a round, up to ten times MAX_ISSUES items; then MAX_ISSUES quotes against 200 and 2,000 clean runs. Prints CPU seconds, the median of `--repeat`; asserts nothing.

    python bench/rubric_learning.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from santa_core.models import Criterion, MergedIssue, Rubric
from santa_core.rubrics.learning import MAX_EVIDENCE_CHARS, MAX_ISSUES, LearningItem, suggestions

CRITERION = Criterion(id="c1", name="C one", category="compliance", pass_condition="ok", fail_signal="bad")
RUBRIC = Rubric(name="r", criteria=[CRITERION])


def escapes(count: int, words: int, per: int = 1, seed: int = 1) -> list[LearningItem]:
    """`count` failures of `per` issues each, each issue quoting `words` random words (cut at 4,000 characters)
    that its text holds."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(3_000)]
    items = []
    for r in range(1, count + 1):
        quotes = [" ".join(rng.choice(vocabulary) for _ in range(words))[:4_000] for _ in range(per)]
        items.append(
            LearningItem(
                run_id=r,
                source="escape",
                ref=r,
                text=" ".join(quotes),
                issues=[MergedIssue(criterion="c1", description=q, evidence=q, flagged_by="both") for q in quotes],
            )
        )
    return items


def cpu_s(items: list[LearningItem], repeat: int, nice: dict[int, str] | None = None) -> float:
    """Median CPU seconds of one `suggestions` call over the items (and NICE texts)."""
    spent = []
    for _ in range(repeat):
        began = time.process_time()
        suggestions(RUBRIC, items, nice or {})
        spent.append(time.process_time() - began)
    return statistics.median(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"MAX_ISSUES={MAX_ISSUES}, MAX_EVIDENCE_CHARS={MAX_EVIDENCE_CHARS}")
    for label, words, per in (("4,000-char quotes", 700, 1), ("50-word quotes", 50, 1), ("10 issues a round", 40, 10)):
        for count in (20, 80, 160, 10 * MAX_ISSUES):
            spent = cpu_s(escapes(count, words, per), args.repeat)
            print(f"{label:18s} {count:5d} items: {spent:6.2f} s", flush=True)
    rng = random.Random(2)
    vocabulary = [f"w{i}" for i in range(3_000)]
    for count in (200, 2_000):  # a month of clean runs of ~2,000 characters, against MAX_ISSUES distinct quotes
        nice = {10_000 + r: " ".join(rng.choice(vocabulary) for _ in range(350)) for r in range(count)}
        spent = cpu_s(escapes(MAX_ISSUES, 50), args.repeat, nice)
        print(f"{'NICE runs':18s} {count:5d} runs:  {spent:6.2f} s", flush=True)


if __name__ == "__main__":
    main()
