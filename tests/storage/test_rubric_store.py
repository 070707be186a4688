"""Stored rubric versions: seeding, saving, conflicts, pinning, retiring, export/import, trials.

Every test that takes `store` (or `db_url`) runs on SQLite and, when SANTA_TEST_POSTGRES_URL
is set (see scripts/pg_test_server.sh), on PostgreSQL too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, func
from sqlmodel import Session, SQLModel, select

from santa_core.models import CheckOutcome, Criterion, RubricDocument
from santa_core.rubrics import library as lib
from santa_core.rubrics.store import RubricConflict, RubricSaveError
from santa_core.text import sha256_text
from storage.db import get_engine, make_engine, migrate
from storage.hashing import content_hash
from storage.rubrics import RubricStore
from storage.runs import RunStore
from storage.startup import init_db
from storage.tables import RubricVersionRow, TrialRow
from tests.conftest import grant, granted_by_copy, migrated_sqlite
from tests.support.records import make_outcome

GENERAL_IDS = lib.load_builtin("general").criterion_ids()
AUTHORS = {"gus": ("rubric_author",), **{f"u{n}": ("rubric_author",) for n in range(6)}}
"""Rubric authors these tests save as, besides conftest's TEST_PEOPLE."""


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """A migrated engine with the built-ins seeded, as `init_db` leaves it (on SQLite a copy of the template with the
    test people granted)."""
    granted = granted_by_copy(db_url)
    eng = make_engine(db_url)
    migrate(eng)
    RubricStore(eng).seed_builtins()
    grant(RunStore(eng) if granted else grant(RunStore(eng)), AUTHORS)
    yield eng
    eng.dispose()


@pytest.fixture
def store(engine: Engine) -> RubricStore:
    return RubricStore(engine)


@pytest.fixture
def fresh(tmp_path: Path) -> RubricStore:
    """Another, brand-new database (a SQLite file), as a second site would have: a copy of one `init_db` made new,
    not migrated again (0.2 s a test)."""
    return RunStore(init_db(migrated_sqlite(tmp_path / "fresh.db", granted=True), mark_interrupted=False)).rubrics


# --- helpers --------------------------------------------------------------------------------


def crit(cid: str, **kw: object) -> Criterion:
    """A minimal valid criterion."""
    fields = {"name": cid, "category": "completeness", "pass_condition": f"{cid} holds", "fail_signal": f"{cid} broken"}
    return Criterion(id=cid, **{**fields, **kw})


def acme(*criteria: Criterion, extends: tuple[str, ...] = ("general",)) -> RubricDocument:
    return RubricDocument(
        name="acme",
        domain="docs",
        description="Acme docs",
        extends=list(extends),
        criteria=list(criteria) or [crit("tone")],
    )


def custom_document() -> RubricDocument:
    """A rubric exercising the awkward parts of the file format."""
    return RubricDocument(
        name="acme-legal",
        domain="compliance",
        description="Acme's legal copy — Ünïcode, 🎄 and\na second line\n",
        extends=["general"],
        criteria=[
            crit(
                "no_promises",
                category="compliance",
                pass_condition="No promise of returns.\nNot even implied.\n",
                fail_signal="«garanti», “risk-free” or 100 % safe",
                check={"type": "forbidden_terms", "terms": ["risk-free", "garanti", "100% safe"]},
            ),
            crit(
                "no_ids",
                severity="suggestion",
                fail_signal="an account number like 12-345",
                check={"type": "regex_forbidden", "pattern": r"\b\d{2}-\d{3}\b", "ignore_case": True},
            ),
            # U+0085 is what a cp1252 "…" becomes when read as Latin-1; YAML must keep it.
            crit(
                "ellipsis",
                name="Dots\x85",
                pass_condition="Trailing dots\x85\nsecond line",
                fail_signal="  indented\nblock\n\n",
            ),
            crit("old_rule", retired=True, pass_condition="the 2019 rule holds"),
        ],
    )


def row_counts(engine: Engine) -> dict[str, int]:
    """Rows of every table: proof that a refused operation wrote nothing."""
    with Session(engine) as s:
        return {t.name: s.exec(select(func.count()).select_from(t)).one() for t in SQLModel.metadata.sorted_tables}


def line_of(text: str, needle: str) -> int:
    """1-based number of the first line containing `needle`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# --- seeding and reading --------------------------------------------------------------------


def test_seeding_is_idempotent_and_builtins_resolve_like_the_library(db_url: str) -> None:
    engine = init_db(db_url, mark_interrupted=False)
    try:
        again = make_engine(db_url)  # a second process opening the same database
        migrate(again)
        RubricStore(again).seed_builtins()
        RubricStore(again).seed_builtins()
        again.dispose()
        store = RubricStore(engine)
        assert row_counts(engine)["rubric_version"] == 4
        assert store.names() == sorted(lib.builtin_names())
        for doc in lib.builtin_documents():
            assert store.resolved(doc.name) == lib.load_builtin(doc.name)
            assert store.document(doc.name, 1) == doc
            (info,) = store.versions(doc.name)
            assert (info.version, info.author, info.source) == (1, "santa", "builtin")
        assert store.document("content").extends == ["general@1"]
    finally:
        get_engine(db_url).dispose()


def test_list_rubrics_is_the_latest_of_each_name_with_domain_and_count(store: RubricStore) -> None:
    store.save(acme(crit("tone"), crit("old", retired=True)), "ann", "first", None)
    store.save(acme(crit("tone"), crit("voice"), crit("old", retired=True)), "bob", "add voice", 1)
    listed = {r.name: r for r in store.list_rubrics()}
    assert set(listed) == {"acme", *lib.builtin_names()}
    a = listed["acme"]
    assert (a.version, a.domain, a.author, a.extends) == (2, "docs", "bob", ["general@1"])
    assert a.criteria == len(GENERAL_IDS) + 2  # the retired criterion is not counted
    assert listed["compliance"].criteria == len(lib.load_builtin("compliance").criteria)
    assert [(r.domain, r.name) for r in store.list_rubrics()] == sorted((r.domain, r.name) for r in listed.values())
    assert [(v.version, v.author, v.change_note) for v in store.versions("acme")] == [
        (2, "bob", "add voice"),
        (1, "ann", "first"),
    ]


# --- saving ---------------------------------------------------------------------------------


def test_save_creates_the_next_version_with_author_note_and_time(store: RubricStore) -> None:
    before = datetime.now(UTC) - timedelta(seconds=1)
    assert store.save(acme(), "ann", "first cut", None).model_dump() == {"name": "acme", "version": 1, "created": True}
    result = store.save(acme(crit("tone"), crit("voice")), "bob", "  add voice  ", base_version=1)
    after = datetime.now(UTC) + timedelta(seconds=1)
    assert (result.version, result.created) == (2, True)
    latest = store.versions("acme")[0]
    assert (latest.version, latest.author, latest.change_note, latest.source) == (2, "bob", "add voice", "studio")
    assert before <= latest.created_at <= after
    assert store.document("acme").version == 2 and store.resolved("acme").version == 2
    assert store.resolved("acme", 1).criterion_ids() == [*GENERAL_IDS, "tone"]  # v1 is untouched
    assert store.resolved("acme").criterion_ids() == [*GENERAL_IDS, "tone", "voice"]


def test_identical_content_creates_nothing(store: RubricStore, engine: Engine) -> None:
    store.save(acme(), "ann", "first", None)
    counts = row_counts(engine)
    again = acme().model_copy(update={"version": 7})  # the version number is not content
    assert store.save(again, "bob", "no change really", 1).model_dump() == {
        "name": "acme",
        "version": 1,
        "created": False,
    }
    assert store.save(store.document("acme"), "bob", "reopened and saved", 1).created is False
    assert row_counts(engine) == counts


def test_stale_base_version_is_a_conflict_and_writes_nothing(store: RubricStore, engine: Engine) -> None:
    store.save(acme(), "ann", "first", None)
    store.save(acme(crit("tone"), crit("voice")), "ann", "add voice", 1)
    counts = row_counts(engine)
    with pytest.raises(RubricConflict, match=r"ann saved acme v2 while you were editing v1"):
        store.save(acme(crit("tone"), crit("length")), "bob", "add length", 1)
    with pytest.raises(RubricConflict):
        store.save(acme(crit("tone"), crit("length")), "bob", "add length", 5)
    assert row_counts(engine) == counts
    assert store.resolved("acme").criterion_ids()[-1] == "voice"


def test_concurrent_saves_from_one_base_make_exactly_one_version(store: RubricStore) -> None:
    store.save(acme(), "ann", "first", None)
    barrier = threading.Barrier(6)

    def save(n: int) -> str:
        barrier.wait()
        try:
            return f"v{store.save(acme(crit('tone'), crit(f'extra{n}')), f'u{n}', 'race', 1).version}"
        except RubricConflict:
            return "conflict"

    with ThreadPoolExecutor(6) as pool:
        results = sorted(pool.map(save, range(6)))
    assert results == ["conflict"] * 5 + ["v2"]
    assert [v.version for v in store.versions("acme")] == [2, 1]


def test_a_new_rubric_may_not_take_an_existing_name(store: RubricStore, engine: Engine) -> None:
    counts = row_counts(engine)
    doc = RubricDocument(name="general", criteria=[crit("tone")])
    with pytest.raises(RubricConflict, match=r"a rubric named 'general' already exists \(version 1\)"):
        store.save(doc, "ann", "mine now", None)
    assert row_counts(engine) == counts


@pytest.mark.parametrize("note", [pytest.param("", id="empty"), pytest.param("  \n ", id="blank")])
def test_a_change_note_is_required(store: RubricStore, engine: Engine, note: str) -> None:
    counts = row_counts(engine)
    with pytest.raises(RubricSaveError, match="change note"):
        store.save(acme(), "ann", note, None)
    assert row_counts(engine) == counts


def test_own_id_clashing_with_a_parent_is_refused_by_name(store: RubricStore, engine: Engine) -> None:
    counts = row_counts(engine)
    with pytest.raises(RubricSaveError) as caught:
        store.save(acme(crit("tone"), crit("factual_accuracy")), "ann", "first", None)
    (error,) = caught.value.errors
    assert error.startswith("criteria[1].id: criterion id 'factual_accuracy' is already in general@1")
    assert row_counts(engine) == counts


def test_every_problem_is_reported_at_once(store: RubricStore) -> None:
    doc = acme(crit("tone"), crit("tone"), crit("dates", check={"type": "regex_forbidden", "pattern": "("}))
    with pytest.raises(RubricSaveError) as caught:
        store.save(doc, "ann", "first", None)
    assert len(caught.value.errors) == 2
    assert "duplicate criterion id 'tone'" in caught.value.errors[0]
    assert caught.value.errors[1].startswith("criteria[2].check.pattern: invalid regular expression")


def test_extends_is_pinned_until_the_child_is_saved_again(store: RubricStore) -> None:
    store.save(acme(), "ann", "first", None)
    assert store.document("acme").extends == ["general@1"]
    general = store.document("general")
    general = general.model_copy(update={"criteria": [*general.criteria, crit("plain_words")]})
    assert store.save(general, "gus", "plain words everywhere", 1).version == 2
    assert store.resolved("general").criterion_ids() == [*GENERAL_IDS, "plain_words"]
    assert store.resolved("acme").criterion_ids() == [*GENERAL_IDS, "tone"]  # still general@1
    assert store.resolved("content").criterion_ids()[: len(GENERAL_IDS) + 1] == [*GENERAL_IDS, "brand_voice"]
    assert store.save(store.document("acme"), "ann", "re-saved as is", 1).created is False
    assert store.save(acme(), "ann", "follow general", 1).version == 2  # a bare "general": its latest
    assert store.document("acme").extends == ["general@2"]
    assert store.resolved("acme").criterion_ids() == [*GENERAL_IDS, "plain_words", "tone"]
    assert store.resolved("acme", 1).criterion_ids() == [*GENERAL_IDS, "tone"]


def test_retired_criteria_stay_in_the_document_but_are_not_judged(store: RubricStore) -> None:
    store.save(acme(crit("tone"), crit("voice")), "ann", "first", None)
    store.save(acme(crit("tone"), crit("voice", retired=True)), "ann", "retire voice", 1)
    doc = store.document("acme")
    assert [(c.id, c.retired) for c in doc.criteria] == [("tone", False), ("voice", True)]
    assert "voice" not in store.resolved("acme").criterion_ids()
    assert "voice" in store.resolved("acme", 1).criterion_ids()
    assert "retired: true" in store.export("acme")
    with pytest.raises(RubricSaveError, match="'voice'"):  # a retired id stays reserved
        store.save(acme(crit("tone"), crit("voice", retired=True), crit("voice")), "ann", "reuse", 2)


# --- export / import ------------------------------------------------------------------------


def _cases() -> list:
    return [
        pytest.param(name, fmt, id=f"{name}-{fmt}")
        for name in [*lib.builtin_names(), "custom"]
        for fmt in ("yaml", "json")
    ]


def _stored(store: RubricStore, name: str) -> str:
    """The name of a stored rubric; "custom" is saved twice so its latest version is 2."""
    if name != "custom":
        return name
    doc = custom_document()
    store.save(doc.model_copy(update={"criteria": doc.criteria[:1]}), "ann", "first", None)
    store.save(doc, "ann", "the rest", 1)
    return doc.name


@pytest.mark.parametrize(("name", "fmt"), _cases())
def test_export_import_into_the_same_database_changes_nothing(
    store: RubricStore, engine: Engine, name: str, fmt: str
) -> None:
    name = _stored(store, name)
    text = store.export(name, fmt=fmt)
    counts = row_counts(engine)
    result = store.import_text(text, fmt, "bob")
    assert (result.name, result.version, result.created) == (name, store.latest_version(name), False)
    assert row_counts(engine) == counts
    assert store.export(name, fmt=fmt) == text


@pytest.mark.parametrize(("name", "fmt"), _cases())
def test_export_import_into_a_fresh_database_gives_the_same_bytes(
    store: RubricStore, fresh: RubricStore, name: str, fmt: str
) -> None:
    name = _stored(store, name)
    text = store.export(name, fmt=fmt)
    result = fresh.import_text(text, fmt, "bob")
    assert result.version == store.latest_version(name)  # the file's version number is kept
    assert fresh.export(name, fmt=fmt) == text
    assert fresh.resolved(name) == store.resolved(name)
    if name == "acme-legal":
        assert result.created and fresh.document(name).criteria[2].name == "Dots\x85"
        assert fresh.document(name).criteria[-1].retired
        assert [v.version for v in fresh.versions(name)] == [2]


def test_import_keeps_a_newer_file_version_but_never_goes_back(store: RubricStore) -> None:
    store.save(acme(), "ann", "first", None)
    newer = lib.export_document(acme(crit("tone"), crit("voice")).model_copy(update={"version": 5}))
    assert store.import_text(newer, "yaml", "bob").version == 5
    older = lib.export_document(acme(crit("tone"), crit("length")).model_copy(update={"version": 2}))
    result = store.import_text(older, "yaml", "bob", note="from the old branch")
    assert (result.version, result.created) == (6, True)
    assert [(v.version, v.source) for v in store.versions("acme")][:2] == [(6, "import"), (5, "import")]
    assert store.versions("acme")[0].change_note == "from the old branch"
    assert store.versions("acme")[1].change_note == "imported from a YAML file"


# --- broken imports -------------------------------------------------------------------------

GOOD_YAML = """\
name: acme
version: 1
domain: docs
description: Acme docs
extends: general
criteria:
  - id: tone
    name: Tone
    category: completeness
    pass_condition: Plain words.
    fail_signal: Jargon.
"""
NO_FAIL_SIGNAL_YAML = GOOD_YAML.replace("    fail_signal: Jargon.\n", "")
NO_FAIL_SIGNAL_JSON = """\
{
  "name": "acme",
  "version": 1,
  "domain": "docs",
  "criteria": [
    {
      "id": "tone",
      "name": "Tone",
      "category": "completeness",
      "pass_condition": "Plain words."
    }
  ]
}
"""
UNKNOWN_CHECK = GOOD_YAML + "    check:\n      type: spellcheck\n"
BAD_REGEX = GOOD_YAML + "    check:\n      type: regex_forbidden\n      pattern: '[a-'\n"


def _broken() -> list:
    return [
        pytest.param("yaml", "name: acme\ncriteria: [\n  - id: x\n", "invalid YAML", 3, id="malformed-yaml"),
        pytest.param("json", '{\n  "name": "acme",\n  "criteria": [\n}\n', "invalid JSON", 4, id="malformed-json"),
        pytest.param(
            "yaml",
            NO_FAIL_SIGNAL_YAML,
            "criteria[0].fail_signal: field required",
            line_of(NO_FAIL_SIGNAL_YAML, "- id: tone"),
            id="yaml-missing-field",
        ),
        pytest.param(
            "json",
            NO_FAIL_SIGNAL_JSON,
            "criteria[0].fail_signal: field required",
            NO_FAIL_SIGNAL_JSON.splitlines().index("    {") + 1,
            id="json-missing-field",
        ),
        pytest.param(
            "yaml",
            UNKNOWN_CHECK,
            "criteria[0].check.type: unknown check type 'spellcheck'",
            line_of(UNKNOWN_CHECK, "type: spellcheck"),
            id="unknown-check-type",
        ),
        pytest.param(
            "yaml",
            BAD_REGEX,
            "criteria[0].check.pattern: invalid regular expression",
            line_of(BAD_REGEX, "pattern:"),
            id="regex-does-not-compile",
        ),
        pytest.param(
            "yaml",
            GOOD_YAML.replace("extends: general", "extends: [general, nope]"),
            "extends[1]: unknown rubric 'nope'",
            5,
            id="extends-unknown-rubric",
        ),
        pytest.param(
            "yaml",
            GOOD_YAML.replace("name: acme", "name: Acme Docs!"),
            "name: a rubric name is lower-case letters",
            1,
            id="bad-rubric-name",
        ),
        pytest.param(
            "yaml",
            GOOD_YAML.replace("    name: Tone\n", "    name: Tone\n    weight: 3\n"),
            "criteria[0].weight: unknown field",
            9,
            id="unknown-field",
        ),
    ]


@pytest.mark.parametrize(("fmt", "text", "message", "line"), _broken())
def test_a_broken_import_names_field_and_line_and_changes_nothing(
    store: RubricStore, engine: Engine, fmt: str, text: str, message: str, line: int
) -> None:
    counts = row_counts(engine)
    with pytest.raises(lib.RubricFileError) as caught:
        store.import_text(text, fmt, "bob")
    (error,) = caught.value.errors
    assert error.startswith(message) and error.endswith(f"(line {line})"), error
    assert row_counts(engine) == counts
    assert store.import_text(GOOD_YAML, "yaml", "bob").model_dump() == {"name": "acme", "version": 1, "created": True}


def test_the_documented_example_line_number() -> None:
    """The computed line above, pinned once: a missing field points at its item's opening line."""
    with pytest.raises(lib.RubricFileError, match=r"^criteria\[0\]\.fail_signal: field required \(line 6\)$"):
        lib.read_document(NO_FAIL_SIGNAL_JSON, "json")


# --- trials ---------------------------------------------------------------------------------


def test_trials_round_trip_with_and_without_a_reviewer(store: RubricStore, engine: Engine) -> None:
    rubric = store.resolved("compliance")
    checks = [
        CheckOutcome(
            criterion="no_outcome_guarantees",
            check_type="forbidden_terms",
            result="FAIL",
            detail="found 'risk-free'",
            evidence="…a risk-free plan…",
        )
    ]
    outcome = make_outcome("B", "PASS", calls=2)
    plain = store.record_trial("try", rubric, "A risk-free plan — naïve 🎄", checks, None, "ann", stored_version=1)
    # The trial's verdict is the caller's (a failed blocking check beats the reviewer's PASS).
    judged = store.record_trial("try", rubric, "A risk-free plan — naïve 🎄", checks, outcome, "bob", verdict="FAIL")
    newest, oldest = store.trials()
    assert (newest.id, oldest.id) == (judged, plain)
    assert oldest.model_dump(
        include={
            "kind",
            "run_id",
            "rubric_name",
            "rubric_version",
            "reviewer",
            "review_status",
            "verdict",
            "review",
            "error",
            "cost_usd",
            "actor",
        }
    ) == {
        "kind": "try",
        "run_id": None,
        "rubric_name": "compliance",
        "rubric_version": 1,
        "reviewer": None,
        "review_status": None,
        "verdict": None,
        "review": None,
        "error": None,
        "cost_usd": 0.0,
        "actor": "ann",
    }
    assert oldest.checks == checks and oldest.output_hash == sha256_text("A risk-free plan — naïve 🎄")
    assert (newest.reviewer, newest.review_status, newest.verdict) == ("claude-sonnet-5-5", "ok", "FAIL")
    assert newest.review["verdict"] == "PASS"
    assert newest.review == outcome.review.model_dump(mode="json")
    assert newest.cost_usd == pytest.approx(outcome.cost_usd) and newest.checks == checks
    with Session(engine) as s:
        row = s.get(TrialRow, judged)
        assert row.rubric_json == rubric.model_dump(mode="json")
        call = outcome.calls[0]
        assert (row.request_json, row.response_text) == (call.request, call.response)
        assert row.content_hash == content_hash(call.request, call.response)
        assert row.input_tokens == outcome.usage.input_tokens
    assert [t.id for t in store.trials(kind="recheck")] == []
    assert [t.id for t in store.trials(kind="try", limit=1)] == [judged]


def test_final_outputs_are_the_last_rounds_text(store: RubricStore, engine: Engine) -> None:
    repo = RunStore(engine)
    rubric = store.resolved("general")
    runs = [
        repo.create_run(
            spec=f"spec {n}",
            output=f"draft {n}",
            rubric=rubric,
            reviewer_b="person",
            reviewer_c="person",
            fixer="claude-sonnet-5-5",
        )
        for n in range(3)
    ]
    repo.start_round(runs[0], 2, "second draft 0")
    repo.start_round(runs[0], 3, "final draft 0 — ✓")
    trial = store.record_trial("recheck", rubric, "final draft 0 — ✓", [], None, "ann", run_id=runs[0])
    assert store.final_outputs(runs[:2]) == {runs[0]: ("spec 0", "final draft 0 — ✓"), runs[1]: ("spec 1", "draft 1")}
    assert store.final_outputs([]) == {}
    assert [t.id for t in store.trials(run_ids=[runs[0]])] == [trial]
    assert store.trials(run_ids=[runs[1]]) == []


def test_a_run_keeps_the_rubric_it_was_judged_by(store: RubricStore, engine: Engine) -> None:
    store.save(acme(), "ann", "first", None)
    repo = RunStore(engine)
    run = repo.create_run(
        spec="s",
        output="o",
        rubric=store.resolved("acme", 1),
        reviewer_b="person",
        reviewer_c="person",
        fixer="claude-sonnet-5-5",
    )
    store.save(acme(crit("tone"), crit("voice")), "ann", "add voice", 1)
    assert repo.get_run_view(run).rubric == store.resolved("acme", 1)
    with Session(engine) as s:
        assert s.exec(select(func.count()).select_from(RubricVersionRow)).one() == 6


def test_a_child_cannot_reuse_the_id_of_a_retired_parent_criterion(tmp_path) -> None:
    """Retired ids stay reserved across extends too (found in review)."""
    from santa_core.models import Criterion, RubricDocument
    from santa_core.rubrics.store import RubricSaveError
    from storage.runs import RunStore
    from storage.startup import init_db

    store = grant(RunStore(init_db(f"sqlite:///{tmp_path / 'r.db'}", mark_interrupted=False))).rubrics
    general = store.document("general")
    retired = [c.model_copy(update={"retired": c.id == "completeness"}) for c in general.criteria]
    store.save(general.model_copy(update={"criteria": retired}), "ann", "retire completeness", 1)
    child = RubricDocument(
        name="kid",
        extends=["general"],
        criteria=[
            Criterion(id="completeness", name="Again", category="completeness", pass_condition="p", fail_signal="f")
        ],
    )
    with pytest.raises(RubricSaveError, match="'completeness' is retired in general@2"):
        store.save(child, "bob", "new", None)
