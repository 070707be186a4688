"""A person's review as the form builds it: the verdict follows the rubric's severities, quotes point at one place."""

from __future__ import annotations

from santa_core.models import Rubric
from santa_core.reviewers.person import CriterionAnswer, person_review
from santa_core.rubrics.library import load_builtin

OUTPUT = "Acme's rocket launched in 2018. It is fast. It is fast."


def rubric_with_a_suggestion() -> Rubric:
    base = load_builtin("general")
    tone = base.criteria[0].model_copy(update={"id": "tone", "name": "Tone", "severity": "suggestion"})
    return base.model_copy(update={"criteria": [*base.criteria, tone]})


def answers(rubric: Rubric, **results: CriterionAnswer) -> dict[str, CriterionAnswer]:
    return {c.id: results.get(c.id, CriterionAnswer(result="PASS")) for c in rubric.criteria}


def test_a_failed_suggestion_alone_is_a_pass_with_a_suggestion_line() -> None:
    rubric = rubric_with_a_suggestion()
    review, problems = person_review(
        rubric, OUTPUT, answers(rubric, tone=CriterionAnswer(result="FAIL", note="stiff")), ""
    )
    assert problems == [] and review.verdict == "PASS" and review.critical_issues == []
    assert [c.result for c in review.checks if c.criterion == "tone"] == ["FAIL"]
    assert review.suggestions == ["Tone: stiff"]


def test_a_failed_critical_criterion_is_a_fail() -> None:
    rubric = rubric_with_a_suggestion()
    review, _ = person_review(
        rubric, OUTPUT, answers(rubric, factual_accuracy=CriterionAnswer(result="FAIL", quote="launched in 2018")), ""
    )
    assert review.verdict == "FAIL" and review.critical_issues[0].evidence == "launched in 2018"


def test_a_quote_that_stands_twice_or_is_too_short_is_refused() -> None:
    rubric = load_builtin("general")
    for quote, why in [("It is fast.", "more than once"), ("It", "too short")]:
        review, problems = person_review(
            rubric, OUTPUT, answers(rubric, factual_accuracy=CriterionAnswer(result="FAIL", quote=quote)), ""
        )
        assert review is None and any(why in p for p in problems), problems


def test_a_failed_suggestion_with_only_a_quote_keeps_the_quote() -> None:
    rubric = rubric_with_a_suggestion()
    review, _ = person_review(
        rubric, OUTPUT, answers(rubric, tone=CriterionAnswer(result="FAIL", quote="launched in 2018")), ""
    )
    assert review.verdict == "PASS" and review.suggestions == ["Tone: \u201claunched in 2018\u201d"]
