"""The secrets check: no API keys, tokens, private keys or assigned passwords; findings are stored redacted."""

from __future__ import annotations

import re
from typing import Literal

from santa_core.checks.base import CheckConfigBase, CheckResult, line_of, listed
from santa_core.checks.folding import Folded


class NoSecretsCheck(CheckConfigBase):
    """No API keys, tokens, private keys or assigned passwords in the output."""

    type: Literal["no_secrets"]


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
        # A scheme starts where a run of scheme characters starts and is taken whole: "\b[a-z][a-z0-9+.-]*" began
        # again at every letter of "a.a.a.…" and scanned to its end (quadratic).
        ("password in a URL", r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*+://[^\s:/@]*:[^\s@/]{3,}@"),
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


def no_secrets(cfg: NoSecretsCheck, output: str, folded: Folded) -> CheckResult:
    found = _find_secrets(output)
    if not found:
        return True, "no secret-shaped strings found", ""
    detail = listed([f"{kind} {redacted} at line {line_of(output, i)}" for i, kind, redacted in found])
    # SECURITY: evidence is normally the exact offending text, but here that would copy the
    # secret into the stored issue, the page and the fix prompt. The redacted form is given
    # instead; the fix agent finds no anchor for it and falls back to its no-evidence scope limit.
    return False, detail, found[0][2]
