"""The spot-check draw (`santa_core.spotchecks.draw`) and the blind form's rules (`form`), pure.

Expected draws are computed here from hashlib directly, not by the code under test."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pytest

from santa_core.models import Criterion
from santa_core.spotchecks.draw import draw_number, floor_top_up, is_drawn, week_ended, week_of
from santa_core.spotchecks.form import escaped_criteria, judgement_problems, rule_problems
from santa_core.spotchecks.model import Judgement, RuleDraft, SpotRule

SEED = "0123456789abcdef0123456789abcdef"


def reference_number(seed: str, run_id: int) -> float:
    """The stated rule, written out again: first 8 bytes of sha256('seed:run_id') over 2**64."""
    return int(hashlib.sha256(f"{seed}:{run_id}".encode()).hexdigest()[:16], 16) / 2**64


def test_the_draw_is_the_stated_hash_and_draws_the_stated_share_of_400_runs() -> None:
    runs = range(1, 401)
    expected = [r for r in runs if reference_number(SEED, r) < 0.05]
    drawn = [r for r in runs if is_drawn(SEED, 0.05, r)]
    assert drawn == expected
    # 400 draws at 5 %: 20 expected; a binomial(400, 0.05) lies within 8..32 with probability > 99.9 %
    assert 8 <= len(drawn) <= 32
    assert [draw_number(SEED, r) for r in runs] == [reference_number(SEED, r) for r in runs]
    assert drawn == [r for r in runs if is_drawn(SEED, 0.05, r)]  # reproducible
    assert [r for r in runs if is_drawn("another seed", 0.05, r)] != drawn  # the seed decides


def test_the_floor_tops_a_week_up_with_its_lowest_numbered_runs_not_drawn_yet() -> None:
    week = list(range(10, 30))
    by_number = sorted(week, key=lambda r: reference_number(SEED, r))
    assert floor_top_up(SEED, 3, week, chosen=[]) == by_number[:3]
    assert floor_top_up(SEED, 3, week, chosen=[by_number[0]]) == by_number[1:3]
    assert floor_top_up(SEED, 3, week, chosen=by_number[5:8]) == []
    assert floor_top_up(SEED, 30, week[:2], chosen=[]) == sorted(week[:2], key=lambda r: reference_number(SEED, r))


def test_weeks_start_on_monday_utc_and_end_seven_days_later() -> None:
    sunday_night = datetime(2026, 12, 6, 23, 30, tzinfo=UTC)
    assert week_of(sunday_night).isoformat() == "2026-11-30"
    assert not week_ended(week_of(sunday_night), sunday_night)
    assert week_ended(week_of(sunday_night), datetime(2026, 12, 7, tzinfo=UTC))


def _rule(**kw: object) -> SpotRule:
    return SpotRule(
        id=1,
        rubric_name="general",
        share=0.05,
        seed=SEED,
        created_by="a",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        **kw,
    )


@pytest.mark.parametrize(
    ("rule", "run", "applies"),
    [
        pytest.param({}, ("general", "general", "claude-x", "openai:gpt-5.4"), True, id="rubric"),
        pytest.param({}, ("legal", "general", "claude-x", "openai:gpt-5.4"), False, id="other-rubric"),
        pytest.param({"domain": "Content"}, ("general", "content", "b", "c"), True, id="domain"),
        pytest.param({"domain": "legal"}, ("general", "content", "b", "c"), False, id="other-domain"),
        pytest.param({"panel": "GPT + Claude"}, ("general", "g", "claude-x", "openai:gpt-5.4"), True, id="families"),
        pytest.param(
            {"panel": "Claude + Claude"}, ("general", "g", "claude-x", "openai:gpt-5.4"), False, id="other-families"
        ),
        pytest.param({"panel": "c+b"}, ("general", "g", "b", "c"), True, id="reviewer-pair"),
    ],
)
def test_a_rule_applies_to_its_rubric_domain_and_panel(rule: dict, run: tuple, applies: bool) -> None:
    assert _rule(**rule).applies(*run) is applies


CRITERIA = [
    Criterion(id=i, name=i, category="c", pass_condition="p", fail_signal="f", severity=sev)
    for i, sev in (("facts", "critical"), ("tone", "suggestion"))
]


@pytest.mark.parametrize(
    ("judgements", "problem"),
    [
        pytest.param([("facts", "PASS", "")], "not judged yet: tone", id="missing"),
        pytest.param(
            [("facts", "PASS", ""), ("tone", "PASS", ""), ("nope", "PASS", "")],
            "unknown criterion 'nope'",
            id="unknown",
        ),
        pytest.param(
            [("facts", "FAIL", "  "), ("tone", "PASS", "")], "'facts' FAILs without evidence", id="no-evidence"
        ),
        pytest.param([("facts", "PASS", ""), ("facts", "FAIL", "x"), ("tone", "PASS", "")], "judged twice", id="twice"),
    ],
)
def test_the_form_refuses_missing_unknown_twice_and_unevidenced(judgements: list, problem: str) -> None:
    given = [Judgement(criterion=c, verdict=v, evidence=e) for c, v, e in judgements]
    assert any(problem in p for p in judgement_problems(CRITERIA, given))


def test_only_blocking_fails_are_escapes() -> None:
    given = [
        Judgement(criterion="facts", verdict="FAIL", evidence="wrong year"),
        Judgement(criterion="tone", verdict="FAIL", evidence="flat"),
    ]
    assert judgement_problems(CRITERIA, given) == []
    assert [j.criterion for j in escaped_criteria(CRITERIA, given)] == ["facts"]


def test_a_rule_needs_a_known_rubric_a_share_and_a_panel_of_two() -> None:
    assert rule_problems(RuleDraft(rubric_name="general", share_percent=5, floor=2), ["general"]) == []
    problems = rule_problems(RuleDraft(rubric_name="x", share_percent=0, floor=-1, panel="Claude"), ["general"])
    assert len(problems) == 4
