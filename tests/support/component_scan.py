"""AppTest looks for Streamlit components once per test process, not once per AppTest.

Each new `AppTest` builds a component registry and scans every installed distribution's metadata for v2
component manifests (`streamlit.components.v2.manifest_scanner.scan_component_manifests`): about 0.1 s of CPU
each, in some 300 AppTests of tests/ui and tests/e2e, as much as the pages' own scripts in a typical file. The
installed packages do not change while the tests run, so the first scan's answer holds for every later
registry (each still registers it afresh); a real server scans once at start anyway (`Runtime`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from streamlit.components.v2 import manifest_scanner

_REAL: list[Callable[..., list[tuple[Any, Path]]]] = []


def scan_once() -> None:
    """Answer every later scan from the first (idempotent: several conftests may call it)."""
    if _REAL:
        return
    _REAL.append(manifest_scanner.scan_component_manifests)
    first = cache(_REAL[0])

    def scanned(max_workers: int | None = None) -> list[tuple[Any, Path]]:
        return list(first(max_workers))  # a copy: no caller can change what the next one gets

    manifest_scanner.scan_component_manifests = scanned
