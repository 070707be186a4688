"""Storage: pinned schema (after migrate), faithful round-trips, CAS transitions, escalations,
append-only audit rows, SQLite pragmas and 8 concurrent writers that lose nothing.

Every test that takes `repo` or `db_url` runs on SQLite and, when SANTA_TEST_POSTGRES_URL is
set (see scripts/pg_test_server.sh), on PostgreSQL too.
"""

from __future__ import annotations

import inspect
import json
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, event, func
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, SQLModel, select

from santa_core.models import (
    CheckResult,
    Criterion,
    EscalationReason,
    FixEdit,
    FixProposal,
    GateDecision,
    GateResult,
    LLMCall,
    MergedIssue,
    RejectedEdit,
    Review,
    ReviewIssue,
    ReviewOutcome,
    ReviewStatus,
    Rubric,
    RunState,
    RunStatus,
    Usage,
)
from santa_core.run.store import RoundRecord, Store
from storage import db, startup
from storage.db import database_url, make_engine, migrate, redacted_url
from storage.errors import RoundConflict, RoundNotFound, RunNotFound
from storage.hashing import content_hash, sha256_text
from storage.run_rows import lock_run
from storage.runs import RunStore
from storage.tables import (
    DecisionRow,
    EscalationRow,
    LLMCallRow,
    ReviewRow,
    RunRow,
    SettingsRow,
    StateChangeRow,
)
from tests.conftest import grant

S = RunStatus

SCHEMA: dict[str, list[str]] = {
    "alembic_version": ["version_num"],
    "batch": [
        "id", "created_at", "updated_at", "created_by", "source", "name", "file_format", "columns", "layout", "id_column",
        "output_column", "spec_column", "spec", "strata", "rubric_name", "rubric_version", "rubric_json",
        "reviewer_b", "reviewer_c", "fixer", "sample_rate", "min_sample", "seed", "concurrency", "message_batches",
        "auto_approve", "confidence", "paused", "note",
    ],
    "batch_item": ["id", "batch_id", "position", "item_key", "spec", "strata", "record", "original_output", "output"],
    "batch_sample": ["id", "batch_id", "number", "created_at", "created_by", "seed", "size", "finished_at",
                     "api_batch_id", "api_status", "api_jobs"],
    "batch_sample_item": ["id", "sample_id", "item_id", "run_id"],
    "batch_pattern": ["id", "batch_id", "sample_id", "key", "criterion", "title", "pattern", "status", "proposal",
                      "approved_edits", "decided_by", "decided_at", "reason"],
    "batch_change": ["id", "batch_id", "item_id", "pattern_id", "created_at", "actor", "before_text", "after_text",
                     "before_hash", "after_hash", "applied", "skipped"],
    "run": [
        "id", "created_at", "updated_at", "status", "round", "max_rounds", "round_cap",
        "escalation_reason", "note", "spec", "original_output", "rubric_name",
        "rubric_version", "rubric_json", "reviewer_b", "reviewer_c", "fixer", "auto_approve",
        "budget_usd", "created_by", "source", "worker", "person_b", "person_c", "generation_cost_usd", "batch_id",
    ],
    "round": [
        "id", "run_id", "round_no", "output_text", "output_hash", "gate_decision",
        "gate_reasons", "gate_reviewer_error", "gate_injection", "started_at", "gate_checks",
        "gate_disagreement",
    ],
    "review": [
        "id", "run_id", "round_no", "slot", "reviewer", "status", "verdict", "review_json",
        "error", "input_tokens", "output_tokens", "cache_creation_input_tokens",
        "cache_read_input_tokens", "cost_usd", "latency_s", "raw_response", "call_ids",
        "created_at",
    ],
    "merged_issue": [
        "id", "run_id", "round_no", "idx", "criterion", "description", "evidence",
        "flagged_by",
    ],
    "proposal": [
        "id", "run_id", "round_no", "issues_json", "edits_json", "rejected_json",
        "before_text", "proposed_text", "before_hash", "proposed_hash", "cost_usd",
        "input_tokens", "output_tokens", "cache_creation_input_tokens",
        "cache_read_input_tokens", "error", "call_ids", "created_at",
    ],
    "decision": [
        "id", "run_id", "round_no", "action", "actor", "reason", "before_hash", "after_hash",
        "after_text", "created_at",
    ],
    "escalation": [
        "id", "run_id", "reason", "created_at", "status", "resolution", "resolved_by",
        "resolved_at", "justification", "owner", "due_at",
    ],
    "llm_call": [
        "id", "run_id", "round_no", "purpose", "slot", "model", "request_json",
        "response_text", "content_hash", "input_tokens", "output_tokens",
        "cache_creation_input_tokens", "cache_read_input_tokens", "cost_usd", "latency_s",
        "error", "created_at",
    ],
    "state_change": ["id", "run_id", "from_status", "to_status", "actor", "note", "created_at"],
    "settings": ["id", "values_json", "saved_by", "saved_at"],
    "rubric_version": [
        "id", "name", "version", "domain", "document_json", "resolved_json", "content_hash", "author",
        "change_note", "source", "created_at",
    ],
    "rubric_trial": [
        "id", "kind", "run_id", "rubric_name", "rubric_version", "rubric_json", "output_text", "output_hash",
        "check_outcomes_json", "reviewer", "review_status", "verdict", "review_json", "error", "request_json",
        "response_text", "content_hash", "input_tokens", "output_tokens", "cache_creation_input_tokens",
        "cache_read_input_tokens", "cost_usd", "latency_s", "actor", "created_at",
    ],
    "person": ["id", "name", "roles", "created_at", "updated_at", "updated_by"],
    "escape": ["id", "run_id", "criterion", "description", "severity", "reported_by", "created_at"],
    "audit_event": [
        "id", "seq", "created_at", "actor", "action", "entity_type", "entity_id", "run_id", "before_hash",
        "after_hash", "detail", "prev_hash", "hash",
    ],
    "audit_head": ["id", "seq", "hash"],
    "run_metric": [
        "day", "rubric_name", "rubric_version", "domain", "reviewer_b", "reviewer_c", "run_id", "created_by", "status", "rounds", "nice_round",
        "generation_cost_usd", "review_cost_usd", "fix_cost_usd", "input_tokens", "output_tokens",
        "cache_write_tokens", "cache_read_tokens", "cache_savings_usd", "escapes", "b_reviews", "b_errors",
        "b_latency_s", "b_latency_max_s", "b_cost_usd", "c_reviews", "c_errors", "c_latency_s", "c_latency_max_s",
        "c_cost_usd", "rounds_reviewed", "round_latency_s",
    ],
    "criterion_result": [
        "day", "rubric_name", "rubric_version", "domain", "reviewer_b", "reviewer_c", "id", "run_id", "round_no", "criterion", "category", "severity", "b", "c",
        "check_result",
    ],
    "criterion_day": [
        "day", "rubric_name", "rubric_version", "domain", "reviewer_b", "reviewer_c", "id", "criterion", "category", "severity", "pp", "pf", "fp", "ff", "b_fail",
        "c_fail", "check_fail", "unscored",
    ],
}  # fmt: skip


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """A migrated engine (the migration is what is tested, never create_all)."""
    eng = make_engine(db_url)
    migrate(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def repo(engine: Engine) -> RunStore:
    """A RunStore over the migrated engine, its test people granted their roles."""
    return grant(RunStore(engine))


# --- builders -------------------------------------------------------------------------------


def make_rubric() -> Rubric:
    """Two criteria, one with a deterministic check."""
    return Rubric(
        name="house-style",
        version=2,
        domain="docs",
        criteria=[
            Criterion(
                id="facts",
                name="Facts",
                category="factual accuracy",
                pass_condition="every claim is in the spec",
                fail_signal="a claim not in the spec",
            ),
            Criterion(
                id="terms",
                name="Terms",
                category="compliance",
                pass_condition="no forbidden term",
                fail_signal="a forbidden term",
                severity="suggestion",
                check={"type": "forbidden_terms", "terms": ["guarantee"]},
            ),
        ],
    )


def make_call(n: int = 0, purpose: str = "review", error: str | None = None) -> LLMCall:
    """An LLM call with nested JSON, unicode and awkward floats."""
    return LLMCall(
        purpose=purpose,
        model="claude-sonnet-5-5",
        request={
            "messages": [{"role": "user", "content": f"review #{n} — naïve 🎄"}],
            "max_tokens": 4096,
            "meta": {"floats": [0.1, 2.5e-7, -3.0], "flags": [True, None]},
        },
        response='{"verdict": "FAIL"}' if error is None else "",
        usage=Usage(
            input_tokens=1000 + n,
            output_tokens=200,
            cache_creation_input_tokens=30,
            cache_read_input_tokens=700,
        ),
        cost_usd=0.0123 + n / 1000,
        latency_s=1.25,
        error=error,
    )


def make_outcome(
    slot: str = "B", verdict: str = "FAIL", calls: int = 2
) -> ReviewOutcome:
    """A valid review outcome with checks, issues and calls."""
    review = Review(
        verdict=verdict,
        checks=[
            CheckResult(
                criterion="facts", result=verdict, detail="claim ‘X’ is not in the spec"
            ),
            CheckResult(criterion="terms", result="PASS", detail="none found"),
        ],
        critical_issues=[]
        if verdict == "PASS"
        else [
            ReviewIssue(
                criterion="facts", description="invented figure", evidence="42 %"
            )
        ],
        suggestions=["tighten the intro"],
    )
    return ReviewOutcome(
        slot=slot,
        reviewer="claude-sonnet-5-5",
        status=ReviewStatus.OK,
        review=review,
        usage=Usage(input_tokens=2000, output_tokens=400, cache_read_input_tokens=1400),
        cost_usd=0.0317,
        latency_s=3.5,
        raw_response=review.model_dump_json(),
        calls=[make_call(i) for i in range(calls)],
    )


def make_error_outcome(slot: str = "C") -> ReviewOutcome:
    """A reviewer that timed out: no review, an error, one failed call."""
    return ReviewOutcome(
        slot=slot,
        reviewer="gpt-x",
        status=ReviewStatus.TIMEOUT,
        error="timed out after 60 s",
        cost_usd=0.0,
        latency_s=60.0,
        calls=[make_call(9, error="ReadTimeout")],
    )


def make_gate() -> GateResult:
    """A NAUGHTY gate with two attributed issues and reasons."""
    return GateResult(
        decision=GateDecision.NAUGHTY,
        issues=[
            MergedIssue(
                criterion="facts",
                description="invented figure",
                evidence="42 %",
                flagged_by="both",
            ),
            MergedIssue(
                criterion="terms", description="says guarantee", flagged_by="check"
            ),
        ],
        reasons=["B: FAIL", "C: timeout"],
        reviewer_error=True,
        injection=False,
    )


def make_proposal(before: str = "The output.") -> FixProposal:
    """A proposal with an applied and a rejected edit, and one fix call."""
    return FixProposal(
        issues=make_gate().issues,
        edits=[FixEdit(issue=0, before="output", after="revised output")],
        rejected=[
            RejectedEdit(
                edit=FixEdit(issue=1, before="nope", after="x"),
                reason="before text not found",
            )
        ],
        before_text=before,
        proposed_text=before.replace("output", "revised output"),
        usage=Usage(input_tokens=900, output_tokens=120),
        cost_usd=0.05,
        calls=[make_call(5, purpose="fix")],
    )


def new_run(repo: RunStore, output: str = "The output.", **kw: object) -> int:
    """A queued run with round 1."""
    return repo.create_run(
        "The spec.", output, make_rubric(), "claude-a", "gpt-b", "fixer", **kw
    )


def count(engine: Engine, model: type[SQLModel], **where: object) -> int:
    """Rows of a table matching equality filters."""
    stmt = select(func.count()).select_from(model)
    for key, value in where.items():
        stmt = stmt.where(getattr(model, key) == value)
    with Session(engine) as s:
        return s.exec(stmt).one()


def escalated(reason: EscalationReason, round_no: int = 1) -> RunState:
    """An escalated state."""
    return RunState(
        status=S.ESCALATED, round=round_no, escalation_reason=reason, note="x"
    )


# --- schema ---------------------------------------------------------------------------------


def test_schema_is_pinned_after_migrate(engine: Engine) -> None:
    insp = sa_inspect(engine)
    actual = {
        t: [c["name"] for c in insp.get_columns(t)] for t in insp.get_table_names()
    }
    assert actual == SCHEMA


def test_migration_matches_the_tables_and_is_idempotent(engine: Engine) -> None:
    migrate(engine)  # a second run is a no-op
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(ctx, SQLModel.metadata) == []
        assert conn.exec_driver_sql(
            "SELECT version_num FROM alembic_version"
        ).all() == [("0008",)]


def test_indexes_on_status_created_at_and_foreign_keys(engine: Engine) -> None:
    insp = sa_inspect(engine)
    indexed = {
        (t, tuple(ix["column_names"])) for t in SCHEMA for ix in insp.get_indexes(t)
    }
    assert {("run", ("status",)), ("run", ("created_at",))} <= indexed
    no_run_fk = {"run", "alembic_version", "settings", "rubric_version", "person", "audit_event", "audit_head",
                 "criterion_day", "run_metric",  # run_metric's run_id is its primary key
                 "batch", "batch_item", "batch_sample", "batch_pattern", "batch_change", "batch_sample_item"}
    assert {(t, ("batch_id",)) for t in ("run", "batch_item", "batch_sample", "batch_pattern", "batch_change")} <= indexed
    assert sorted((f["constrained_columns"][0], f["referred_table"]) for f in insp.get_foreign_keys("batch_sample_item")
                  ) == [("item_id", "batch_item"), ("run_id", "run"), ("sample_id", "batch_sample")]
    assert [(f["constrained_columns"], f["referred_table"]) for f in insp.get_foreign_keys("run_metric")] == [
        (["run_id"], "run")]
    for table in set(SCHEMA) - no_run_fk:
        assert (table, ("run_id",)) in indexed, table
        fks = insp.get_foreign_keys(table)
        assert [(f["constrained_columns"], f["referred_table"]) for f in fks] == [
            (["run_id"], "run")
        ]


# --- round-trips ----------------------------------------------------------------------------


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
    assert (run.spec, run.reviewer_b, run.reviewer_c, run.fixer) == (
        "The spec.",
        "claude-a",
        "gpt-b",
        "fixer",
    )
    assert run.auto_approve is True and run.budget_usd == 1.5 and run.spent_usd == 0.0
    assert repo.load_round(run_id, 1) == RoundRecord(
        round_no=1, output_text="The output."
    )
    assert repo.load_round(run_id, 2) is None


def test_round_trip_reviews_gate_proposal(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    b, c, gate, proposal = (
        make_outcome("B"),
        make_error_outcome("C"),
        make_gate(),
        make_proposal(),
    )
    repo.save_review(run_id, 1, b)
    repo.save_review(run_id, 1, c)
    repo.save_gate(run_id, 1, gate)
    repo.save_proposal(run_id, 1, proposal)

    loaded = repo.load_round(run_id, 1)
    assert loaded == RoundRecord(
        round_no=1,
        output_text="The output.",
        reviews={"B": b, "C": c},
        gate=gate,
        proposal=proposal,
    )
    assert loaded.reviews["B"].effective_verdict == "FAIL"
    assert repo.load_run(run_id).spent_usd == pytest.approx(
        b.cost_usd + proposal.cost_usd
    )
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
    assert repo.spent_usd(run_id) == pytest.approx(0.0317 + 0.05)


def test_a_person_replaces_a_pending_review(repo: RunStore, engine: Engine) -> None:
    run_id = repo.create_run("The spec.", "The output.", make_rubric(), "claude-a", "person", "fixer")
    pending = ReviewOutcome(slot="C", reviewer="person", status=ReviewStatus.PENDING)
    repo.save_review(run_id, 1, pending)
    assert repo.load_round(run_id, 1).reviews["C"] == pending
    human = make_outcome("C", verdict="PASS", calls=0).model_copy(
        update={"reviewer": "person:ann"}
    )
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
    first, second = (
        make_proposal(),
        make_proposal().model_copy(update={"cost_usd": 0.07}),
    )
    repo.save_proposal(run_id, 1, first)
    repo.save_proposal(run_id, 1, second)
    assert repo.load_round(run_id, 1).proposal == second
    assert repo.spent_usd(run_id) == pytest.approx(0.12)


def test_start_round_is_idempotent_and_refuses_rewriting_a_reviewed_round(
    repo: RunStore,
) -> None:
    run_id = new_run(repo)
    repo.start_round(run_id, 2, "v2")
    repo.start_round(run_id, 2, "v2")
    repo.start_round(run_id, 2, "v2, edited")  # untouched round: the newer text wins
    assert repo.load_round(run_id, 2).output_text == "v2, edited"
    repo.save_review(run_id, 2, make_outcome("B"))
    with pytest.raises(RoundConflict):
        repo.start_round(run_id, 2, "something else")
    repo.start_round(run_id, 2, "v2, edited")


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
    stamps = [
        view.created_at,
        view.updated_at,
        view.rounds[0].started_at,
        view.history[0].created_at,
    ]
    assert all(
        t.utcoffset() is not None and t.utcoffset().total_seconds() == 0 for t in stamps
    )


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


def test_escalated_state_opens_an_escalation(repo: RunStore) -> None:
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    assert repo.transition(
        run_id, {S.RUNNING}, escalated(EscalationReason.BUDGET), "system"
    )
    [esc] = repo.list_escalations()
    assert (esc.run_id, esc.reason, esc.status, esc.run_status) == (
        run_id,
        EscalationReason.BUDGET,
        "open",
        S.ESCALATED,
    )
    with pytest.raises(ValueError, match="escalation_reason"):
        repo.transition(run_id, {S.ESCALATED}, RunState(status=S.ESCALATED), "worker")


def test_resolve_escalation_rereview_is_one_transaction(repo: RunStore) -> None:
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(run_id, {S.RUNNING}, escalated(EscalationReason.ROUND_CAP), "gate")
    new = repo.resolve_escalation(
        run_id, "rereview", "ann", "fixed the figure", "Edited."
    )
    assert (new.status, new.round, new.round_cap) == (S.QUEUED, 2, 2)
    view = repo.get_run_view(run_id)
    assert view.state == new
    assert repo.load_round(run_id, 2).output_text == "Edited." == view.current_output
    [decision] = view.rounds[0].decisions
    assert (decision.action, decision.actor, decision.reason) == (
        "rereview",
        "ann",
        "fixed the figure",
    )
    assert decision.before_hash == sha256_text("The output.")
    assert decision.after_hash == sha256_text("Edited.")
    esc = view.escalation
    assert (esc.status, esc.resolution, esc.resolved_by, esc.justification) == (
        "resolved",
        "rereview",
        "ann",
        "fixed the figure",
    )
    assert esc.resolved_at is not None and repo.list_escalations() == []
    with pytest.raises(ValueError):
        repo.resolve_escalation(run_id, "ship_as_is", "ann", "")


def test_resolve_escalation_ship_as_is_sets_the_final_output(repo: RunStore) -> None:
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(
        run_id, {S.RUNNING}, escalated(EscalationReason.REVIEWER_ERROR), "gate"
    )
    with pytest.raises(ValueError, match="only a re-review"):
        repo.resolve_escalation(run_id, "ship_as_is", "ann", "fine", edited_output="x")
    repo.resolve_escalation(run_id, "ship_as_is", "ann", "reviewer was down; I checked")
    view = repo.get_run_view(run_id)
    assert view.status == S.RESOLVED_SHIPPED and view.final_output == "The output."
    assert repo.list_escalations("resolved")[0].resolution == "ship_as_is"


def test_leaving_escalated_through_transition_closes_the_escalation(repo: RunStore) -> None:
    """The Store-protocol path for system code (the command line acts as `cli`): record_decision,
    then transition; the escalation closes with the latest resolving decision's reason. (A person
    cannot take this path: tests/storage/test_people_audit.py; they go through resolve_escalation.)"""
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(run_id, {S.RUNNING}, escalated(EscalationReason.INJECTION), "gate")
    repo.record_decision(run_id, 1, "resolve_reject", "cli", "injected text", "a", "a")
    rejected = RunState(status=S.RESOLVED_REJECTED, note="rejected by a person")
    assert repo.transition(run_id, {S.ESCALATED}, rejected, "cli")
    [esc] = repo.list_escalations(status=None)
    assert (esc.status, esc.resolution, esc.resolved_by, esc.justification) == (
        "resolved",
        "reject",
        "cli",
        "injected text",
    )


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
    assert [(r.id, r.status) for r in resume] == [
        (ids[0], S.INTERRUPTED),
        (ids[1], S.INTERRUPTED),
        (ids[2], S.QUEUED),
    ]


def test_init_db_migrates_and_marks_interrupted_once_per_process(db_url: str) -> None:
    try:
        repo = RunStore(startup.init_db(db_url))
        run_id = new_run(repo)
        repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
        assert startup.init_db(db_url) is db.get_engine(db_url)  # cached: nothing marked now
        assert repo.load_run(run_id).state.status == S.RUNNING
        with repo.engine.begin() as conn:  # the worker that claimed it is gone
            conn.exec_driver_sql(f"UPDATE run SET worker = NULL WHERE id = {run_id}")
        db.dispose_engines()  # a "restart"
        RunStore(startup.init_db(db_url))
        assert repo.load_run(run_id).state.status == S.INTERRUPTED
    finally:
        db.dispose_engines()


# --- decisions are append-only --------------------------------------------------------------


def test_decisions_are_append_only_with_hashes(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    repo.record_decision(run_id, 1, "approve", "ann", "looks right", "before", "after")
    repo.record_decision(run_id, 1, "edit", "ann", "typo", "before", "after!")
    with pytest.raises(ValueError, match="unknown decision action"):
        repo.record_decision(run_id, 1, "delete", "ann", "", "a", "b")
    rows = repo.get_run_view(run_id).rounds[0].decisions
    assert [(d.action, d.after_text) for d in rows] == [
        ("approve", "after"),
        ("edit", "after!"),
    ]
    assert rows[1].before_hash == sha256_text("before") and rows[
        1
    ].after_hash == sha256_text("after!")
    public = [n for n in dir(RunStore) if not n.startswith("_")]
    assert not [n for n in public if re.search(r"update|delete|remove|edit|purge", n)]


def test_no_statement_ever_updates_or_deletes_audit_rows(
    repo: RunStore, engine: Engine
) -> None:
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
    repo.resolve_escalation(run_id, "rereview", "ann", "again")
    repo.mark_interrupted()
    audit = re.compile(
        r"^\s*(UPDATE|DELETE\s+FROM)\s+\"?(decision|state_change|llm_call)\b",
        re.IGNORECASE,
    )
    assert any(
        sql.lstrip().upper().startswith("UPDATE") for sql in seen
    )  # listener works
    assert not [sql for sql in seen if audit.search(sql)]


# --- queries for the pages ------------------------------------------------------------------


def test_list_runs_with_costs_and_status_filter(repo: RunStore) -> None:
    a, b = new_run(repo), new_run(repo, source="cli", created_by="ann")
    repo.save_review(a, 1, make_outcome("B"))
    repo.save_proposal(a, 1, make_proposal())
    repo.transition(b, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    runs = repo.list_runs()
    assert [r.id for r in runs] == [b, a]
    assert runs[1].cost_usd == pytest.approx(0.0817) and runs[0].cost_usd == 0.0
    assert (
        runs[0].source,
        runs[0].created_by,
        runs[0].rubric_name,
        runs[0].rubric_version,
    ) == ("cli", "ann", "house-style", 2)
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
    repo.record_decision(
        run_id, 1, "approve", "ann", "ok", "The output.", "The revised output."
    )
    repo.start_round(run_id, 2, "The revised output.")
    repo.transition(run_id, {S.RUNNING}, RunState(status=S.RUNNING, round=2), "worker")
    repo.transition(run_id, {S.RUNNING}, RunState(status=S.SHIPPED, round=2), "gate")
    view = repo.get_run_view(run_id)
    assert [r.round_no for r in view.rounds] == [1, 2]
    first = view.rounds[0]
    assert first.reviews["B"] == make_outcome("B") and first.gate == make_gate()
    assert first.proposal == make_proposal() and first.cost_usd == pytest.approx(0.0817)
    assert first.output_hash == sha256_text("The output.")
    assert view.current_round.round_no == 2 and view.rounds[1].reviews == {}
    assert view.final_output == view.current_output == "The revised output."
    assert view.total_cost_usd == pytest.approx(0.0817)
    assert [h.to_status for h in view.history] == [
        S.QUEUED,
        S.RUNNING,
        S.RUNNING,
        S.SHIPPED,
    ]
    assert view.escalation is None and view.original_output == "The output."


def test_pending_human_reviews(repo: RunStore) -> None:
    run_id = repo.create_run(
        "spec", "out", make_rubric(), "claude-a", "person", "fixer"
    )
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.save_review(run_id, 1, make_outcome("B"))
    assert repo.pending_human_reviews() == []  # still running
    repo.transition(run_id, {S.RUNNING}, RunState(status=S.AWAITING_HUMAN_REVIEW), "worker")
    [item] = repo.pending_human_reviews()
    assert (item.run_id, item.round_no, item.slot, item.reviewer) == (
        run_id,
        1,
        "C",
        "person",
    )
    repo.save_review(run_id, 1, make_outcome("C", verdict="PASS", calls=0))
    assert repo.pending_human_reviews() == []


# --- concurrency ----------------------------------------------------------------------------


def test_eight_concurrent_writers_lose_nothing(repo: RunStore, engine: Engine) -> None:
    threads, runs_each, increments = 8, 6, 25
    grant(repo, {f"t{t}": ("editor",) for t in range(threads)})
    counter = new_run(repo)
    targets = [new_run(repo) for _ in range(12)]
    start = threading.Barrier(threads + 2)
    done = threading.Event()

    def writer(t: int) -> tuple[list[int], int]:
        start.wait()
        mine, won = [], 0
        for i in range(max(runs_each, increments)):
            if i < runs_each:
                run_id = new_run(repo, created_by=f"t{t}")
                repo.save_review(run_id, 1, make_outcome("B", calls=1))
                repo.save_review(run_id, 1, make_outcome("C", calls=1))
                mine.append(run_id)
            with repo._tx() as s:  # a read-modify-write increment through the repo's tx
                row = lock_run(s, counter)
                row.round_cap += 1
            if i < len(targets):
                claim = RunState(status=S.RUNNING, note=f"t{t}")
                won += repo.transition(targets[i], {S.QUEUED}, claim, "worker")
        return mine, won

    def reader() -> int:
        start.wait()
        reads = 0
        while not done.is_set() or reads == 0:
            repo.list_runs()
            repo.get_run_view(counter)
            reads += 1
        return reads

    with ThreadPoolExecutor(threads + 2) as pool:
        readers = [pool.submit(reader) for _ in range(2)]
        try:
            results = list(pool.map(writer, range(threads)))
        finally:
            done.set()  # readers stop even when a writer failed
        assert all(r.result() > 0 for r in readers)

    created = [run_id for mine, _ in results for run_id in mine]
    assert len(set(created)) == threads * runs_each
    assert sum(won for _, won in results) == len(targets)  # each claim won exactly once
    assert repo.load_run(counter).state.round_cap == 3 + threads * increments
    assert count(engine, RunRow) == 1 + len(targets) + threads * runs_each
    assert count(engine, ReviewRow) == 2 * threads * runs_each
    assert count(engine, LLMCallRow) == 2 * threads * runs_each
    for run_id in targets:
        assert count(engine, StateChangeRow, run_id=run_id) == 2
    assert repo.audit.verify().ok  # every writer appended to one unforked chain
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"


# --- engine and URL -------------------------------------------------------------------------


def test_sqlite_pragmas_are_in_effect(tmp_path: Path) -> None:
    eng = make_engine(f"sqlite:///{tmp_path / 'p.db'}")
    try:
        with eng.connect() as conn:
            got = {
                p: conn.exec_driver_sql(f"PRAGMA {p}").scalar()
                for p in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous")
            }
        assert got == {
            "journal_mode": "wal",
            "foreign_keys": 1,
            "busy_timeout": 30000,
            "synchronous": 1,
        }
    finally:
        eng.dispose()


def test_sqlite_writes_begin_immediate_and_reads_do_not(tmp_path: Path) -> None:
    eng = make_engine(f"sqlite:///{tmp_path / 'b.db'}")
    migrate(eng)
    repo = RunStore(eng)
    seen: list[str] = []
    event.listen(eng, "before_cursor_execute", lambda *a: seen.append(a[2]))
    try:
        run_id = new_run(repo)
        assert seen[0] == "BEGIN IMMEDIATE"
        seen.clear()
        repo.load_run(run_id)
        assert seen[0] == "BEGIN" and "BEGIN IMMEDIATE" not in seen
        orphan = DecisionRow(
            run_id=12345,
            round_no=1,
            action="approve",
            actor="x",
            before_hash="",
            after_hash="",
        )
        with (
            pytest.raises(IntegrityError, match="FOREIGN KEY"),
            Session(eng) as s,
            s.begin(),
        ):
            s.add(orphan)
    finally:
        eng.dispose()


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param(
            "postgres://u:p@h/db", "postgresql+psycopg://u:p@h/db", id="heroku"
        ),
        pytest.param(
            "postgresql://u@h:5/db", "postgresql+psycopg://u@h:5/db", id="plain"
        ),
        pytest.param(
            "postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db", id="psycopg"
        ),
        pytest.param("sqlite:///x.db", "sqlite:///x.db", id="sqlite"),
    ],
)
def test_database_url_normalises_postgres(
    given: str, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", given)
    assert database_url() == expected


def test_default_url_is_a_sqlite_file_under_data(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    url = database_url()
    assert url == f"sqlite:///{db.REPO_ROOT / 'data' / 'santa.db'}"
    assert (db.REPO_ROOT / "data").is_dir()


def test_get_engine_is_cached_per_url(tmp_path: Path) -> None:
    try:
        a = db.get_engine(f"sqlite:///{tmp_path / 'a.db'}")
        assert db.get_engine(f"sqlite:///{tmp_path / 'a.db'}") is a
        assert db.get_engine(f"sqlite:///{tmp_path / 'b.db'}") is not a
    finally:
        db.dispose_engines()


def test_escalation_rows_reference_runs(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.transition(run_id, {S.RUNNING}, escalated(EscalationReason.FIX_FAILED), "worker")
    assert count(engine, EscalationRow, run_id=run_id, status="open") == 1
    # Re-entering ESCALATED from ESCALATED would be a bug upstream; it must not duplicate rows.
    repo.transition(run_id, {S.ESCALATED}, escalated(EscalationReason.BUDGET), "worker")
    assert count(engine, EscalationRow, run_id=run_id) == 1


def test_migrations_upgrade_step_by_step(db_url: str) -> None:
    """0001 alone, then head: the chain applies in order on an existing database."""
    eng = make_engine(db_url)
    try:
        with eng.begin() as conn:
            command.upgrade(db.alembic_config(conn), "0001")
        assert "settings" not in sa_inspect(eng).get_table_names()
        migrate(eng)
        assert "settings" in sa_inspect(eng).get_table_names()
    finally:
        eng.dispose()


def _fill(conn: Any, table: str, **given: object) -> None:
    """Insert a row giving every NOT NULL column a value of its type (what a test does not care about)."""
    values: dict[str, object] = {}
    for c in sa_inspect(conn).get_columns(table):
        if c["name"] in given or c["nullable"] or c["name"] == "id":
            continue
        kind = str(c["type"]).upper()
        values[c["name"]] = (datetime.now(UTC) if "DATE" in kind or "TIME" in kind else 0 if "INT" in kind
                             else False if "BOOL" in kind else 0.0 if "FLOAT" in kind or "REAL" in kind
                             else {} if "JSON" in kind else "x")
    values.update(given)
    table_ = sa.Table(table, sa.MetaData(), autoload_with=conn)
    conn.execute(table_.insert().values(**values))


def test_migration_0008_keeps_runs_and_their_rounds(db_url: str) -> None:
    """Adding run.batch_id (a foreign key: SQLite rebuilds the run table) loses no run or row pointing at one."""
    eng = make_engine(db_url)
    try:
        with eng.begin() as conn:
            command.upgrade(db.alembic_config(conn), "0007")
        with eng.begin() as conn:
            _fill(conn, "run", id=7, status="shipped", spec="the spec")
            _fill(conn, "round", run_id=7, round_no=1, output_text="the output")
        migrate(eng)
        with eng.connect() as conn:
            assert conn.exec_driver_sql("SELECT id, status, spec, batch_id FROM run").all() == [
                (7, "shipped", "the spec", None)]
            assert conn.exec_driver_sql("SELECT run_id, output_text FROM round").all() == [(7, "the output")]
    finally:
        eng.dispose()


def test_settings_are_appended_and_merged(repo: RunStore, engine: Engine) -> None:
    assert repo.get_settings() == {}
    repo.save_settings({"reviewer_b": "claude-a", "max_rounds": 3}, actor="ann")
    repo.save_settings({"max_rounds": 4}, actor="bob")
    assert repo.get_settings() == {"reviewer_b": "claude-a", "max_rounds": 4}
    assert count(engine, SettingsRow) == 2


def test_run_json_is_json_ready(repo: RunStore) -> None:
    run_id = new_run(repo)
    repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
    repo.save_review(run_id, 1, make_outcome("B"))
    repo.save_review(run_id, 1, make_error_outcome("C"))
    repo.save_gate(run_id, 1, make_gate())
    repo.transition(
        run_id, {S.RUNNING}, escalated(EscalationReason.REVIEWER_ERROR), "gate"
    )
    data = repo.run_json(run_id)
    assert json.loads(json.dumps(data)) == data
    assert (data["run_id"], data["status"], data["escalation_reason"]) == (
        run_id,
        "escalated",
        "reviewer_error",
    )
    [rnd] = data["rounds"]
    assert rnd["gate"] == "NAUGHTY" and rnd["round"] == 1
    assert {s: r["verdict"] for s, r in rnd["reviews"].items()} == {
        "B": "FAIL",
        "C": "FAIL",
    }
    assert data["cost_usd"] == pytest.approx(0.0317)
    assert data["escalation"]["status"] == "open"


def test_redacted_url_hides_the_password() -> None:
    assert (
        redacted_url("postgresql+psycopg://u:s3cret@h/db")
        == "postgresql+psycopg://u:***@h/db"
    )


def test_init_db_can_leave_running_runs_alone(db_url: str) -> None:
    try:
        repo = RunStore(startup.init_db(db_url))
        run_id = new_run(repo)
        repo.transition(run_id, {S.QUEUED}, RunState(status=S.RUNNING), "worker")
        db.dispose_engines()  # a second process (the CLI) opens the same database
        startup.init_db(db_url, mark_interrupted=False)
        assert repo.load_run(run_id).state.status == S.RUNNING
    finally:
        db.dispose_engines()


def test_app_start_leaves_runs_of_live_workers_alone(tmp_path: Path) -> None:
    """Only runs whose worker process is gone are interrupted; a live command-line run keeps going."""
    import subprocess
    import sys

    from santa_core.run.engine import Claim, advance
    from storage.workers import this_worker

    repo = RunStore(startup.init_db(f"sqlite:///{tmp_path / 'w.db'}", mark_interrupted=False))
    rubric = Rubric(name="r", criteria=[Criterion(id="a", name="A", category="c", pass_condition="p", fail_signal="f")])
    ids = [repo.create_run(spec="s", output="o", rubric=rubric, reviewer_b="b", reviewer_c="c", fixer="f")
           for _ in range(3)]
    for run_id in ids:
        state = repo.load_run(run_id).state
        assert repo.transition(run_id, {state.status}, advance(state, Claim()), "worker")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = this_worker().split(":")[0]
    with repo.engine.begin() as conn:  # ids[1]: a process that has exited; ids[2]: unknown worker
        conn.exec_driver_sql(f"UPDATE run SET worker = '{host}:{dead.stdout.strip()}:1' WHERE id = {ids[1]}")
        conn.exec_driver_sql(f"UPDATE run SET worker = NULL WHERE id = {ids[2]}")
    assert repo.mark_interrupted() == [ids[1], ids[2]]
    assert repo.load_run(ids[0]).state.status == "running"  # claimed by this live process
