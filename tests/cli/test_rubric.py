"""`python -m santa_core rubric list|export|import` and `review --rubric NAME|FILE [--rubric-version N]`.

Run as a pipeline would: a subprocess against a temporary SQLite DATABASE_URL, with person
reviewers or the loopback Messages API stub (no network, no key from the environment).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import Engine

from santa_core.models import Criterion
from santa_core.rubrics import library as lib
from storage.rubrics import RubricStore
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant
from tests.storage.test_rubric_store import GOOD_YAML, NO_FAIL_SIGNAL_JSON, NO_FAIL_SIGNAL_YAML, line_of, row_counts
from tests.support.cli import santa_in_process
from tests.support.messages_api import MessagesStub, user_text

BUILTINS = ["code", "compliance", "content", "general"]
GENERAL_IDS = lib.load_builtin("general").criterion_ids()


@pytest.fixture
def engine(env: dict[str, str]) -> Engine:
    """The same database as the command line's, opened here to arrange and to check (its test
    people granted their roles before the command line runs)."""
    eng = init_db(env["DATABASE_URL"], mark_interrupted=False)
    grant(RunStore(eng))
    return eng


@pytest.fixture
def store(engine: Engine) -> RubricStore:
    return RubricStore(engine)


def santa(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run the command line; stdout and stderr are kept as bytes so exports compare exactly."""
    return santa_in_process(args, env, cwd, binary=True)


def err(done: subprocess.CompletedProcess[bytes]) -> str:
    return done.stderr.decode("utf-8")


def out(done: subprocess.CompletedProcess[bytes]) -> str:
    return done.stdout.decode("utf-8")


def crit(cid: str) -> Criterion:
    return Criterion(
        id=cid, name=cid.title(), category="completeness", pass_condition=f"{cid} — ✓", fail_signal=f"{cid} missing"
    )


def save_acme_v1_v2(store: RubricStore) -> None:
    """acme v1 judges `tone`; v2 adds `voice`."""
    store.import_text(GOOD_YAML, "yaml", "ann")
    doc = store.document("acme")
    store.save(doc.model_copy(update={"criteria": [*doc.criteria, crit("voice")]}), "ann", "add voice", 1)


def review(env: dict[str, str], tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    (tmp_path / "spec.txt").write_text("Describe the Acme rocket in plain words.", encoding="utf-8")
    (tmp_path / "output.txt").write_text("The Acme rocket goes up.", encoding="utf-8")
    return santa(env, tmp_path, "review", "--spec", "spec.txt", "--output", "output.txt", "--json", *extra)


PEOPLE = ("--reviewer-b", "person", "--reviewer-c", "person")


# --- rubric list / export -------------------------------------------------------------------


def test_list_shows_the_builtins(env: dict[str, str], tmp_path: Path, store: RubricStore) -> None:
    done = santa(env, tmp_path, "rubric", "list")
    assert done.returncode == 0, err(done)
    header, *rows = out(done).splitlines()
    assert header.split() == ["NAME", "DOMAIN", "VERSION", "CRITERIA", "SAVED", "BY", "SAVED", "AT"]
    assert [r.split()[:5] for r in rows] == [
        [name, name, "v1", str(len(store.resolved(name).criteria)), "santa"] for name in BUILTINS
    ]
    done = santa(env, tmp_path, "rubric", "list", "--json")
    assert done.returncode == 0, err(done)
    listed = json.loads(out(done))
    assert [(r["name"], r["version"], r["criteria"]) for r in listed] == [
        (s.name, s.version, s.criteria) for s in store.list_rubrics()
    ]


def test_export_prints_the_stored_bytes(env: dict[str, str], tmp_path: Path, store: RubricStore) -> None:
    doc = store.document("compliance")
    store.save(doc.model_copy(update={"criteria": [*doc.criteria, crit("fca_wording")]}), "ann", "UK wording", 1)
    done = santa(env, tmp_path, "rubric", "export", "compliance")
    assert done.returncode == 0, err(done)
    assert done.stdout == store.export("compliance").encode("utf-8") and b"fca_wording" in done.stdout
    done = santa(env, tmp_path, "rubric", "export", "compliance", "--format", "json")
    assert done.returncode == 0, err(done)
    assert done.stdout == store.export("compliance", fmt="json").encode("utf-8")
    assert json.loads(done.stdout)["version"] == 2
    target = tmp_path / "out" / "compliance-v1.yaml"
    target.parent.mkdir()
    done = santa(env, tmp_path, "rubric", "export", "compliance", "--version", "1", "--out", str(target))
    assert done.returncode == 0, err(done)
    assert out(done) == f"wrote compliance v1 to {target}\n"
    assert target.read_bytes() == store.export("compliance", 1).encode("utf-8")
    assert b"fca_wording" not in target.read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(("nope",), "unknown rubric 'nope' (known: code, compliance, content, general)", id="name"),
        pytest.param(("compliance", "--version", "7"), "unknown rubric 'compliance@7'", id="version"),
        pytest.param(
            ("compliance", "--out", "no/such/dir/c.yaml"),
            "cannot write no/such/dir/c.yaml: No such file or directory",
            id="unwritable-out",
        ),
    ],
)
def test_export_of_an_unknown_rubric_or_to_a_bad_path_exits_2(
    env: dict[str, str], tmp_path: Path, store: RubricStore, args: tuple[str, ...], message: str
) -> None:
    done = santa(env, tmp_path, "rubric", "export", *args)
    assert done.returncode == 2 and done.stdout == b""
    assert message in err(done) and len(err(done).strip().splitlines()) == 1


# --- rubric import --------------------------------------------------------------------------


def test_import_a_file_then_the_same_file_again(env: dict[str, str], tmp_path: Path, store: RubricStore) -> None:
    (tmp_path / "acme.yaml").write_text(GOOD_YAML, encoding="utf-8")
    done = santa(env, tmp_path, "rubric", "import", "acme.yaml", "--note", "from legal", "--author", "lee")
    assert (done.returncode, out(done)) == (0, "imported acme v1\n"), err(done)
    (info,) = store.versions("acme")
    assert (info.author, info.change_note, info.source) == ("lee", "from legal", "import")
    assert store.resolved("acme").criterion_ids() == [*GENERAL_IDS, "tone"]
    done = santa(env, tmp_path, "rubric", "import", "acme.yaml")
    assert done.returncode == 0, err(done)
    assert out(done).startswith("unchanged: acme v1") and len(store.versions("acme")) == 1


def test_import_by_an_author_who_may_not_change_rubrics_exits_2(
    env: dict[str, str], tmp_path: Path, store: RubricStore
) -> None:
    (tmp_path / "acme.yaml").write_text(GOOD_YAML, encoding="utf-8")
    done = santa(env, tmp_path, "rubric", "import", "acme.yaml", "--author", "viewer@example.com")
    assert done.returncode == 2, err(done)
    assert "viewer@example.com (viewer) may not change rubrics" in err(done) and "internal error" not in err(done)
    assert store.versions("acme") == []


@pytest.mark.parametrize(
    ("filename", "text", "needle"),
    [
        pytest.param("acme.yaml", NO_FAIL_SIGNAL_YAML, "- id: tone", id="yaml"),
        pytest.param("acme.json", NO_FAIL_SIGNAL_JSON, "    {", id="json"),
    ],
)
def test_a_bad_file_exits_2_naming_field_and_line_and_changes_nothing(
    env: dict[str, str], tmp_path: Path, engine: Engine, filename: str, text: str, needle: str
) -> None:
    (tmp_path / filename).write_text(text, encoding="utf-8")
    counts = row_counts(engine)
    done = santa(env, tmp_path, "rubric", "import", filename)
    assert done.returncode == 2 and done.stdout == b""
    assert f"rubric file {filename}: nothing imported" in err(done)
    assert f"criteria[0].fail_signal: field required (line {line_of(text, needle)})" in err(done)
    assert row_counts(engine) == counts


# --- review --rubric ------------------------------------------------------------------------


def test_review_judges_by_the_stored_version_asked_for(
    env: dict[str, str], tmp_path: Path, store: RubricStore, messages_stub: MessagesStub
) -> None:
    save_acme_v1_v2(store)
    stub_env = {**env, "ANTHROPIC_BASE_URL": messages_stub.url, "ANTHROPIC_API_KEY": "test"}
    done = review(stub_env, tmp_path, "--rubric", "acme", "--rubric-version", "1")
    assert done.returncode == 0, err(done)
    result = json.loads(done.stdout)
    assert (result["status"], result["rubric"]) == ("shipped", {"name": "acme", "version": 1})
    assert RunStore(store.engine).get_run_view(result["run_id"]).rubric == store.resolved("acme", 1)
    prompts = [user_text(c["body"]) for c in messages_stub.message_calls()]
    assert len(prompts) == 2 and all("tone" in p and "voice" not in p for p in prompts)


def test_review_without_a_version_takes_the_latest(env: dict[str, str], tmp_path: Path, store: RubricStore) -> None:
    save_acme_v1_v2(store)
    done = review(env, tmp_path, "--rubric", "acme", *PEOPLE)
    assert done.returncode == 3, err(done)  # waiting for the two people
    result = json.loads(done.stdout)
    assert result["rubric"] == {"name": "acme", "version": 2}
    assert RunStore(store.engine).get_run_view(result["run_id"]).rubric == store.resolved("acme", 2)


def test_review_with_a_rubric_file_still_works(env: dict[str, str], tmp_path: Path, store: RubricStore) -> None:
    path = tmp_path / "path" / "to" / "file.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(GOOD_YAML.replace("name: acme", "name: house"), encoding="utf-8")
    done = review(env, tmp_path, "--rubric", "path/to/file.yaml", *PEOPLE)
    assert done.returncode == 3, err(done)
    result = json.loads(done.stdout)
    # Not a stored version: judged by the file, and labelled so no run list mistakes it for one.
    assert result["rubric"] == {"name": "house (file)", "version": 1}
    assert "house v1 from the file is not a stored version" in err(done)
    rubric = RunStore(store.engine).get_run_view(result["run_id"]).rubric
    assert rubric.criterion_ids() == [*GENERAL_IDS, "tone"]
    assert "house" not in store.names()  # judging by a file does not store it
    save_acme_v1_v2(store)
    path.write_text(store.export("acme", 1), encoding="utf-8")
    done = review(env, tmp_path, "--rubric", "path/to/file.yaml", *PEOPLE)
    assert done.returncode == 3, err(done)
    assert json.loads(done.stdout)["rubric"] == {"name": "acme", "version": 1} and "warning" not in err(done)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(
            ("--rubric", "nope"),
            "unknown rubric 'nope'; stored rubrics: acme, code, compliance, content, general",
            id="name",
        ),
        pytest.param(("--rubric", "acme", "--rubric-version", "9"), "unknown rubric 'acme@9'", id="version"),
    ],
)
def test_review_with_an_unknown_rubric_exits_2(
    env: dict[str, str], tmp_path: Path, store: RubricStore, engine: Engine, extra: tuple[str, ...], message: str
) -> None:
    save_acme_v1_v2(store)
    counts = row_counts(engine)
    done = review(env, tmp_path, *extra, *PEOPLE)
    assert done.returncode == 2 and done.stdout == b""
    assert message in err(done) and len(err(done).strip().splitlines()) == 1
    assert row_counts(engine) == counts
