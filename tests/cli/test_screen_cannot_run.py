"""The command line and an injection screen that is on but cannot run (here: its model on OpenAI, no OpenAI key):
`review` and `batch` refuse before anything is stored or paid (`santa: error:`, exit 2, saying how to fix it), and a
run the command line drives anyway (`resume`) stops at its screen as "could not be reviewed", no reviewer asked.

The reviewers are Claude on the loopback Messages API, reached through the real SDK: any request it receives after
the refusal would be a reviewer (or a Message Batch) paid without a screen.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from santa_core.models import RunState, RunStatus
from santa_core.rubrics.library import load_builtin
from storage.batches import BatchStore
from storage.runs import RunStore
from storage.startup import init_db
from tests.cli import test_batch
from tests.cli.test_batch import SEED, planted_model
from tests.core.batch.test_driver import SPEC as BATCH_SPEC
from tests.support.cli import santa_in_process
from tests.support.messages_api import MessagesStub

ROOT = Path(__file__).resolve().parents[2]
SPEC = "Announce the Acme rocket in two sentences. Mention the 2018 launch."
CLEAN = "Acme's rocket launched in 2018. Order today."
batch_file = test_batch.batch_file  # the fixture


@pytest.fixture
def cli_env(env: dict[str, str], messages_stub: MessagesStub) -> dict[str, str]:
    """Claude reviewers on the stub; the screen on an OpenAI model, and no OpenAI key."""
    messages_stub.handler = planted_model
    return {
        **env,
        "ANTHROPIC_BASE_URL": messages_stub.url,
        "ANTHROPIC_API_KEY": "test",
        "SANTA_SCREEN_MODEL": "openai:gpt-5.4-nano",
        "SANTA_BATCH_POLL_S": "0.01",
    }


def store(env: dict[str, str]) -> RunStore:
    return RunStore(init_db(env["DATABASE_URL"], mark_interrupted=False))


def review(env: dict[str, str], tmp_path: Path, *extra: str):
    (tmp_path / "spec.txt").write_text(SPEC, encoding="utf-8")
    (tmp_path / "output.txt").write_text(CLEAN, encoding="utf-8")
    return santa_in_process(
        ["review", "--spec", tmp_path / "spec.txt", "--output", tmp_path / "output.txt", *extra], env, ROOT
    )


def assert_refused(done, env: dict[str, str], messages_stub: MessagesStub) -> None:
    """Exit 2 with one error line saying why and how to fix it; nothing stored, nothing sent."""
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("santa: error: the injection screen is on but cannot run")
    assert "OPENAI_API_KEY" in done.stderr and "SANTA_SCREEN=off" in done.stderr
    assert "nothing was started" in done.stderr
    assert store(env).list_runs(limit=5) == [] and messages_stub.calls == []


def test_review_refuses_before_anything_is_stored_or_paid(
    cli_env: dict[str, str], tmp_path: Path, messages_stub: MessagesStub
) -> None:
    assert_refused(review(cli_env, tmp_path, "--json"), cli_env, messages_stub)
    # The explicit way to review without the screen: the setting off.
    done = review({**cli_env, "SANTA_SCREEN": "off"}, tmp_path, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "shipped" and len(messages_stub.message_calls()) == 2


def test_batch_refuses_before_anything_is_stored_or_paid(
    cli_env: dict[str, str], messages_stub: MessagesStub, batch_file: tuple[Path, set[str]]
) -> None:
    path, _ = batch_file
    for mode in ("--message-batches", "--no-message-batches"):
        done = santa_in_process(
            ["batch", path, "--spec", BATCH_SPEC, "--strata", "template", "--seed", SEED, mode], cli_env, ROOT
        )
        assert_refused(done, cli_env, messages_stub)
        assert BatchStore(store(cli_env)).batches() == [] and messages_stub.batch_ids() == []


def test_an_invalid_screen_setting_is_refused_naming_the_variable(
    cli_env: dict[str, str], tmp_path: Path, messages_stub: MessagesStub
) -> None:
    done = review({**cli_env, "SANTA_SCREEN": "maybe"}, tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("santa: error: SANTA_SCREEN='maybe' is not a valid value")
    assert store(cli_env).list_runs(limit=5) == [] and messages_stub.calls == []


def test_resume_drives_the_run_to_its_screen_and_it_escalates_saying_why(
    cli_env: dict[str, str], messages_stub: MessagesStub
) -> None:
    runs = store(cli_env)
    run_id = runs.create_run(
        spec=SPEC,
        output=CLEAN,
        rubric=load_builtin("general"),
        reviewer_b="claude-haiku-5-5",
        reviewer_c="claude-sonnet-5-5",
        fixer="claude-opus-5-5",
        created_by="cli",
        source="cli",
    )
    runs.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
    runs.transition(run_id, {RunStatus.RUNNING}, RunState(status=RunStatus.INTERRUPTED, note="killed"), "system")
    done = santa_in_process(["resume", str(run_id), "--json"], cli_env, ROOT)
    assert done.returncode == 1, done.stderr  # escalated
    result = json.loads(done.stdout)
    assert result["status"] == "escalated" and result["escalation_reason"] == "provider_failed"
    assert result["note"].startswith(
        "injection screen of the spec and output failed (the screening model cannot "
        "be called here: no API key for provider 'openai'"
    )
    assert "no reviewer was asked" in result["note"] and messages_stub.calls == []
