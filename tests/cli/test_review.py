"""`python -m santa_core review` end to end against a loopback Messages API server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant
from tests.support.cli import santa_in_process
from tests.support.messages_api import (
    MessagesStub,
    fenced_output,
    fix_json,
    message,
    review_json,
    santa_scenario,
    schema_properties,
)

ROOT = Path(__file__).resolve().parents[2]
SPEC = "Announce the Acme rocket in two sentences. Mention the 2018 launch."


@pytest.fixture
def cli_env(tmp_path: Path, messages_stub: MessagesStub) -> dict:
    messages_stub.handler = santa_scenario
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANTA_")}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'santa.db'}", PYTHONPATH=str(ROOT))
    return env


def santa(
    env: dict, tmp_path: Path, output: str | bytes, *extra: str, spec: str = SPEC, cwd: Path = ROOT
) -> subprocess.CompletedProcess:
    (tmp_path / "spec.txt").write_text(spec, encoding="utf-8")
    out = tmp_path / "output.txt"
    out.write_bytes(output if isinstance(output, bytes) else output.encode("utf-8"))
    return santa_in_process(["review", "--spec", tmp_path / "spec.txt", "--output", out, *extra], env, cwd)


def test_clean_output_ships_in_round_one(cli_env: dict, tmp_path: Path, messages_stub: MessagesStub) -> None:
    done = santa(cli_env, tmp_path, "Acme's rocket launched in 2018. Order today.", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "shipped" and len(result["rounds"]) == 1
    rnd = result["rounds"][0]
    assert rnd["gate"] == "NICE" and set(rnd["reviews"]) == {"B", "C"}
    assert result["final_output"] == "Acme's rocket launched in 2018. Order today."
    assert result["cost_usd"] > 0 and isinstance(result["run_id"], int)
    models = sorted(c["body"]["model"] for c in messages_stub.message_calls())
    assert models == ["claude-haiku-4-5", "claude-haiku-5-5"]  # B and C: the cheapest pair of two Claude models


@pytest.mark.parametrize(
    "lines",
    [[c * 80 for c in "-=_~*#—"], ["[" * 5000], ["<" * 5000]],
    ids=["80-character separators", "5000 [", "5000 <"],
)
def test_long_runs_of_punctuation_ship_when_nothing_else_is_wrong(
    cli_env: dict, tmp_path: Path, lines: list[str]
) -> None:
    # A line of dashes once froze the injection check (a repeat nested in a repeat): now it is ordinary text.
    output = "\n".join(["Acme's rocket launched in 2018.", *lines, "Order today."])
    done = santa(cli_env, tmp_path, output, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "shipped" and result["final_output"] == output


def test_flagged_defect_is_fixed_and_ships_in_a_later_round(cli_env: dict, tmp_path: Path) -> None:
    done = santa(cli_env, tmp_path, "Acme's rocket launched in DEFECT.", "--auto-approve", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [r["gate"] for r in result["rounds"]] == ["NAUGHTY", "NICE"]
    assert result["final_output"] == "Acme's rocket launched in fact."
    assert result["rounds"][0]["issues"][0]["flagged_by"] == "both"


def test_unfixable_output_escalates_after_three_rounds(cli_env: dict, tmp_path: Path) -> None:
    done = santa(cli_env, tmp_path, "UNFIXABLE DEFECT here.", "--auto-approve", "--json")
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "escalated" and result["escalation_reason"] == "round_cap"
    assert [r["gate"] for r in result["rounds"]] == ["NAUGHTY"] * 3


def test_waiting_for_a_person_exits_3(cli_env: dict, tmp_path: Path) -> None:
    done = santa(cli_env, tmp_path, "Acme's rocket launched in DEFECT.", "--json")
    assert done.returncode == 3 and json.loads(done.stdout)["status"] == "awaiting_approval"
    done = santa(cli_env, tmp_path, "Fine text.", "--reviewer-c", "person")
    assert done.returncode == 3 and done.stdout.startswith("run 2: waiting for a person reviewer\n")


def two_defects(body: dict) -> dict:
    """Reviewers flag DEFECT and FLAW; the fix agent fixes DEFECT only (a partial proposal)."""
    output = fenced_output(body)
    if "edits" in schema_properties(body):
        return message(fix_json([(0, "DEFECT", "fact")]))
    issues = [("factual_accuracy", "A defect marker.", w) for w in ("DEFECT", "FLAW") if w in output]
    return message(
        review_json("FAIL" if issues else "PASS", [("factual_accuracy", "FAIL" if issues else "PASS")], issues)
    )


def test_human_output_says_status_and_reason_in_words_and_json_keeps_codes(cli_env: dict, tmp_path: Path) -> None:
    done = santa(cli_env, tmp_path, "UNFIXABLE DEFECT here.", "--auto-approve")
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[:3] == [
        "run 1: escalated: still NAUGHTY after the last round",
        "  why: still NAUGHTY after round 3",
        "  next: a person decides on the app's Escalations page",
    ]
    assert "round_cap" not in done.stdout and "escalated (" not in done.stdout
    done = santa(cli_env, tmp_path, "UNFIXABLE DEFECT here.", "--auto-approve", "--json")
    assert json.loads(done.stdout)["escalation_reason"] == "round_cap"


def test_auto_approve_held_for_a_person_says_why(cli_env: dict, tmp_path: Path, messages_stub: MessagesStub) -> None:
    messages_stub.handler = two_defects
    done = santa(cli_env, tmp_path, "Acme's rocket launched in DEFECT. It has no FLAW.", "--auto-approve")
    assert done.returncode == 3, done.stderr
    assert done.stdout.splitlines()[:3] == [
        "run 1: waiting for approval of the fix",
        "  why: the fix proposal leaves a flagged issue unfixed, and --auto-approve only approves a fix for every "
        "flagged issue",
        "  next: a person approves, edits or rejects the fix on the app's Review page (?run=1)",
    ]
    assert "awaiting_approval" not in done.stdout


@pytest.mark.parametrize(
    ("output", "extra", "message"),
    [
        pytest.param("", (), "output file is empty", id="empty-output"),
        pytest.param(b"\xff\xfe bad", (), "not UTF-8", id="not-utf8"),
        pytest.param("x" * 200_001, (), "the limit is 200,000", id="oversized"),
        pytest.param("\x00\x00\x00", (), "contains a NUL character (\\x00) at character 1", id="only-nul"),
        pytest.param("Fine copy.\x00", (), "contains a NUL character (\\x00) at character 11", id="nul-inside"),
        pytest.param("Fine\x1b[2J copy.", (), "contains a control character (\\x1b) at character 5", id="escape"),
        pytest.param("ok", ("--rubric", "nope"), "unknown rubric 'nope'", id="unknown-rubric"),
        pytest.param("ok", ("--max-rounds", "0"), "--max-rounds must be between 1 and 10", id="bad-rounds"),
        pytest.param("ok", ("--bogus",), "usage:", id="bad-usage"),
        pytest.param("ok", ("--budget", "nan"), "--budget must be a number of USD above 0", id="nan-budget"),
    ],
)
def test_bad_input_exits_2_with_one_line(cli_env: dict, tmp_path: Path, output, extra, message) -> None:
    done = santa(cli_env, tmp_path, output, *extra)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_missing_spec_file_and_missing_key(cli_env: dict, tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "santa_core", "review", "--spec", "nope.txt", "--output", "nope.txt"]
    done = subprocess.run(cmd, env=cli_env, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "spec file not found: nope.txt" in done.stderr
    no_key = {k: v for k, v in cli_env.items() if k != "ANTHROPIC_API_KEY"}
    done = santa(no_key, tmp_path, "ok")
    assert (
        done.returncode == 2
        and "no API key for provider 'anthropic'" in done.stderr
        and "set ANTHROPIC_API_KEY" in done.stderr
    )


def test_cli_runs_appear_in_the_app(cli_env: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = json.loads(santa(cli_env, tmp_path, "Clean copy.", "--json").stdout)["run_id"]
    escalated = json.loads(santa(cli_env, tmp_path, "UNFIXABLE DEFECT", "--auto-approve", "--json").stdout)["run_id"]
    monkeypatch.setenv("DATABASE_URL", cli_env["DATABASE_URL"])
    st.cache_resource.clear()
    at = AppTest.from_file("../../app.py", default_timeout=30).run()
    at.switch_page("pages/runs.py").run()
    assert not at.exception
    assert sorted(at.dataframe[0].value["run"].tolist()) == sorted(f"./review?run={r}" for r in (shipped, escalated))
    assert {r.source for r in RunStore(init_db(cli_env["DATABASE_URL"], mark_interrupted=False)).list_runs()} == {"cli"}
    st.cache_resource.clear()


def test_killed_process_leaves_an_interrupted_run_that_resumes(
    cli_env: dict, tmp_path: Path, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL the command line while its reviewers are busy; the next start resumes the run."""
    import time

    from santa_core.models import RunStatus
    from santa_core.reviewers.anthropic import AnthropicFixer, AnthropicReviewer
    from santa_core.run import actions
    from santa_core.run.runner import Runner
    from tests.support.messages_api import Reply

    slow = {"on": True}
    messages_stub.handler = lambda body: (
        Reply(200, {}, santa_scenario(body), delay_s=60) if slow["on"] else santa_scenario(body)
    )
    (tmp_path / "spec.txt").write_text(SPEC, encoding="utf-8")
    (tmp_path / "output.txt").write_text("Acme's rocket launched in 2018.", encoding="utf-8")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "santa_core",
            "review",
            "--spec",
            str(tmp_path / "spec.txt"),
            "--output",
            str(tmp_path / "output.txt"),
        ],
        env=cli_env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = cli_env["DATABASE_URL"]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(messages_stub.message_calls()) < 2:
            time.sleep(0.1)  # both reviewer requests are in flight: the run is mid-round
        assert len(messages_stub.message_calls()) == 2
    finally:
        proc.kill()
        proc.wait(timeout=30)
    repo = grant(RunStore(init_db(url, mark_interrupted=False)))
    (run,) = repo.list_runs()
    assert run.status == RunStatus.RUNNING  # what a dead process leaves behind
    slow["on"] = False
    repo = RunStore(init_db(url))  # a new process opens the database: dead runs become interrupted
    assert repo.load_run(run.id).state.status == RunStatus.INTERRUPTED
    assert actions.resume(repo, run.id, "ann").status == RunStatus.QUEUED
    assert Runner(repo, AnthropicReviewer, AnthropicFixer).execute(run.id).status == RunStatus.SHIPPED
    history = [(h.from_status, h.to_status) for h in repo.get_run_view(run.id).history]
    assert (RunStatus.RUNNING, RunStatus.INTERRUPTED) in history


def test_unusable_database_is_bad_input_not_an_escalation(cli_env: dict, tmp_path: Path) -> None:
    done = santa({**cli_env, "DATABASE_URL": "nosuchdb://x"}, tmp_path, "Clean copy.")
    assert done.returncode == 2 and "cannot open the database" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_reads_the_secrets_file_and_the_saved_defaults_like_the_app(cli_env: dict, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".streamlit").mkdir(parents=True)
    db_url = f"sqlite:///{tmp_path / 'from-secrets.db'}"
    (project / ".streamlit" / "secrets.toml").write_text(
        f'ANTHROPIC_API_KEY = "test"\nDATABASE_URL = "{db_url}"\n', encoding="utf-8"
    )
    repo = grant(RunStore(init_db(db_url, mark_interrupted=False)))
    repo.save_settings({"reviewer_b": "claude-opus-5-5", "max_rounds": 2}, actor="ann")
    env = {k: v for k, v in cli_env.items() if k not in ("ANTHROPIC_API_KEY", "DATABASE_URL")}
    done = santa(env, tmp_path, "UNFIXABLE DEFECT", "--auto-approve", "--json", cwd=project)
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["reviewer_b"] == "claude-opus-5-5" and len(result["rounds"]) == 2  # saved defaults
    assert [r.id for r in repo.list_runs()] == [result["run_id"]]  # landed in the secrets' database


@pytest.mark.parametrize(
    ("status", "code"),
    [
        pytest.param("shipped", 0, id="shipped"),
        pytest.param("resolved_shipped", 0, id="resolved-shipped"),
        pytest.param("escalated", 1, id="escalated"),
        pytest.param("resolved_rejected", 1, id="rejected"),
        pytest.param("awaiting_approval", 3, id="approval"),
        pytest.param("awaiting_human_review", 3, id="person"),
        pytest.param("interrupted", 4, id="worker-crashed"),
    ],
)
def test_exit_code_per_status(status: str, code: int) -> None:
    from desk.cli import exit_code

    assert exit_code(status) == code
