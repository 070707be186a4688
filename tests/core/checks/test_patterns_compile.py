"""Patterns are compiled at their first search (`bounded.Pattern`), so a process pays only for the ones it uses.
The price: a malformed pattern would surface only when a text reaches it. This test reaches every one: each
module-level pattern of the checks and the batch patterns, and both patterns of every language's table."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import santa_core.batch
import santa_core.checks
from santa_core.checks import languages
from santa_core.checks.bounded import Pattern


def module_patterns() -> list[tuple[str, Pattern]]:
    """(module.name, pattern) for every Pattern held at module level, also inside a tuple, list or dict."""
    found = []
    for package in (santa_core.checks, santa_core.batch):
        for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                values = (
                    value.values() if isinstance(value, dict) else value if isinstance(value, tuple | list) else [value]
                )
                found += [(f"{info.name}.{name}", v) for v in values if isinstance(v, Pattern)]
    return found


def test_patterns_are_compiled_at_their_first_search_not_at_import() -> None:
    fresh = Pattern(r"(?<!\w)never-searched")
    assert fresh._compiled is None
    assert fresh.search("a never-searched word") is not None and fresh._compiled is not None


def test_the_checks_hold_many_patterns() -> None:
    assert len(module_patterns()) >= 50  # the walk below walks something


@pytest.mark.parametrize(("where", "pattern"), module_patterns(), ids=[w for w, _ in module_patterns()])
def test_every_module_pattern_is_well_formed(where: str, pattern: Pattern) -> None:
    assert pattern.compile() is pattern


@pytest.mark.parametrize("iso", sorted(languages.tables()))
def test_every_language_table_compiles(iso: str) -> None:
    table = languages.tables()[iso]
    table.pattern.compile()
    table.trigger.compile()
