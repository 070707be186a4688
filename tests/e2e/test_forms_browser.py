"""Forms in a real browser at 1280×800 (issue 34, point 14): what only Chromium shows, not AppTest.

A fresh Review form has its Start button in view without scrolling; the People form's "someone new" is empty in
the browser after a save (a deleted widget key emptied the value on the server while the box kept the old address).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_browser import (  # noqa: F401 (the fixtures chromium and server are used by name)
    APP_IDLE,
    CHROMIUM_FLAGS,
    STEP_MS,
    assert_no_error,
    chromium,
    server,
    wait_until_rendered,
)

VIEWPORT = {"width": 1280, "height": 800}


@pytest.mark.timeout(180)
def test_start_is_in_view_and_people_form_clears_after_save(
    chromium: str,  # noqa: F811 - a fixture
    server: tuple[str, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    from playwright.sync_api import expect, sync_playwright

    base, _ = server
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport=VIEWPORT,
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(STEP_MS)

            page.goto(f"{base}/review", wait_until="domcontentloaded")
            wait_until_rendered(page, "Review")
            start = page.get_by_role("button", name="Start review")
            box = start.bounding_box()
            assert box is not None and box["y"] + box["height"] <= VIEWPORT["height"], (
                f"'Start review' is below the fold of a fresh form: its bottom is at "
                f"{box and box['y'] + box['height']} px"
            )

            page.goto(f"{base}/people", wait_until="domcontentloaded")
            wait_until_rendered(page, "People")
            email = page.locator(".st-key-people_email input")
            email.fill("first.new@example.com")
            email.press("Enter")
            page.wait_for_selector(APP_IDLE)
            page.get_by_role("button", name="Save roles").click()
            main = page.locator('[data-testid="stMain"]')
            expect(main).to_contain_text("first.new@example.com: no role", timeout=STEP_MS)
            page.wait_for_selector(APP_IDLE)
            expect(page.locator(".st-key-people_email input")).to_have_value("")
            assert_no_error(page, "/people after a save")
        finally:
            context.close()
