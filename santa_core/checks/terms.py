"""Term checks: forbidden terms, required phrases (matched on the folded text, quoted from the original)
and a forbidden regular expression (searched on the original, with a timeout).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

import regex
from pydantic import Field, field_validator

from santa_core.checks.base import CheckConfigBase, CheckResult, context
from santa_core.checks.folding import Folded, fold


def _term_regex(term: str, latin_first: bool = True) -> re.Pattern[str]:
    """Regex for a folded term: words joined by any space/hyphen run, word-boundary aware."""
    tokens = re.findall(r"[^\W_]+|[^\w\s-]", fold(term, latin_first=latin_first).text)
    if not tokens:
        raise ValueError(f"term {term!r} has no visible characters")
    body = r"[\s_-]*".join(re.escape(t) for t in tokens)
    # Why lookarounds instead of \b: terms may start or end with a symbol ("100%"), where \b
    # would demand a word character next to it.
    head = r"(?<!\w)" if re.match(r"\w", tokens[0]) else ""
    tail = r"(?!\w)" if re.match(r"\w", tokens[-1][-1]) else ""
    return re.compile(head + body + tail)


def _valid_terms(terms: list[str]) -> list[str]:
    """Reject terms that fold to nothing (they would match everywhere)."""
    for term in terms:
        _term_regex(term)
    return terms


class ForbiddenTermsCheck(CheckConfigBase):
    """None of `terms` may appear (case, spacing, hyphen and homoglyph insensitive)."""

    type: Literal["forbidden_terms"]
    terms: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)

    @field_validator("terms")
    @classmethod
    def _visible(cls, value: list[str]) -> list[str]:
        return _valid_terms(value)


class RequiredPhrasesCheck(CheckConfigBase):
    """Every one of `phrases` must appear (same matching as forbidden terms)."""

    type: Literal["required_phrases"]
    phrases: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)

    @field_validator("phrases")
    @classmethod
    def _visible(cls, value: list[str]) -> list[str]:
        return _valid_terms(value)


class RegexForbiddenCheck(CheckConfigBase):
    """`pattern` (Python regex, searched on the original text) must not match."""

    type: Literal["regex_forbidden"]
    pattern: str = Field(min_length=1)
    ignore_case: bool = False

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            regex.compile(value)
        except regex.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from exc
        return value


def _case_first_view(output: str) -> Folded:
    """The second fold of the output (case before look-alikes), shared by the term checks of one run."""
    return fold(output, latin_first=False)


def _find_term(term: str, output: str, folded: Folded) -> tuple[int, int] | None:
    """Original span of a term in either folded view (see folding.fold), or None."""
    for view, latin_first in ((folded, True), (_case_first_view(output), False)):
        m = _term_regex(term, latin_first).search(view.text)
        if m:
            return view.span(m.start(), m.end())
    return None


def forbidden_terms(cfg: ForbiddenTermsCheck, output: str, folded: Folded) -> CheckResult:
    found = []
    for term in cfg.terms:
        if span := _find_term(term, output, folded):
            start, end = span
            found.append((start, term, output[start:end], context(output, start, end)))
    found.sort()
    if not found:
        return True, f"none of {len(cfg.terms)} forbidden terms found", ""
    detail = "; ".join(f'forbidden term "{t}" found: "{ctx}"' for _, t, _, ctx in found)
    return False, detail, found[0][2]


def required_phrases(cfg: RequiredPhrasesCheck, output: str, folded: Folded) -> CheckResult:
    missing = [p for p in cfg.phrases if _find_term(p, output, folded) is None]
    if not missing:
        return True, f"all {len(cfg.phrases)} required phrases present", ""
    return False, "; ".join(f'required phrase "{p}" missing' for p in missing), ""


REGEX_TIMEOUT_S = 1.0
"""Longest a rubric's forbidden pattern may search one output before the check fails closed."""


def regex_forbidden(cfg: RegexForbiddenCheck, output: str, folded: Folded) -> CheckResult:
    # Why the `regex` module: it takes a timeout, so an author's pattern with catastrophic
    # backtracking ("(x+x+)+y") fails this check instead of freezing the page or a worker.
    flags = regex.IGNORECASE if cfg.ignore_case else 0
    try:
        m = regex.search(cfg.pattern, output, flags, timeout=REGEX_TIMEOUT_S)
    except TimeoutError:
        return (
            False,
            (
                f"forbidden pattern /{cfg.pattern}/ took longer than {REGEX_TIMEOUT_S:g} s on this output "
                "and was stopped; simplify the pattern (nested repeats like (a+)+ backtrack)"
            ),
            "",
        )
    if not m:
        return True, f"forbidden pattern /{cfg.pattern}/ not found", ""
    ctx = context(output, m.start(), m.end())
    return False, f'forbidden pattern /{cfg.pattern}/ matched: "{ctx}"', m.group(0)
