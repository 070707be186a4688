"""Rubric learning: repeated failures of one criterion on one phrase become one suggestion (pure)."""

from __future__ import annotations

import pytest

from santa_core.checks.criteria import run_criterion_checks
from santa_core.models import Criterion, MergedIssue, Rubric, RubricDocument
from santa_core.rubrics.learning import (
    MAX_EVIDENCE_CHARS,
    MIN_RUNS,
    LearningItem,
    acceptance_note,
    accepted,
    suggestion_key,
    suggestions,
)

CLAIMS = Criterion(
    id="no_guarantees",
    name="No outcome guarantees",
    category="compliance",
    pass_condition="The copy promises no outcome.",
    fail_signal="A result is promised.",
)
TONE = Criterion(
    id="tone",
    name="Plain tone",
    category="style",
    pass_condition="Plain words.",
    fail_signal="Jargon.",
    severity="critical",
)
RUBRIC = Rubric(name="ads", criteria=[CLAIMS, TONE])
DOC = RubricDocument(name="ads", version=1, criteria=[CLAIMS, TONE])
SENTENCES = [
    "Your savings are guaranteed to double in {n} weeks.",
    "Growth of {n} % is guaranteed for every plan.",
    "We keep costs low, and returns are guaranteed within {n} days.",
    "Every client is guaranteed {n} leads.",
    "Profits are guaranteed from day {n}.",
    "Sign today: results guaranteed in {n} hours.",
    "It is guaranteed: {n} new customers.",
]


def failure(
    run_id: int,
    phrase: str = "guaranteed",
    sentence: str | None = None,
    criterion: str = "no_guarantees",
    source: str = "review",
) -> LearningItem:
    """One failed round (or escape) whose issue quotes `phrase` inside a varied sentence that the text holds."""
    sentence = (sentence or SENTENCES[run_id % len(SENTENCES)]).format(n=run_id + 2).replace("guaranteed", phrase)
    text = f"Meet the plan for run {run_id}. {sentence} Call us."
    issue = MergedIssue(
        criterion=criterion, description=f"promises an outcome: '{phrase}'", evidence=sentence, flagged_by="both"
    )
    return LearningItem(run_id=run_id, source=source, ref=1, text=text, issues=[issue])


NICE = {100 + n: f"Plan {n}: we explain the costs and the risks plainly." for n in range(3)}


def test_five_runs_on_one_phrase_make_exactly_one_forbidden_term() -> None:
    found = suggestions(RUBRIC, [failure(r) for r in range(1, 6)], NICE)
    assert len(found) == 1
    (s,) = found
    assert (s.kind, s.criterion, s.phrase, s.runs) == (
        "forbidden_terms",
        "no_guarantees",
        "guaranteed",
        [1, 2, 3, 4, 5],
    )
    assert s.check == {"type": "forbidden_terms", "terms": ["guaranteed"]}


def test_four_runs_make_none_and_the_threshold_is_a_setting() -> None:
    four = [failure(r) for r in range(1, 5)]
    assert suggestions(RUBRIC, four, NICE) == []
    assert len(suggestions(RUBRIC, four, NICE, min_runs=4)) == 1


def test_two_rounds_of_one_run_count_once() -> None:
    items = [failure(r) for r in range(1, 5)] + [failure(4).model_copy(update={"ref": 2})]
    assert suggestions(RUBRIC, items, NICE) == []


def test_two_phrases_make_two_suggestions() -> None:
    items = [failure(r) for r in range(1, 6)] + [failure(r, "risk-free") for r in range(11, 16)]
    found = suggestions(RUBRIC, items, NICE)
    assert sorted(s.phrase for s in found) == ["guaranteed", "risk-free"]
    assert all(s.kind == "forbidden_terms" for s in found)


def test_a_quote_the_texts_do_not_hold_sharpens_the_pass_condition() -> None:
    # The reviewers quote the same words each time, but the texts do not hold them literally: no check could catch
    # them, so the condition the reviewers judge by gets the words instead.
    items = [
        failure(r, sentence="Returns are guaranteed.").model_copy(
            update={"text": f"Meet plan {r}. Something else entirely. Call us."}
        )
        for r in range(1, 6)
    ]
    (s,) = suggestions(RUBRIC, items, NICE)
    assert s.kind == "pass_condition" and s.check is None and s.runs == [1, 2, 3, 4, 5]
    assert s.pass_condition.startswith(CLAIMS.pass_condition)
    assert "“guaranteed”" in s.pass_condition


def test_a_phrase_too_vague_for_a_check_sharpens_the_pass_condition() -> None:
    # "best" alone would flag every text that uses the word: the author gets words for the reviewers instead.
    (s,) = suggestions(RUBRIC, [failure(r, "best", sentence="Our plan is the best one.") for r in range(1, 6)], NICE)
    assert s.kind == "pass_condition" and "“best”" in s.pass_condition


def test_a_criterion_with_another_kind_of_check_gets_a_sharper_condition() -> None:
    linked = CLAIMS.model_copy(update={"check": {"type": "max_words", "max": 500}})
    (s,) = suggestions(Rubric(name="ads", criteria=[linked, TONE]), [failure(r) for r in range(1, 6)], NICE)
    assert s.kind == "pass_condition"


def test_a_term_the_criterion_forbids_already_is_not_suggested_again() -> None:
    checked = CLAIMS.model_copy(update={"check": {"type": "forbidden_terms", "terms": ["Guaranteed"]}})
    assert suggestions(Rubric(name="ads", criteria=[checked, TONE]), [failure(r) for r in range(1, 6)], NICE) == []


def test_a_forbidden_terms_check_gains_the_phrase() -> None:
    checked = CLAIMS.model_copy(update={"check": {"type": "forbidden_terms", "terms": ["no risk"]}})
    (s,) = suggestions(Rubric(name="ads", criteria=[checked, TONE]), [failure(r) for r in range(1, 6)], NICE)
    assert s.check == {"type": "forbidden_terms", "terms": ["no risk", "guaranteed"]}


def test_issues_a_check_flagged_or_of_unknown_criteria_count_for_nothing() -> None:
    items = []
    for r in range(1, 6):
        item = failure(r)
        items.append(
            item.model_copy(update={"issues": [i.model_copy(update={"flagged_by": "check"}) for i in item.issues]})
        )
    items += [failure(r, criterion="retired_one") for r in range(11, 16)]
    items += [failure(r, criterion="injection") for r in range(21, 26)]
    assert suggestions(RUBRIC, items, NICE) == []


def test_escapes_count_as_runs_and_are_named() -> None:
    items = [failure(r) for r in range(1, 4)] + [failure(r, source="escape") for r in range(4, 6)]
    (s,) = suggestions(RUBRIC, items, NICE)
    assert s.runs == [1, 2, 3, 4, 5] and s.escapes == 2 and "2 of them escapes" in s.title


def test_escapes_of_one_criterion_without_a_shared_phrase_sharpen_its_condition() -> None:
    words = ["guaranteed", "risk-free", "certain", "assured", "promised"]
    items = [failure(r, words[r - 1], source="escape") for r in range(1, 6)]
    (s,) = suggestions(RUBRIC, items, NICE)
    assert s.kind == "pass_condition" and s.escapes == 5 and s.criterion == "no_guarantees"


def test_the_key_is_stable_and_the_phrase_compared_by_its_stem() -> None:
    assert suggestion_key("ads", "no_guarantees", "forbidden_terms", "Guaranteed") == suggestion_key(
        "ads", "no_guarantees", "forbidden_terms", "guarantees"
    )
    (s,) = suggestions(RUBRIC, [failure(r) for r in range(1, 6)], NICE)
    (again,) = suggestions(RUBRIC, [failure(r) for r in range(1, 8)], NICE)
    assert s.key == again.key


def test_accepting_adds_the_check_and_it_catches_the_phrase() -> None:
    (s,) = suggestions(RUBRIC, [failure(r) for r in range(1, 6)], NICE)
    doc = accepted(DOC, s)
    rubric = Rubric(name="ads", criteria=doc.criteria)
    (outcome,) = run_criterion_checks(rubric, "A new text: results are GUARANTEED by Friday.")
    assert outcome.result == "FAIL" and outcome.criterion == "no_guarantees"
    assert [c.check for c in doc.criteria if c.id == "tone"] == [None]
    assert s.key in acceptance_note(s) and "#1" in acceptance_note(s)


def test_accepting_keeps_an_edit_made_since_the_suggestion() -> None:
    (s,) = suggestions(RUBRIC, [failure(r) for r in range(1, 6)], NICE)
    edited = CLAIMS.model_copy(update={"check": {"type": "forbidden_terms", "terms": ["no risk"]}})
    doc = accepted(RubricDocument(name="ads", version=3, criteria=[edited, TONE]), s)
    assert doc.criteria[0].check == {"type": "forbidden_terms", "terms": ["no risk", "guaranteed"]}
    linked = CLAIMS.model_copy(update={"check": {"type": "max_words", "max": 500}})
    with pytest.raises(ValueError, match="max_words"):
        accepted(RubricDocument(name="ads", version=3, criteria=[linked, TONE]), s)


def test_a_criterion_from_a_parent_rubric_is_refused() -> None:
    (s,) = suggestions(RUBRIC, [failure(r) for r in range(1, 6)], NICE)
    child = RubricDocument(name="ads", version=2, extends=["base@1"], criteria=[TONE])
    with pytest.raises(ValueError, match="base@1"):
        accepted(child, s)


def test_min_runs_default_is_five() -> None:
    assert MIN_RUNS == 5


# --- linear time: the texts and issues are the models' and the authors' own words -----------------------------------


def _grouped(size: int, unit: str) -> float:
    """CPU time of `suggestions` over five failures whose description, evidence and text are long runs of `unit`."""
    from tests.core.checks.test_linear_time import _cpu

    run = (unit * (size // len(unit) + 1))[:size]
    items = [
        LearningItem(
            run_id=r,
            text=f"{run} guaranteed {run}",
            issues=[
                MergedIssue(
                    criterion="no_guarantees",
                    description=f"'{run}' and 'guaranteed'",
                    evidence=f"{run} guaranteed {run}",
                    flagged_by="both",
                )
            ],
        )
        for r in range(1, 6)
    ]
    return _cpu(lambda _: suggestions(RUBRIC, items, {9: run}), "", tries=2)


@pytest.mark.parametrize("unit", ["'", ".-", "' a", "中"])
def test_long_punctuation_runs_cost_linear_time(unit: str) -> None:
    from tests.core.checks.test_linear_time import FLOOR_S, GROWTH

    small = max(_grouped(1_000, unit), FLOOR_S)
    big = _grouped(10_000, unit)
    assert big <= GROWTH * small, f"{unit!r}: 1,000 characters took {small:.4f} s, 10,000 took {big:.4f} s"


# --- bounded work: grouping compares a criterion's issues pairwise, so its items and their texts are capped ---------


def _distinct(count: int, words: int, per: int = 1, seed: int = 1) -> list[LearningItem]:
    """`count` failed rounds of `per` issues each whose quotes share no phrase (the worst case: no two join, every
    pair is compared)."""
    import random

    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(3_000)]
    items = []
    for r in range(1, count + 1):
        quotes = [" ".join(rng.choice(vocabulary) for _ in range(words)) for _ in range(per)]
        items.append(
            LearningItem(
                run_id=r,
                ref=1,
                text=f"Intro. {'. '.join(quotes)}. Outro.",
                issues=[
                    MergedIssue(criterion="no_guarantees", description=q, evidence=q, flagged_by="both") for q in quotes
                ],
            )
        )
    return items


def _learning_cpu(items: list[LearningItem], nice: dict[int, str] = NICE) -> float:
    from tests.core.checks.test_linear_time import FLOOR_S, _cpu

    return max(_cpu(lambda _: suggestions(RUBRIC, items, nice), "", tries=2), FLOOR_S)


@pytest.mark.parametrize(("items", "per"), [((30, 300), (1, 1)), ((30, 30), (1, 10))], ids=["items", "issues"])
def test_ten_times_the_issues_cost_at_most_twenty_times_the_time(
    monkeypatch: pytest.MonkeyPatch, items: tuple[int, int], per: tuple[int, int]
) -> None:
    """rev2: 400 items took 21 s (quadratic in the issues). Past MAX_ISSUES issues, from the newest items, nothing
    more is read: ten times the rounds, or rounds of ten issues each (a smaller cap keeps the test quick;
    bench/rubric_learning.py times the real one)."""
    from santa_core.rubrics import learning
    from tests.core.checks.test_linear_time import GROWTH

    monkeypatch.setattr(learning, "MAX_ISSUES", 30)
    small = _learning_cpu(_distinct(items[0], 6, per[0]))
    big = _learning_cpu(_distinct(items[1], 6, per[1]))
    assert big <= GROWTH * small, f"{items[0] * per[0]} issues took {small:.3f} s, ten times {big:.3f} s"


def test_grouping_reads_a_quote_and_the_text_around_it_at_most_max_evidence_chars_each() -> None:
    """What grouping is given, not only how long it takes: the quote's stretch of a long text, so it is still found."""
    from santa_core.rubrics.learning import _items

    long, sentence = "x " * 3_000, "Your savings are guaranteed to double."
    item = LearningItem(
        run_id=1,
        text=f"{long}{sentence} {long}",
        issues=[MergedIssue(criterion="no_guarantees", description=long, evidence=sentence, flagged_by="both")],
    )
    (kept,) = _items([item], {"no_guarantees": CLAIMS})
    assert len(kept.text) <= MAX_EVIDENCE_CHARS and "guaranteed to double" in kept.text
    assert all(len(i.evidence) <= MAX_EVIDENCE_CHARS and len(i.description) <= MAX_EVIDENCE_CHARS for i in kept.issues)


def test_grouping_weighs_phrases_against_the_newest_clean_text_up_to_max_clean_chars() -> None:
    """Every pattern reads the NICE texts, so a month of clean runs cost seconds (200 runs: 5.5 s). What grouping is
    given of them (not how long it takes): the newest runs first, MAX_CLEAN_CHARS in all, the last one cut to fit."""
    from santa_core.rubrics.learning import MAX_CLEAN_CHARS, _clean_side

    clean = {run_id: f"run {run_id:04d} " + "plain words " * 400 for run_id in range(1, 201)}  # ~4,800 chars each
    kept = _clean_side(clean)
    assert sum(len(t) for t in kept.values()) == MAX_CLEAN_CHARS
    assert sorted(kept, reverse=True) == list(range(200, 200 - len(kept), -1))  # the newest, none skipped
    assert all(kept[r] == clean[r] for r in list(kept)[:-1]) and clean[min(kept)].startswith(kept[min(kept)])
    assert _clean_side({1: "short"}) == {1: "short"}  # under the cap: everything
