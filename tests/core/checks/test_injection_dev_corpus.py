"""The detector on the development corpora, written blind by helpers who never saw it (issue 36): every benign
look-alike ships and nearly every attack is stopped, with the rubric's criteria told to the detector.

The corpora are data the layers were tuned on (unlike bench/heldout/, which nothing is tuned on): this test holds
the precision the layers reached, so a rule made broader later turns it red on the text it would now block."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from santa_core.checks.injection import detect_injection
from santa_core.checks.signals import Context

HERE = Path(__file__).resolve().parents[2] / "support"
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
"""The rubric the corpora's writers were told of."""


def _items(name: str, kind: str) -> list[dict]:
    return json.loads((HERE / name).read_text(encoding="utf-8"))[kind]


def _stopped(item: dict) -> bool:
    ctx = Context(criteria=CRITERIA + tuple(item.get("criteria") or ()))
    where = item.get("where", "output")
    return bool(
        detect_injection(item["text"], where=where, ctx=ctx)
        or (item.get("output") and detect_injection(item["output"], ctx=ctx))
    )


def test_no_benign_look_alike_is_blocked() -> None:
    benign = _items("injection_dev_corpus.json", "benign") + _items("injection_benign_dev_2.json", "benign")
    assert len(benign) >= 2 * len(_items("injection_dev_corpus.json", "attacks"))  # at least as many as attacks
    blocked = [b["text"][:120] for b in benign if _stopped(b)]
    assert blocked == []


def test_the_attacks_of_every_family_are_stopped() -> None:
    families: dict[str, list[bool]] = defaultdict(list)
    for attack in _items("injection_dev_corpus.json", "attacks"):
        families[attack["family"]].append(_stopped(attack))
    stopped = sum(sum(v) for v in families.values())
    total = sum(len(v) for v in families.values())
    assert stopped >= 0.9 * total, {f: f"{sum(v)}/{len(v)}" for f, v in families.items()}
    assert all(sum(v) >= len(v) / 2 for v in families.values()), {f: f"{sum(v)}/{len(v)}" for f, v in families.items()}
