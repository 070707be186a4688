"""`python -m santa_core batch FILE`, run as a pipeline would: a subprocess on a temporary SQLite
database, the real SDK talking to the loopback Messages API stub (no network).

The batch is the 200-item file of tests/core/batch/test_driver.py: five templates, a promise planted
in every fifth promo item (8 of the 40 promo items, 4 % of the batch).
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path

import pytest

from storage.batches import BatchStore
from storage.runs import RunStore
from storage.startup import init_db
from tests.core.batch.test_driver import DEFECT, FIXED, SPEC, planted_csv
from tests.support.cli import santa_in_process
from tests.support.messages_api import (
    MessagesStub,
    default_answer,
    error_reply,
    fenced_output,
    fix_json,
    message,
    review_json,
    schema_properties,
)

ROOT = Path(__file__).resolve().parents[2]
SEED = 4
"""A seed whose first sample (30 of 200, stratified by template) draws planted promo items; the
tests check that it does, so a change to the draw shows up here rather than as a vacuous pass."""


def planted_model(body: dict) -> dict:
    """The stand-in model: reviewers FAIL compliance quoting the promise; the fix agent rewrites it."""
    model = body.get("model", "stub-model")
    if "edits" in schema_properties(body):
        return message(fix_json([(0, DEFECT, FIXED)]), model)
    passing = default_answer(body)  # a PASS with one check per criterion named in the prompt
    if DEFECT not in fenced_output(body):
        return passing
    ids = [c["criterion"] for c in json.loads(passing["content"][0]["text"])["checks"]]
    checks = [(i, "FAIL" if i == "compliance" else "PASS", "a promise") for i in ids]
    issue = ("compliance", 'promises free shipping "guaranteed forever"', DEFECT)
    return message(review_json("FAIL", checks, [issue]), model)


@pytest.fixture
def cli_env(env: dict[str, str], messages_stub: MessagesStub) -> dict[str, str]:
    """The command line's environment, pointed at the stub; Message Batches (the default with Claude reviewers)
    polled every 10 ms, each one ending on its second poll."""
    messages_stub.handler = planted_model
    messages_stub.batch_end_after_polls = 2
    return {**env, "ANTHROPIC_BASE_URL": messages_stub.url, "ANTHROPIC_API_KEY": "test", "SANTA_BATCH_POLL_S": "0.01"}


@pytest.fixture
def batch_file(tmp_path: Path) -> tuple[Path, set[str]]:
    data, planted = planted_csv()
    path = tmp_path / "emails.csv"
    path.write_bytes(data)
    return path, planted


def santa(env: dict[str, str], *args: str | Path) -> subprocess.CompletedProcess[str]:
    return santa_in_process(["batch", *args], env, ROOT)


def batch_json(env: dict[str, str], *args: str | Path, code: int = 0) -> dict:
    done = santa(env, *args, "--json")
    assert done.returncode == code, done.stderr
    return json.loads(done.stdout)  # stdout is the one JSON object: progress went to stderr


def rows(data: bytes) -> dict[str, dict[str, str]]:
    return {row["id"]: row for row in csv.DictReader(io.StringIO(data.decode("utf-8")))}


def stored_batches(env: dict[str, str]) -> list:
    return BatchStore(RunStore(init_db(env["DATABASE_URL"], mark_interrupted=False))).batches()


def test_auto_approve_fixes_the_pattern_everywhere_and_ends_on_a_clean_sample(
    cli_env: dict[str, str], batch_file: tuple[Path, set[str]], tmp_path: Path, messages_stub: MessagesStub
) -> None:
    """Also: Message Batches are the default with Claude reviewers, one request per sample (nobody watches a
    command-line batch: with both reviewers on Claude it takes the batch discount unasked). One run answers both:
    it is the same command."""
    path, planted = batch_file
    out = tmp_path / "out.csv"
    done = santa(
        cli_env, path, "--spec", SPEC, "--strata", "template", "--seed", SEED, "--auto-approve", "--out", out, "--json"
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert "sample 1: 30 of 30 reviewed" in done.stderr and "sample 2" in done.stderr  # progress on stderr

    first, second = result["samples"]
    assert result["status"] == "clean" and result["next"] is None
    assert first["size"] == 30 and first["failed"] and set(first["failed"]) <= planted  # the sample caught it
    assert first["naughty"] == len(first["failed"]) and not second["failed"] and second["clean"]
    assert not set(first["items"]) & set(second["items"])  # fresh items first
    [pattern] = result["patterns"]
    assert (pattern["kind"], pattern["criterion"], pattern["status"]) == ("issue", "compliance", "applied")
    assert pattern["strata"] == {"template": {"promo": len(first["failed"])}}
    assert pattern["fix"] == [{"before": DEFECT, "after": FIXED}] and pattern["decided_by"] == "auto-approve"
    assert pattern["items_changed"] == result["items_changed"] == len(planted) == 8  # the whole batch, not the sample
    rule = result["stopping_rule"]
    assert rule["clean"] and rule["stratified"] and rule["sample"] == 30 and rule["population"] == 200
    assert "with 95 % confidence" in rule["statement"] and 0 < rule["upper_items"] < 200
    cost = result["cost"]
    assert 0 < cost["actual_usd"] < cost["full_usd"] and cost["estimated_usd"] > 0
    assert result["out"] == str(out)

    before, after = rows(path.read_bytes()), rows(out.read_bytes())
    assert list(after) == list(before)  # every item, in file order
    for key, row in before.items():
        if key in planted:
            assert after[key]["output"] == row["output"].replace(DEFECT, FIXED)
            assert after[key]["santa_original_output"] == row["output"]
        else:
            assert after[key]["output"] == row["output"]  # byte-identical
            assert after[key]["santa_original_output"] == ""
        assert {c: after[key][c] for c in row} == {**row, "output": after[key]["output"]}  # other columns as read
    assert {after[k]["santa_status"] for k in first["failed"]} == {"fixed"}

    assert "reviewing each sample through the Message Batches API" in done.stderr  # said, with how to opt out
    assert "--no-message-batches" in done.stderr
    assert result["message_batches"]
    assert [s["api_batch_id"] for s in result["samples"]] == messages_stub.batch_ids()  # one per sample
    assert [len(messages_stub.batch(i).requests) for i in messages_stub.batch_ids()] == [60, 60]  # B and C each
    synced = [c["body"] for c in messages_stub.message_calls()]
    assert len(synced) == 1 and "edits" in schema_properties(synced[0])  # only the fix agent is called directly


def test_without_auto_approve_the_batch_waits_for_a_person(
    cli_env: dict[str, str], batch_file: tuple[Path, set[str]]
) -> None:
    path, planted = batch_file
    done = santa(cli_env, path, "--spec", SPEC, "--strata", "template", "--seed", SEED)
    assert done.returncode == 3, done.stderr
    text = done.stdout
    # Titled by the criterion's name and the phrase the reviewers flagged, not by their whole complaint.
    assert "pattern 1 [compliance] Compliance with stated constraints: “guaranteed forever”" in text
    assert "template promo" in text
    assert f"fix proposed: {DEFECT!r} -> {FIXED!r}" in text
    assert "waiting for a person: open batch 1 on the Batch page" in text
    assert "stopping rule" not in text and "not verified yet" in text  # no clean claim
    [batch] = stored_batches(cli_env)
    assert len(batch.samples) == 1 and batch.config.source == "cli" and not batch.config.auto_approve
    store = BatchStore(RunStore(init_db(cli_env["DATABASE_URL"], mark_interrupted=False)))
    [pattern] = store.patterns(batch.id)
    assert pattern.status == "proposed" and pattern.proposal["edits"][0]["after"] == FIXED
    assert store.changes(batch.id) == []  # nothing applied without a person


def test_a_sample_that_keeps_failing_stops_at_max_samples(
    cli_env: dict[str, str], batch_file: tuple[Path, set[str]], messages_stub: MessagesStub
) -> None:
    path, _ = batch_file
    messages_stub.handler = planted_model  # one sample allowed: its pattern is fixed, no sample is left to show it
    result = batch_json(
        cli_env,
        path,
        "--spec",
        SPEC,
        "--strata",
        "template",
        "--seed",
        SEED,
        "--auto-approve",
        "--max-samples",
        1,
        code=1,
    )
    assert result["status"] == "max_samples" and len(result["samples"]) == 1
    assert result["patterns"][0]["status"] == "applied" and "--max-samples" in result["next"]
    assert not result["stopping_rule"]["clean"]


def test_auto_approve_leaves_a_fix_that_keeps_the_defect_to_a_person(
    cli_env: dict[str, str], batch_file: tuple[Path, set[str]], messages_stub: MessagesStub
) -> None:
    """The fix agent's edit keeps the promise, so the unsampled items it reaches still show the pattern: the plan is
    not complete, auto-approve applies nothing and the pattern waits for a person (exit 3)."""
    path, _ = batch_file
    messages_stub.handler = lambda body: (
        message(fix_json([(0, DEFECT, f"{DEFECT}!")])) if "edits" in schema_properties(body) else planted_model(body)
    )
    result = batch_json(
        cli_env,
        path,
        "--spec",
        SPEC,
        "--strata",
        "template",
        "--seed",
        SEED,
        "--auto-approve",
        "--max-samples",
        1,
        code=3,
    )
    assert result["status"] == "waiting" and len(result["samples"]) == 1
    [pattern] = result["patterns"]
    assert pattern["status"] == "proposed" and pattern["waiting"].startswith("not auto-approved (item ")
    [batch] = stored_batches(cli_env)
    store = BatchStore(RunStore(init_db(cli_env["DATABASE_URL"], mark_interrupted=False)))
    assert not any(it.changed for it in store.items(batch.id))


def test_a_failed_review_is_left_to_a_person_even_with_auto_approve(
    cli_env: dict[str, str], batch_file: tuple[Path, set[str]], messages_stub: MessagesStub
) -> None:
    path, planted = batch_file
    # item-018 is in the first sample; its reviews are refused, so no review of it can be trusted.
    messages_stub.handler = lambda body: (
        error_reply(400, "invalid_request_error") if "customer 18," in fenced_output(body) else planted_model(body)
    )
    result = batch_json(cli_env, path, "--spec", SPEC, "--strata", "template", "--seed", SEED, "--auto-approve", code=3)
    assert result["status"] == "waiting" and len(result["samples"]) == 1  # no resample over an unknown item
    issue, failed = result["patterns"]
    assert issue["status"] == "applied" and issue["items_changed"] == len(planted)  # what can be fixed is fixed
    assert (failed["kind"], failed["items"], failed["status"]) == ("review_failed", ["item-018"], "open")
    assert failed["waiting"].startswith("no issue to fix")
    assert "item-018" in result["samples"][0]["failed"] and result["samples"][0]["review_errors"] == 1
    assert not result["stopping_rule"]["clean"] and "Batch page" in result["next"]


def test_the_same_seed_draws_the_same_sample(
    cli_env: dict[str, str], messages_stub: MessagesStub, tmp_path: Path
) -> None:
    """The same seed draws the same sample in a fresh database, and again in one database that already holds a
    batch of that seed (the last run: the first run's database once more). The file is 60 items (a draw of one
    item in each of the ten template × locale strata, 6 items each): a draw is as reproducible as at 200, in a
    third of the reviews."""
    path = tmp_path / "emails60.csv"
    path.write_bytes(planted_csv(60)[0])
    messages_stub.handler = None  # every review passes: one clean sample each
    drawn = []
    for n, seed in enumerate((5, 5, 6, 5)):  # a fresh database each time, then the first one again
        env = {**cli_env, "DATABASE_URL": f"sqlite:///{tmp_path / f'santa{n % 3}.db'}"}
        result = batch_json(env, path, "--spec", SPEC, "--strata", "template,locale", "--seed", seed)
        assert result["status"] == "clean" and result["seed"] == seed
        drawn.append(result["samples"][0]["items"])
    assert drawn[0] == drawn[1] and len(drawn[0]) == 10
    assert len({(int(k[5:]) % 5, int(k[5:]) % 2) for k in drawn[0]}) == 10  # one of each template × locale
    assert drawn[2] != drawn[0]
    assert drawn[3] == drawn[0]  # in one database


def test_no_message_batches_reviews_with_synchronous_calls(
    cli_env: dict[str, str], batch_file: tuple[Path, set[str]], messages_stub: MessagesStub
) -> None:
    path, _ = batch_file
    done = santa(
        cli_env, path, "--spec", SPEC, "--strata", "template", "--seed", SEED, "--no-message-batches", "--json"
    )
    assert done.returncode == 3, done.stderr  # the pattern's fix waits for a person
    result = json.loads(done.stdout)
    assert not result["message_batches"] and result["samples"][0]["api_batch_id"] is None
    assert messages_stub.batch_calls() == [] and "Message Batches" not in done.stderr
    reviews = [c for c in messages_stub.message_calls() if "verdict" in schema_properties(c["body"])]
    assert len(reviews) == 60  # 30 items, B and C each, one call at a time


def test_a_message_batch_the_api_refuses_exits_4_saying_why(
    cli_env: dict[str, str], batch_file: tuple[Path, set[str]], messages_stub: MessagesStub
) -> None:
    path, _ = batch_file
    messages_stub.script_batches(error_reply(401, "authentication_error", "invalid x-api-key"))
    done = santa(cli_env, path, "--spec", SPEC, "--strata", "template", "--message-batches")
    assert done.returncode == 4 and messages_stub.batch_ids() == []
    assert "the Message Batch stopped: could not create a message batch of 60 request(s)" in done.stderr
    assert "invalid x-api-key" in done.stderr and "a worker failed" not in done.stderr


BAD_FILES = [
    pytest.param(
        b"id,output\na,hello\na,again\n", "emails.csv", ["line 3: the id 'a' is also on line 2"], id="duplicate-ids"
    ),
    pytest.param(b"id,body\n1,hello\n", "emails.csv", ["no output column", "'body'"], id="missing-output-column"),
    pytest.param("id,output\n1,caf\u00e9\n".encode("latin-1"), "emails.csv", ["UTF-8"], id="wrong-encoding"),
    pytest.param(
        b'{"id": 1, "output": "a"}\n{"id": 2, "output": ""}\n', "emails.jsonl", ["line 2", "empty"], id="empty-output"
    ),
]


@pytest.mark.parametrize(("data", "name", "expected"), BAD_FILES)
def test_a_bad_file_exits_2_naming_every_problem_and_stores_nothing(
    cli_env: dict[str, str], tmp_path: Path, data: bytes, name: str, expected: list[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    done = santa(cli_env, path, "--spec", SPEC)
    assert done.returncode == 2 and done.stdout == ""
    assert f"santa: batch file {path}: nothing stored:" in done.stderr
    for part in expected:
        assert part in done.stderr
    assert stored_batches(cli_env) == []


def test_every_problem_of_a_bad_file_is_listed(cli_env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "emails.csv"
    path.write_bytes(b"id,output\n1,hello\n1,again\n,no id\n3,\n")
    done = santa(cli_env, path, "--spec", SPEC)
    assert done.returncode == 2
    problems = done.stderr.splitlines()[1:]
    assert len(problems) == 3 and all(p.startswith("  line ") for p in problems)  # duplicate, empty id, empty output


BAD_OPTIONS = [
    pytest.param(
        ["--sample-rate", "15"],
        "--sample-rate must be a share above 0 and at most 1, e.g. 0.15 for 15 % (15 % is 0.15)",
        id="rate-as-percent",
    ),
    pytest.param(["--sample-rate", "0"], "--sample-rate must be a share above 0", id="rate-zero"),
    pytest.param(["--min-sample", "0"], "--min-sample must be at least 1, not 0", id="min-sample"),
    pytest.param(["--max-samples", "0"], "--max-samples must be at least 1, not 0", id="max-samples"),
    pytest.param(["--concurrency", "100"], "--concurrency must be between 1 and 64, not 100", id="concurrency"),
    pytest.param(["--out", "out.xlsx"], "end it in .csv or .jsonl", id="out-extension"),
    pytest.param(["--out", "no/such/folder/out.csv"], "the folder no/such/folder does not exist", id="out-folder"),
    pytest.param(["--strata", "templat"], "no column 'templat' to stratify by", id="unknown-stratum"),
    pytest.param(["--reviewer-c", "person"], "a batch sample is reviewed by two models", id="person-reviewer"),
    pytest.param(["--rubric", "nosuch"], "unknown rubric 'nosuch'", id="unknown-rubric"),
    pytest.param(["--spec-file", "missing.txt"], "spec file not found: missing.txt", id="missing-spec-file"),
    pytest.param(["--seed", "x"], "usage: argument --seed: 'x' is not a whole number", id="seed-not-a-number"),
    pytest.param(
        ["--seed", "2147483647"],
        "usage: argument --seed: 2147483647 is outside 0 to 2,147,483,646",
        id="seed-too-large",
    ),
    pytest.param(
        [],
        "no spec for item item-000, item-001, item-002 and 197 more (the file has no spec column): "
        "give one spec for all with --spec TEXT",
        id="no-spec",
    ),
]


@pytest.mark.parametrize(("extra", "message_part"), BAD_OPTIONS)
def test_bad_options_exit_2_with_a_specific_message(
    cli_env: dict[str, str], batch_file: tuple[Path, set[str]], extra: list[str], message_part: str
) -> None:
    path, _ = batch_file
    spec = [] if extra in ([], ["--spec-file", "missing.txt"]) else ["--spec", SPEC]
    done = santa(cli_env, path, *spec, *extra)
    assert done.returncode == 2, done.stderr
    assert message_part in done.stderr
    assert stored_batches(cli_env) == []


def test_no_api_key_is_bad_usage(env: dict[str, str], batch_file: tuple[Path, set[str]]) -> None:
    path, _ = batch_file
    done = santa(env, path, "--spec", SPEC)
    assert done.returncode == 2 and "no API key for provider 'anthropic'" in done.stderr
    assert "set ANTHROPIC_API_KEY" in done.stderr


def test_message_batches_with_a_reviewer_on_another_provider_is_bad_usage(
    cli_env: dict[str, str], batch_file: tuple[Path, set[str]]
) -> None:
    path, _ = batch_file
    env = {**cli_env, "OPENAI_API_KEY": "test-openai", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    done = santa(env, path, "--spec", SPEC, "--message-batches", "--reviewer-c", "openai:gpt-5.4-mini")
    assert done.returncode == 2 and "Message Batches API is Anthropic's" in done.stderr


def test_auto_approve_leaves_a_varied_defect_with_an_unreachable_item_to_a_person(
    cli_env: dict[str, str], messages_stub: MessagesStub, tmp_path: Path
) -> None:
    """The 200-item varied-defect file of the Batch page's test: every item's own fix is prepared (the six the text
    rule cannot take as one Message Batch), but one item (item-125) cannot take its fix, so the plan is not
    complete: auto-approve applies nothing, the pattern waits for a person (exit 3) and the export is unchanged."""
    from tests.support import varied_batch as vb

    messages_stub.handler = vb.varied_answer
    data, defective = vb.varied_csv()
    path, out = tmp_path / "varied.csv", tmp_path / "out.csv"
    path.write_bytes(data)
    done = santa(
        cli_env, path, "--spec", vb.SPEC, "--strata", "template", "--seed", vb.SEED, "--auto-approve", "--out", out
    )
    assert done.returncode == 3, done.stderr
    assert (
        "not auto-approved (item item-125: needs a person: edit for issue 1 reaches beyond the sentence" in done.stdout
    )
    uploaded, exported = rows(data), rows(out.read_bytes())
    assert all(exported[k]["output"].encode() == row["output"].encode() for k, row in uploaded.items())
    [batch] = stored_batches(cli_env)
    assert len(batch.samples) == 1 and batch.samples[0].naughty == 4

    # The six items' own fixes went as one Message Batch (the batch discount), only the representative's sync.
    created = [c["body"] for c in messages_stub.batch_calls() if c["method"] == "POST" and "requests" in c["body"]]
    fixes = [r for body in created for r in body["requests"] if r["custom_id"].startswith("fix-")]
    assert len(fixes) == 6 and all("edits" in schema_properties(r["params"]) for r in fixes)
    assert len([c for c in messages_stub.message_calls() if "edits" in schema_properties(c["body"])]) == 1
    bad = santa(cli_env, path, "--auto-approve", "--hand-fixes", tmp_path / "missing.csv")
    assert bad.returncode == 2 and "--hand-fixes" in bad.stderr
