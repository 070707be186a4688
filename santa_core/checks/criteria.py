"""The deterministic checks a rubric criterion may carry (`Criterion.check`), and running them.

A check is a small dict such as {"type": "forbidden_terms", "terms": [...]}. Each family module
(terms, limits, links, parsing, secrets, reading) holds its config models and runners; this module
validates a check dict against them and runs the checks of a rubric. A check that cannot run fails closed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from santa_core.checks import limits, links, parsing, reading, secrets, terms
from santa_core.checks.base import CheckConfigBase, CheckRunner
from santa_core.checks.folding import Folded, fold
from santa_core.checks.limits import MaxCharsCheck, MaxWordsCheck
from santa_core.checks.links import LinksAllowedCheck
from santa_core.checks.parsing import PythonParsesCheck, ValidJsonCheck, ValidYamlCheck
from santa_core.checks.reading import ReadingGradeCheck
from santa_core.checks.secrets import NoSecretsCheck
from santa_core.checks.terms import ForbiddenTermsCheck, RegexForbiddenCheck, RequiredPhrasesCheck
from santa_core.models import CheckOutcome, Criterion, Rubric

CheckConfig = Annotated[
    ForbiddenTermsCheck
    | RequiredPhrasesCheck
    | RegexForbiddenCheck
    | NoSecretsCheck
    | LinksAllowedCheck
    | MaxWordsCheck
    | MaxCharsCheck
    | ReadingGradeCheck
    | ValidJsonCheck
    | ValidYamlCheck
    | PythonParsesCheck,
    Field(discriminator="type"),
]
_CHECK_ADAPTER: TypeAdapter[CheckConfig] = TypeAdapter(CheckConfig)
CHECK_MODELS: dict[str, type[CheckConfigBase]] = {
    "forbidden_terms": ForbiddenTermsCheck,
    "required_phrases": RequiredPhrasesCheck,
    "regex_forbidden": RegexForbiddenCheck,
    "no_secrets": NoSecretsCheck,
    "links_allowed": LinksAllowedCheck,
    "max_words": MaxWordsCheck,
    "max_chars": MaxCharsCheck,
    "reading_grade": ReadingGradeCheck,
    "valid_json": ValidJsonCheck,
    "valid_yaml": ValidYamlCheck,
    "python_parses": PythonParsesCheck,
}
CHECK_TYPES: tuple[str, ...] = tuple(CHECK_MODELS)
"""Every check type, in the order the editor offers them: content, safety, length, format."""


def error_message(err: Mapping[str, Any]) -> str:
    """A pydantic error in a rubric author's words ("field required", "unknown field")."""
    if err["type"] == "missing":
        return "field required"
    if err["type"] == "extra_forbidden":
        return "unknown field"
    msg = str(err["msg"]).removeprefix("Value error, ")
    return msg[:1].lower() + msg[1:]


def check_config_errors(check: object) -> list[tuple[tuple[str | int, ...], str]]:
    """(location inside the check, message) for each problem of a check dict; [] when valid."""
    if not isinstance(check, dict):
        return [((), "a check must be a mapping with a 'type'")]
    kind = check.get("type")
    if kind not in CHECK_TYPES:
        return [(("type",), f"unknown check type {kind!r} (known: {', '.join(CHECK_TYPES)})")]
    try:
        _CHECK_ADAPTER.validate_python(check)
    except ValidationError as exc:
        return [(tuple(e["loc"][1:]), error_message(e)) for e in exc.errors()]
    return []


_RUNNERS: dict[str, CheckRunner] = {
    "forbidden_terms": terms.forbidden_terms,
    "required_phrases": terms.required_phrases,
    "regex_forbidden": terms.regex_forbidden,
    "no_secrets": secrets.no_secrets,
    "links_allowed": links.links_allowed,
    "max_words": limits.max_words,
    "max_chars": limits.max_chars,
    "reading_grade": reading.reading_grade,
    "valid_json": parsing.valid_json,
    "valid_yaml": parsing.valid_yaml,
    "python_parses": parsing.python_parses,
}


def _run_check(criterion: Criterion, output: str, folded: Folded) -> CheckOutcome:
    """Run one criterion's check; a misconfigured or unknown check fails closed."""
    check = criterion.check or {}
    kind = str(check.get("type", ""))
    errors = check_config_errors(check)
    if errors:
        # Fail closed: a check we cannot run must not count as passed.
        msg = "; ".join((".".join(map(str, loc)) + ": " if loc else "") + m for loc, m in errors)
        detail = msg if kind not in CHECK_TYPES else f"check misconfigured: {msg}"
        return CheckOutcome(criterion=criterion.id, check_type=kind or "?", result="FAIL", detail=detail)
    cfg = _CHECK_ADAPTER.validate_python(check)
    try:
        ok, detail, evidence = _RUNNERS[kind](cfg, output, folded)
    except Exception as exc:  # noqa: BLE001 - a check that breaks on this output fails closed, it never crashes a run
        ok, detail, evidence = False, f"the {kind} check could not run on this output ({type(exc).__name__}: {exc})", ""
    return CheckOutcome(
        criterion=criterion.id, check_type=kind, result="PASS" if ok else "FAIL", detail=detail, evidence=evidence
    )


def run_criterion_checks(rubric: Rubric, output: str) -> list[CheckOutcome]:
    """Outcomes of the deterministic checks of the criteria that carry one, in rubric order."""
    with_check = [c for c in rubric.criteria if c.check is not None]
    if not with_check:
        return []
    folded = fold(output)
    return [_run_check(c, output, folded) for c in with_check]
