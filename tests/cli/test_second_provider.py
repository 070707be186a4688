"""`review` with reviewer B on an OpenAI-compatible server and C on Claude, from the command line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.chat_api import ChatStub, for_chat
from tests.support.cli import santa_in_process
from tests.support.messages_api import MessagesStub, santa_scenario

ROOT = Path(__file__).resolve().parents[2]
SPEC = "Announce the Acme rocket in two sentences. Mention the 2018 launch."
PANEL = ("--reviewer-b", "openai:gpt-5.4-mini", "--reviewer-c", "claude-haiku-5-5")


@pytest.fixture
def cli_env(tmp_path: Path, messages_stub: MessagesStub, chat_stub: ChatStub) -> dict:
    messages_stub.handler = santa_scenario
    chat_stub.handler = for_chat(santa_scenario)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANTA_")}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'santa.db'}", PYTHONPATH=str(ROOT))
    return env


def review(env: dict, tmp_path: Path, output: str, *extra: str):
    (tmp_path / "spec.txt").write_text(SPEC, encoding="utf-8")
    (tmp_path / "output.txt").write_text(output, encoding="utf-8")
    return santa_in_process(["review", "--spec", tmp_path / "spec.txt", "--output", tmp_path / "output.txt", *extra],
                            env, ROOT)


def test_b_on_openai_c_on_claude_reviews_fixes_and_ships(cli_env: dict, tmp_path: Path, chat_stub: ChatStub,
                                                          messages_stub: MessagesStub) -> None:
    done = review(cli_env, tmp_path, "Acme's rocket launched in DEFECT.", *PANEL, "--fixer", "openai:gpt-5.5",
                  "--auto-approve", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [r["gate"] for r in result["rounds"]] == ["NAUGHTY", "NICE"]
    assert result["final_output"] == "Acme's rocket launched in fact."
    assert result["panel"] == {"families": "GPT + Claude", "spans_two_families": True, "warning": None}
    assert {c["body"]["model"] for c in chat_stub.chat_calls()} == {"gpt-5.4-mini", "gpt-5.5"}
    assert "warning" not in done.stderr  # two families: nothing to warn about


def test_one_family_warns_on_stderr_and_the_run_records_it(cli_env: dict, tmp_path: Path) -> None:
    done = review(cli_env, tmp_path, "Acme's rocket launched in 2018.", "--reviewer-b", "claude-sonnet-5-5",
                  "--reviewer-c", "claude-haiku-5-5", "--json")
    assert done.returncode == 0, done.stderr
    assert "santa: warning: Reviewers B and C are both Claude models" in done.stderr
    panel = json.loads(done.stdout)["panel"]
    assert panel["spans_two_families"] is False and "both Claude models" in panel["warning"]


def test_a_missing_openai_key_is_exit_2_naming_the_provider_and_variable(cli_env: dict, tmp_path: Path,
                                                                         chat_stub: ChatStub) -> None:
    env = {k: v for k, v in cli_env.items() if k != "OPENAI_API_KEY"}
    done = review(env, tmp_path, "Clean copy.", *PANEL)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert "provider 'openai'" in line and "OPENAI_API_KEY" in line
    assert chat_stub.calls == []


def test_an_unknown_provider_is_exit_2(cli_env: dict, tmp_path: Path) -> None:
    done = review(cli_env, tmp_path, "Clean copy.", "--reviewer-b", "nowhere:model-x", "--reviewer-c",
                  "claude-haiku-5-5")
    assert done.returncode == 2 and "unknown provider 'nowhere'" in done.stderr


def test_a_named_local_endpoint_without_a_key(cli_env: dict, tmp_path: Path, chat_stub: ChatStub) -> None:
    env = {k: v for k, v in cli_env.items() if not k.startswith("OPENAI_")}
    env.update(SANTA_PROVIDER_LOCAL_BASE_URL=chat_stub.url, SANTA_PROVIDER_LOCAL_STRICT="0")
    done = review(env, tmp_path, "Acme's rocket launched in 2018.", "--reviewer-b", "local:qwen3:32b",
                  "--reviewer-c", "claude-haiku-5-5", "--json")
    assert done.returncode == 0, done.stderr
    [body] = [c["body"] for c in chat_stub.chat_calls()]
    assert body["model"] == "qwen3:32b" and body["response_format"]["json_schema"]["strict"] is False
    assert "price unknown for 'local:qwen3:32b'" in done.stderr
    assert json.loads(done.stdout)["panel"]["families"] == "Qwen + Claude"
