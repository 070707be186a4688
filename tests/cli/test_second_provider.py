"""`review` with reviewer B on an OpenAI-compatible server and C on Claude, from the command line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import migrated_sqlite
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
    # A copy of the migrated template (tests/cli/test_review.py covers a command line opening a new file).
    env.update(DATABASE_URL=migrated_sqlite(tmp_path / "santa.db"), PYTHONPATH=str(ROOT))
    return env


def review(env: dict, tmp_path: Path, output: str, *extra: str):
    (tmp_path / "spec.txt").write_text(SPEC, encoding="utf-8")
    (tmp_path / "output.txt").write_text(output, encoding="utf-8")
    return santa_in_process(
        ["review", "--spec", tmp_path / "spec.txt", "--output", tmp_path / "output.txt", *extra], env, ROOT
    )


def test_b_on_openai_c_on_claude_reviews_fixes_and_ships(
    cli_env: dict, tmp_path: Path, chat_stub: ChatStub, messages_stub: MessagesStub
) -> None:
    done = review(
        cli_env,
        tmp_path,
        "Acme's rocket launched in DEFECT.",
        *PANEL,
        "--fixer",
        "openai:gpt-5.5",
        "--auto-approve",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [r["gate"] for r in result["rounds"]] == ["NAUGHTY", "NICE"]
    assert result["final_output"] == "Acme's rocket launched in fact."
    assert result["panel"] == {"families": "GPT + Claude", "spans_two_families": True, "warning": None}
    assert {c["body"]["model"] for c in chat_stub.chat_calls()} == {"gpt-5.4-mini", "gpt-5.5"}
    assert "warning" not in done.stderr  # two families: nothing to warn about


def test_one_family_warns_on_stderr_and_the_run_records_it(cli_env: dict, tmp_path: Path) -> None:
    done = review(
        cli_env,
        tmp_path,
        "Acme's rocket launched in 2018.",
        "--reviewer-b",
        "claude-sonnet-5-5",
        "--reviewer-c",
        "claude-haiku-5-5",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert "santa: warning: Reviewers B and C are both Claude models" in done.stderr
    panel = json.loads(done.stdout)["panel"]
    assert panel["spans_two_families"] is False and "both Claude models" in panel["warning"]


def test_a_missing_openai_key_is_exit_2_naming_the_provider_and_variable(
    cli_env: dict, tmp_path: Path, chat_stub: ChatStub
) -> None:
    env = {k: v for k, v in cli_env.items() if k != "OPENAI_API_KEY"}
    done = review(env, tmp_path, "Clean copy.", *PANEL)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert "provider 'openai'" in line and "OPENAI_API_KEY" in line
    assert chat_stub.calls == []


def test_an_unknown_provider_is_exit_2(cli_env: dict, tmp_path: Path) -> None:
    done = review(
        cli_env, tmp_path, "Clean copy.", "--reviewer-b", "nowhere:model-x", "--reviewer-c", "claude-haiku-5-5"
    )
    assert done.returncode == 2 and "unknown provider 'nowhere'" in done.stderr


def test_a_named_local_endpoint_without_a_key(cli_env: dict, tmp_path: Path, chat_stub: ChatStub) -> None:
    env = {k: v for k, v in cli_env.items() if not k.startswith("OPENAI_")}
    env.update(SANTA_PROVIDER_LOCAL_BASE_URL=chat_stub.url, SANTA_PROVIDER_LOCAL_STRICT="0")
    done = review(
        env,
        tmp_path,
        "Acme's rocket launched in 2018.",
        "--reviewer-b",
        "local:qwen3:32b",
        "--reviewer-c",
        "claude-haiku-5-5",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    [body] = [c["body"] for c in chat_stub.chat_calls()]
    assert body["model"] == "qwen3:32b" and body["response_format"]["json_schema"]["strict"] is False
    assert "price unknown for 'local:qwen3:32b'" in done.stderr
    assert json.loads(done.stdout)["panel"]["families"] == "Qwen + Claude"


def test_a_batch_with_reviewer_b_on_openai_reviews_synchronously_on_the_chat_stub(
    env: dict, tmp_path: Path, messages_stub: MessagesStub, chat_stub: ChatStub
) -> None:
    """`batch` with B on an OpenAI-compatible server: every sampled item's B review goes to that server, C's to
    Claude, and the sample finishes (the planted pattern found, its fix waiting for a person). Message Batches,
    the default with two Claude reviewers, cannot take this panel: synchronous calls, said in one note."""
    from tests.cli.test_batch import SEED, planted_model
    from tests.core.batch.test_driver import DEFECT, planted_csv
    from tests.core.batch.test_driver import SPEC as BATCH_SPEC
    from tests.support.chat_api import chat_user_text
    from tests.support.messages_api import schema_properties

    messages_stub.handler = planted_model
    chat_stub.handler = for_chat(planted_model)
    data, planted = planted_csv()
    path = tmp_path / "emails.csv"
    path.write_bytes(data)
    cli = {
        **env,
        "ANTHROPIC_BASE_URL": messages_stub.url,
        "ANTHROPIC_API_KEY": "test",
        "OPENAI_BASE_URL": chat_stub.url,
        "OPENAI_API_KEY": "test-openai",
    }
    done = santa_in_process(
        [
            "batch",
            path,
            "--spec",
            BATCH_SPEC,
            "--strata",
            "template",
            "--seed",
            SEED,
            "--reviewer-b",
            "openai:gpt-5.4-mini",
            "--reviewer-c",
            "claude-haiku-5-5",
            "--json",
        ],
        cli,
        ROOT,
    )
    assert done.returncode == 3, done.stderr  # 3: a pattern's fix waits for a person
    result = json.loads(done.stdout)
    [note] = [line for line in done.stderr.splitlines() if "Message Batches" in line]
    assert note.startswith("santa: note: reviewing with synchronous calls") and "openai:gpt-5.4-mini" in note
    assert "error" not in note and result["message_batches"] is False
    [sample] = result["samples"]
    assert sample["size"] == 30 and "sample 1: 30 of 30 reviewed" in done.stderr  # the sample finished
    assert sample["failed"] and set(sample["failed"]) <= planted and sample["review_errors"] == 0
    [pattern] = result["patterns"]
    assert (pattern["criterion"], pattern["status"]) == ("compliance", "proposed")
    reviews_b = [c["body"] for c in chat_stub.chat_calls()]
    assert len(reviews_b) == 30 and {b["model"] for b in reviews_b} == {"gpt-5.4-mini"}  # B: every sampled item
    assert all("verdict" in str(b["response_format"]) for b in reviews_b)
    assert any(DEFECT in chat_user_text(b) for b in reviews_b)  # the planted items went there too
    reviews_c = [c["body"] for c in messages_stub.message_calls() if "verdict" in schema_properties(c["body"])]
    assert len(reviews_c) == 30 and {b["model"] for b in reviews_c} == {"claude-haiku-5-5"}
    assert messages_stub.batch_ids() == []  # synchronous calls, no Message Batch


def test_an_openai_only_desk_screens_with_an_openai_model(cli_env: dict, tmp_path: Path, chat_stub: ChatStub) -> None:
    env = {k: v for k, v in cli_env.items() if not k.startswith("ANTHROPIC_")}
    done = review(env, tmp_path, "Acme's rocket launched in 2018.", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["reviewer_b"].startswith("openai:") and result["reviewer_c"].startswith("openai:")
    assert "both GPT models" in done.stderr  # one family: said
    screens = [c["body"] for c in chat_stub.screen_calls()]
    assert screens and {b["model"] for b in screens} == {"gpt-5.4-nano"}  # the screen ran, on a model it can call
    assert "injection screen is on but cannot run" not in done.stderr


def test_a_screen_that_cannot_run_refuses_the_review_on_stderr(
    cli_env: dict, tmp_path: Path, chat_stub: ChatStub
) -> None:
    env = {
        **{k: v for k, v in cli_env.items() if not k.startswith("ANTHROPIC_")},
        "SANTA_SCREEN_MODEL": "claude-haiku-5-5",
    }
    done = review(
        env,
        tmp_path,
        "Acme's rocket launched in 2018.",
        "--reviewer-b",
        "openai:gpt-5.4-mini",
        "--reviewer-c",
        "openai:gpt-5.5",
    )
    assert done.returncode == 2 and "ANTHROPIC_API_KEY" in done.stderr
    assert done.stderr.startswith("santa: error: the injection screen is on but cannot run")
    assert chat_stub.calls == []  # the reviewers (on OpenAI) were not asked


def test_a_price_unknown_run_says_so_with_its_tokens(cli_env: dict, tmp_path: Path, chat_stub: ChatStub) -> None:
    env = {**cli_env, "SANTA_PROVIDER_LOCAL_BASE_URL": chat_stub.url}
    done = review(
        env,
        tmp_path,
        "Acme's rocket launched in 2018.",
        "--reviewer-b",
        "local:qwen3:32b",
        "--reviewer-c",
        "claude-haiku-5-5",
        "--json",
    )
    result = json.loads(done.stdout)
    b, c = result["rounds"][0]["reviews"]["B"], result["rounds"][0]["reviews"]["C"]
    assert b["price"] == "price unknown" and b["tokens"]["output"] > 0 and "price" not in c
    assert result["price_unknown"] == ["local:qwen3:32b"]
    text = review(
        env,
        tmp_path,
        "Acme's rocket launched in 2018.",
        "--reviewer-b",
        "local:qwen3:32b",
        "--reviewer-c",
        "claude-haiku-5-5",
    )
    assert "counted against the budget (price unknown for local:qwen3:32b" in text.stdout


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("gpt-5.4-mini", "names no provider"),
        ("OPENAI:gpt-5.4-mini", "did you mean openai:gpt-5.4-mini?"),
        ("openai:gpt\x1b[31mRED", "space or control character"),
    ],
)
def test_what_is_not_a_model_id_is_exit_2(cli_env: dict, tmp_path: Path, model: str, says: str) -> None:
    done = review(cli_env, tmp_path, "Clean copy.", "--reviewer-b", model, "--reviewer-c", "claude-haiku-5-5")
    assert done.returncode == 2 and says in done.stderr and "\x1b" not in done.stderr
