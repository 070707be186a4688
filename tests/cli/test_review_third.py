"""`review` on a rubric with a high-risk criterion: a third reviewer (D) is asked, by default the cheapest other
model, or the one `--reviewer-d` names; a person for D is refused before anything is stored."""

from __future__ import annotations

import json
from pathlib import Path

from storage.runs import RunStore
from storage.startup import init_db
from tests.cli import test_review
from tests.cli.test_review import santa
from tests.support.messages_api import MessagesStub, asked_criteria, schema_properties

RUBRIC = """\
name: launch
domain: content
criteria:
- id: factual_accuracy
  name: Facts
  category: factual accuracy
  pass_condition: Every year and number matches the spec.
  fail_signal: A year or number the spec does not give.
  third_reviewer: true
- id: tone
  name: Tone
  category: compliance
  pass_condition: No exclamation marks.
  fail_signal: An exclamation mark.
"""
cli_env = test_review.cli_env  # the fixture (an imported name would trip ruff's F811)
CLEAN = "Acme's rocket launched in 2018. Order today."


def rubric_file(tmp_path: Path) -> Path:
    path = tmp_path / "launch.yaml"
    path.write_text(RUBRIC, encoding="utf-8")
    return path


def reviews_asked(stub: MessagesStub) -> list[dict]:
    return [c["body"] for c in stub.message_calls() if "verdict" in schema_properties(c["body"])]


def test_a_high_risk_rubric_asks_a_third_reviewer_by_default(
    cli_env: dict, tmp_path: Path, messages_stub: MessagesStub
) -> None:
    done = santa(cli_env, tmp_path, CLEAN, "--rubric", rubric_file(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    # Claude only: B and C the cheapest two (haiku-5-5, haiku-4-5); D the cheapest other (Sonnet 5, by name)
    assert (result["reviewer_b"], result["reviewer_c"], result["reviewer_d"]) == (
        "claude-haiku-5-5",
        "claude-haiku-4-5",
        "claude-sonnet-5",
    )
    assert {s: r["verdict"] for s, r in result["rounds"][0]["reviews"].items()} == {
        "B": "PASS",
        "C": "PASS",
        "D": "PASS",
    }
    assert [asked_criteria(b) for b in reviews_asked(messages_stub) if b["model"] == "claude-sonnet-5"] == [
        ["factual_accuracy"]
    ]
    assert "D=PASS" in santa(cli_env, tmp_path, CLEAN, "--rubric", rubric_file(tmp_path)).stdout  # the summary


def test_reviewer_d_names_the_model_and_a_person_is_refused(
    cli_env: dict, tmp_path: Path, messages_stub: MessagesStub
) -> None:
    refused = santa(cli_env, tmp_path, CLEAN, "--rubric", rubric_file(tmp_path), "--reviewer-d", "person")
    assert refused.returncode == 2 and "--reviewer-d must be a model" in refused.stderr
    assert RunStore(init_db(cli_env["DATABASE_URL"], mark_interrupted=False)).list_runs() == []
    assert reviews_asked(messages_stub) == []
    done = santa(
        cli_env, tmp_path, CLEAN, "--rubric", rubric_file(tmp_path), "--reviewer-d", "claude-opus-5-5", "--json"
    )
    assert done.returncode == 0, done.stderr
    assert sorted(b["model"] for b in reviews_asked(messages_stub)) == [
        "claude-haiku-4-5",
        "claude-haiku-5-5",
        "claude-opus-5-5",
    ]
