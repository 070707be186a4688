"""`python -m santa_core metrics`, run as a scheduled report would: a subprocess on a temporary
SQLite database holding a small history made by the real runner."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from santa_core.reports.metrics import MetricsFilter
from santa_core.run import actions
from storage.runs import RunStore
from storage.startup import init_db
from tests.cli.test_rubric import err, out, santa
from tests.conftest import grant
from tests.core.run.test_runner import BAD, GOOD, FunctionReviewer, make_runner, new_run, strict


@pytest.fixture
def repo(env: dict[str, str]) -> RunStore:
    """The command line's database: one run NICE in round 1, one NICE after an approved fix."""
    repo = grant(RunStore(init_db(env["DATABASE_URL"], mark_interrupted=False)))
    runner, _ = make_runner(repo, {"b": FunctionReviewer("b", strict), "c": FunctionReviewer("c", strict)})
    runner.execute(new_run(repo, GOOD))
    fixed = new_run(repo, BAD, generation_cost_usd=0.02)
    runner.execute(fixed)
    actions.approve_fix(repo, fixed, "ann", GOOD, "year fixed")
    runner.execute(fixed)
    return repo


def metrics(env: dict[str, str], tmp_path: Path, *args: str) -> dict:
    done = santa(env, tmp_path, "metrics", "--json", *args)
    assert done.returncode == 0, err(done)
    return json.loads(out(done))


def test_json_is_the_report_the_page_shows(env: dict[str, str], tmp_path: Path, repo: RunStore) -> None:
    data = metrics(env, tmp_path)
    confidence = {key: data.pop(key) for key in ("spot_check_escape_rate", "calibration")}
    assert data == json.loads(repo.metrics.report(MetricsFilter()).model_dump_json())
    assert confidence["spot_check_escape_rate"]["overall"] == {
        "k": 0,
        "n": 0,
        "low": None,
        "high": None,
        "value": None,
    }  # no spot-check: no figure
    assert confidence["calibration"]["rows"] == []  # no person judged anything yet
    head = data["headline"]
    # 2 finished runs, 1 NICE in round 1; NICE in rounds 1 and 2 → mean 1.5; 1 of 2 runs has a generation cost
    assert (head["runs"], head["first_pass_rate"], head["mean_iterations"]) == (2, 0.5, 1.5)
    assert (head["generation_runs"], head["flagged_both"], head["kappa"]) == (1, 1, 1.0)
    assert [c["criterion"] for c in data["criteria"]][0] == "factual_accuracy"


def test_filters_narrow_the_view(env: dict[str, str], tmp_path: Path, repo: RunStore) -> None:
    today = datetime.now(UTC).date()
    tomorrow = (today + timedelta(days=1)).isoformat()
    assert metrics(env, tmp_path, "--since", tomorrow)["headline"]["runs"] == 0
    assert metrics(env, tmp_path, "--until", today.isoformat(), "--rubric", "general")["headline"]["runs"] == 2
    assert metrics(env, tmp_path, "--person", "ann")["headline"]["runs"] == 1  # ann approved the fix
    assert metrics(env, tmp_path, "--grain", "month")["series"][0]["bucket"] == today.replace(day=1).isoformat()
    same = metrics(env, tmp_path, "--version", "general@1", "--domain", "general", "--reviewer", "c")
    assert same["headline"] == metrics(env, tmp_path)["headline"]


def test_unknown_values_warn_and_show_an_empty_view(env: dict[str, str], tmp_path: Path, repo: RunStore) -> None:
    done = santa(env, tmp_path, "metrics", "--rubric", "nosuch", "--person", "zed")
    assert done.returncode == 0
    assert err(done).splitlines() == [
        "santa: warning: no run in the history has rubric 'nosuch'",
        "santa: warning: no run in the history has person 'zed'",
    ]
    assert out(done).strip() == "no runs match this view yet: start a review, or widen the filters"


def test_text_report(env: dict[str, str], tmp_path: Path, repo: RunStore) -> None:
    done = santa(env, tmp_path, "metrics")
    text = out(done)
    assert done.returncode == 0 and text.startswith("FIGURE")
    assert "First-pass rate              50.0 %" in text
    assert "Mean iterations to converge  1.50" in text
    assert "warning: First-pass rate 50.0 % is not above the 70 % target." in text
    assert "factual_accuracy" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ("--since", "2026-13-01"), "argument --since: '2026-13-01' is not a date written YYYY-MM-DD", id="bad-date"
        ),
        pytest.param(
            ("--since", "2026-12-02", "--until", "2026-12-01"),
            "--since 2026-12-02 is after --until 2026-12-01",
            id="since-after-until",
        ),
        pytest.param(("--grain", "year"), "argument --grain: invalid choice", id="bad-grain"),
        pytest.param(
            ("--version", "general"),
            "argument --version: 'general' is not a rubric version written NAME@N",
            id="version-without-number",
        ),
        pytest.param(
            ("--version", "general@²"),
            "argument --version: 'general@²' is not a rubric version written NAME@N",
            id="version-with-a-superscript",
        ),
    ],
)
def test_bad_usage_exits_2(env: dict[str, str], tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    done = santa(env, tmp_path, "metrics", *args)
    assert done.returncode == 2 and done.stdout == b""
    assert message in err(done) and len(err(done).strip().splitlines()) == 1


def test_empty_history(env: dict[str, str], tmp_path: Path) -> None:
    assert metrics(env, tmp_path)["headline"]["runs"] == 0
    done = santa(env, tmp_path, "metrics")
    assert out(done).strip() == "no runs match this view yet: start a review, or widen the filters"


def test_review_records_the_generation_cost(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "spec.txt").write_text("Say hello.", encoding="utf-8")
    (tmp_path / "out.txt").write_text("Hello.", encoding="utf-8")
    base = ("review", "--spec", "spec.txt", "--output", "out.txt", "--reviewer-b", "person", "--reviewer-c", "person")
    bad = santa(env, tmp_path, *base, "--generation-cost", "-1")
    assert bad.returncode == 2 and "--generation-cost must be a number of USD, 0 or more" in err(bad)
    done = santa(env, tmp_path, *base, "--generation-cost", "0.25")
    assert done.returncode == 3, err(done)  # waiting for the two person reviewers
    engine = create_engine(env["DATABASE_URL"])
    with engine.connect() as conn:
        assert conn.execute(text("SELECT generation_cost_usd FROM run")).scalar_one() == 0.25
    engine.dispose()
    head = metrics(env, tmp_path)["headline"]
    # the run waits for its person reviewers, so it is blind: its generation cost counts once the gate is in
    assert (head["runs"], head["generation_runs"], head["finished"]) == (1, 0, 0)


def test_json_calibrates_the_reviewers_against_a_rejected_escalation(
    env: dict[str, str], tmp_path: Path, repo: RunStore
) -> None:
    runner, _ = make_runner(repo, {"b": FunctionReviewer("b", strict), "c": FunctionReviewer("c", strict)})
    run_id = new_run(repo, BAD)
    runner.execute(run_id)
    actions.reject_fix(repo, run_id, "ann", "no")
    actions.resolve_escalation(repo, run_id, "reject", "ann", "the launch year is wrong")
    calibration = metrics(env, tmp_path)["calibration"]
    assert calibration["labels"] == {"escalation": 1}
    caught = {(r["model"], r["criterion"]): (r["recall"]["k"], r["recall"]["n"]) for r in calibration["rows"]}
    assert caught == {("b", "factual_accuracy"): (1, 1), ("c", "factual_accuracy"): (1, 1)}
