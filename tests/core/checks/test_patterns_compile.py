"""Patterns are compiled at their first search (`bounded.Pattern`), so a process pays only for the ones it uses.
The price: a malformed pattern would surface only when a text reaches it. This test reaches every one that exists
once the core is imported and every language's table is built: found by the garbage collector's list of live
objects, not by a walk of the modules that could miss a pattern held in a dataclass, a class or a closure."""

from __future__ import annotations

import gc
import importlib
import pkgutil
from functools import cache

import santa_core
import santa_core.run  # noqa: F401 - the reviewers' modules import the run's first (tests/conftest.py)
from santa_core.checks import languages_lexicon
from santa_core.checks.bounded import Pattern


@cache
def every_pattern() -> list[Pattern]:
    """Every live Pattern after importing each module of the core and building the language tables (once, in the
    worker that runs these tests: not while every worker collects)."""
    for info in pkgutil.walk_packages(santa_core.__path__, "santa_core."):
        importlib.import_module(info.name)
    languages_lexicon.tables()
    # A page test run earlier in this process froze what was alive then (ui.app_desk.freeze_long_lived), and the
    # collector's list leaves frozen objects out: with 4 workers one process saw 23 patterns of some 600. Unfrozen
    # here, they are listed again (a test process keeps no pages to share).
    gc.unfreeze()
    return [o for o in gc.get_objects() if isinstance(o, Pattern)]


def test_patterns_are_compiled_at_their_first_search_not_at_import() -> None:
    fresh = Pattern(r"(?<!\w)never-searched")
    assert fresh._compiled is None
    assert fresh.search("a never-searched word") is not None and fresh._compiled is not None


def test_the_detectors_own_patterns_are_among_them() -> None:
    from santa_core.checks import injection_patterns

    found = {id(p) for p in every_pattern()}
    held = [p.regex for p in injection_patterns.PATTERNS]  # in a dataclass inside a tuple: a module walk missed them
    assert held and all(id(p) in found for p in held)


def test_every_pattern_is_well_formed() -> None:
    # One test, not one per pattern: the live objects may differ by a transient pattern between xdist's workers,
    # and workers that collect different tests abort the whole run.
    malformed = []
    for pattern in every_pattern():
        try:
            pattern.compile()
        except Exception as exc:  # noqa: BLE001 - each malformed pattern is named with its error
            malformed.append(f"{pattern.pattern[:80]!r}: {exc}")
    assert len(every_pattern()) > 200 and malformed == []
