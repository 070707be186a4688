"""`python -m santa_core ...` and the `santa` console script are one program, byte for byte.

Each command runs twice as a process of its own (a new interpreter for `review`, a fork of one with the
product imported for the others: FORKED), once per entry point, on two byte-identical copies of
one prepared SQLite database (so a command that creates a run or a batch gets the same ids), with
the same environment and the same relative paths; stdout, stderr and the exit code must match.
The model is the loopback Messages API stub, so nothing reaches the network.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import pytest

from tests.cli.test_batch import planted_model
from tests.cli.test_metrics import repo  # noqa: F401 - a fixture: people, a run NICE in round 1, one NICE after a fix
from tests.core.batch.test_driver import SPEC as BATCH_SPEC
from tests.core.batch.test_driver import planted_csv
from tests.support import forked
from tests.support.messages_api import MessagesStub, santa_scenario

SANTA = Path(sys.executable).with_name("santa")
"""The console script `pip install -r requirements.txt` puts next to the interpreter."""
ENTRY_POINTS = {"python -m santa_core": [sys.executable, "-m", "santa_core"], "santa": [str(SANTA)]}
FORKED = {"python -m santa_core": forked.santa, "santa": forked.santa_script}
"""The same two entry points run in a process forked from one that has the product imported (tests/support/forked.py):
`python -m santa_core` runs santa_core/__main__.py's `main` (the console-script lookup), `santa` runs the script
file pip wrote. What a fork leaves out, starting the interpreter and importing, is the same for every command and
is covered by FRESH's commands, which start both entry points as new interpreters."""
FRESH = {"review"}
"""The command started as a new interpreter through both entry points: the one that imports the most (the SDK,
the storage, the method)."""

COMMANDS = {
    "review": (["review", "--spec", "spec.txt", "--output", "output.txt", "--json"], 3),
    "rubric": (["rubric", "list", "--json"], 0),
    "record": (["record", "2"], 0),
    "audit": (["audit", "list", "--json"], 0),
    "people": (["people", "list", "--json"], 0),
    "metrics": (["metrics", "--json"], 0),
    "batch": (
        [
            "batch",
            "emails.csv",
            "--spec",
            BATCH_SPEC,
            "--strata",
            "template",
            "--seed",
            "1",
            "--auto-approve",
            "--no-message-batches",
            "--out",
            "out.csv",
            "--json",
        ],
        0,
    ),
}
"""One call of each command, with --json where it has one so the comparison covers every field, and
the exit code it ends with: `review` waits for a person to approve its fix (3), `batch` fixes its
pattern and ends on a clean sample (0), with synchronous calls (a Message Batch, its default with Claude
reviewers, would print a batch id and polling lines that differ from call to call)."""

CREATED_AT = re.compile(rb'"created_at": "[^"]*"')
"""When `review` made its run and its decisions: the clock, so genuinely time-dependent."""
GENERATED_AT = re.compile(rb'"generated_at": "[^"]*"')
"""When a verification record was rendered: the clock at export, so genuinely time-dependent."""
LONG_FLOAT = re.compile(rb"\d+\.\d{13,}")
"""Costs the database sums over model calls that ran concurrently (reviewers B and C, several reviews
at a time): it adds them in the order they were stored, so a sum's last binary digit depends on
which call finished first (0.005880000000000001 or 0.0058800000000000015). Compared to 12 digits."""
SCREEN_KEY = re.compile(rb'"(secret|answer)": "FAIL-[A-Z0-9]{10}"')
"""The key the injection screen asked to repeat (and the answer that repeated it): fresh random for every
call, so no text can know it in advance."""
RECORD_HASH = re.compile(rb'"record_hash": "[0-9a-f]{64}"')
"""A record's hash covers the screen keys above."""
PROGRESS = re.compile(rb"^sample \d+: [\d,]+ of [\d,]+ reviewed.*\n", re.M)
"""`batch` progress lines: how many are printed, and their ETA, depend on how fast the reviews come back."""


def time_independent(command: str, done: subprocess.CompletedProcess[bytes]) -> tuple[int, bytes, bytes]:
    """Exit code, stdout and stderr, with only the time-dependent parts named above taken out."""
    stdout, stderr = done.stdout, done.stderr
    if command in ("review", "batch"):
        stdout = LONG_FLOAT.sub(lambda m: b"%.12g" % float(m.group()), stdout)
    if command in ("review", "record"):
        stdout = SCREEN_KEY.sub(rb'"\1": "<key>"', stdout)
    if command == "review":
        stdout = CREATED_AT.sub(b'"created_at": "<time>"', stdout)
    if command == "record":
        stdout = RECORD_HASH.sub(b'"record_hash": "<hash>"', GENERATED_AT.sub(b'"generated_at": "<time>"', stdout))
    if command == "batch":
        stderr = PROGRESS.sub(b"", stderr)
    return done.returncode, stdout, stderr


@pytest.fixture
def batch_stub() -> MessagesStub:
    """A second stand-in model for `batch`: reviewers fail the planted promise, the fix agent rewrites it."""
    stub = MessagesStub().start()
    stub.handler = planted_model
    yield stub
    stub.stop()


@pytest.fixture
def prepared(env: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """The arranged database as one self-contained file (the WAL folded in), next to the inputs."""
    request.getfixturevalue("repo")  # test_cli_metrics' history, arranged in env's database
    live = Path(env["DATABASE_URL"].removeprefix("sqlite:///"))
    prepared = tmp_path / "prepared"
    prepared.mkdir()
    with closing(sqlite3.connect(live)) as source, closing(sqlite3.connect(prepared / "santa.db")) as target:
        source.backup(target)
    (prepared / "spec.txt").write_text("Announce the Acme rocket in two sentences.", encoding="utf-8")
    (prepared / "output.txt").write_text("Acme's rocket launched in DEFECT.", encoding="utf-8")
    (prepared / "emails.csv").write_bytes(planted_csv(50, every=1)[0])  # every promo item: found, fixed, clean
    return prepared


def run_in(
    workdir: Path, command: str, entry: str, args: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    """One call of the command line, in its own copy of the prepared folder; output kept as bytes."""
    if command in FRESH:
        return subprocess.run([*ENTRY_POINTS[entry], *args], cwd=workdir, env=env, capture_output=True, timeout=120)
    return forked.run(FORKED[entry](args, env=env, cwd=workdir, **forked.capture(text=False)), timeout=120)


def test_both_entry_points_answer_every_command_alike(
    env: dict[str, str], messages_stub: MessagesStub, batch_stub: MessagesStub, prepared: Path, tmp_path: Path
) -> None:
    assert SANTA.is_file(), f"no {SANTA}: `pip install -r requirements.txt` installs the santa command"
    messages_stub.handler = santa_scenario
    same_env = {**env, "DATABASE_URL": "sqlite:///santa.db", "ANTHROPIC_API_KEY": "test"}  # relative to each copy
    calls = {}
    for command, (args, _) in COMMANDS.items():
        stub = batch_stub if command == "batch" else messages_stub
        for name in ENTRY_POINTS:
            workdir = tmp_path / command / name.replace(" ", "_")
            shutil.copytree(prepared, workdir)  # the same bytes under the same relative paths
            calls[command, name] = (workdir, command, name, args, {**same_env, "ANTHROPIC_BASE_URL": stub.url})
    with ThreadPoolExecutor(len(calls)) as pool:  # 14 processes at once, two of them new interpreters
        running = {key: pool.submit(run_in, *call) for key, call in calls.items()}
    done = {key: future.result() for key, future in running.items()}
    for command, (_, code) in COMMANDS.items():
        module, script = done[command, "python -m santa_core"], done[command, "santa"]
        assert module.returncode == code, f"{command}: {module.stderr.decode()}"  # two equal failures prove nothing
        assert time_independent(command, script) == time_independent(command, module), command
    exports = [(calls["batch", name][0] / "out.csv").read_bytes() for name in ENTRY_POINTS]
    assert exports[0] == exports[1]  # the verified batch `batch --out` wrote
