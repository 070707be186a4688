"""The injection defence on held-out sets: what each layer stops, before any reviewer is paid.

Each set in bench/heldout/ was written by someone who never saw the detector, its corpus or its development set, and
frozen before the first run: never add its texts to a test corpus, never look at what it misses or blocks, and never
tune a rule against it. A set that was looked at moves to bench/burned/ and is reported apart. The sets:
- heldout/injection-heldout-2026-12-05c.json: written for issue 36's second pass by a helper, after the first pass's
  layers were built and while the second pass was being written (91 attacks in 12 families, 124 benign);
- burned/injection-heldout-2026-11.json: the first set (40 attacks, 30 ordinary texts, each inside a line of copy);
- burned/injection-heldout-2026-12-05.json: issue 36's first set (94 attacks, 104 benign); measured at 76 % stopped
  and 2 benign blocked, then its two blocked texts were read to fix the rules that blocked them;
- burned/injection-heldout-2026-12-05a.json and -05b.json: the first pass's fresh sets (65 % stopped, 1 of 179 benign
  blocked when measured unseen), then their misses read for the second pass;
- burned/injection-heldout-2026-12-05d.json: written beside -05c (105 attacks, 127 benign); measured unseen once with
  the second pass (76 stopped, 72 %; 4 benign blocked), then its 4 blocked texts were read (left blocked: see
  docs/injection.md).

Printed per set: for each layer of the deterministic detector (the stock patterns and sentence scorer, the structural
signals, the hidden carriers, the addressee lexicon of every language, each decoded view) how many attacks it stops
on its own, how many the detector stops in all, per family, and how many benign texts it blocks. The model layers (the
known-answer screen, the extraction check, the echo check) need a model and are not measured here: with reviewers and
a screen that obey the data, as the issue assumes, they stop nothing, so the detector's figure is what stands.

    python bench/injection_heldout.py [--list] [--set NAME]    (NAME: 2026-12-05c, 2026-11, …; --list lists the
    misses and false alarms of burned sets only)
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from santa_core.checks.injection import layer_signals
from santa_core.checks.signals import Context

HERE = Path(__file__).resolve().parent / "heldout"
BURNED = Path(__file__).resolve().parent / "burned"
"""Sets that were held out once but whose misses or false alarms were looked at: development data now, shown apart."""
CRITERIA = (
    "factual_accuracy",
    "Factual accuracy",
    "hallucination_free",
    "Hallucination-free",
    "completeness",
    "Completeness",
    "no_outcome_guarantees",
    "No outcome guarantees",
    "required_disclaimers",
    "Required disclaimers present",
    "approved_terminology",
    "Approved terminology only",
)
"""The rubric the sets were written against (the writers were given these ids and names)."""


def layers_stopping(item: dict) -> set[str]:
    """The layers that flag the item: its spec (when the attack is in the spec) and its output."""
    ctx = Context(criteria=CRITERIA)
    found: dict[str, list] = {}
    texts = [item["text"]] + ([item["output"]] if item.get("output") else [])  # an attack in the spec has both
    for text in texts:
        for layer, signals in layer_signals(text, ctx).items():
            if signals:
                found.setdefault(layer, []).extend(signals)
    return set(found)


def report(path: Path, listing: bool) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    attacks, benign = data["attacks"], data["benign"]
    began = time.perf_counter()
    stops = [layers_stopping(a) for a in attacks]
    blocks = [layers_stopping(b) for b in benign]
    spent = time.perf_counter() - began
    label = " (burned: looked at, tuned on since; not a held-out figure)" if path.parent == BURNED else ""
    print(f"\n== {path.name}{label}: {len(attacks)} attacks, {len(benign)} benign ({spent:.1f} s)")
    per_layer = Counter(layer for s in stops for layer in s)
    for layer in sorted(per_layer, key=lambda k: (-per_layer[k], k)):
        print(f"  {layer:<22} stops {per_layer[layer]:>3} of {len(attacks)} on its own")
    stopped = sum(1 for s in stops if s)
    print(f"  {'detector, all layers':<22} stops {stopped:>3} of {len(attacks)} ({100 * stopped / len(attacks):.0f} %)")
    print(f"  {'screen, extraction, echo':<22} not measured here (need a model; assumed beaten: 0)")
    families: dict[str, list[bool]] = defaultdict(list)
    for a, s in zip(attacks, stops, strict=True):
        families[a.get("family", "?")].append(bool(s))
    print("  per family:", ", ".join(f"{f} {sum(v)}/{len(v)}" for f, v in sorted(families.items())))
    blocked = [b for b, s in zip(benign, blocks, strict=True) if s]
    by_layer = Counter(layer for s in blocks for layer in s)
    print(
        f"  benign blocked: {len(blocked)} of {len(benign)}"
        + (f" (by layer: {', '.join(f'{k} {v}' for k, v in sorted(by_layer.items()))})" if by_layer else "")
    )
    if listing:
        for a, s in zip(attacks, stops, strict=True):
            if not s:
                print("  missed:", a.get("family"), "|", a["text"][:160].replace("\n", " "))
        for b, s in zip(benign, blocks, strict=True):
            if s:
                print("  blocked:", sorted(s), "|", b["text"][:160].replace("\n", " "))


def main() -> None:
    listing = "--list" in sys.argv
    only = sys.argv[sys.argv.index("--set") + 1] if "--set" in sys.argv else ""
    for path in [*sorted(HERE.glob("injection-heldout-*.json")), *sorted(BURNED.glob("injection-heldout-*.json"))]:
        if only and path.name != f"injection-heldout-{only}.json":  # --set 2026-12-05c: that set, no other
            continue
        if listing and path.parent == HERE:
            print(
                f"\n== {path.name}: held out, its misses are not listed (reading them burns the set: move it to burned/)"
            )
            report(path, False)
            continue
        report(path, listing)


if __name__ == "__main__":
    main()
