"""The detector's shortcuts change no answer: with each taken away, every text of the corpus and of the burned
held-out sets gets the same issues (the oracle is the detector without the shortcut, on texts nobody tuned it on).

- `addressing._DECIDING`: a sentence with none of the patterns every reason needs is settled without searching for
  the other twenty (taken away: every pattern decides).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from santa_core.checks import addressing
from santa_core.checks.folding import fold
from tests.support.injection_corpus import ATTACKS, BENIGN

BURNED = sorted((Path(__file__).parents[3] / "bench" / "burned").glob("injection-heldout-*.json"))


def _texts() -> list[tuple[str, str]]:
    texts = [(a.output(), "output") for a in ATTACKS] + [(a.spec("Write two sentences."), "spec") for a in ATTACKS]
    texts += [(b, "output") for b in BENIGN]
    for path in BURNED:
        data = json.loads(path.read_text(encoding="utf-8"))
        texts += [(item["text"], item.get("where", "output")) for item in data["attacks"] + data["benign"]]
    return texts


def _sentences(texts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Every sentence of the texts as the sentence scorer reads it: folded, and its cased fold."""
    found = []
    for text, _ in texts:
        for m in addressing.SENTENCE.finditer(fold(text).text):
            sentence = m.group(0).strip()
            found.append((sentence, fold(sentence, casefold=False).text))
    return found


def _families(sentences: list[tuple[str, str]]) -> list[tuple[str | None, str | None]]:
    return [(addressing.sentence_family(s, c), addressing.sentence_family(s, c, True)) for s, c in sentences]


def test_the_burned_sets_are_there() -> None:
    assert len(BURNED) >= 8 and len(_texts()) > 1_500


def test_settling_a_sentence_early_changes_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    sentences = _sentences(_texts())
    shortcut = _families(sentences)
    monkeypatch.setattr(addressing, "_DECIDING", tuple(addressing._R))
    assert shortcut == _families(sentences)
    reasons = {reason for pair in shortcut for reason in pair}
    assert len(reasons) >= 10, reasons  # the sentences reach most reasons
