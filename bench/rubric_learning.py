"""What rubric learning costs at its worst: the Suggestions tab and `rubric suggestions` group a rubric's failures
on every view (cached a minute), and grouping compares a criterion's issues pairwise.

Times `santa_core.rubrics.learning.suggestions` on escapes of one criterion whose quotes share no phrase (no two
join, so every pair is compared), with quotes of the spot-check maximum (4,000 characters) and of 50 words, at
ten times MAX_ITEMS and below. Prints CPU seconds, the median of `--repeat`; asserts nothing.

    python bench/rubric_learning.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from santa_core.models import Criterion, MergedIssue, Rubric
from santa_core.rubrics.learning import MAX_EVIDENCE_CHARS, MAX_ITEMS, LearningItem, suggestions

CRITERION = Criterion(id="c1", name="C one", category="compliance", pass_condition="ok", fail_signal="bad")
RUBRIC = Rubric(name="r", criteria=[CRITERION])


def escapes(count: int, words: int, seed: int = 1) -> list[LearningItem]:
    """`count` escapes, each quoting `words` random words (cut at 4,000 characters) that its text holds."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(3_000)]
    items = []
    for r in range(1, count + 1):
        quote = " ".join(rng.choice(vocabulary) for _ in range(words))[:4_000]
        items.append(LearningItem(run_id=r, source="escape", ref=r, text=quote, issues=[
            MergedIssue(criterion="c1", description=quote, evidence=quote, flagged_by="both")]))
    return items


def cpu_s(items: list[LearningItem], repeat: int) -> float:
    """Median CPU seconds of one `suggestions` call over the items."""
    spent = []
    for _ in range(repeat):
        began = time.process_time()
        suggestions(RUBRIC, items, {})
        spent.append(time.process_time() - began)
    return statistics.median(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"MAX_ITEMS={MAX_ITEMS}, MAX_EVIDENCE_CHARS={MAX_EVIDENCE_CHARS}")
    for label, words in (("4,000-char quotes", 700), ("50-word quotes", 50)):
        for count in (20, 80, 160, 10 * MAX_ITEMS):
            print(f"{label:18s} {count:5d} items: {cpu_s(escapes(count, words), args.repeat):6.2f} s", flush=True)


if __name__ == "__main__":
    main()
