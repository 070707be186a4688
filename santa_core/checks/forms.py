"""The rubric editor's form for each check type: titles, explanations, fields, one-line summaries.

Pure data and conversions (form values <-> check dicts); the runners live in the family modules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from santa_core.checks.criteria import CHECK_MODELS, CHECK_TYPES

__all__ = ["CHECK_SPECS", "CHECK_TYPES", "CheckField", "CheckSpec", "check_from_form", "describe_check", "form_values"]

FieldKind = Literal["lines", "int", "float", "bool", "text"]


@dataclass(frozen=True)
class CheckField:
    """One input of a check's form; "lines" is a list of strings entered one per line."""

    name: str
    kind: FieldKind
    label: str
    help: str = ""
    default: Any = None


@dataclass(frozen=True)
class CheckSpec:
    """How the rubric editor presents one check type."""

    title: str
    explanation: str
    fields: tuple[CheckField, ...] = ()


CHECK_SPECS: dict[str, CheckSpec] = {
    "forbidden_terms": CheckSpec(
        "Forbidden terms",
        "Fails when any of the terms appears, ignoring case, spacing, hyphens and look-alike letters. "
        "A failure quotes the first term found.",
        (CheckField("terms", "lines", "Terms", "Words or phrases; case, spacing and hyphens do not matter.", ()),),
    ),
    "required_phrases": CheckSpec(
        "Required phrases",
        "Fails when any of the phrases is missing (matched like forbidden terms). "
        "A failure names every missing phrase.",
        (CheckField("phrases", "lines", "Phrases", "Every phrase must appear somewhere in the output.", ()),),
    ),
    "regex_forbidden": CheckSpec(
        "Forbidden pattern",
        "Fails when the regular expression matches the output as written (no look-alike folding). "
        "A failure quotes the match.",
        (
            CheckField("pattern", "text", "Pattern", r"A Python regular expression, e.g. \bTODO\b.", ""),
            CheckField("ignore_case", "bool", "Ignore case", "Match upper and lower case alike.", False),
        ),
    ),
    "no_secrets": CheckSpec(
        "No secrets",
        "Fails when the output contains something shaped like a credential: API keys, tokens, private keys "
        "or a password assigned in code. The finding is shown redacted.",
    ),
    "links_allowed": CheckSpec(
        "Allowed link domains",
        "Fails when a link is malformed, has look-alike (non-ASCII) host letters, or points outside the "
        "listed domains and their subdomains. A failure lists each offending link and why.",
        (
            CheckField(
                "domains", "lines", "Domains", "Bare hosts such as example.com; their subdomains are allowed too.", ()
            ),
            CheckField("require_https", "bool", "Require https", "Plain http:// links fail too.", False),
        ),
    ),
    "max_words": CheckSpec(
        "Maximum words",
        "Fails when the output has more whitespace-separated words than the limit.",
        (CheckField("max", "int", "Word limit", "At least 1.", 250),),
    ),
    "max_chars": CheckSpec(
        "Maximum characters",
        "Fails when the output is longer than the limit, counting every character.",
        (CheckField("max", "int", "Character limit", "At least 1.", 2000),),
    ),
    "reading_grade": CheckSpec(
        "Reading grade",
        "Fails when the Flesch–Kincaid grade level (roughly, US school years needed to read it) is above "
        "the limit. The detail shows the counts and the longest sentence.",
        (CheckField("max", "float", "Highest grade", "Between 1 and 20; 8 suits general audiences.", 8.0),),
    ),
    "valid_json": CheckSpec(
        "Valid JSON",
        "Fails when the output does not parse as JSON; if it has ```json fenced blocks, each block must parse "
        "instead. A failure gives the block, line, column and parser message.",
    ),
    "valid_yaml": CheckSpec(
        "Valid YAML",
        "Fails when the output does not parse as YAML; if it has ```yaml fenced blocks, each block must parse "
        "instead. Plain prose is usually valid YAML, so use this for YAML deliverables.",
    ),
    "python_parses": CheckSpec(
        "Python parses",
        "Fails when the Python code has a syntax error; if the output has ```python fenced blocks, each block "
        "is parsed instead. The code is parsed, never run.",
    ),
}


def _count(value: object) -> str:
    """A number with thousands separators; anything else as is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _shortlist(label: str, items: object, shown: int = 2) -> str:
    """'label: a, b (+3 more)'."""
    names = [str(i) for i in items] if isinstance(items, list | tuple) else []
    more = f" (+{len(names) - shown} more)" if len(names) > shown else ""
    return f"{label}: {', '.join(names[:shown]) or '(none)'}{more}"


_DESCRIBE: dict[str, Callable[[dict], str]] = {
    "forbidden_terms": lambda c: _shortlist("forbidden terms", c.get("terms")),
    "required_phrases": lambda c: _shortlist("required phrases", c.get("phrases")),
    "regex_forbidden": lambda c: (
        f"forbidden pattern /{c.get('pattern', '')}/" + (" (ignore case)" if c.get("ignore_case") else "")
    ),
    "no_secrets": lambda c: "no secrets (API keys, tokens, private keys, passwords)",
    "links_allowed": lambda c: (
        _shortlist("links only to", c.get("domains"), 3) + (", https only" if c.get("require_https") else "")
    ),
    "max_words": lambda c: f"at most {_count(c.get('max'))} words",
    "max_chars": lambda c: f"at most {_count(c.get('max'))} characters",
    "reading_grade": lambda c: f"reading grade at most {_count(c.get('max'))}",
    "valid_json": lambda c: "valid JSON",
    "valid_yaml": lambda c: "valid YAML",
    "python_parses": lambda c: "Python parses",
}


def describe_check(check: object) -> str:
    """One-line human summary of a check dict (valid or not)."""
    if not isinstance(check, dict):
        return "invalid check (not a mapping)"
    describe = _DESCRIBE.get(str(check.get("type")))
    return describe(check) if describe else f"unknown check type {check.get('type')!r}"


def _lines(value: object) -> list[str]:
    """Form lines as a list: stripped, blanks dropped (a single string is split into lines)."""
    items = value.splitlines() if isinstance(value, str) else value if isinstance(value, list | tuple) else []
    return [str(item).strip() for item in items if str(item).strip()]


def check_from_form(kind: str, values: Mapping[str, Any]) -> dict:
    """A check dict from the editor's form values (not validated; see check_config_errors)."""
    spec = CHECK_SPECS.get(kind)
    if spec is None:
        raise ValueError(f"unknown check type {kind!r}")
    check: dict[str, Any] = {"type": kind}
    for field in spec.fields:
        value = _plain(field, values.get(field.name, field.default))
        model_field = CHECK_MODELS[kind].model_fields[field.name]
        # Why drop optional fields at their default: the stored check stays as short as one
        # written by hand, and re-saving an untouched check does not change the document.
        if not model_field.is_required() and value == model_field.default:
            continue
        check[field.name] = value
    return check


def form_values(check: Mapping[str, Any]) -> dict[str, Any]:
    """The editor's form values for a check dict, defaults for missing fields ({} if unknown type)."""
    spec = CHECK_SPECS.get(str(check.get("type")))
    if spec is None:
        return {}
    return {f.name: _widget_value(f, check.get(f.name, f.default)) for f in spec.fields}


def _widget_value(field: CheckField, value: Any) -> Any:
    """A value as its form widget holds it: lines as a list, floats as float (a number box returns 8.0 for 8)."""
    if field.kind == "lines":
        return _lines(value)
    if field.kind == "float" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value


def _plain(field: CheckField, value: Any) -> Any:
    """A form value as a rubric file writes it: a whole float becomes an int, so 8 stays 8 (not 8.0)."""
    value = _widget_value(field, value)
    if field.kind == "float" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value
