"""`python -m santa_core spotcheck list|next|submit|draw`, in process against a temporary SQLite database: a round
trip (next shows no verdict, submit stores the verdicts and the escape, then shows the comparison) and bad input
(unknown, missing and unevidenced criteria, malformed --fail and files, a refused person), each writing nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from santa_core.spotchecks.model import RuleDraft
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant
from tests.storage.test_spot_checks import CRITERIA
from tests.support.cli import santa_in_process
from tests.support.people import EDITOR, VIEWER
from tests.support.people_runs import S, make_runner, new_run

Env = dict[str, str]


@pytest.fixture
def drawn(env: Env) -> tuple[RunStore, int]:
    """A shipped run (reviewers b and c PASS everything) drawn by a 100 % rule: (store, spot-check id)."""
    repo = grant(RunStore(init_db(env["DATABASE_URL"], mark_interrupted=False)))
    repo.spot_checks.save_rule(RuleDraft(rubric_name="general", share_percent=100), "seed", "ann")
    run_id = new_run(repo)
    assert make_runner(repo).execute(run_id).status == S.SHIPPED
    [check] = repo.spot_checks.spot_checks()
    return repo, check.id


def santa(env: Env, tmp_path: Path, *args: str):
    return santa_in_process(["spotcheck", *args], env, tmp_path)


def test_next_is_blind_and_submit_stores_verdicts_and_escapes_then_compares(
    env: Env, tmp_path: Path, drawn: tuple[RunStore, int]
) -> None:
    repo, check_id = drawn
    listed = santa(env, tmp_path, "list", "--json")
    assert [c["id"] for c in json.loads(listed.stdout)] == [check_id] and "seed" not in listed.stdout
    shown = santa(env, tmp_path, "next", "--as", EDITOR)
    assert shown.returncode == 0 and "Acme launched its rocket in 2018." in shown.stdout
    assert "PASS" not in shown.stdout.split("--- criteria")[1].replace("--pass ID", "")  # no reviewer verdict
    as_json = json.loads(santa(env, tmp_path, "next", "--json").stdout)
    assert set(as_json) == {"spot_check", "spec", "text", "criteria"}  # no run number: no way to look its reviews up
    assert f"run {repo.spot_checks.spot_checks()[0].run_id}" not in shown.stdout
    passes = ",".join(c for c in CRITERIA if c != "completeness")
    done = santa(
        env,
        tmp_path,
        "submit",
        str(check_id),
        "--pass",
        passes,
        "--fail",
        "completeness=no price given",
        "--as",
        EDITOR,
        "--json",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    compared = {c["criterion"]: c for c in result["criteria"]}
    assert compared["completeness"]["person"] == "FAIL"
    assert compared["completeness"]["reviewers"] == {"B (b)": "PASS", "C (c)": "PASS"}
    [escape] = repo.escapes()
    assert result["escapes"] == [escape.id] and (escape.evidence, escape.reported_by) == ("no price given", EDITOR)
    assert santa(env, tmp_path, "next").stdout.strip() == "no open spot-checks"
    again = santa(env, tmp_path, "submit", str(check_id), "--pass", ",".join(CRITERIA), "--as", EDITOR)
    assert again.returncode == 2 and "closed" in again.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--pass", "factual_accuracy"], "not judged yet: hallucination_free", id="missing"),
        pytest.param(["--pass", ",".join(CRITERIA), "--fail", "tone=flat"], "unknown criterion 'tone'", id="unknown"),
        pytest.param(
            ["--pass", ",".join(CRITERIA[1:]), "--fail", f"{CRITERIA[0]}= "], "FAILs without evidence", id="no-evidence"
        ),
        pytest.param(["--fail", "completeness"], "write --fail ID=EVIDENCE", id="no-equals"),
        pytest.param([], "give every criterion's verdict", id="nothing"),
        pytest.param(["--pass", ",".join(CRITERIA), "--as", VIEWER], "may not judge a spot-check", id="viewer"),
        pytest.param(["--file", "bad.json"], "not JSON", id="bad-file"),
        pytest.param(["--file", "list.json"], "must hold", id="list-file"),
        pytest.param(["--pass", ",".join(CRITERIA), "--as", "cli"], "'cli' is not a person", id="system-actor"),
        pytest.param(["--pass", ",".join(CRITERIA), "--as", ""], "required: --as", id="no-as"),
    ],
)
def test_bad_input_is_refused_with_a_clear_line_and_writes_nothing(
    env: Env, tmp_path: Path, drawn: tuple[RunStore, int], args: list[str], message: str
) -> None:
    repo, check_id = drawn
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "list.json").write_text("[]", encoding="utf-8")
    if "--as" not in args:
        args = [*args, "--as", EDITOR]
    elif args[-1] == "":  # the no-as case: --as left out altogether
        args = args[:-2]
    done = santa(env, tmp_path, "submit", str(check_id), *args)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert [c.status for c in repo.spot_checks.spot_checks()] == ["open"] and repo.escapes() == []


def test_a_judgement_file_and_the_draw_sweep(env: Env, tmp_path: Path, drawn: tuple[RunStore, int]) -> None:
    repo, check_id = drawn
    judged = {c: "pass" for c in CRITERIA} | {"compliance": {"verdict": "FAIL", "evidence": "no disclaimer"}}
    (tmp_path / "j.json").write_text(json.dumps(judged), encoding="utf-8")
    done = santa(env, tmp_path, "submit", str(check_id), "--file", "j.json", "--as", EDITOR)
    assert done.returncode == 0, done.stderr
    assert "1 escape(s) recorded" in done.stdout and "compliance" in done.stdout
    assert [e.criterion for e in repo.escapes()] == ["compliance"]
    assert json.loads(santa(env, tmp_path, "draw", "--json").stdout) == []  # idempotent: nothing new
