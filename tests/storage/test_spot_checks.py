"""Spot-checks in storage (`storage.spot_checks`, `storage.spot_draw`): the draw at shipping and by the sweep, the
floor, never twice, blind submits whose FAILs become escapes traced to the reviewers, roles refused writing
nothing. On SQLite and, when SANTA_TEST_POSTGRES_URL is set, on PostgreSQL.

Expected draws come from hashlib here (`reference_number`), not from the code under test."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from sqlalchemy import Engine, inspect, text
from sqlmodel import Session, select

from desk.alerts import DRAW_EVERY_S, alert_pass
from santa_core import alerts as core_alerts
from santa_core.models import RunState
from santa_core.reviewers.base import PERSON
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer, failing
from santa_core.roles import PermissionDenied
from santa_core.run import actions as core_actions
from santa_core.run.runner import Runner
from santa_core.spotchecks import actions
from santa_core.spotchecks.model import Judgement, RuleDraft
from santa_core.spotchecks.store import SpotCheckError
from storage.alerts import AlertStore
from storage.runs import RunStore
from storage.spot_draw import _shipped_runs
from storage.tables import EscapeRow, RunMetricRow, SpotCheckRow, SpotRuleRow
from storage.times import utcnow
from tests.core.run.test_runner import BAD, RUBRIC, SPEC
from tests.core.spotchecks.test_draw import reference_number
from tests.support import people_runs
from tests.support.people import ADMIN, AUTHOR, EDITOR, OFFICER, VIEWER
from tests.support.people_runs import S, _review, awaiting_approval, count, escalate, make_runner, new_run

engine, repo = people_runs.engine, people_runs.repo  # the fixtures (an imported name would trip ruff's F811)
CRITERIA = (
    "factual_accuracy",
    "hallucination_free",
    "completeness",
    "compliance",
    "internal_consistency",
    "technical_correctness",
)


def ship(repo: RunStore, run_id: int) -> None:
    assert repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    assert repo.transition(run_id, {S.RUNNING}, RunState(status=S.SHIPPED, note="both PASS"), "gate")


def rule(repo: RunStore, share: float, floor: int = 0, **kw: str) -> int:
    draft = RuleDraft(rubric_name="general", share_percent=share, floor=floor, **kw)
    return actions.save_rule(repo.spot_checks, draft, AUTHOR, ["general"]).id


def metric_escapes(repo: RunStore, run_id: int) -> int:
    """The escapes the Metrics facts hold for a run."""
    with Session(repo.engine) as s:
        return s.get(RunMetricRow, run_id).escapes


def judged(fail: dict[str, str] | None = None) -> list[Judgement]:
    fail = fail or {}
    return [Judgement(criterion=c, verdict="FAIL" if c in fail else "PASS", evidence=fail.get(c, "")) for c in CRITERIA]


def test_shipping_draws_exactly_the_runs_the_hash_picks_and_the_sweep_never_draws_twice(repo: RunStore) -> None:
    rule_id = rule(repo, 30)
    seed = repo.spot_checks.rules()[0].seed
    runs = [new_run(repo) for _ in range(30)]
    for run_id in runs:
        ship(repo, run_id)
    expected = [r for r in runs if reference_number(seed, r) < 0.3]
    drawn = repo.spot_checks.spot_checks()
    assert [c.run_id for c in drawn] == expected and expected
    assert {(c.rule_id, c.seed, c.share, c.drawn_by) for c in drawn} == {(rule_id, seed, 0.3, "share")}
    assert [c.number for c in drawn] == [reference_number(seed, r) for r in expected]
    assert actions.draw_spot_checks(repo.spot_checks, utcnow()) == []  # idempotent
    assert len(repo.spot_checks.spot_checks()) == len(expected)
    events = repo.audit.events(action="spot_check.drawn")
    assert [e.actor for e in events] == ["system"] * len(expected)


def test_the_sweep_draws_what_shipping_did_not_and_only_runs_shipped_since_the_rule(repo: RunStore) -> None:
    before = new_run(repo)
    ship(repo, before)
    rule(repo, 100)
    after = new_run(repo)
    ship(repo, after)
    # Lose the ship-time draw (as a crash of an older desk would): the sweep draws it again, never `before`.
    with repo.db.write() as s:
        s.exec(SpotCheckRow.__table__.delete())  # type: ignore[call-overload]
    assert len(actions.draw_spot_checks(repo.spot_checks, utcnow())) == 1
    assert [c.run_id for c in repo.spot_checks.spot_checks()] == [after]


def test_the_weekly_floor_tops_a_complete_week_up_with_its_lowest_numbered_runs(repo: RunStore) -> None:
    rule(repo, 0.0001, floor=3)
    seed = repo.spot_checks.rules()[0].seed
    runs = [new_run(repo) for _ in range(8)]
    for run_id in runs:
        ship(repo, run_id)
    share_drawn = [c.run_id for c in repo.spot_checks.spot_checks()]
    assert actions.draw_spot_checks(repo.spot_checks, utcnow()) == []  # the week is not over: no top-up yet
    added = actions.draw_spot_checks(repo.spot_checks, utcnow() + timedelta(days=8))
    lowest = sorted((r for r in runs if r not in share_drawn), key=lambda r: reference_number(seed, r))
    checks = repo.spot_checks.spot_checks()
    assert [c.run_id for c in checks if c.drawn_by == "floor"] == lowest[: 3 - len(share_drawn)]
    assert len(added) == 3 - len(share_drawn) and len(checks) == 3
    assert actions.draw_spot_checks(repo.spot_checks, utcnow() + timedelta(days=9)) == []


def test_a_submit_turns_each_fail_into_an_escape_traced_to_the_reviewers_that_passed_it(repo: RunStore) -> None:
    rule(repo, 100)
    run_id = new_run(repo)
    assert make_runner(repo).execute(run_id).status == S.SHIPPED  # reviewers b and c both PASS everything
    [check] = repo.spot_checks.spot_checks("open")
    case = repo.spot_checks.blind_case(check.id)
    assert case.text == repo.get_run_view(run_id).rounds[-1].output_text
    assert [c.id for c in case.criteria] == list(CRITERIA)
    with pytest.raises(SpotCheckError, match="hidden until"):
        repo.spot_checks.comparison(check.id)
    ids = actions.submit(repo.spot_checks, check.id, judged({"completeness": "no price given"}), EDITOR)
    [escape] = repo.escapes(run_id)
    assert ids == [escape.id]
    assert (escape.source, escape.spot_check_id, escape.criterion, escape.evidence, escape.passed_by) == (
        "spot_check",
        check.id,
        "completeness",
        "no price given",
        ["b", "c"],
    )
    compared = {c.criterion: c for c in repo.spot_checks.comparison(check.id)}
    assert compared["completeness"].person == "FAIL"
    assert compared["completeness"].reviewers == {"B (b)": "PASS", "C (c)": "PASS"}
    [outcome] = repo.spot_checks.outcomes()
    assert (outcome.run_id, outcome.failed, outcome.escaped, outcome.judged) == (
        run_id,
        ("completeness",),
        True,
        CRITERIA,
    )
    labels = repo.spot_checks.labels()
    assert [(lb.criterion, lb.verdict, lb.person, lb.source) for lb in labels] == [
        (c, "FAIL" if c == "completeness" else "PASS", EDITOR, "spot_check") for c in CRITERIA
    ]
    assert metric_escapes(repo, run_id) == 0  # the Metrics page's escape rate counts reported escapes only
    with pytest.raises(SpotCheckError, match="closed"):  # a double submit changes nothing
        actions.submit(repo.spot_checks, check.id, judged(), OFFICER)
    assert len(repo.escapes(run_id)) == 1
    assert repo.audit.verify().ok


def test_a_reported_escape_keeps_source_reported(repo: RunStore) -> None:
    run_id = new_run(repo)
    ship(repo, run_id)
    repo.report_escape(run_id, "completeness", "found later", "major", actor=VIEWER)
    assert [e.source for e in repo.escapes(run_id)] == ["reported"]
    assert metric_escapes(repo, run_id) == 1


@pytest.mark.parametrize(
    ("doing", "who"),
    [
        pytest.param(lambda r, c, who: actions.submit(r.spot_checks, c, judged(), who), VIEWER, id="submit-viewer"),
        pytest.param(lambda r, c, who: actions.submit(r.spot_checks, c, judged(), who), AUTHOR, id="submit-author"),
        pytest.param(lambda r, c, who: actions.assign(r.spot_checks, c, EDITOR, who), EDITOR, id="assign-editor"),
        pytest.param(lambda r, c, who: actions.set_due(r.spot_checks, c, utcnow(), who), VIEWER, id="due-viewer"),
        pytest.param(
            lambda r, c, who: actions.save_rule(
                r.spot_checks, RuleDraft(rubric_name="general", share_percent=5), who, ["general"]
            ),
            EDITOR,
            id="rule-editor",
        ),
        pytest.param(lambda r, c, who: actions.retire_rule(r.spot_checks, 1, who), OFFICER, id="retire-officer"),
    ],
)
def test_roles_are_refused_and_write_nothing(repo: RunStore, engine: Engine, doing, who: str) -> None:
    rule(repo, 100)
    run_id = new_run(repo)
    ship(repo, run_id)
    [check] = repo.spot_checks.spot_checks()
    events = len(repo.audit.events())
    with pytest.raises(PermissionDenied):
        doing(repo, check.id, who)
    assert len(repo.audit.events()) == events
    assert [c.status for c in repo.spot_checks.spot_checks()] == ["open"] and check.owner is None
    assert count(engine, EscapeRow) == 0 and count(engine, SpotRuleRow) == 1


def test_owner_due_and_rule_changes_are_audited_and_an_owned_check_is_its_owners(repo: RunStore) -> None:
    first = rule(repo, 100)
    run_id = new_run(repo)
    ship(repo, run_id)
    [check] = repo.spot_checks.spot_checks()
    with pytest.raises(SpotCheckError, match="cannot own"):
        actions.assign(repo.spot_checks, check.id, AUTHOR, OFFICER)
    actions.assign(repo.spot_checks, check.id, EDITOR, OFFICER)
    due = utcnow() + timedelta(days=2)
    actions.set_due(repo.spot_checks, check.id, due, ADMIN)
    [check] = repo.spot_checks.spot_checks()
    assert (check.owner, check.due_at) == (EDITOR, due)
    with pytest.raises(SpotCheckError, match="assigned to editor"):
        actions.submit(repo.spot_checks, check.id, judged(), OFFICER)
    second = actions.save_rule(
        repo.spot_checks, RuleDraft(rubric_name="general", share_percent=10), AUTHOR, ["general"], replaces=first
    )
    assert [r.id for r in repo.spot_checks.rules()] == [second.id]
    assert second.seed != repo.spot_checks.rules(active_only=False)[0].seed
    actions_seen = [e.action for e in repo.audit.events(action="spot_")]
    for action in (
        "spot_rule.saved",
        "spot_check.drawn",
        "spot_check.assigned",
        "spot_check.due_set",
        "spot_rule.retired",
    ):
        assert action in actions_seen


def test_whoever_shipped_it_as_is_may_not_spot_check_it(repo: RunStore) -> None:
    rule(repo, 100)
    run_id = new_run(repo)
    escalate(repo, run_id)
    repo.resolve_escalation(run_id, "ship_as_is", OFFICER, "good enough")
    [check] = repo.spot_checks.spot_checks()
    assert check.round_no == 1
    with pytest.raises(SpotCheckError, match="you shipped it as is"):
        actions.submit(repo.spot_checks, check.id, judged(), OFFICER)
    assert repo.spot_checks.spot_checks("open") == [check]
    actions.submit(repo.spot_checks, check.id, judged(), EDITOR)
    assert repo.spot_checks.spot_checks("open") == []


def test_a_person_reviewer_of_the_shipped_round_may_not_spot_check_it(repo: RunStore) -> None:
    rule(repo, 100)
    run_id = new_run(repo, reviewer_b=PERSON, reviewer_c=PERSON)
    assert make_runner(repo).execute(run_id).status == S.AWAITING_HUMAN_REVIEW
    core_actions.submit_person_review(repo, run_id, "B", _review(), EDITOR)
    core_actions.submit_person_review(repo, run_id, "C", _review(), OFFICER)
    assert make_runner(repo).execute(run_id).status == S.SHIPPED
    [check] = repo.spot_checks.spot_checks()
    with pytest.raises(SpotCheckError, match="you reviewed the round that shipped"):
        actions.submit(repo.spot_checks, check.id, judged(), EDITOR)
    actions.submit(repo.spot_checks, check.id, judged({"compliance": "no disclaimer"}), ADMIN)
    [escape] = repo.escapes(run_id)
    assert escape.passed_by == [f"person:{EDITOR}", f"person:{OFFICER}"]


def test_two_sweeps_at_once_draw_each_run_once(repo: RunStore) -> None:
    rule(repo, 50, floor=0)
    runs = [new_run(repo) for _ in range(12)]
    for run_id in runs:
        ship(repo, run_id)
    drawn = sorted(c.run_id for c in repo.spot_checks.spot_checks())
    with repo.db.write() as s:  # lose the ship-time draws: both sweeps find every one to draw again
        s.exec(SpotCheckRow.__table__.delete())  # type: ignore[call-overload]
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda _: actions.draw_spot_checks(repo.spot_checks, utcnow()), range(2)))
    assert sorted(len(d) for d in done) == [0, len(drawn)]
    assert sorted(c.run_id for c in repo.spot_checks.spot_checks()) == drawn


@pytest.mark.parametrize("edited", [False, True], ids=["approved", "edited"])
def test_whoever_approved_or_edited_the_fix_that_shipped_may_not_spot_check_it(repo: RunStore, edited: bool) -> None:
    rule(repo, 100)
    run_id = awaiting_approval(repo)
    text = repo.get_run_view(run_id).rounds[-1].proposal.proposed_text
    core_actions.approve_fix(repo, run_id, EDITOR, edited_text=text + " Edited by hand." if edited else None)
    assert make_runner(repo).execute(run_id).status == S.SHIPPED
    [check] = repo.spot_checks.spot_checks("open")
    with pytest.raises(SpotCheckError, match="you edited a fix" if edited else "you approved a fix"):
        actions.submit(repo.spot_checks, check.id, judged(), EDITOR)
    assert repo.spot_checks.spot_checks("open") == [check]
    actions.submit(repo.spot_checks, check.id, judged(), ADMIN)  # someone else may


def test_whoever_reported_an_escape_on_the_run_may_not_spot_check_it(repo: RunStore) -> None:
    rule(repo, 100)
    run_id = new_run(repo)
    ship(repo, run_id)
    repo.report_escape(run_id, "completeness", "found later", "major", actor=EDITOR)
    [check] = repo.spot_checks.spot_checks("open")
    with pytest.raises(SpotCheckError, match="you reported an escape"):
        actions.submit(repo.spot_checks, check.id, judged(), EDITOR)
    actions.submit(repo.spot_checks, check.id, judged(), OFFICER)


@pytest.mark.parametrize("system", ["cli", "system"])
def test_a_system_actor_may_not_submit_a_spot_check_even_an_unassigned_one(repo: RunStore, system: str) -> None:
    rule(repo, 100)
    run_id = new_run(repo)
    ship(repo, run_id)
    [check] = repo.spot_checks.spot_checks("open")
    events = len(repo.audit.events())
    with pytest.raises(SpotCheckError, match="not a person"):
        actions.submit(repo.spot_checks, check.id, judged(), system)
    actions.assign(repo.spot_checks, check.id, OFFICER, OFFICER)
    with pytest.raises(SpotCheckError, match="not a person"):  # nor one assigned to a person
        actions.submit(repo.spot_checks, check.id, judged(), system)
    assert len(repo.audit.events()) == events + 1 and repo.spot_checks.labels() == []


def test_a_fail_the_reviewers_caught_and_a_person_shipped_over_is_not_an_escape_past_them(repo: RunStore) -> None:
    rule(repo, 100)
    fail = lambda r: failing(r, "factual_accuracy", "wrong launch year", evidence="in 2019")  # noqa: E731
    runner = Runner(
        repo,
        lambda n: FunctionReviewer(n, fail),
        lambda n: FunctionFixer(n, lambda r: None),
        workers=1,
        screen_for=lambda: None,
    )
    try:
        run_id = repo.create_run(
            spec=SPEC, output=BAD, rubric=RUBRIC, reviewer_b="b", reviewer_c="c", fixer="fixer", max_rounds=1
        )
        runner.execute(run_id)
    finally:
        runner.shutdown()
    core_actions.resolve_escalation(repo, run_id, "ship_as_is", OFFICER, "The customer accepts the year.")
    [check] = repo.spot_checks.spot_checks("open")
    fails = {"factual_accuracy": "in 2019", "completeness": "no price"}  # reviewers FAILed the one, PASSed the other
    actions.submit(repo.spot_checks, check.id, judged(fails), EDITOR)
    [escape] = repo.escapes(run_id)
    assert (escape.criterion, escape.passed_by) == ("completeness", ["b", "c"])
    [outcome] = repo.spot_checks.outcomes()
    assert (outcome.failed, outcome.escaped) == (("completeness",), True)
    compared = {c.criterion: c.reviewers for c in repo.spot_checks.comparison(check.id)}
    assert set(compared["factual_accuracy"].values()) == {"FAIL"}  # what the page's "shipped over" sentence reads


def test_one_run_drawn_by_two_rules_is_one_outcome_the_earliest_submitted(repo: RunStore) -> None:
    rule(repo, 100)
    rule(repo, 100)  # two rules on one rubric draw the same shipped run
    run_id = new_run(repo)
    assert make_runner(repo).execute(run_id).status == S.SHIPPED
    first, second = repo.spot_checks.spot_checks("open")
    actions.submit(repo.spot_checks, second.id, judged({"completeness": "no price"}), EDITOR)
    actions.submit(repo.spot_checks, first.id, judged(), ADMIN)
    [outcome] = repo.spot_checks.outcomes()
    assert (outcome.spot_check_id, outcome.escaped, outcome.drawn_by, outcome.reviewer_d) == (
        second.id,
        True,
        "share",
        None,
    )


def test_the_periodic_pass_draws_the_weekly_floor_with_no_alert_channel_at_most_hourly(repo: RunStore) -> None:
    rule(repo, 0.0001, floor=3)  # a share that draws nothing: the floor does the drawing
    for _ in range(5):
        ship(repo, new_run(repo))
    back = utcnow() - timedelta(days=14)
    with repo.db.engine.begin() as c:  # the rule and the shippings two weeks back: their week is over
        c.execute(text("UPDATE spot_rule SET created_at = :t"), {"t": back - timedelta(hours=1)})
        c.execute(text("UPDATE state_change SET created_at = :t"), {"t": back})
    assert repo.spot_checks.spot_checks() == []
    now = [1000.0]
    alert_pass(AlertStore(repo), core_alerts.AlertSettings(), clock=lambda: now[0])  # no hook, no mail
    assert [c.drawn_by for c in repo.spot_checks.spot_checks()] == ["floor"] * 3
    with repo.db.write() as s:  # lose the draws: only the sweep's draw can put them back
        s.exec(SpotCheckRow.__table__.delete())  # type: ignore[call-overload]
    now[0] += DRAW_EVERY_S - 1
    alert_pass(AlertStore(repo), core_alerts.AlertSettings(), clock=lambda: now[0])
    assert repo.spot_checks.spot_checks() == []  # within the hour: reminders only, no draw
    now[0] += 1
    alert_pass(AlertStore(repo), core_alerts.AlertSettings(), clock=lambda: now[0])
    assert len(repo.spot_checks.spot_checks()) == 3


def test_the_sweep_reads_no_spec_or_output_of_the_shipped_runs(repo: RunStore) -> None:
    rule(repo, 100)
    ship(repo, new_run(repo))
    with Session(repo.engine) as s:
        [(run, _)] = _shipped_runs(s, s.exec(select(SpotRuleRow)).one())
        assert {"spec", "original_output"} <= set(inspect(run).unloaded)  # left in the database: they can be large
