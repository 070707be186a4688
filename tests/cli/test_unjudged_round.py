"""The command line's summary of a round the model provider failed (issue 34): nobody judged it, so `review` and
`resume` print "could not be reviewed (the model provider failed)" for it, never its stored NAUGHTY; `--json` keeps the
gate's code and names the failed calls in `unreviewed`. Expected strings are written out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_review import ROOT, santa
from tests.cli.test_review import cli_env as cli_env  # the fixture
from tests.cli.test_try_again import CLEAN, broken, outage
from tests.support.cli import santa_in_process
from tests.support.messages_api import MessagesStub, repeat_key

FAILED = (
    "the injection screen (claude-haiku-5-5) could not be run: "
    "Server error (HTTP 500: api error) after 3 retries: Internal server error."
)


def test_review_and_resume_say_the_round_could_not_be_reviewed(
    cli_env: dict, tmp_path: Path, messages_stub: MessagesStub
) -> None:
    messages_stub.screen = broken
    done = santa(cli_env, tmp_path, CLEAN)
    assert done.returncode == 1, done.stderr
    assert "  round 1: could not be reviewed (the model provider failed)\n" in done.stdout
    assert "NAUGHTY" not in done.stdout
    assert (
        f"next: `python -m santa_core resume {done.stdout.split(':')[0].removeprefix('run ')}` tries again"
        in done.stdout
    )
    run_id = int(done.stdout.split(":")[0].removeprefix("run "))
    messages_stub.screen = repeat_key  # the provider answers again
    resumed = santa_in_process(["resume", str(run_id)], cli_env, ROOT)
    assert resumed.returncode == 0, resumed.stderr
    assert (
        "  round 1: could not be reviewed (the model provider failed)\n  round 2: NICE [B=PASS, C=PASS]\n"
    ) in resumed.stdout


def test_json_keeps_the_gate_and_names_the_failed_calls(
    cli_env: dict, tmp_path: Path, messages_stub: MessagesStub
) -> None:
    run_id = outage(cli_env, tmp_path, messages_stub)
    messages_stub.screen = repeat_key
    resumed = santa_in_process(["resume", str(run_id), "--json"], cli_env, ROOT)
    first, second = json.loads(resumed.stdout)["rounds"]
    assert (first["gate"], first["unreviewed"]) == ("NAUGHTY", FAILED)
    assert (second["gate"], second["unreviewed"]) == ("NICE", "")
