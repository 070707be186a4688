"""Runs in storage (`storage.runs`): the Store protocol, creating and loading a run, clear errors for
a missing run or round, aware UTC times, compare-and-set transitions, marking interrupted runs and
the runs to resume, what the pages read (the run list, the run view, the run as JSON) and the saved
settings; on SQLite and, when SANTA_TEST_POSTGRES_URL is set, on PostgreSQL.
"""

from __future__ import annotations

import inspect
import json

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from santa_core.models import EscalationReason, RunState
from santa_core.run.store import RoundRecord, Store
from santa_core.text import sha256_text
from storage.errors import RoundNotFound, RunNotFound
from storage.runs import RunStore
from storage.tables import SettingsRow, StateChangeRow
from tests.support import runs
from tests.support.records import make_error_outcome, make_gate, make_outcome, make_proposal
from tests.support.runs import S, count, escalated, make_rubric, new_run

engine, repo = runs.engine, runs.repo  # the fixtures (an imported name would trip ruff's F811)


# --- creating and loading -------------------------------------------------------------------


def test_repo_implements_the_store_protocol() -> None:
    for name in (
        "load_run",
        "load_round",
        "transition",
        "start_round",
        "save_review",
        "save_gate",
        "save_proposal",
        "record_decision",
    ):
        proto = inspect.signature(getattr(Store, name))
        impl = inspect.signature(getattr(RunStore, name))
        assert list(proto.parameters) == list(impl.parameters), name


def test_create_and_load_run(repo: RunStore) -> None:
    run_id = new_run(repo, auto_approve=True, budget_usd=1.5, max_rounds=4)
    run = repo.load_run(run_id)
    assert run.state == RunState(status=S.QUEUED, round=1, max_rounds=4, round_cap=4)
    assert run.rubric == make_rubric()
    assert (run.spec, run.reviewer_b, run.reviewer_c, run.fixer) == ("The spec.", "claude-a", "gpt-b", "fixer")
    assert run.auto_approve is True and run.budget_usd == 1.5 and run.spent_usd == 0.0
    assert repo.load_round(run_id, 1) == RoundRecord(round_no=1, output_text="The output.")
    assert repo.load_round(run_id, 2) is None


def test_missing_run_or_round_raises_clearly(repo: RunStore) -> None:
    with pytest.raises(RunNotFound, match="run 999 does not exist"):
        repo.load_run(999)
    calls = [
        lambda: repo.load_round(999, 1),
        lambda: repo.transition(999, {S.QUEUED}, RunState(status=S.RUNNING), "worker"),
        lambda: repo.start_round(999, 1, "x"),
        lambda: repo.save_review(999, 1, make_outcome()),
        lambda: repo.save_gate(999, 1, make_gate()),
        lambda: repo.save_proposal(999, 1, make_proposal()),
        lambda: repo.record_decision(999, 1, "approve", "ann", "ok", "a", "b"),
        lambda: repo.get_run_view(999),
        lambda: repo.spent_usd(999),
    ]
    for call in calls:
        with pytest.raises(RunNotFound):
            call()
    run_id = new_run(repo)
    with pytest.raises(RoundNotFound):
        repo.save_review(run_id, 7, make_outcome())


def test_datetimes_come_back_as_aware_utc(repo: RunStore) -> None:
    view = repo.get_run_view(new_run(repo))
    stamps = [view.created_at, view.updated_at, view.rounds[0].started_at, view.history[0].created_at]
    assert all(t.utcoffset() is not None and t.utcoffset().total_seconds() == 0 for t in stamps)


# --- state ----------------------------------------------------------------------------------


def test_transition_is_compare_and_set(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    running = RunState(status=S.RUNNING, note="reviewing")
    assert repo.transition(run_id, {S.QUEUED}, running, "worker") is True
    assert repo.transition(run_id, {S.QUEUED}, running, "system") is False
    assert repo.load_run(run_id).state == running
    with Session(engine) as s:
        rows = s.exec(select(StateChangeRow).order_by(StateChangeRow.id)).all()
    assert [(r.from_status, r.to_status, r.actor) for r in rows] == [
        (None, "queued", "local"),
        ("queued", "running", "worker"),
    ]


def test_mark_interrupted_and_runs_to_resume(repo: RunStore, engine: Engine) -> None:
    ids = [new_run(repo) for _ in range(4)]
    for run_id in ids[:2]:
        repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(ids[3], {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(ids[3], {S.RUNNING}, RunState(status=S.SHIPPED), "gate")
    assert repo.mark_interrupted() == []  # their worker (this process) is alive
    with engine.begin() as conn:  # now it is gone
        conn.exec_driver_sql("UPDATE run SET worker = NULL")
    assert repo.mark_interrupted() == ids[:2]
    assert repo.mark_interrupted() == []
    assert repo.load_run(ids[0]).state.status == S.INTERRUPTED
    assert count(engine, StateChangeRow, to_status="interrupted", actor="system") == 2
    resume = repo.runs_to_resume()
    assert [(r.id, r.status) for r in resume] == [(ids[0], S.INTERRUPTED), (ids[1], S.INTERRUPTED), (ids[2], S.QUEUED)]


def test_a_run_names_the_process_that_queued_or_claimed_it(repo: RunStore) -> None:
    """So a sweep of another process leaves a queued run alone while the process that queued it lives (it works the
    run once a thread is free); a run waiting for a person or finished belongs to no process."""
    from storage.workers import this_worker

    run_id = new_run(repo)
    moves = [
        RunState(status=S.RUNNING),
        RunState(status=S.INTERRUPTED, note="stopped"),
        RunState(status=S.QUEUED),
        RunState(status=S.RUNNING),
        RunState(status=S.SHIPPED),
    ]
    seen = [repo.runs_to_resume()[0].worker]
    for move in moves:
        assert repo.transition(run_id, {repo.load_run(run_id).state.status}, move, "system")
        seen.append(repo.run_states([run_id])[run_id][2])
    me = this_worker()
    assert seen == [me, me, None, me, me, None]


# --- queries for the pages ------------------------------------------------------------------


def test_list_runs_with_costs_and_status_filter(repo: RunStore) -> None:
    a, b = new_run(repo), new_run(repo, source="cli", created_by="ann")
    repo.save_review(a, 1, make_outcome("B"))
    repo.save_proposal(a, 1, make_proposal())
    repo.transition(b, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    runs = repo.list_runs()
    assert [r.id for r in runs] == [b, a]
    # what the calls cost (two review calls, one fix call), not the steps' own figures
    assert runs[1].cost_usd == pytest.approx(0.0123 + 0.0133 + 0.0173) and runs[0].cost_usd == 0.0
    assert (runs[0].source, runs[0].created_by, runs[0].rubric_name, runs[0].rubric_version) == (
        "cli",
        "ann",
        "house-style",
        2,
    )
    assert [r.id for r in repo.list_runs(status=S.RUNNING)] == [b]
    assert [r.id for r in repo.list_runs(status="queued")] == [a]
    assert len(repo.list_runs(limit=1)) == 1


def test_run_view_has_everything_a_page_renders(repo: RunStore) -> None:
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.save_review(run_id, 1, make_outcome("B"))
    repo.save_review(run_id, 1, make_error_outcome("C"))
    repo.save_gate(run_id, 1, make_gate())
    repo.save_proposal(run_id, 1, make_proposal())
    repo.record_decision(run_id, 1, "approve", "ann", "ok", "The output.", "The revised output.")
    repo.start_round(run_id, 2, "The revised output.")
    repo.transition(run_id, {S.RUNNING}, RunState(status=S.RUNNING, round=2), "worker")
    repo.transition(run_id, {S.RUNNING}, RunState(status=S.SHIPPED, round=2), "gate")
    view = repo.get_run_view(run_id)
    assert [r.round_no for r in view.rounds] == [1, 2]
    first = view.rounds[0]
    assert first.reviews["B"] == make_outcome("B") and first.gate == make_gate()
    # a run's and a round's cost is what their calls cost: B's two calls, C's failed call, the fix call
    paid = sum(c.cost_usd for c in (*make_outcome("B").calls, *make_error_outcome("C").calls, *make_proposal().calls))
    assert paid == pytest.approx(0.0123 + 0.0133 + 0.0213 + 0.0173)
    assert first.proposal == make_proposal() and first.cost_usd == pytest.approx(paid)
    assert first.output_hash == sha256_text("The output.")
    assert view.current_round.round_no == 2 and view.rounds[1].reviews == {}
    assert view.final_output == view.current_output == "The revised output."
    assert view.total_cost_usd == pytest.approx(paid)
    assert [h.to_status for h in view.history] == [S.QUEUED, S.RUNNING, S.RUNNING, S.SHIPPED]
    assert view.escalation is None and view.original_output == "The output."


def test_run_json_is_json_ready(repo: RunStore) -> None:
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.save_review(run_id, 1, make_outcome("B"))
    repo.save_review(run_id, 1, make_error_outcome("C"))
    repo.save_gate(run_id, 1, make_gate())
    repo.transition(run_id, {S.RUNNING}, escalated(EscalationReason.REVIEWER_ERROR), "gate")
    data = repo.run_json(run_id)
    assert json.loads(json.dumps(data)) == data
    assert (data["run_id"], data["status"], data["escalation_reason"]) == (run_id, "escalated", "reviewer_error")
    [rnd] = data["rounds"]
    assert rnd["gate"] == "NAUGHTY" and rnd["round"] == 1
    assert {s: r["verdict"] for s, r in rnd["reviews"].items()} == {"B": "FAIL", "C": "FAIL"}
    assert data["cost_usd"] == pytest.approx(0.0123 + 0.0133 + 0.0213)  # B's two calls and C's failed one
    assert data["escalation"]["status"] == "open"


# --- settings -------------------------------------------------------------------------------


def test_settings_are_appended_and_merged(repo: RunStore, engine: Engine) -> None:
    assert repo.get_settings() == {}
    repo.save_settings({"reviewer_b": "claude-a", "max_rounds": 3}, actor="ann")
    repo.save_settings({"max_rounds": 4}, actor="bob")
    assert repo.get_settings() == {"reviewer_b": "claude-a", "max_rounds": 4}
    assert count(engine, SettingsRow) == 2
