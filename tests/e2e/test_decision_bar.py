"""The run page leads to its decision in a real browser: at 1,280 × 800 a run whose fix waits for approval shows
its decision bar, with the link down to the decision, inside the window; one click on it brings Approve into the
window. The run's output is long (its proposal diff is too), so without the jump Approve is far below the window.

Chromium, the server and the seeded run as in test_screens.py (tests/support/metrics_history.py's scripted
reviewers and fix agent), on a throwaway SQLite file.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from santa_core.models import RunStatus
from tests.e2e import test_browser as browser
from tests.support import metrics_history as mh
from tests.support.app_server import app_server, free_port

chromium = browser.chromium  # the fixture

WIDTH, HEIGHT = 1280, 800
LONG = "\n\n".join(f"Paragraph {i}: Acme ships many fine rockets to the Moon, and every one of them flies." for i in
                   range(40)) + "\n\nAcme ships rockets. [round 1]"
"""An output long enough that the proposal's diff pushes the decision well below the first window."""


def in_window(page, locator) -> dict:
    """Where `locator`'s box is, against the window's height (the page scrolls inside Streamlit's main box)."""
    box = locator.bounding_box()
    assert box is not None, "not drawn"
    return {"top": box["y"], "bottom": box["y"] + box["height"], "window": page.viewport_size["height"]}


@pytest.mark.timeout(120)
def test_a_run_awaiting_approval_puts_its_decision_one_click_away_at_1280x800(chromium: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    url = f"sqlite:///{tmp_path / 'santa.db'}"
    repo = mh.new_repo(url)
    case = replace(next(c for c in mh.HISTORY if c.key == "waiting"), text=LONG)
    runner = mh.make_runner(repo)
    try:
        run_id = mh.create(repo, case)
        assert runner.execute(run_id).status == RunStatus.AWAITING_APPROVAL
    finally:
        runner.shutdown()
    with app_server(free_port(), url, tmp_path / "server.log") as base, sync_playwright() as pw:
        chrome = pw.chromium.launch(executable_path=chromium, headless=True, args=browser.CHROMIUM_FLAGS)
        try:
            page = chrome.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.set_default_timeout(browser.STEP_MS)
            page.goto(f"{base}/review?run={run_id}", wait_until="domcontentloaded")
            browser.wait_until_rendered(page, "Review")
            browser.assert_no_error(page, f"/review?run={run_id}")
            approve = page.get_by_role("button", name="Approve", exact=False).first
            expect(approve).to_be_attached()
            jump = page.get_by_role("link", name="Decide ↓")
            expect(jump).to_be_visible()
            bar = in_window(page, jump)
            assert bar["bottom"] <= HEIGHT, f"the link to the decision is below the window: {bar}"
            before = in_window(page, approve)
            assert before["top"] > HEIGHT, f"Approve is in the first window already: the page proves nothing {before}"
            browser.screenshot(page, tmp_path / "before.png")
            jump.click()
            expect(approve).to_be_in_viewport()
            after = in_window(page, approve)
            browser.screenshot(page, tmp_path / "after.png")
            assert 0 <= after["top"] and after["bottom"] <= HEIGHT, f"Approve is not in the window after the jump: {after}"
        finally:
            chrome.close()
