"""Content hashes that prove stored text is what was sent and shown (over `santa_core.text`)."""

from __future__ import annotations

from santa_core.text import canonical_json, sha256_text


def content_hash(request: dict, response: str) -> str:
    """Hash of an LLM call: canonical JSON of the request, a newline, the response."""
    return sha256_text(canonical_json(request) + "\n" + response)


def json_hash(value: object) -> str:
    """Hex SHA-256 of a value's canonical JSON, anything JSON cannot hold as its `str` (the before/after
    hashes of audit events)."""
    return sha256_text(canonical_json(value, default=str))
