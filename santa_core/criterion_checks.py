"""Deterministic checks that a rubric criterion may carry (`Criterion.check`).

A check is a small dict such as {"type": "forbidden_terms", "terms": [...]}. This module holds
the config model of each check type, the runner that applies it to an output, and a pure-data
description of each type for the rubric editor's form (`CHECK_SPECS`).

Runners return (ok, detail, evidence): `detail` says what was checked and what was found, in a
rubric author's words; `evidence` is the exact offending text when there is one (it anchors the
fix agent's edits), or "" when a fix cannot be pinned to one span.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import pyphen
import regex
import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from santa_core.folding import Folded, fold
from santa_core.models import CheckOutcome, Criterion, Rubric

# --- config models --------------------------------------------------------------------------


class _CheckConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")


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


class ForbiddenTermsCheck(_CheckConfig):
    """None of `terms` may appear (case, spacing, hyphen and homoglyph insensitive)."""

    type: Literal["forbidden_terms"]
    terms: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)

    @field_validator("terms")
    @classmethod
    def _visible(cls, value: list[str]) -> list[str]:
        return _valid_terms(value)


class RequiredPhrasesCheck(_CheckConfig):
    """Every one of `phrases` must appear (same matching as forbidden terms)."""

    type: Literal["required_phrases"]
    phrases: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)

    @field_validator("phrases")
    @classmethod
    def _visible(cls, value: list[str]) -> list[str]:
        return _valid_terms(value)


class MaxWordsCheck(_CheckConfig):
    """At most `max` whitespace-separated words."""

    type: Literal["max_words"]
    max: int = Field(ge=1)


class MaxCharsCheck(_CheckConfig):
    """At most `max` characters."""

    type: Literal["max_chars"]
    max: int = Field(ge=1)


class RegexForbiddenCheck(_CheckConfig):
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


_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_HOSTNAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")


def _is_hostname(host: str) -> bool:
    """True for an ASCII hostname made of valid labels (no IDNA library: ASCII or bust)."""
    return len(host) <= 253 and _HOSTNAME.fullmatch(host) is not None


def _bare_host(value: str) -> str:
    """A domain of links_allowed, lower-cased; rejects schemes, paths, ports and non-ASCII."""
    host = value.strip().lower().removesuffix(".")
    if not host.isascii():
        raise ValueError(f"domain {value!r} contains non-ASCII characters (write it in punycode, xn--…)")
    if not _is_hostname(host):
        raise ValueError(f"domain {value!r} is not a bare host like example.com (no scheme, path or port)")
    return host


class LinksAllowedCheck(_CheckConfig):
    """Every link must point to one of `domains` (or a subdomain), optionally over https only."""

    type: Literal["links_allowed"]
    domains: list[Annotated[str, AfterValidator(_bare_host)]] = Field(min_length=1)
    require_https: bool = False


class ValidJsonCheck(_CheckConfig):
    """The output (or each ```json block in it) parses as JSON."""

    type: Literal["valid_json"]


class ValidYamlCheck(_CheckConfig):
    """The output (or each ```yaml block in it) parses as YAML."""

    type: Literal["valid_yaml"]


class PythonParsesCheck(_CheckConfig):
    """The output (or each ```python block in it) parses as Python; nothing is executed."""

    type: Literal["python_parses"]


class NoSecretsCheck(_CheckConfig):
    """No API keys, tokens, private keys or assigned passwords in the output."""

    type: Literal["no_secrets"]


class ReadingGradeCheck(_CheckConfig):
    """Flesch–Kincaid grade level at most `max`."""

    type: Literal["reading_grade"]
    max: float = Field(ge=1, le=20)


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
_MODELS: dict[str, type[_CheckConfig]] = {
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
CHECK_TYPES: tuple[str, ...] = tuple(_MODELS)
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


# --- runners: terms, phrases, lengths, regex ------------------------------------------------


def _context(text: str, start: int, end: int, width: int = 30) -> str:
    """The hit with some text either side, on one line."""
    left = ("…" if start > width else "") + text[max(0, start - width) : start]
    right = text[end : end + width] + ("…" if end + width < len(text) else "")
    return " ".join((left + text[start:end] + right).split())


def _n(count: int, noun: str) -> str:
    """'1 link', '3 links'."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _line_of(text: str, offset: int) -> int:
    """1-based line number of a character offset."""
    return text.count("\n", 0, offset) + 1


@lru_cache(maxsize=4)
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


def _forbidden_terms(cfg: ForbiddenTermsCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    found = []
    for term in cfg.terms:
        if span := _find_term(term, output, folded):
            start, end = span
            found.append((start, term, output[start:end], _context(output, start, end)))
    found.sort()
    if not found:
        return True, f"none of {len(cfg.terms)} forbidden terms found", ""
    detail = "; ".join(f'forbidden term "{t}" found: "{ctx}"' for _, t, _, ctx in found)
    return False, detail, found[0][2]


def _required_phrases(cfg: RequiredPhrasesCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    missing = [p for p in cfg.phrases if _find_term(p, output, folded) is None]
    if not missing:
        return True, f"all {len(cfg.phrases)} required phrases present", ""
    return False, "; ".join(f'required phrase "{p}" missing' for p in missing), ""


def _max_words(cfg: MaxWordsCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    n = len(output.split())
    return n <= cfg.max, f"{n} words (limit {cfg.max})", ""


def _max_chars(cfg: MaxCharsCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    n = len(output)
    return n <= cfg.max, f"{n} characters (limit {cfg.max})", ""


REGEX_TIMEOUT_S = 1.0
"""Longest a rubric's forbidden pattern may search one output before the check fails closed."""


def _regex_forbidden(cfg: RegexForbiddenCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    # Why the `regex` module: it takes a timeout, so an author's pattern with catastrophic
    # backtracking ("(x+x+)+y") fails this check instead of freezing the page or a worker.
    flags = regex.IGNORECASE if cfg.ignore_case else 0
    try:
        m = regex.search(cfg.pattern, output, flags, timeout=REGEX_TIMEOUT_S)
    except TimeoutError:
        return False, (f"forbidden pattern /{cfg.pattern}/ took longer than {REGEX_TIMEOUT_S:g} s on this output "
                       "and was stopped; simplify the pattern (nested repeats like (a+)+ backtrack)"), ""
    if not m:
        return True, f"forbidden pattern /{cfg.pattern}/ not found", ""
    ctx = _context(output, m.start(), m.end())
    return False, f'forbidden pattern /{cfg.pattern}/ matched: "{ctx}"', m.group(0)


# --- runner: links --------------------------------------------------------------------------

# Links are found on the ORIGINAL text, never the folded one: folding maps Cyrillic "а" to "a",
# which is exactly the look-alike host ("аcme.com") this check exists to catch.
_URL_STOP = r"[^\s<>\"'`]"
_MD_TARGET = re.compile(r"\]\(([^()\n]*(?:\([^()\n]*\)[^()\n]*)*)\)")
_MD_TITLE = re.compile(r"(\S+)\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\))")
_RAW_URL = re.compile(rf"(?<![\w+.-])[a-z][a-z0-9+.-]*://{_URL_STOP}*", re.IGNORECASE)
_BARE_WWW = re.compile(rf"(?<![\w.@/:-])www\.{_URL_STOP}+", re.IGNORECASE)
_TRAILING = ".,;:!?)]}*_'\"…"
_CLOSERS = {")": "(", "]": "[", "}": "{"}
MAX_LISTED = 10
"""Offending links or secrets named in a detail; past this many the rest are counted."""


def _trim(link: str) -> str:
    """Drop trailing punctuation that ends the sentence rather than the URL (keeps balanced ')')."""
    while link and link[-1] in _TRAILING:
        opener = _CLOSERS.get(link[-1])
        if opener and link.count(opener) >= link.count(link[-1]):
            break
        link = link[:-1]
    return link


def _markdown_targets(text: str) -> list[tuple[int, int, str]]:
    """(start, end, target) of each markdown link target, title and <…> removed."""
    found = []
    for m in _MD_TARGET.finditer(text):
        raw = m.group(1)
        target, start = raw.strip(), m.start(1) + len(raw) - len(raw.lstrip())
        if target.startswith("<") and target.endswith(">"):
            target, start = target[1:-1], start + 1
        elif titled := _MD_TITLE.fullmatch(target):
            target = titled.group(1)
        found.append((start, m.end(1), target))
    return found


def _find_links(text: str) -> list[tuple[int, str]]:
    """(offset, link as it appears) for markdown targets, http(s)-like URLs and bare www. hosts."""
    targets = _markdown_targets(text)
    links = [(start, target) for start, _, target in targets]
    covered = [(start, end) for start, end, _ in targets]
    for pattern in (_RAW_URL, _BARE_WWW):
        for m in pattern.finditer(text):
            if any(a <= m.start() < b for a, b in covered):
                continue
            links.append((m.start(), _trim(m.group(0))))
            covered.append((m.start(), m.end()))
    return sorted(links)


def _host_problem(host: str, domains: list[str]) -> str | None:
    """Why a link's host is not acceptable, or None."""
    if not host.isascii():
        return f"host '{host}' contains non-ASCII characters (look-alike letters?)"
    host = host.removesuffix(".")
    if not _is_hostname(host):
        return f"host '{host}' is not a valid hostname"
    if not any(host == d or host.endswith("." + d) for d in domains):
        return f"host '{host}' is not an allowed domain"
    return None


def _link_problem(link: str, cfg: LinksAllowedCheck) -> str | None:
    """Why a link fails the check, or None when it is allowed."""
    if any(c.isspace() for c in link):
        return "contains spaces"
    if "\\" in link.split("?", 1)[0].split("#", 1)[0]:
        # Browsers read "\" as "/" in http(s) URLs, so "https://evil.com\@example.com" opens evil.com
        # while a URL parser sees the host example.com.
        return "contains a backslash (browsers read it as '/', so the real host may differ)"
    bare = link.lower().startswith("www.")
    try:
        parts = urlsplit("http://" + link if bare else link)
        parts.port  # noqa: B018  # why: .port raises ValueError on a malformed port
    except ValueError as exc:
        return f"malformed URL ({exc})"
    scheme = parts.scheme.lower()
    if not scheme:
        return "relative link: no scheme or host"
    if scheme not in ("http", "https"):
        return f"scheme '{scheme}:' is not http or https"
    if not parts.hostname:
        return "missing host"
    if problem := _host_problem(parts.hostname, cfg.domains):
        return problem
    if cfg.require_https and (bare or scheme != "https"):
        return "not https"
    return None


def _listed(items: list[str]) -> str:
    """Items joined with "; ", the ones past MAX_LISTED counted."""
    more = f"; (+{len(items) - MAX_LISTED} more)" if len(items) > MAX_LISTED else ""
    return "; ".join(items[:MAX_LISTED]) + more


def _links_allowed(cfg: LinksAllowedCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    # Why skip "#…" and empty targets: they point inside the document, not to any host.
    links = [(i, link) for i, link in _find_links(output) if link and not link.startswith("#")]
    bad = [(link, why) for _, link in links if (why := _link_problem(link, cfg))]
    if not bad:
        allowed = ", ".join(cfg.domains)
        return True, f"{_n(len(links), 'link')}, all to allowed domains ({allowed})" if links else "no links found", ""
    # Credentials in a link are never repeated: the detail is stored with the round and shown.
    return False, _listed([f'link "{_no_userinfo(link)}": {why}' for link, why in bad]), _no_userinfo(bad[0][0])


def _no_userinfo(link: str) -> str:
    """The link with any "user:password@" replaced by "…@"."""
    return re.sub(r"^([a-zA-Z][\w+.-]*://)[^/?#@\s]*@", r"\1…@", link)


# --- runners: JSON, YAML, Python ------------------------------------------------------------

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*")

_ParseError = tuple[int, int | None, str]
"""(line, column or None, message) of a parse error, relative to the parsed text."""


@dataclass(frozen=True)
class _Block:
    number: int
    fence_line: int
    text: str
    closed: bool


def _fenced_blocks(text: str, tags: frozenset[str]) -> list[_Block]:
    """The fenced code blocks whose info string starts with one of `tags`, in order."""
    lines, blocks, i = text.split("\n"), [], 0
    while i < len(lines):
        m = _FENCE_OPEN.fullmatch(lines[i].rstrip("\r"))
        if not m:
            i += 1
            continue
        fence = m.group(1)
        close = re.compile(rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*")
        j = i + 1
        while j < len(lines) and not close.fullmatch(lines[j].rstrip("\r")):
            j += 1
        if m.group(2).lower() in tags:
            blocks.append(_Block(len(blocks) + 1, i + 1, "\n".join(lines[i + 1 : j]), j < len(lines)))
        i = j + 1
    return blocks


class _NotJson(ValueError):
    """NaN or Infinity: Python's parser accepts them, JSON does not."""


def _no_constant(name: str) -> None:
    raise _NotJson(name)


def _json_error(text: str) -> _ParseError | None:
    try:
        json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        return exc.lineno, exc.colno, exc.msg
    except _NotJson as exc:
        m = re.search(rf"(?<![\w\"]){re.escape(str(exc))}(?![\w\"])", text)
        line = _line_of(text, m.start()) if m else 1
        column = m.start() - text.rfind("\n", 0, m.start()) if m else None
        return line, column, f"{exc} is not valid JSON (write a number or null)"
    except (ValueError, RecursionError) as exc:  # e.g. an integer past the digit limit, deep nesting
        return 1, None, str(exc) or "nested too deeply"
    return None


def _yaml_error(text: str) -> _ParseError | None:
    try:
        # safe_load_all: the safe loader of safe_load, but a "---" separated stream is valid too.
        for _ in yaml.safe_load_all(text):
            pass
        for node in yaml.compose_all(text, Loader=yaml.SafeLoader):
            if duplicate := _duplicate_key(node):
                return duplicate
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        message = f"{context}: {problem}" if context else problem
        return (mark.line + 1, mark.column + 1, message) if mark else (1, None, message)
    except RecursionError:
        return 1, None, "nested too deeply"
    return None


_PY_FILENAME = "<santa-output>"
# Compiling an output may warn (e.g. an invalid escape sequence: valid code, noisy). A module-wide
# filter for that file name, set once: catch_warnings() is not thread-safe and checks run in threads.
for _category in (SyntaxWarning, DeprecationWarning):  # Python 3.11 says DeprecationWarning, 3.12+ SyntaxWarning
    warnings.filterwarnings("ignore", category=_category, module=re.escape(_PY_FILENAME))


def _duplicate_key(node: yaml.Node | None) -> _ParseError | None:
    """A key given twice in one mapping: YAML forbids it, though PyYAML keeps the last one silently."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(getattr(key, "value", ""))
            if name in seen:
                return key.start_mark.line + 1, key.start_mark.column + 1, f"duplicate key {name!r}"
            seen.add(name)
            if found := _duplicate_key(value):
                return found
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if found := _duplicate_key(item):
                return found
    return None


def _python_error(text: str) -> _ParseError | None:
    # Why compile and never exec: compiling catches what a parse alone lets through ("return"
    # outside a function, "break" outside a loop) and runs nothing.
    try:
        compile(text, _PY_FILENAME, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc.lineno or 1, exc.offset, exc.msg
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        return 1, None, str(exc) or type(exc).__name__
    return None


def _located(error: _ParseError, first_line: int) -> str:
    """'line L, column C: message' with L counted in the whole output."""
    line, column, message = error
    where = f"line {first_line + line - 1}" + (f", column {column}" if column else "")
    return f"{where}: {message}"


def _parses(
    output: str, language: str, tags: frozenset[str], parse: Callable[[str], _ParseError | None]
) -> tuple[bool, str, str]:
    """Parse the tagged fenced blocks, or the whole output when it has none."""
    # Why no evidence: a parser reports where it gave up, often far from the actual mistake
    # ("'(' was never closed" points at the opening), so it must not pin the fix to that line.
    blocks = _fenced_blocks(output, tags)
    if not blocks:
        if not output.strip():
            return False, f"the output is empty: no {language} to parse", ""
        if (error := parse(output)) is not None:
            return False, f"the output is not valid {language}: {_located(error, 1)}", ""
        return True, f"the output parses as {language}", ""
    problems = []
    for b in blocks:
        where = f"{language} block {b.number} (fence at line {b.fence_line})"
        if not b.closed:
            problems.append(f"{where}: the fence is never closed")
        elif not b.text.strip():
            problems.append(f"{where}: the block is empty")
        elif (error := parse(b.text)) is not None:
            problems.append(f"{where}: {_located(error, b.fence_line + 1)}")
    if problems:
        return False, "; ".join(problems), ""
    return True, f"{_n(len(blocks), language + ' block')} found, all parse", ""


def _valid_json(cfg: ValidJsonCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    return _parses(output, "JSON", frozenset({"json"}), _json_error)


def _valid_yaml(cfg: ValidYamlCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    return _parses(output, "YAML", frozenset({"yaml", "yml"}), _yaml_error)


def _python_parses(cfg: PythonParsesCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    return _parses(output, "Python", frozenset({"python", "py", "python3"}), _python_error)


# --- runner: secrets ------------------------------------------------------------------------

_SECRET_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(regex))
    for kind, regex in (
        ("private key block", r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"),
        ("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        ("OpenAI API key", r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|\bsk-[A-Za-z0-9]{32,}\b"),
        ("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}"),
        ("Slack token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
        ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        ("Stripe live key", r"\b(?:sk|rk)_live_[0-9A-Za-z]{16,}"),
        ("JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}"),
        # A bearer token has a digit: "bearer instruments-and-certificates…" is prose.
        ("bearer token", r"(?i)\bbearer[ \t]+(?=[A-Za-z._~+/-]*\d)[A-Za-z0-9._~+/-]{20,}=*"),
        ("password in a URL", r"(?i)\b[a-z][a-z0-9+.-]*://[^\s:/@]*:[^\s@/]{3,}@"),
    )
)
# `api_key = "…"`, `password: '…'`, `SECRET=…`, `"token": "…"`: a secret-named key assigned a
# value of 12+ non-space characters. The key must end at the keyword (plus key/value/id) so
# "tokenizer: bert-base-uncased" is not a token.
_ASSIGNMENT = re.compile(
    r"(?i)(?<![\w-])(?P<key>[\w-]*?(?:api[_-]?key|secret(?:[_-]?(?:access[_-]?)?key)?|token|passw(?:or)?d|pwd"
    r"|private[_-]?key|access[_-]?key(?:[_-]?id)?))(?![\w-])[\"']?[ \t]*(?::=|=>|[:=])[ \t]*"
    r"(?P<quote>[\"'`]?)(?P<value>[^\s\"'`]{12,})"
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:<.*>|\[.*\]|\{\{.*\}\}|\$\{.*\}|\$\(.*\)|\$[a-z_][a-z0-9_]*|%\(?\w*\)?s)$"
    r"|changeme|change[_-]me|example|placeholder|redacted|your[_-]|[_-]here$|dummy|sample|fake|replace[_-]?me"
    r"|insert[_-]|x{4,}|\*{3,}|\.{3,}|…"
)
_CODE_REFERENCE = re.compile(r"[(\[{]|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")


def _is_placeholder(value: str, quoted: bool) -> bool:
    """True for values that are obviously not a real secret: templates, x-runs, code references."""
    if _PLACEHOLDER.search(value) or len(set(value.lower())) < 4:
        return True
    # Unquoted `token = os.environ["TOKEN"]` or `password = settings.db_password` is code that
    # reads a secret, not a secret.
    return not quoted and _CODE_REFERENCE.search(value) is not None


def _redact(secret: str) -> str:
    """The first 4 characters and an ellipsis: enough to find it, too little to use it."""
    return secret[:4] + "…"


def _find_secrets(text: str) -> list[tuple[int, str, str]]:
    """(offset, kind, redacted) of each secret-shaped string, in text order."""
    found: list[tuple[int, int, str, str]] = []
    for kind, pattern in _SECRET_SHAPES:
        found += [(m.start(), m.end(), kind, _redact(m.group(0))) for m in pattern.finditer(text)]
    for m in _ASSIGNMENT.finditer(text):
        start, end, value = m.start("value"), m.end("value"), m.group("value")
        if _is_placeholder(value, bool(m.group("quote"))) or any(a < end and start < b for a, b, _, _ in found):
            continue
        found.append((start, end, f'value of "{m.group("key")}"', _redact(value)))
    return [(start, kind, redacted) for start, _, kind, redacted in sorted(found)]


def _no_secrets(cfg: NoSecretsCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    found = _find_secrets(output)
    if not found:
        return True, "no secret-shaped strings found", ""
    detail = _listed([f"{kind} {redacted} at line {_line_of(output, i)}" for i, kind, redacted in found])
    # SECURITY: evidence is normally the exact offending text, but here that would copy the
    # secret into the stored issue, the page and the fix prompt. The redacted form is given
    # instead; the fix agent finds no anchor for it and falls back to its no-evidence scope limit.
    return False, detail, found[0][2]


# --- runner: reading grade ------------------------------------------------------------------

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")  # "don't" is one word
_SENTENCE_END = re.compile(r"[.!?]+")


@dataclass(frozen=True)
class ReadingStats:
    """Counts behind a Flesch–Kincaid grade level."""

    sentences: int
    words: int
    syllables: int
    grade: float
    longest_sentence: str


@lru_cache(maxsize=1)
def _dictionary() -> pyphen.Pyphen:
    return pyphen.Pyphen(lang="en_US")


@lru_cache(maxsize=65536)
def syllable_count(word: str) -> int:
    """Syllables of a word as older textstat releases counted them: pyphen hyphenation points + 1."""
    return len(_dictionary().positions(word)) + 1


def reading_stats(text: str) -> ReadingStats | None:
    """Flesch–Kincaid grade of a text, or None when it has no words to grade."""
    runs = [run for run in _SENTENCE_END.split(text) if _WORD.search(run)]
    if not runs:
        return None
    words = [w for run in runs for w in _WORD.findall(run)]
    syllables = sum(syllable_count(w) for w in words)
    grade = 0.39 * (len(words) / len(runs)) + 11.8 * (syllables / len(words)) - 15.59
    longest = max(runs, key=lambda run: len(_WORD.findall(run)))
    return ReadingStats(len(runs), len(words), syllables, grade, " ".join(longest.split()))


def _reading_grade(cfg: ReadingGradeCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    stats = reading_stats(output)
    if stats is None:
        return True, "nothing to grade: the output has no words", ""
    longest = stats.longest_sentence
    # Short: the detail is stored and shown, and a long sentence may hold text that should not spread.
    longest = longest if len(longest) <= 60 else longest[:59] + "…"
    detail = (
        f"grade {stats.grade:.1f} (limit {cfg.max:g}): {_n(stats.sentences, 'sentence')}, {_n(stats.words, 'word')}, "
        f'{_n(stats.syllables, "syllable")}; longest sentence: "{longest}"'
    )
    # Compare what the detail shows, so "grade 8.0 (limit 8)" never reads as a failure.
    return round(stats.grade, 1) <= cfg.max, detail, ""


# --- running --------------------------------------------------------------------------------

_RUNNERS: dict[str, Callable[..., tuple[bool, str, str]]] = {
    "forbidden_terms": _forbidden_terms,
    "required_phrases": _required_phrases,
    "regex_forbidden": _regex_forbidden,
    "no_secrets": _no_secrets,
    "links_allowed": _links_allowed,
    "max_words": _max_words,
    "max_chars": _max_chars,
    "reading_grade": _reading_grade,
    "valid_json": _valid_json,
    "valid_yaml": _valid_yaml,
    "python_parses": _python_parses,
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
    ok, detail, evidence = _RUNNERS[kind](cfg, output, folded)
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


# --- the editor's form ----------------------------------------------------------------------

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
            CheckField("domains", "lines", "Domains", "Bare hosts such as example.com; their subdomains are allowed too.", ()),
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
    "regex_forbidden": lambda c: f"forbidden pattern /{c.get('pattern', '')}/"
    + (" (ignore case)" if c.get("ignore_case") else ""),
    "no_secrets": lambda c: "no secrets (API keys, tokens, private keys, passwords)",
    "links_allowed": lambda c: _shortlist("links only to", c.get("domains"), 3)
    + (", https only" if c.get("require_https") else ""),
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
        model_field = _MODELS[kind].model_fields[field.name]
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
