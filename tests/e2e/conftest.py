"""The browser tests share one scan for Streamlit components per test process (tests/support/component_scan.py), and
one headless Chromium per test module (`browser_once`): each test opens its own context in it (fresh cookies and
storage, as a new browser profile has), so a test pays for a context (milliseconds), not for starting Playwright's
driver and Chromium (about 1 CPU-s and 2-4 s each).

Per module, not per process: Playwright's sync API runs an asyncio loop that counts as running in the main thread
for as long as it is started, so any later test of the process that calls `asyncio.run` failed ("cannot be called
from a running event loop": the task engine's status test, in CI)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.component_scan import scan_once

scan_once()


@pytest.fixture(scope="module")
def browser_once() -> Iterator[object]:
    """Chromium as tests/e2e/test_browser.py finds it, launched headless once per test module (its Playwright
    `Browser`); skipped locally without one, a failure when CI is set (the `chromium` fixture's rule)."""
    from playwright.sync_api import sync_playwright

    from tests.e2e import test_browser as browser

    path = browser.find_chromium()
    if path is None:
        reason = "no Chromium found (set SANTA_CHROMIUM, or install Debian's `chromium` package)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {reason}")
        pytest.skip(reason)
    pw = sync_playwright().start()
    try:
        chrome = pw.chromium.launch(executable_path=path, headless=True, args=browser.CHROMIUM_FLAGS)
        try:
            yield chrome
        finally:
            chrome.close()
    finally:
        pw.stop()
