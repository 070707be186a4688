"""In real Chromium: after a resolve, the Escalations page's "Escalated run" box names the run whose escalation is
open below it. A browser keeps a keyed select box's value unless the page sends one, so this is where a box that
still said the resolved run above the next run's detail was seen (AppTest models it: test_escalation_picker)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from desk import open_desk
from santa_core.models import RunStatus
from tests.e2e.test_browser import CHROMIUM_FLAGS, STEP_MS, chromium, server, wait_until_rendered  # noqa: F401

PICKER = "Escalated run"


def two_escalations(database: Path) -> list[int]:
    """Two runs that escalate at once: model reviewers on a server with no key (the injection screen cannot run)."""
    desk = open_desk(f"sqlite:///{database}", mark_interrupted=False)
    try:
        ids = []
        for rubric in ("general", "content"):
            run_id = desk.runs.create_run("Say hi.", "Hi there.", desk.rubrics.resolved(rubric), "claude-sonnet-5-5",
                                          "claude-haiku-5-5", "claude-opus-5-5", max_rounds=1, created_by="local")
            assert desk.runner.execute(run_id).status == RunStatus.ESCALATED
            ids.append(run_id)
        return ids
    finally:
        desk.close()


@pytest.mark.timeout(180)
def test_after_a_resolve_the_picker_names_the_open_run(chromium: str, server: tuple[str, Path],  # noqa: F811
                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from playwright.sync_api import expect, sync_playwright

    base, _ = server
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # as the server: no key, so the screen stops each run
    first, second = two_escalations(tmp_path / "santa.db")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(STEP_MS)
            page.goto(f"{base}/escalations", wait_until="domcontentloaded")
            wait_until_rendered(page, "Escalations")
            picker = page.get_by_role("combobox", name=PICKER)
            expect(picker).to_have_value(re.compile(rf"^Run #{first} · "))
            picker.click()
            page.get_by_role("option").filter(has_text=f"Run #{second}").click()
            expect(page.locator("h3").filter(has_text=f"Run #{second} ·")).to_be_visible()
            page.get_by_text("Reject", exact=True).click()
            why = page.get_by_label("Justification (required)")
            why.fill("Not fit to ship.")
            why.press("Control+Enter")  # commit the text area, as a person's click elsewhere would
            page.get_by_role("button", name="Record resolution").click()
            expect(page.get_by_text(f"Run #{second}: ")).to_be_visible()  # the flash of the resolve
            wait_until_rendered(page, "Escalations")
            expect(page.locator("h3").filter(has_text=f"Run #{first} ·")).to_be_visible()
            expect(picker).to_have_value(re.compile(rf"^Run #{first} · "))  # not the resolved run's name
        finally:
            browser.close()
