"""The model API clients this process shares: one per API host and credential (a connection pool, no conversation)."""

from __future__ import annotations

import functools
import hashlib
import os
from typing import TYPE_CHECKING

import anthropic

from santa_core import providers

if TYPE_CHECKING:  # imported where a client is made: a process that calls no such provider never loads the SDK
    import openai


@functools.lru_cache(maxsize=4)
def _client(base_url: str | None, credential_digest: str) -> anthropic.Anthropic:
    """One HTTP client per API host and credential, shared by every call of this process.

    Why shared: a client holds a connection pool; one per call would leak connections. Sharing
    the client shares no conversation: every request carries only its own prompt.
    """
    # No retries in the SDK: the adapters retry themselves, each attempt on record before it leaves.
    return anthropic.Anthropic(max_retries=0, timeout=120.0, base_url=base_url)


def shared_client() -> anthropic.Anthropic:
    """The client for the current ANTHROPIC_BASE_URL and key (a changed key gets a new client)."""
    key = os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN") or ""
    return _client(os.environ.get("ANTHROPIC_BASE_URL") or None, hashlib.sha256(key.encode()).hexdigest())


@functools.lru_cache(maxsize=16)
def _chat_client(base_url: str | None, key: str, credential_digest: str) -> openai.OpenAI:
    """One Chat Completions client per endpoint and credential (a connection pool, no conversation)."""
    import openai  # about half a second of CPU, paid only by a process that calls such a provider

    return openai.OpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=120.0)


NO_KEY = "not-needed"
"""What a named endpoint that needs no key (a local server) is sent as its key: the SDK insists on one."""


def chat_client(provider: providers.Provider) -> openai.OpenAI:
    """The shared client of an OpenAI-compatible provider, for its current base URL and key."""
    key = (os.environ.get(provider.key_env) if provider.key_env else NO_KEY) or ""
    base = provider.base_url or ("https://api.openai.com/v1" if provider.name == providers.OPENAI else None)
    return _chat_client(base, key, hashlib.sha256(key.encode()).hexdigest())
