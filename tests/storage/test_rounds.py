"""Rounds in storage (`storage.rounds`): reviews, gate and proposal round-trip faithfully, a step
saved twice is stored once, a person's review replaces a pending one, the newest gate and proposal
count, a reviewed round is never rewritten, the person reviews still waited for, and decisions and
the other audit rows are append-only. Every test runs on SQLite and on PostgreSQL when
SANTA_TEST_POSTGRES_URL is set.
"""

from __future__ import annotations

import re

import pytest
from sqlalchemy import Engine, event
from sqlmodel import Session, select

from santa_core.models import EscalationReason, GateDecision, GateResult, ReviewOutcome, ReviewStatus, RunState
from santa_core.run.gate import slot_verdict
from santa_core.run.store import RoundRecord
from santa_core.text import sha256_text
from storage.errors import RoundConflict
from storage.hashing import content_hash
from storage.runs import RunStore
from storage.tables import LLMCallRow, ReviewRow
from tests.support import runs
from tests.support.records import make_call, make_error_outcome, make_gate, make_outcome, make_proposal
from tests.support.runs import S, count, escalated, make_rubric, new_run

engine, repo = runs.engine, runs.repo  # the fixtures (an imported name would trip ruff's F811)


# --- round-trips ----------------------------------------------------------------------------


def test_round_trip_reviews_gate_proposal(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    b, c, gate, proposal = (make_outcome("B"), make_error_outcome("C"), make_gate(), make_proposal())
    repo.save_review(run_id, 1, b)
    repo.save_review(run_id, 1, c)
    repo.save_gate(run_id, 1, gate)
    repo.save_proposal(run_id, 1, proposal)

    loaded = repo.load_round(run_id, 1)
    assert loaded == RoundRecord(
        round_no=1, output_text="The output.", reviews={"B": b, "C": c}, gate=gate, proposal=proposal, fix_attempts=1
    )
    assert slot_verdict(loaded.reviews["B"], ["facts", "terms"]) == "FAIL"
    # spent is what every call cost: B's two, C's timed-out one and the fix call
    assert repo.load_run(run_id).spent_usd == pytest.approx(0.0123 + 0.0133 + 0.0213 + 0.0173)
    assert count(engine, LLMCallRow, run_id=run_id) == 4
    with Session(engine) as s:
        for row in s.exec(select(LLMCallRow)).all():
            assert row.content_hash == content_hash(row.request_json, row.response_text)
        verdicts = {r.slot: r.verdict for r in s.exec(select(ReviewRow)).all()}
    assert verdicts == {"B": "FAIL", "C": "FAIL"}


def test_nice_gate_with_no_issues_round_trips(repo: RunStore) -> None:
    run_id = new_run(repo)
    gate = GateResult(decision=GateDecision.NICE, issues=[])
    repo.save_gate(run_id, 1, gate)
    assert repo.load_round(run_id, 1).gate == gate


def test_saving_the_same_step_twice_stores_it_once(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    for _ in range(2):
        repo.save_review(run_id, 1, make_outcome("B"))
        repo.save_gate(run_id, 1, make_gate())
        repo.save_proposal(run_id, 1, make_proposal())
    assert count(engine, LLMCallRow, run_id=run_id) == 3
    assert repo.spent_usd(run_id) == pytest.approx(0.0123 + 0.0133 + 0.0173)  # each call once


def test_a_person_replaces_a_pending_review(repo: RunStore, engine: Engine) -> None:
    run_id = repo.create_run("The spec.", "The output.", make_rubric(), "claude-a", "person", "fixer")
    pending = ReviewOutcome(slot="C", reviewer="person", status=ReviewStatus.PENDING)
    repo.save_review(run_id, 1, pending)
    assert repo.load_round(run_id, 1).reviews["C"] == pending
    human = make_outcome("C", verdict="PASS", calls=0).model_copy(update={"reviewer": "person:ann"})
    repo.save_review(run_id, 1, human)
    assert repo.load_round(run_id, 1).reviews == {"C": human}
    assert count(engine, ReviewRow, run_id=run_id) == 1


def test_regenerated_gate_replaces_its_issues(repo: RunStore) -> None:
    run_id = new_run(repo)
    repo.save_gate(run_id, 1, make_gate())
    fewer = make_gate().model_copy(update={"issues": make_gate().issues[:1]})
    repo.save_gate(run_id, 1, fewer)
    assert repo.load_round(run_id, 1).gate == fewer


def test_newest_proposal_counts_and_all_cost_is_kept(repo: RunStore) -> None:
    run_id = new_run(repo)
    dearer = make_call(6, purpose="fix").model_copy(update={"cost_usd": 0.07})
    first, second = (make_proposal(), make_proposal().model_copy(update={"cost_usd": 0.07, "calls": [dearer]}))
    repo.save_proposal(run_id, 1, first)
    repo.save_proposal(run_id, 1, second)
    assert repo.load_round(run_id, 1).proposal == second
    assert repo.spent_usd(run_id) == pytest.approx(0.0173 + 0.07)  # the set-aside proposal's call too


def test_start_round_is_idempotent_and_refuses_rewriting_a_reviewed_round(repo: RunStore) -> None:
    run_id = new_run(repo)
    repo.start_round(run_id, 2, "v2")
    repo.start_round(run_id, 2, "v2")
    repo.start_round(run_id, 2, "v2, edited")  # untouched round: the newer text wins
    assert repo.load_round(run_id, 2).output_text == "v2, edited"
    repo.save_review(run_id, 2, make_outcome("B"))
    with pytest.raises(RoundConflict):
        repo.start_round(run_id, 2, "something else")
    repo.start_round(run_id, 2, "v2, edited")


def test_pending_human_reviews(repo: RunStore) -> None:
    run_id = repo.create_run("spec", "out", make_rubric(), "claude-a", "person", "fixer")
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.save_review(run_id, 1, make_outcome("B"))
    assert repo.pending_human_reviews() == []  # still running
    repo.transition(run_id, {S.RUNNING}, RunState(status=S.AWAITING_HUMAN_REVIEW), "worker")
    [item] = repo.pending_human_reviews()
    assert (item.run_id, item.round_no, item.slot, item.reviewer) == (run_id, 1, "C", "person")
    repo.save_review(run_id, 1, make_outcome("C", verdict="PASS", calls=0))
    assert repo.pending_human_reviews() == []


# --- decisions are append-only --------------------------------------------------------------


def test_decisions_are_append_only_with_hashes(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    repo.record_decision(run_id, 1, "approve", "ann", "looks right", "before", "after")
    repo.record_decision(run_id, 1, "edit", "ann", "typo", "before", "after!")
    with pytest.raises(ValueError, match="unknown decision action"):
        repo.record_decision(run_id, 1, "delete", "ann", "", "a", "b")
    rows = repo.get_run_view(run_id).rounds[0].decisions
    assert [(d.action, d.after_text) for d in rows] == [("approve", "after"), ("edit", "after!")]
    assert rows[1].before_hash == sha256_text("before") and rows[1].after_hash == sha256_text("after!")
    public = [n for n in dir(RunStore) if not n.startswith("_")]
    assert not [n for n in public if re.search(r"update|delete|remove|edit|purge", n)]


def test_no_statement_ever_updates_or_deletes_audit_rows(repo: RunStore, engine: Engine) -> None:
    seen: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *a: seen.append(a[2]))
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    for _ in range(2):
        repo.save_review(run_id, 1, make_outcome("B"))
        repo.save_review(run_id, 1, make_outcome("C", calls=1))
        repo.save_gate(run_id, 1, make_gate())
        repo.save_proposal(run_id, 1, make_proposal())
    repo.save_gate(run_id, 1, GateResult(decision=GateDecision.NAUGHTY, issues=[]))
    repo.record_decision(run_id, 1, "reject", "ann", "no", "a", "b")
    repo.transition(run_id, {S.RUNNING}, escalated(EscalationReason.REJECTED_FIX), "worker")
    repo.resolve_escalation(run_id, "rereview", "ann", "again", "The output, edited.")  # judged text: edit it
    repo.mark_interrupted()
    audit = re.compile(r"^\s*(UPDATE|DELETE\s+FROM)\s+\"?(decision|state_change|llm_call)\b", re.IGNORECASE)
    assert any(sql.lstrip().upper().startswith("UPDATE") for sql in seen)  # listener works
    assert not [sql for sql in seen if audit.search(sql)]
