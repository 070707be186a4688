"""One pattern is one defect: two defects under one criterion (different flagged words) are two patterns, even when
their sentences share a product's name; each pattern is titled by the criterion's name and its flagged phrase."""

from __future__ import annotations

import pytest

from santa_core.batch.defect import flagged, stem, title
from santa_core.batch.generalise import generalise, named
from santa_core.batch.patterns import group_patterns
from santa_core.models import Criterion, MergedIssue
from tests.support import two_defects as td

RUBRIC = [
    Criterion(
        id=td.CRITERION,
        name=td.NAME,
        category="factual accuracy",
        pass_condition="Only true claims.",
        fail_signal="A claim the product cannot keep.",
    )
]


SHAPES = [pytest.param(True, id="quotes-overlap"), pytest.param(False, id="product-name-shared")]
"""Two ways the two defects were joined: quotes sharing most words (the grouping), a phrase no clean item shows (the
generalising); each way is held apart by its own guard."""


def grouped(short: bool):
    failures = td.failures(short)
    reviewed = {f.item_key: f.output for f in failures} | td.clean()
    return named(generalise(group_patterns(failures), reviewed, {f.item_key: f.strata for f in failures}), RUBRIC)


@pytest.mark.parametrize("short", SHAPES)
def test_two_defects_under_one_criterion_are_two_patterns_each_with_its_own_items(short: bool) -> None:
    found = grouped(short)
    expected = {
        td.RISK: sorted(k for k, (_, p, _) in td.items(short).items() if p == td.RISK),
        td.GUARANTEE: sorted(k for k, (_, p, _) in td.items(short).items() if p == td.GUARANTEE),
    }
    assert sorted(p.items for p in found) == sorted(expected.values())
    assert {p.title: p.items for p in found} == {
        f"Factual accuracy: “{td.RISK}”": expected[td.RISK],
        f"Factual accuracy: “{td.GUARANTEE}”": expected[td.GUARANTEE],
    }


@pytest.mark.parametrize("short", SHAPES)
def test_a_pattern_never_reaches_the_other_defects_items_through_its_signature(short: bool) -> None:
    for pattern in grouped(short):
        assert pattern.signature, pattern.title
        other = "guarantees" if td.RISK in pattern.title else "risk free"
        assert other not in pattern.signature


def test_one_defect_worded_two_ways_stays_one_pattern() -> None:
    """'guaranteed' and 'guarantees' flag one defect: the stems agree, so nothing splits it."""
    assert stem("guaranteed") == stem("guarantees") == stem("guarantee")
    assert stem("risk free") != stem("guarantees")


def test_the_flagged_phrase_is_the_shortest_quoted_span_standing_in_the_evidence() -> None:
    sentence = td.risk_sentence("Halo Fan")
    issue = MergedIssue(
        criterion=td.CRITERION, description=td.description(td.RISK, sentence), evidence=sentence, flagged_by="B"
    )
    assert flagged(issue) == "risk free"
    # A quoted word the evidence does not hold flags nothing: the quotes decide alone, as before.
    stray = issue.model_copy(update={"description": "Says 'lifetime warranty' without a source."})
    assert flagged(stray) is None


def test_titles_are_short_and_never_an_items_raw_sentence() -> None:
    sentence = td.guarantee_sentence("Flux Kettle")
    issue = MergedIssue(
        criterion=td.CRITERION, description=td.description(td.GUARANTEE, sentence), evidence=sentence, flagged_by="both"
    )
    assert title(td.NAME, [issue]) == "Factual accuracy: “guarantees”"
    # No flagged phrase: the signature's first phrase, else the shortest quote, else the name alone.
    bare = issue.model_copy(update={"description": "An unkeepable promise."})
    assert title(td.NAME, [bare], ["better night s sleep"]) == "Factual accuracy: “better night s sleep”"
    assert title(td.NAME, [bare], [], ["a b c d e f g", "abc"]) == "Factual accuracy: “abc”"
    assert title(td.NAME, [bare]) == "Factual accuracy"
    assert len(title(td.NAME, [bare], [], ["x" * 300])) <= len("Factual accuracy: “”") + 80


@pytest.mark.parametrize("short", SHAPES)
@pytest.mark.parametrize("said", ["The copy's '{phrase}' claim is not true.", "Don't say '{phrase}' in this sentence."])
def test_an_apostrophe_before_the_quoted_phrase_keeps_the_two_defects_apart(
    monkeypatch: pytest.MonkeyPatch, short: bool, said: str
) -> None:
    """An apostrophe in a word before the quote ("copy's", "Don't") does not pair with the quote that opens the
    phrase: each complaint still flags its own phrase (found by review B of issue 34)."""
    monkeypatch.setattr(td, "description", lambda phrase, sentence: said.format(phrase=phrase))
    titles = sorted(p.title for p in grouped(short))
    assert titles == [f"Factual accuracy: “{td.GUARANTEE}”", f"Factual accuracy: “{td.RISK}”"]
