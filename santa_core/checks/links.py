"""The links check: every link must point to an allowed domain (optionally over https only).

Links are found on the ORIGINAL text, never the folded one: folding maps Cyrillic "а" to "a",
which is exactly the look-alike host ("аcme.com") this check exists to catch.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field

from santa_core.checks.base import CheckConfigBase, CheckResult, listed, plural
from santa_core.checks.folding import Folded

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


class LinksAllowedCheck(CheckConfigBase):
    """Every link must point to one of `domains` (or a subdomain), optionally over https only."""

    type: Literal["links_allowed"]
    domains: list[Annotated[str, AfterValidator(_bare_host)]] = Field(min_length=1)
    require_https: bool = False


_URL_STOP = r"[^\s<>\"'`]"
_MD_TARGET = re.compile(r"\]\(([^()\n]*(?:\([^()\n]*\)[^()\n]*)*)\)")
_MD_TITLE = re.compile(r"(\S+)\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\))")
_RAW_URL = re.compile(rf"(?<![\w+.-])[a-z][a-z0-9+.-]*://{_URL_STOP}*", re.IGNORECASE)
_BARE_WWW = re.compile(rf"(?<![\w.@/:-])www\.{_URL_STOP}+", re.IGNORECASE)
_TRAILING = ".,;:!?)]}*_'\"…"
_CLOSERS = {")": "(", "]": "[", "}": "{"}


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


def links_allowed(cfg: LinksAllowedCheck, output: str, folded: Folded) -> CheckResult:
    # Why skip "#…" and empty targets: they point inside the document, not to any host.
    links = [(i, link) for i, link in _find_links(output) if link and not link.startswith("#")]
    bad = [(link, why) for _, link in links if (why := _link_problem(link, cfg))]
    if not bad:
        allowed = ", ".join(cfg.domains)
        return (
            True,
            f"{plural(len(links), 'link')}, all to allowed domains ({allowed})" if links else "no links found",
            "",
        )
    # Credentials in a link are never repeated: the detail is stored with the round and shown.
    return False, listed([f'link "{_no_userinfo(link)}": {why}' for link, why in bad]), _no_userinfo(bad[0][0])


def _no_userinfo(link: str) -> str:
    """The link with any "user:password@" replaced by "…@"."""
    return re.sub(r"^([a-zA-Z][\w+.-]*://)[^/?#@\s]*@", r"\1…@", link)
