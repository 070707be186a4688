"""Whether this process may serve the desk, and to whom: the secrets read fail closed, sign-in configured or not,
and the address the server listens on.

Two rules, both fail closed:
- A secrets file that exists but cannot be read (a parse error, not UTF-8, unreadable, a folder where the file
  should be) stops every page with why. Only a missing file means "no sign-in": a typo in `[santa.roles]` must
  never turn sign-in off and make every visitor the local admin.
- Without sign-in everyone who reaches the app acts as the local user, an admin. So the app serves a loopback
  address only, unless `SANTA_ALLOW_ANONYMOUS=1` says a wider audience is meant. Streamlit listens on every
  interface when `server.address` is unset, which counts as not loopback; the committed `.streamlit/config.toml`
  sets `localhost`, so `streamlit run app.py` on a laptop just works.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import socket
import sys
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit import config
from streamlit.errors import StreamlitSecretNotFoundError
from streamlit.logger import get_logger

from santa_core.roles import role_patterns_problem
from ui.safe import escape_markdown

log = get_logger(__name__)

NO_SECRETS = "no-secrets-found"
"""Streamlit's error id for "no secrets file at any location": the one failure that means "no sign-in"."""
ALLOW_ANONYMOUS = "SANTA_ALLOW_ANONYMOUS"
"""Set to 1 to serve a desk without sign-in beyond loopback, on purpose (a trusted network)."""


class SecretsUnreadable(RuntimeError):
    """A secrets file exists but cannot be read: nothing of the desk may be served until it is fixed."""


def secrets_locations() -> list[str]:
    """Where Streamlit reads secrets, in order (`secrets.files`: ~/.streamlit/secrets.toml, then the project's)."""
    return [str(p) for p in config.get_option("secrets.files") or []]


def secrets() -> dict[str, Any]:
    """The secrets of every location, merged as Streamlit merges them; {} when no location holds a file.

    SecretsUnreadable when a location holds one that cannot be read. Streamlit itself treats a broken file like a
    missing one (its `load_if_toml_exists`), which is how a typo used to turn sign-in off.
    """
    # A link to nothing is a file that cannot be read, not a missing one: Streamlit would skip it as missing.
    if dangling := [p for p in secrets_locations() if os.path.islink(p) and not os.path.exists(p)]:
        raise SecretsUnreadable(
            _unreadable(FileNotFoundError(f"{dangling[0]}: a link to {os.readlink(dangling[0])}, which does not exist"))
        )
    try:
        found = st.secrets.to_dict()
    except StreamlitSecretNotFoundError as exc:
        if exc.error_id == NO_SECRETS:
            return {}
        raise SecretsUnreadable(_unreadable(exc)) from exc
    except Exception as exc:  # noqa: BLE001 - not readable (permissions, not UTF-8, a folder): broken, not missing
        raise SecretsUnreadable(_unreadable(exc)) from exc
    santa = found.get("santa", {})
    if isinstance(santa, dict) and "roles" in santa and (why := role_patterns_problem(santa["roles"])):
        # Read, but the roles cannot be applied: every person's first sign-in would stop on it, one page at a time.
        raise SecretsUnreadable(_unreadable(ValueError(f"[santa.roles]: {why}")))
    return found


def _unreadable(exc: BaseException) -> str:
    """One message: which file and what is wrong with it, and what happens meanwhile."""
    detail = str(exc) or type(exc).__name__
    existing = [p for p in secrets_locations() if os.path.exists(p)]
    if not any(p in detail for p in existing):  # e.g. a decoding error names no file: name the candidates
        detail = f"{' or '.join(existing) or 'the secrets'}: {type(exc).__name__}: {detail}"
    return (
        f"The secrets cannot be read, so nothing of the desk is served (a broken file must not turn sign-in "
        f"off). {detail}. Fix the file, then reload the page."
    )


def auth_configured() -> bool:
    """Whether an OIDC provider is set up (`[auth]` in the secrets). SecretsUnreadable when they cannot be read."""
    return "auth" in secrets()


def where_secrets_are() -> str:
    """The secrets files that exist, for the start line ("st.secrets" when none: secrets given in code, AppTest)."""
    return ", ".join(p for p in secrets_locations() if os.path.exists(p)) or "st.secrets"


@functools.lru_cache(maxsize=16)  # asked on every page: a host name is resolved once per process
def is_loopback(address: str | None) -> bool:
    """Whether a server address reaches only this machine: `localhost`, 127.0.0.0/8, ::1, or a name that resolves
    only to those. Unset or empty is not: Streamlit then listens on every interface. A name that does not resolve,
    or a unix socket, is not either (fail closed)."""
    host = (address or "").strip()
    if not host:
        return False
    if host.casefold() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except (OSError, UnicodeError):
        return False
    return bool(found) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in found)


@dataclass(frozen=True)
class Serving:
    """Whether the desk may be served as configured, and the one line that says how."""

    allowed: bool
    line: str


def serving(address: str | None, auth_in: str | None, allow_anonymous: bool) -> Serving:
    """The decision: sign-in configured (`auth_in` names where), else loopback only, else only on purpose."""
    where = address or "every interface (server.address unset)"
    if auth_in is not None:
        return Serving(True, f"santa: sign-in: configured ([auth] in {auth_in})")
    if is_loopback(address):
        return Serving(True, f"santa: sign-in: off, serving loopback only ({address})")
    if allow_anonymous:
        return Serving(
            True,
            f"santa: sign-in: off on {where} because {ALLOW_ANONYMOUS}=1: everyone who reaches "
            "it acts as the local user, an admin",
        )
    return Serving(
        False,
        f"santa: refusing to serve {where} without sign-in: everyone who reaches it would act as "
        "the local user, an admin. Configure [auth] in .streamlit/secrets.toml (docs/operations.md, "
        "Sign-in), serve on this machine only (--server.address localhost), or set "
        f"{ALLOW_ANONYMOUS}=1 to serve it without sign-in on purpose.",
    )


def anonymous_allowed() -> bool:
    """SANTA_ALLOW_ANONYMOUS=1 (exactly 1: anything else is not an explicit yes)."""
    return os.environ.get(ALLOW_ANONYMOUS, "").strip() == "1"


def current_serving() -> Serving:
    """The decision for this process now. SecretsUnreadable when the secrets cannot be read."""
    auth_in = where_secrets_are() if auth_configured() else None
    return serving(config.get_option("server.address"), auth_in, anonymous_allowed())


def refusal() -> str | None:
    """Why this page may show nothing of the desk (unreadable secrets, or no sign-in beyond loopback), or None."""
    try:
        decision = current_serving()
    except SecretsUnreadable as exc:
        return str(exc)
    return None if decision.allowed else decision.line


_said: set[str] = set()


def stop_if_refused(why: str | None) -> None:
    """A page that may show nothing of the desk says why and stops (the log says it once)."""
    if why is None:
        return
    if why not in _said:  # once per process and reason, not once per rerun
        _said.add(why)
        log.error(why)
    st.title(":material/rate_review: Santa — review desk")
    st.error(escape_markdown(why))
    st.stop()


def announce_at_start() -> None:
    """At server start, one line on stderr says how sign-in stands; SystemExit(2) when the desk would be served
    without sign-in beyond loopback. Unreadable secrets do not stop the server: every page says why instead."""
    try:
        decision = current_serving()
    except SecretsUnreadable as exc:
        print(f"santa: sign-in: unknown. {exc}", file=sys.stderr, flush=True)
        return
    print(decision.line, file=sys.stderr, flush=True)
    if not decision.allowed:
        raise SystemExit(2)
