"""`python -m santa_core rubric suggestions NAME`: what a rubric's recent failures suggest, in words or JSON."""

from __future__ import annotations

import json
from pathlib import Path

from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant
from tests.storage.test_suggestions import claims, reviewed, save_ads
from tests.support.cli import santa_in_process


def test_lists_the_suggestion_and_refuses_an_unknown_rubric(env: dict[str, str], tmp_path: Path) -> None:
    repo = grant(RunStore(init_db(env["DATABASE_URL"], mark_interrupted=False)))
    save_ads(repo)
    done = santa_in_process(["rubric", "suggestions", "ads"], env, tmp_path)
    assert done.returncode == 0 and "no suggestions for ads" in done.stdout
    reviewed(repo, claims(5))
    done = santa_in_process(["rubric", "suggestions", "ads"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "No outcome guarantees: forbid “guaranteed” — seen in 5 runs" in done.stdout
    assert '{"type": "forbidden_terms", "terms": ["guaranteed"]}' in done.stdout
    (listed,) = json.loads(santa_in_process(["rubric", "suggestions", "ads", "--json"], env, tmp_path).stdout)
    assert (listed["criterion"], listed["phrase"], len(listed["runs"])) == ("no_guarantees", "guaranteed", 5)
    missing = santa_in_process(["rubric", "suggestions", "nope"], env, tmp_path)
    assert missing.returncode == 2 and "unknown rubric 'nope'" in missing.stderr
