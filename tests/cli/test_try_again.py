"""The command line's Try again (issue 34, point 4): `santa resume RUN_ID` of a run the model provider failed asks
again in a new round, as the run page's button does, and is refused over budget with nothing written; `review` says
how to try again; `resume --all` never pays for one on its own.

The real Anthropic SDK against the loopback Messages API, whose known-answer screen answers 500 until it heals.
"""

from __future__ import annotations

import json
from pathlib import Path

from sqlmodel import Session, create_engine, select

from storage.tables import DecisionRow, EscalationRow
from tests.cli.test_review import ROOT, santa
from tests.cli.test_review import cli_env as cli_env  # the fixture
from tests.support.cli import santa_in_process
from tests.support.messages_api import MessagesStub, error_reply, repeat_key

CLEAN = "Acme's rocket launched in 2018. Order today."


def broken(body: dict):
    return error_reply(500, "api_error", "Internal server error")


def outage(cli_env: dict, tmp_path: Path, stub: MessagesStub, *extra: str) -> int:
    """A `review` whose screen the provider fails: exit 1, could not be reviewed, and how to try again."""
    stub.screen = broken
    done = santa(cli_env, tmp_path, CLEAN, "--json", *extra)
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert (result["status"], result["escalation_reason"]) == ("escalated", "provider_failed")
    assert "could not be reviewed: the model provider failed" in done.stderr
    assert f"`santa resume {result['run_id']}` tries again" in done.stderr
    return result["run_id"]


def written(cli_env: dict, run_id: int) -> tuple[list, list]:
    with Session(create_engine(cli_env["DATABASE_URL"])) as s:
        decisions = [(d.action, d.actor) for d in s.exec(select(DecisionRow).where(DecisionRow.run_id == run_id))]
        escalations = [
            (e.status, e.resolution, e.resolved_by)
            for e in s.exec(select(EscalationRow).where(EscalationRow.run_id == run_id))
        ]
    return decisions, escalations


def test_resume_tries_a_run_the_provider_failed_again(
    cli_env: dict, tmp_path: Path, messages_stub: MessagesStub
) -> None:
    run_id = outage(cli_env, tmp_path, messages_stub)
    assert messages_stub.message_calls() == []
    messages_stub.screen = repeat_key  # the provider answers again
    done = santa_in_process(["resume", str(run_id), "--json"], cli_env, ROOT)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "shipped" and len(result["rounds"]) == 2
    assert len(messages_stub.message_calls()) == 2  # fresh calls: both reviewers, in round 2
    assert written(cli_env, run_id) == ([("try_again", "cli")], [("resolved", "tried_again", "cli")])


def test_resume_over_budget_is_refused_and_writes_nothing(
    cli_env: dict, tmp_path: Path, messages_stub: MessagesStub
) -> None:
    run_id = outage(cli_env, tmp_path, messages_stub, "--budget", "0.000000001")
    before = written(cli_env, run_id)
    sent = len(messages_stub.calls)
    done = santa_in_process(["resume", str(run_id)], cli_env, ROOT)
    assert done.returncode == 2
    assert done.stderr.startswith(f"santa: run {run_id} was not tried again: The run's budget")
    assert "is spent" in done.stderr
    assert written(cli_env, run_id) == before and len(messages_stub.calls) == sent


def test_resume_all_never_tries_one_again_on_its_own(
    cli_env: dict, tmp_path: Path, messages_stub: MessagesStub
) -> None:
    run_id = outage(cli_env, tmp_path, messages_stub)
    sent = len(messages_stub.calls)
    done = santa_in_process(["resume", "--all"], cli_env, ROOT)
    assert done.returncode == 0 and "nothing to resume" in done.stderr
    assert written(cli_env, run_id) == ([], [("open", None, None)]) and len(messages_stub.calls) == sent


def test_resume_of_a_judged_escalation_is_refused(cli_env: dict, tmp_path: Path, messages_stub: MessagesStub) -> None:
    messages_stub.handler = lambda body: "not json at all"  # a bad answer: a reviewer failure, judged as such
    done = santa(cli_env, tmp_path, CLEAN, "--json")
    result = json.loads(done.stdout)
    assert result["escalation_reason"] == "reviewer_error" and "tries again" not in done.stderr
    refused = santa_in_process(["resume", str(result["run_id"])], cli_env, ROOT)
    assert refused.returncode == 2 and "only interrupted, queued or orphaned running runs resume" in refused.stderr
