"""AppTest drives the Spot-checks page and the Inbox's spot-checks: blind until submit (no reviewer in any element
or in the session), the comparison and the escape after, refusals by role, and the rules editor."""

from __future__ import annotations

from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer, failing, passing
from santa_core.run import actions as run_actions
from santa_core.run.runner import Runner
from santa_core.spotchecks import actions
from santa_core.spotchecks.model import Judgement, RuleDraft
from storage.runs import RunStore
from tests.core.run.test_runner import BAD, GOOD, RUBRIC, SPEC
from tests.storage.test_spot_checks import CRITERIA
from tests.support.people import ADMIN, AUTHOR, EDITOR, VIEWER
from tests.ui.test_app import texts
from tests.ui.test_inbox import as_person

PAGE = "pages/spot_checks.py"
B, C = "zeta-reviewer-model", "omega-reviewer-model"
"""Reviewer ids that appear nowhere but in the run's reviews: seen on the page means a verdict leaked."""


def drawn_run(repo: RunStore, rules: int = 1) -> int:
    """A run both reviewers PASSed, shipped under `rules` 100 % rules: its (first) spot-check's id."""
    for _ in range(rules):
        actions.save_rule(repo.spot_checks, RuleDraft(rubric_name="general", share_percent=100), AUTHOR, ["general"])
    run_id = repo.create_run(
        spec=SPEC, output=GOOD, rubric=RUBRIC, created_by=EDITOR, reviewer_b=B, reviewer_c=C, fixer="fixer"
    )
    reviewers = {B: FunctionReviewer(B, passing), C: FunctionReviewer(C, passing)}
    runner = Runner(repo, lambda name: reviewers[name], lambda name: FunctionFixer("fixer", lambda r: None), workers=1)
    try:
        assert runner.execute(run_id).status.value == "shipped"
    finally:
        runner.shutdown()
    checks = repo.spot_checks.spot_checks()
    assert len(checks) == rules
    return checks[0].id


def everything(at: AppTest) -> str:
    """Every element's content as the browser gets it (tables' data included) and the whole session state."""

    def walk(node: Any) -> list[str]:
        out = [str(getattr(node, "proto", ""))]
        for child in getattr(node, "children", {}).values():
            out += walk(child)
        return out

    return "\n".join(walk(at._tree)) + repr(at.session_state)


def test_the_form_is_blind_until_submit_then_compares_and_records_the_escape(desk_env: RunStore) -> None:
    check_id = drawn_run(desk_env)
    at = as_person(EDITOR, PAGE)
    shown = everything(at)
    assert GOOD in texts(at)  # the shipped text is there ...
    assert B not in shown and C not in shown  # ... and no reviewer, in no element and not in the session
    for criterion in CRITERIA:
        at.radio(key=f"spot_{check_id}_{criterion}").set_value("FAIL" if criterion == "completeness" else "PASS")
    at.run()
    at.text_input(key=f"spot_{check_id}_completeness_why").set_value("no price is given")
    at.button(key=f"spot_submit_{check_id}").click().run()
    assert not at.exception, at.exception
    assert f"Spot-check #{check_id} submitted" in texts(at)
    assert "Escaped past the reviewers: Completeness" in texts(at)
    assert B in everything(at)  # the comparison names the reviewers now
    [escape] = desk_env.escapes()
    assert (escape.source, escape.passed_by, escape.reported_by) == ("spot_check", [B, C], EDITOR)


def test_a_fail_without_evidence_is_refused_on_the_page_and_nothing_is_written(desk_env: RunStore) -> None:
    check_id = drawn_run(desk_env)
    at = as_person(EDITOR, PAGE)
    for criterion in CRITERIA:
        at.radio(key=f"spot_{check_id}_{criterion}").set_value("FAIL" if criterion == "compliance" else "PASS")
    at.run()
    at.button(key=f"spot_submit_{check_id}").click().run()
    assert "'compliance' FAILs without evidence" in texts(at)
    assert [c.status for c in desk_env.spot_checks.spot_checks()] == ["open"] and desk_env.escapes() == []


@pytest.mark.parametrize(
    ("who", "form", "rules"),
    [
        pytest.param(VIEWER, False, False, id="viewer"),
        pytest.param(AUTHOR, False, True, id="rubric-author"),
        pytest.param(EDITOR, True, False, id="editor"),
    ],
)
def test_who_gets_the_form_and_the_rules_editor(desk_env: RunStore, who: str, form: bool, rules: bool) -> None:
    check_id = drawn_run(desk_env)
    at = as_person(who, PAGE)
    assert any(b.key == f"spot_submit_{check_id}" for b in at.button) is form
    assert any(b.key == "spot_draw_now" for b in at.button) is rules
    if not form:
        assert "To judge a spot-check you need" in texts(at)


def test_a_rubric_author_saves_and_replaces_a_rule(desk_env: RunStore) -> None:
    at = as_person(AUTHOR, PAGE)
    at.number_input(key="spot_rule_share").set_value(7.5)
    at.number_input(key="spot_rule_floor").set_value(2)
    at.text_input(key="spot_rule_panel").set_value("Claude + GPT")
    at.button[[b.label for b in at.button].index("Save rule")].click().run()
    assert not at.exception, at.exception
    [rule] = desk_env.spot_checks.rules()
    assert (rule.rubric_name, rule.share, rule.floor, rule.panel, rule.created_by) == (
        desk_env.rubrics.names()[0],
        0.075,
        2,
        "Claude + GPT",
        AUTHOR,
    )
    assert "7.5 % of" in texts(at) or "Rule saved" in texts(at)


def test_the_inbox_lists_open_spot_checks_for_me_or_anyone(desk_env: RunStore) -> None:
    check_id = drawn_run(desk_env)
    at = as_person(EDITOR, "pages/inbox.py")
    assert "Spot-checks for you (1)" in texts(at)
    assert any(b.key == f"inbox_spot_{check_id}" for b in at.button)
    assert B not in everything(at)
    actions.assign(desk_env.spot_checks, check_id, "officer@example.com", "admin@example.com")
    assert "Spot-checks for you (0)" in texts(as_person(EDITOR, "pages/inbox.py"))


def test_the_settings_due_time_for_spot_checks_dates_the_next_draw(desk_env: RunStore) -> None:
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.run()
    at.switch_page("pages/settings.py").run()
    at.number_input(key="set_due_spot_check").set_value(48.0)
    at.button(key="set_save_due").click().run()
    assert not at.exception, at.exception
    assert desk_env.get_settings()["due_hours"]["spot_check"] == 48.0
    drawn_run(desk_env)
    [check] = desk_env.spot_checks.spot_checks()
    assert (check.due_at - check.created_at).total_seconds() == 48 * 3600


def test_a_person_who_may_judge_the_spot_check_sees_no_verdict_of_the_run_anywhere_until_it_is_judged(
    desk_env: RunStore,
) -> None:
    """The run page, its verification record and the Audit page keep the run's reviews from whoever may judge its
    open spot-check (theirs or nobody's); someone who may not judge it sees the run as before; after the submit
    the judge sees it too."""
    from tests.ui.test_run_page import as_person as on_run_page

    check_id = drawn_run(desk_env)
    run_id = desk_env.spot_checks.spot_checks()[0].run_id
    notice = f"Spot-check #{check_id} of this run is open and yours to judge"
    judge = on_run_page(EDITOR, run_id)
    assert notice in texts(judge)
    assert "Verification record" not in texts(judge) and "PASS" not in texts(judge)
    hidden = "drawn for a spot-check you may judge, are hidden"
    assert hidden in texts(as_person(EDITOR, "pages/audit.py"))  # the run's events (review hashes, the gate)
    assert hidden not in texts(as_person(VIEWER, "pages/audit.py"))

    viewer = on_run_page(VIEWER, run_id)  # may not spot-check: sees the reviews
    assert notice not in texts(viewer) and "PASS" in texts(viewer)

    actions.submit(desk_env.spot_checks, check_id, [Judgement(criterion=c, verdict="PASS") for c in CRITERIA], EDITOR)
    assert notice not in texts(on_run_page(EDITOR, run_id))
    assert "PASS" in texts(on_run_page(EDITOR, run_id))


def test_two_rules_draw_one_run_and_the_first_comparison_stays_hidden_from_whoever_may_judge_the_second(
    desk_env: RunStore,
) -> None:
    first = drawn_run(desk_env, rules=2)
    run_id = desk_env.spot_checks.spot_checks()[0].run_id
    actions.submit(desk_env.spot_checks, first, [Judgement(criterion=c, verdict="PASS") for c in CRITERIA], EDITOR)
    judge = as_person(ADMIN, PAGE)  # the second spot-check of the run is open and ADMIN may judge it
    assert f"spot_submit_{first + 1}" in [b.key for b in judge.button]  # the blind form of #2 ...
    assert B not in everything(judge) and f"run {run_id}" not in everything(judge)  # ... with no run number
    judge.selectbox(key="spot_pick").set_value(first).run()
    assert "another spot-check of the same run is open" in texts(judge)
    assert B not in everything(judge) and C not in everything(judge)  # #1's comparison names no reviewer
    mine = as_person(EDITOR, PAGE)  # the submitter sees their own comparison
    mine.selectbox(key="spot_pick").set_value(first).run()
    assert B in everything(mine) and f"run {run_id}" in texts(mine)
    other = as_person(VIEWER, PAGE)  # may judge no spot-check: nothing to keep blind
    other.selectbox(key="spot_pick").set_value(first).run()
    assert B in everything(other)


def test_the_metrics_escape_rate_says_how_many_drawn_spot_checks_were_submitted(desk_env: RunStore) -> None:
    first = drawn_run(desk_env, rules=2)
    actions.submit(desk_env.spot_checks, first, [Judgement(criterion=c, verdict="PASS") for c in CRITERIA], EDITOR)
    at = as_person(ADMIN, "pages/metrics.py")
    at.session_state["metrics_tab"] = "Escapes"
    at.run()
    assert not at.exception, at.exception
    assert "1 submitted of 2 drawn spot-checks." in texts(at)  # the second, unjudged, is not hidden by the rate


def test_a_fail_the_reviewers_caught_and_a_person_shipped_over_is_said_so_not_called_an_escape(
    desk_env: RunStore,
) -> None:
    actions.save_rule(desk_env.spot_checks, RuleDraft(rubric_name="general", share_percent=100), AUTHOR, ["general"])
    fail = lambda r: failing(r, "factual_accuracy", "wrong launch year", evidence="in 2019")  # noqa: E731
    run_id = desk_env.create_run(
        spec=SPEC, output=BAD, rubric=RUBRIC, created_by=EDITOR, reviewer_b=B, reviewer_c=C, fixer="fixer", max_rounds=1
    )
    runner = Runner(
        desk_env,
        lambda n: FunctionReviewer(n, fail),
        lambda n: FunctionFixer(n, lambda r: None),
        workers=1,
        screen_for=lambda: None,
    )
    try:
        runner.execute(run_id)
    finally:
        runner.shutdown()
    run_actions.resolve_escalation(desk_env, run_id, "ship_as_is", ADMIN, "The customer accepts the year.")
    [check] = desk_env.spot_checks.spot_checks()
    actions.submit(
        desk_env.spot_checks,
        check.id,
        [
            Judgement(
                criterion=c,
                verdict="FAIL" if c == "factual_accuracy" else "PASS",
                evidence="in 2019" if c == "factual_accuracy" else "",
            )
            for c in CRITERIA
        ],
        EDITOR,
    )
    shown = texts(as_person(EDITOR, PAGE))
    assert "Shipped over the reviewers' FAIL: Factual accuracy" in shown
    assert "Escaped past the reviewers" not in shown and desk_env.escapes() == []
