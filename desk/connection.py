"""Asking a model provider whether it answers, without paying: its model list (Test connection on the Settings page,
and the check before a Message Batch is sent that the injection screen's provider answers). Never the key on a page.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import anthropic

from desk import clients
from santa_core import providers
from santa_core.providers import ANTHROPIC, MESSAGES_API, Provider, scrub_keys

DEFAULT_URL = {ANTHROPIC: "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
TEST_TIMEOUT_S = 10.0
"""How long Test connection waits for the model list (no retries: the person clicks again)."""
TEST_DEADLINE_S = 15.0
"""The most Test connection keeps the page waiting in all (a server that trickles bytes beats a read timeout)."""
MAX_LISTED = 40
"""Models of a provider's list shown by name (the rest are counted)."""
MAX_MESSAGE_CHARS = 400
"""The longest error a provider's answer may put on the page."""


def redacted_base_url(url: str | None) -> str:
    """The URL without secrets: user and password become ***, every query value ***, no fragment."""
    if not url:
        return ""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    authority, slash, path = rest.partition("/")
    if "@" in authority:  # credentials, however the URL parses (a missing scheme makes urlsplit miss them)
        authority = "***@" + authority.rpartition("@")[2]
        url = f"{scheme}{sep}{authority}{slash}{path}"
        if not sep:
            return f"***@{redacted_base_url('http://' + url[4:]).removeprefix('http://')}"
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(not a valid URL)"
    netloc = (
        ("***@" if parts.username or parts.password or "@" in parts.netloc else "")
        + (f"[{host}]" if ":" in host else host)
        + port
    )
    query = urlencode([(k, "***") for k, _ in parse_qsl(parts.query, keep_blank_values=True)], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def shown_url(provider: Provider) -> str:
    """The provider's base URL for a page (redacted), or the default one it uses."""
    if provider.base_url:
        return redacted_base_url(provider.base_url)
    default = DEFAULT_URL.get(provider.name)
    return f"{default} (default)" if default else "(none)"


def key_text(provider: Provider) -> str:
    """'key present (OPENAI_API_KEY)', 'no key (set OPENAI_API_KEY)' or 'no key needed' — never the key."""
    if provider.key_env is None:
        return "no key needed"
    where = "ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN" if provider.name == ANTHROPIC else provider.key_env
    return f"key present ({where})" if provider.key_present() else f"no key (set {where})"


@dataclass(frozen=True)
class ConnectionTest:
    """What Test connection found: the model ids the provider lists, or exactly what failed."""

    models: tuple[str, ...] = ()
    total: int = 0
    problem: str | None = None


def _key_value(provider: Provider) -> str:
    """The key, only so an error message that echoes it can be cleaned before it is shown."""
    if provider.name == ANTHROPIC:
        return os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN") or ""
    return os.environ.get(provider.key_env or "", "") if provider.key_env else ""


def _error_message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return str(message)
    return str(getattr(exc, "message", "") or exc)


def _clean(message: str, provider: Provider) -> str:
    key = _key_value(provider)
    if len(key) >= 4:
        message = message.replace(key, "***")
    message = scrub_keys(message)
    message = " ".join(message.split())
    return message if len(message) <= MAX_MESSAGE_CHARS else message[:MAX_MESSAGE_CHARS] + "…"


def check_connection(provider: Provider) -> ConnectionTest:
    """Ask the provider for its model list, once (no retries), and say what it lists or what failed. A person's
    test goes through `santa_core.config.try_connection`, which asks their roles first."""
    if not provider.key_present():
        return ConnectionTest(
            problem=f"nothing was sent: {key_text(provider)} in the environment or .streamlit/secrets.toml"
        )
    url = shown_url(provider)
    found: list[ConnectionTest] = []
    # A daemon thread: a server that trickles bytes past the deadline is abandoned without holding the app's exit.
    worker = threading.Thread(
        target=lambda: found.append(_list_models(provider, url)), daemon=True, name=f"provider-test-{provider.name}"
    )
    worker.start()
    worker.join(TEST_DEADLINE_S)
    return found[0] if found else ConnectionTest(problem=f"no complete answer from {url} within {TEST_DEADLINE_S:g} s")


def _sdk_errors(name: str) -> tuple[Any, ...]:  # the classes of both SDKs, which share their attributes
    """The SDKs' error class `name`, of each SDK this process has loaded (read as an error reaches the `except`: a
    chat provider's request loads the openai SDK before it can raise one of its errors; an Anthropic one never
    loads it)."""
    loaded = [anthropic, *(m for m in (sys.modules.get("openai"),) if m is not None)]
    return tuple(getattr(sdk, name) for sdk in loaded)


def _list_models(provider: Provider, url: str) -> ConnectionTest:
    """One model-list request; what it lists or what failed (never raises)."""
    try:
        if provider.protocol == MESSAGES_API:
            listed = clients.shared_client().with_options(max_retries=0, timeout=TEST_TIMEOUT_S).models.list()
            ids = [m.id for m in itertools.islice(listed, 500)]
        else:
            chat = clients.chat_client(provider).with_options(max_retries=0, timeout=TEST_TIMEOUT_S).models.list()
            ids = [m.id for m in itertools.islice(chat, 500)]
    except _sdk_errors("APIStatusError") as exc:
        problem = f"HTTP {exc.status_code} from {url}: {_error_message(exc)}"
    except _sdk_errors("APITimeoutError"):
        problem = f"no answer from {url} within {TEST_TIMEOUT_S:g} s (timed out)"
    except _sdk_errors("APIConnectionError") as exc:
        cause = exc.__cause__ or exc.__context__
        problem = f"could not connect to {url}: {cause or exc.message}"
    except Exception as exc:  # noqa: BLE001 - a bad URL or an odd answer: say what, never a traceback
        problem = f"{type(exc).__name__}: {exc}"
    else:
        return ConnectionTest(models=tuple(ids[:MAX_LISTED]), total=len(ids))
    return ConnectionTest(problem=_clean(problem, provider))


def screen_answers(model: str) -> str | None:
    """Why the injection screen's provider would not answer now (its model list: no model is asked, nothing is
    paid), else None. A model that cannot be called at all (no key, an unknown provider) is the runner's
    `screen_problem`, asked before this."""
    provider = providers.provider_of(model)
    if provider is None or providers.key_problem(model):
        return None
    result = check_connection(provider)
    if result.problem is None:
        return None
    return (
        f"the injection screen's provider {provider.name} does not answer ({result.problem}), so the screen "
        f"could not run at each item's gate; fix its key or address in Settings, or turn the screen off"
    )
