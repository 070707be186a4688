"""Built-in rubrics, composition, and loading rubric files with located errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from santa_core.checks import check_config_errors
from santa_core.models import CATEGORIES, Criterion
from santa_core.rubrics.library import (
    RUBRIC_DIR,
    RubricFileError,
    builtin_names,
    load_builtin,
    load_rubric_file,
    parse_rubric,
)

BASE_IDS = [
    "factual_accuracy",
    "hallucination_free",
    "completeness",
    "compliance",
    "internal_consistency",
    "technical_correctness",
]
EXTENSION_IDS = {
    "content": ["brand_voice", "seo_keywords", "no_competitor_trademark_misuse", "cta_present_and_linked"],
    "code": ["type_safety", "error_handling", "security", "test_coverage"],
    "compliance": ["no_outcome_guarantees", "required_disclaimers", "approved_terminology", "jurisdiction_language"],
}
# Subjective words the method rules out of a rubric ("every criterion must be objective").
VAGUE = re.compile(r"\b(engaging|high[- ]quality|compelling|nice|good|great|appropriate tone|feels)\b", re.IGNORECASE)


def crit(cid: str) -> Criterion:
    """A minimal valid criterion."""
    return Criterion(id=cid, name=cid, category="completeness", pass_condition="p", fail_signal="f")


# --- built-ins ------------------------------------------------------------------------------


def test_builtin_names() -> None:
    assert builtin_names() == ["general", "content", "code", "compliance"]


@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_loads_with_unique_ids(name: str) -> None:
    rubric = load_builtin(name)
    ids = rubric.criterion_ids()
    assert len(ids) == len(set(ids))
    assert rubric.name == name
    assert rubric.version >= 1


@pytest.mark.parametrize("name", builtin_names())
def test_every_criterion_is_objective_and_complete(name: str) -> None:
    for c in load_builtin(name).criteria:
        assert c.pass_condition.strip() and c.fail_signal.strip(), c.id
        assert c.category in CATEGORIES, c.id
        assert not VAGUE.search(c.pass_condition), f"{c.id}: subjective pass condition"
        if c.check is not None:
            assert check_config_errors(c.check) == [], c.id


def test_general_is_the_base_rubric() -> None:
    assert load_builtin("general").criterion_ids() == BASE_IDS


@pytest.mark.parametrize("name", ["content", "code", "compliance"])
def test_extension_is_base_then_extension(name: str) -> None:
    rubric = load_builtin(name)
    assert rubric.criterion_ids() == BASE_IDS + EXTENSION_IDS[name]
    assert rubric.domain == name


def test_compliance_has_forbidden_terms_check() -> None:
    rubric = load_builtin("compliance")
    check = next(c.check for c in rubric.criteria if c.id == "no_outcome_guarantees")
    assert check is not None and check["type"] == "forbidden_terms"
    assert {"guaranteed returns", "risk-free", "100% safe"} <= set(check["terms"])


def test_unknown_builtin() -> None:
    with pytest.raises(KeyError, match="unknown rubric .nope."):
        load_builtin("nope")


@pytest.mark.parametrize("stem", ["content", "code", "compliance"])
def test_extension_file_extends_base(stem: str) -> None:
    assert load_rubric_file(RUBRIC_DIR / f"{stem}.yaml") == load_builtin(stem)


# --- rubric files ---------------------------------------------------------------------------

GOOD_YAML = """\
name: my-rubric
version: 2
domain: content
criteria:
  - id: first
    name: First
    category: completeness
    pass_condition: p
    fail_signal: f
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_load_yaml_and_json(tmp_path: Path) -> None:
    from_yaml = load_rubric_file(write(tmp_path, "r.yaml", GOOD_YAML))
    data = from_yaml.model_dump()
    from_json = load_rubric_file(write(tmp_path, "r.json", json.dumps(data)))
    assert from_yaml == from_json
    assert from_yaml.criterion_ids() == ["first"]


def test_user_file_can_extend_a_builtin(tmp_path: Path) -> None:
    text = GOOD_YAML + "extends: compliance\n"
    rubric = load_rubric_file(write(tmp_path, "r.yml", text))
    assert rubric.criterion_ids() == load_builtin("compliance").criterion_ids() + ["first"]
    assert rubric.name == "my-rubric"


BROKEN = [
    pytest.param(
        GOOD_YAML
        + """\
  - id: second
    name: Second
    category: completeness
    pass_condition: p
    fail_signal: f
  - id: third
    name: Third
    category: completeness
    fail_signal: f
""",
        "criteria[2].pass_condition: field required (line 15)",
        id="missing-pass-condition",
    ),
    pytest.param(
        GOOD_YAML.replace("version: 2", "version: two"),
        "version: input should be a valid integer (line 2)",
        id="bad-version",
    ),
    pytest.param(
        GOOD_YAML.replace("    fail_signal: f\n", "    fail_signal: f\n    weight: 3\n"),
        "criteria[0].weight: unknown field (line 10)",
        id="unknown-field",
    ),
    pytest.param(
        GOOD_YAML.replace("id: first", "id: First Item"), "criteria[0].id: string should match pattern", id="bad-id"
    ),
    pytest.param(
        GOOD_YAML + GOOD_YAML.split("criteria:\n")[1],
        "criteria[1].id: duplicate criterion id 'first' (line 10)",
        id="duplicate-id",
    ),
    pytest.param(
        GOOD_YAML + "    check:\n      type: forbidden_terms\n      term: [x]\n",
        "criteria[0].check.terms: field required (line 11)",
        id="check-missing-terms",
    ),
    pytest.param(
        GOOD_YAML + "    check: {type: spellcheck}\n",
        "criteria[0].check.type: unknown check type 'spellcheck'",
        id="check-unknown-type",
    ),
    pytest.param(
        GOOD_YAML + "    check: {type: regex_forbidden, pattern: '(['}\n",
        "criteria[0].check.pattern: invalid regular expression",
        id="check-bad-regex",
    ),
    pytest.param(GOOD_YAML + "extends: nope\n", "extends[0]: unknown rubric 'nope'", id="unknown-extends"),
    pytest.param(
        GOOD_YAML.replace("id: first", "id: completeness") + "extends: base\n",
        "criteria[0].id: criterion id 'completeness' is already in general@1 (line 5)",
        id="extends-duplicate-id",
    ),
    pytest.param("name: x\ncriteria: [\n", "invalid YAML", id="yaml-syntax"),
    pytest.param("name: x\n  bad: indent\n", "(line 2)", id="yaml-syntax-line"),
    pytest.param("- just\n- a list\n", "(top level): expected a mapping", id="not-a-mapping"),
    pytest.param("", "(top level): expected a mapping", id="empty-file"),
    pytest.param(
        "name: x\ncriteria: []\n", "criteria: a rubric needs at least one active criterion (line 2)", id="no-criteria"
    ),
]


@pytest.mark.parametrize(("text", "message"), BROKEN)
def test_broken_yaml_names_field_and_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(RubricFileError) as info:
        load_rubric_file(write(tmp_path, "r.yaml", text))
    assert message in str(info.value)
    assert info.value.errors


def test_all_problems_are_reported(tmp_path: Path) -> None:
    text = GOOD_YAML.replace("    pass_condition: p\n", "").replace("    fail_signal: f\n", "")
    with pytest.raises(RubricFileError) as info:
        load_rubric_file(write(tmp_path, "r.yaml", text))
    assert info.value.errors == [
        "criteria[0].pass_condition: field required (line 5)",
        "criteria[0].fail_signal: field required (line 5)",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param('{"name": "x",, }', "invalid JSON", id="json-syntax"),
        pytest.param('{"name": "x",\n "criteria": [}', "(line 2)", id="json-syntax-line"),
        pytest.param(
            '{"name": "x", "criteria": [{"id": "a", "name": "A", "category": "c", "fail_signal": "f"}]}',
            "criteria[0].pass_condition: field required",
            id="json-missing-field",
        ),
    ],
)
def test_broken_json_names_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(RubricFileError, match=re.escape(message)):
        load_rubric_file(write(tmp_path, "r.json", text))


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(RubricFileError, match="cannot read"):
        load_rubric_file(tmp_path / "missing.yaml")
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(RubricFileError, match="not UTF-8"):
        load_rubric_file(binary)


def test_yaml_is_loaded_safely() -> None:
    with pytest.raises(RubricFileError, match="invalid YAML"):
        parse_rubric("name: !!python/object/apply:os.system ['true']\ncriteria: []\n")


# --- found in review: files that crashed, hid a mistake or lost their line ------------------

ONE = "  - id: a\n    name: A\n    category: c\n    pass_condition: p\n    fail_signal: f\n"


@pytest.mark.parametrize(
    ("text", "fmt", "message"),
    [
        pytest.param(
            'name: x\ndescription: "a\x7f"\ncriteria:\n' + ONE,
            "yaml",
            "character U+007F is not allowed in a YAML file",
            id="yaml-control-character",
        ),
        pytest.param(
            "name: x\ncriteria:\n  - id: a\n    name: A\n    category: c\n    pass_condition: p\n"
            "    pass_condition: q\n    fail_signal: f\n",
            "yaml",
            "criteria[0].pass_condition: given twice; keep one (line 7)",
            id="yaml-duplicate-key",
        ),
        pytest.param(
            '{"name": "x", "name": "y", "criteria": []}', "json", "name: given twice", id="json-duplicate-key"
        ),
        pytest.param(
            '{\n\t"name": "x",\n\t"criteria": [\n\t\t{"id": "a", "name": "A",\n\t\t"category": "c",'
            ' "pass_condition": "p"}\n\t]\n}',
            "json",
            "criteria[0].fail_signal: field required (line 4)",
            id="json-tabs-keep-the-line",
        ),
        pytest.param(
            "name: x\ncriteria:\n  - id: a\n    name: &n A\n    category: c\n    pass_condition: *n\n"
            "    fail_signal: f\n",
            "yaml",
            "aliases (*name) are not allowed in a rubric file (line 6)",
            id="yaml-alias-refused",
        ),
        pytest.param(
            "name: x\nversion: 3000000000\ncriteria:\n" + ONE,
            "yaml",
            "version: input should be less than or equal to 2147483647 (line 2)",
            id="version-too-big",
        ),
        pytest.param("name: base\ncriteria:\n" + ONE, "yaml", "'base' is reserved", id="reserved-name"),
        pytest.param(
            "name: x\nversion: true\ncriteria:\n" + ONE,
            "yaml",
            "version: input should be a valid integer",
            id="version-boolean",
        ),
        pytest.param(
            '{"name": "x",\n"description": "a\u2028b\u2029c",\n"criteria": [\n{"id": "a", "name": "A",\n'
            '"category": "c", "pass_condition": "p", "severity": "blocker",\n"fail_signal": "f"}]}',
            "json",
            "criteria[0].severity: input should be 'critical' or 'suggestion' (line 5)",
            id="json-line-separators-do-not-shift-lines",
        ),
        pytest.param(
            "name: x\ncriteria:\n" + ONE.replace("name: A", "name: '   '"),
            "yaml",
            "criteria[0].name: must not be blank",
            id="blank-name",
        ),
    ],
)
def test_bad_files_are_refused_with_field_and_line(text: str, fmt: str, message: str) -> None:
    with pytest.raises(RubricFileError) as info:
        parse_rubric(text, fmt)
    assert message in str(info.value)


def test_json_with_control_characters_round_trips() -> None:
    from santa_core.rubrics.library import export_document, read_document

    doc = read_document('name: x\ndescription: "\\x7f\\x93quoted\\x94"\ncriteria:\n' + ONE)
    text = export_document(doc, "json")
    assert "\x7f" in text  # written raw (ensure_ascii=False), yet it reads back
    assert export_document(read_document(text, "json"), "json") == text


def test_a_byte_order_mark_is_ignored() -> None:
    assert parse_rubric("\ufeff" + '{"name": "x", "extends": ["general"]}', "json").name == "x"
