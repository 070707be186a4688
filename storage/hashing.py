"""Content hashes that prove stored text is what was sent and shown."""

from __future__ import annotations

import hashlib
import json


def sha256_text(text: str) -> str:
    """Hex SHA-256 of UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(request: dict, response: str) -> str:
    """Hash of an LLM call: canonical JSON of the request, a newline, the response."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256_text(canonical + "\n" + response)


def json_hash(value: object) -> str:
    """Hex SHA-256 of a value's canonical JSON (the before/after hashes of audit events)."""
    return sha256_text(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str))
