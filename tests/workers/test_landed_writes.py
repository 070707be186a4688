"""A write whose commit landed but whose reply was lost with the connection, tried again through PatientStore (the
idempotence checks of desk.outage.PatientStore._landed): each is stored once, on SQLite and PostgreSQL. Every case
that is not idempotent by itself goes red when `_landed` says nothing (written by a reviewer of issue 33)."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import text

from desk.outage import Outage, PatientStore, patient
from santa_core.models import (
    FixProposal,
    LLMCall,
    ReviewOutcome,
    ReviewStatus,
    RunState,
    RunStatus,
    ScreenResult,
    Usage,
)
from santa_core.rubrics.library import load_builtin
from santa_core.run import engine
from santa_core.run.runner import advance_run
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant

MODEL = "claude-sonnet-4-5"


class Lossy:
    """The real store, but the first call of `name` commits and then loses its reply."""

    def __init__(self, inner: RunStore, name: str) -> None:
        self.inner, self.name, self.lost = inner, name, False

    def __getattr__(self, attr):
        real = getattr(self.inner, attr)
        if attr != self.name:
            return real

        def call(*a, **k):
            result = real(*a, **k)
            if not self.lost:
                self.lost = True
                raise psycopg.OperationalError("server closed the connection unexpectedly")
            return result

        return call


def body(n):
    return {"model": MODEL, "messages": [{"role": "user", "content": f"r{n}"}], "max_tokens": 64}


def call(n, purpose="review", **kw):
    return LLMCall(
        purpose=purpose,
        model=MODEL,
        request=body(n),
        response="ok",
        cost_usd=0.01,
        latency_s=1.2345678,
        usage=Usage(input_tokens=10, output_tokens=5),
        **kw,
    )


@pytest.fixture
def repo(db_url):
    return grant(RunStore(init_db(db_url, mark_interrupted=False)))


def running(repo):
    run_id = repo.create_run(
        spec="Announce.",
        output="Launched in 2018.",
        rubric=load_builtin("general"),
        reviewer_b=MODEL,
        reviewer_c=MODEL,
        fixer=MODEL,
    )
    repo.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
    return run_id


def counts(repo, run_id):
    with repo.engine.connect() as c:

        def q(t):
            return c.execute(text(f"SELECT count(*) FROM {t} WHERE run_id = :r"), {"r": run_id}).scalar()

        return {
            t: q(t)
            for t in (
                "llm_call",
                "llm_call_sent",
                "screen",
                "review",
                "state_change",
                "audit_event",
                "proposal",
                "decision",
            )
        }


def once_lost(repo, name, fn):
    lossy = Lossy(repo, name)
    store = PatientStore(lossy, Outage())
    with patient():
        return fn(store)


@pytest.mark.parametrize("attempts", [1, 2])  # a round keeps a screen's last call only: the check compares that
def test_save_screen(repo, attempts):
    run_id = running(repo)
    result = ScreenResult(
        role="spec and output",
        text_hash="h",
        model=MODEL,
        verdict="clean",
        secret="K",
        answer="K",
        cost_usd=0.02,
        calls=[call(n, "screen") for n in range(attempts)],
    )
    before = counts(repo, run_id)
    once_lost(repo, "save_screen", lambda s: s.save_screen(run_id, 1, result))
    after = counts(repo, run_id)
    assert after["screen"] - before["screen"] == 1
    assert after["llm_call"] - before["llm_call"] == attempts


@pytest.mark.parametrize("attempts", [1, 2])
def test_save_review(repo, attempts):
    run_id = running(repo)
    outcome = ReviewOutcome(
        slot="B",
        reviewer=MODEL,
        status=ReviewStatus.ERROR,
        error="unreadable",
        cost_usd=0.02,
        calls=[call(n) for n in range(attempts)],
    )
    before = counts(repo, run_id)
    once_lost(repo, "save_review", lambda s: s.save_review(run_id, 1, outcome))
    after = counts(repo, run_id)
    assert after["llm_call"] - before["llm_call"] == attempts
    assert after["audit_event"] - before["audit_event"] == 2


def test_note_sent(repo):
    run_id = running(repo)
    before = counts(repo, run_id)
    once_lost(repo, "note_sent", lambda s: s.note_sent(run_id, 1, "B", "review", MODEL, body(1), 0.01))
    after = counts(repo, run_id)
    assert after["llm_call_sent"] - before["llm_call_sent"] == 1


def test_transition(repo):
    run_id = running(repo)
    state = repo.load_run(run_id).state
    before = counts(repo, run_id)
    new = once_lost(repo, "transition", lambda s: advance_run(s, run_id, state, engine.Interrupt(note="x"), "system"))
    after = counts(repo, run_id)
    assert new.status == RunStatus.INTERRUPTED
    assert after["state_change"] - before["state_change"] == 1


def test_save_proposal(repo):
    run_id = running(repo)
    prop = FixProposal(
        issues=[],
        edits=[],
        before_text="Launched in 2018.",
        proposed_text="Launched in 2018!",
        cost_usd=0.03,
        calls=[call(1, "fix"), call(2, "fix")],
        usage=Usage(input_tokens=3),
    )
    before = counts(repo, run_id)
    once_lost(repo, "save_proposal", lambda s: s.save_proposal(run_id, 1, prop))
    after = counts(repo, run_id)
    assert after["proposal"] - before["proposal"] == 1
    assert after["llm_call"] - before["llm_call"] == 2


def test_commit_decision(repo):
    from santa_core.run.store import DecisionIn

    run_id = running(repo)
    state = repo.load_run(run_id).state
    new = state.model_copy(update={"round": 2})
    dec = DecisionIn(
        action="auto_approve",
        actor="auto-approve",
        reason="r",
        before_text="Launched in 2018.",
        after_text="Launched in 2018!",
    )
    before = counts(repo, run_id)
    ok = once_lost(repo, "commit_decision", lambda s: s.commit_decision(run_id, state, new, dec, "Launched in 2018!"))
    after = counts(repo, run_id)
    assert ok is True
    assert after["decision"] - before["decision"] == 1
    assert after["state_change"] - before["state_change"] == 1
