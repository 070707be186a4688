"""Secrets files for the fail-closed tests: what Python's own TOML parser says about a broken one."""

from __future__ import annotations

import tomllib

ROLES_TYPO = '[santa.roles]\nadmin = ["kim@example.com"\neditor = ["*@example.com"]\n'
"""The measured case: an unclosed array under [santa.roles] used to turn sign-in off and make everyone an admin."""


def toml_error(text: str) -> str:
    """The parse error of `text` as `tomllib` words it (the expected detail: not ours to compute)."""
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return str(exc)
    raise AssertionError("the text parses")
