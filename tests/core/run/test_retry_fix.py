"""Asking the fix agent again: same round, a counted and paid attempt, at most MAX_FIX_ATTEMPTS."""

from __future__ import annotations

from pathlib import Path

import pytest

from santa_core.models import FixEdit, FixPlan, RunStatus
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer
from santa_core.roles import PermissionDenied
from santa_core.run import actions
from santa_core.run.runner import Runner
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant, migrated_sqlite
from tests.core.run.test_runner import BAD, new_run, strict


@pytest.fixture
def repo(tmp_path: Path) -> RunStore:
    return grant(RunStore(init_db(migrated_sqlite(tmp_path / "santa.db"))), {"ed": ("editor",), "vi": ("viewer",)})


def attempts_fixer() -> FunctionFixer:
    """A fix agent whose n-th answer writes a different year (so each proposal is told apart)."""
    fx = FunctionFixer(
        "fixer",
        lambda request: FixPlan(
            edits=[FixEdit(issue=0, before="in 2019", after=f"in 2018 (attempt {len(fx.requests)})")]
        ),
    )
    return fx


def runner(repo: RunStore, fx: FunctionFixer) -> Runner:
    return Runner(repo, lambda name: FunctionReviewer(name, strict), lambda name: fx, workers=1)


def test_asking_again_gets_a_new_proposal_for_the_same_round(repo: RunStore) -> None:
    fx = attempts_fixer()
    run = runner(repo, fx)
    run_id = new_run(repo, BAD)
    assert run.execute(run_id).status == RunStatus.AWAITING_APPROVAL
    first = repo.load_round(run_id, 1)
    assert first.fix_attempts == 1 and "in 2018 (attempt 1)" in first.proposal.proposed_text
    state = actions.retry_fix(repo, run_id, "ed", "the year is still wrong")
    assert state.status == RunStatus.QUEUED and state.round == 1
    assert repo.load_round(run_id, 1).proposal is None  # set aside until the new one is stored
    assert run.execute(run_id).status == RunStatus.AWAITING_APPROVAL
    again = repo.load_round(run_id, 1)
    assert again.fix_attempts == 2 and "in 2018 (attempt 2)" in again.proposal.proposed_text
    assert len(fx.requests) == 2  # asked again: a second call (every proposal counts in the run's cost)
    view = repo.get_run_view(run_id)
    assert [d.action for d in view.rounds[0].decisions] == ["retry_fix"]
    assert view.rounds[0].decisions[0].after_text == first.proposal.proposed_text  # what was set aside


def test_a_round_allows_three_attempts(repo: RunStore) -> None:
    run = runner(repo, attempts_fixer())
    run_id = new_run(repo, BAD)
    run.execute(run_id)
    for _ in range(actions.MAX_FIX_ATTEMPTS - 1):
        actions.retry_fix(repo, run_id, "ed")
        run.execute(run_id)
    with pytest.raises(actions.ActionError, match="asked 3 times"):
        actions.retry_fix(repo, run_id, "ed")
    state = actions.approve_fix(repo, run_id, "ed")  # the last proposal is still there to decide on
    assert state.status == RunStatus.QUEUED and state.round == 2


def test_only_someone_who_decides_fixes_may_ask_again(repo: RunStore) -> None:
    run = runner(repo, attempts_fixer())
    run_id = new_run(repo, BAD)
    run.execute(run_id)
    with pytest.raises(PermissionDenied):
        actions.retry_fix(repo, run_id, "vi")
    assert repo.load_run(run_id).state.status == RunStatus.AWAITING_APPROVAL


def test_a_fix_written_by_a_person_has_no_agent_to_ask(repo: RunStore) -> None:
    run = runner(repo, attempts_fixer())
    run_id = new_run(repo, BAD, fixer="person")
    assert run.execute(run_id).status == RunStatus.AWAITING_APPROVAL
    with pytest.raises(actions.ActionError, match="written by a person"):
        actions.retry_fix(repo, run_id, "ed")


def test_the_same_proposal_again_is_a_new_attempt(repo: RunStore) -> None:
    same = FunctionFixer("fixer", lambda request: FixPlan(edits=[FixEdit(issue=0, before="in 2019", after="in 2018")]))
    run = runner(repo, same)
    run_id = new_run(repo, BAD)
    run.execute(run_id)
    actions.retry_fix(repo, run_id, "ed")
    assert run.execute(run_id).status == RunStatus.AWAITING_APPROVAL
    again = repo.load_round(run_id, 1)
    assert again.fix_attempts == 2 and again.proposal is not None
    assert actions.approve_fix(repo, run_id, "ed").round == 2


def test_a_proposal_asked_for_again_waits_for_the_person_even_on_an_auto_approve_run(repo: RunStore) -> None:
    answers = [
        FixEdit(issue=0, before="Acme", after="ACME"),  # applied, but leaves the flagged year: partial
        FixEdit(issue=0, before="in 2019", after="in 2018"),
    ]  # complete
    fx = FunctionFixer("fixer", lambda request: FixPlan(edits=[answers[len(fx.requests) - 1]]))
    run = runner(repo, fx)
    run_id = new_run(repo, BAD, auto_approve=True)
    assert run.execute(run_id).status == RunStatus.AWAITING_APPROVAL  # a partial one is never auto-approved
    actions.retry_fix(repo, run_id, "ed")
    state = run.execute(run_id)
    assert state.status == RunStatus.AWAITING_APPROVAL and state.round == 1  # complete, yet theirs to approve
    assert "in 2018" in repo.load_round(run_id, 1).proposal.proposed_text


def test_a_failed_fix_agent_says_why_in_the_escalation(repo: RunStore) -> None:
    def broken(request):
        raise TimeoutError("no answer within 120s")

    run = runner(repo, FunctionFixer("fixer", broken))
    state = run.execute(new_run(repo, BAD))
    assert state.escalation_reason == "fix_failed"
    assert state.note == "the fix agent produced no applicable edit: TimeoutError: no answer within 120s"


def test_refused_edits_say_why_in_the_escalation(repo: RunStore) -> None:
    far = FunctionFixer("fixer", lambda r: FixPlan(edits=[FixEdit(issue=0, before="Acme", after="ACME")]))
    run = Runner(repo, lambda name: FunctionReviewer(name, strict), lambda name: far, workers=1)
    run_id = new_run(repo, BAD + " Acme ships worldwide.")
    state = run.execute(run_id)
    assert state.escalation_reason == "fix_failed" and state.note.startswith(
        "the fix agent produced no applicable edit: "
    )
    assert state.note.endswith("edit for issue 1 'before' text occurs 2 times; it must be unique")
