"""The Batch page's whole journey in a real browser: the real app (`streamlit run app.py`) in headless
Chromium, its reviewers and fix agent the real Anthropic adapters talking to the loopback Messages API
stub (tests/support/messages_api.py) with the varied-defect answers (tests/support/varied_batch.py).

A person uploads the 200-item file with a promise in varied sentences, stratifies by template, sets the
seed and the spec and creates the batch; waits for sample 1 (the page polls); asks the fix agent for the
one pattern, recognised in unsampled items by “guaranteed”; opens one item's own fix; approves it for the
batch; fixes by hand the one item no fix could reach; resamples until a sample is clean; reads the
stopping rule; downloads the CSV. The download must have every defective item fixed, every other item
byte for byte as uploaded, and each item marked fixed, verified, fixed by hand or not sampled.
tests/ui/test_batch_page_varied.py walks the same journey in AppTest; this one adds what only a browser
does: the file chooser, the widgets' commits, the page's own polling, the download as a browser gets it.

Message Batches stay off (the form's toggle is off by default; the test checks it): the sample is reviewed
by the desk's workers, so nothing waits on a poll interval. Chromium as in test_browser.py: skipped
locally without one, a failure when CI is set.
"""

from __future__ import annotations

import csv
import io
import re
import time
from pathlib import Path

import pytest

from tests.e2e import test_browser as browser
from tests.support import varied_batch as vb
from tests.support.app_server import free_port
from tests.support.batch_browser import (
    MAIN,
    idle,
    keyed_app_server,
    main_text,
    pick,
    type_in,
    upload,
    wait_for_text,
    widget,
)
from tests.support.messages_api import MessagesStub

chromium = browser.chromium  # the fixture (an imported name would trip ruff's F811)

SAMPLE_S = 60
"""At most this long for a 30-item sample to be reviewed (both reviewers, the stub answering at once)."""
FIX_S = 60
"""At most this long for the fix agent to prepare every reached item's fix."""
PATTERN = "Recognised in unsampled items by “guaranteed”"
TITLE = "1. Compliance with stated constraints: “guaranteed”"
REACH = "8 item(s) in the batch show this pattern: approving changes 7; 1 need a person"
CLEAN = "The sample came back clean: with 95 % confidence at most"
RULE = re.compile(
    r"The sample came back clean: with 95 % confidence at most \d+ of 200 items \([\d.]+ %\) fail review\."
)


def rows(data: bytes) -> dict[str, dict[str, str]]:
    """A CSV's rows by id, every value as the csv module reads it."""
    return {r["id"]: r for r in csv.DictReader(io.StringIO(data.decode("utf-8"), newline=""))}


@pytest.mark.timeout(240)
def test_a_person_verifies_the_varied_batch_in_chromium(
    chromium: str, browser_once, messages_stub: MessagesStub, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    messages_stub.handler = vb.varied_answer
    data, defective = vb.varied_csv()
    uploaded = rows(data)
    item_025, item_050 = uploaded["item-025"]["output"], uploaded["item-050"]["output"]
    steps: dict[str, float] = {}
    t0 = time.monotonic()

    def step(name: str) -> None:
        steps[name] = round(time.monotonic() - t0, 1)

    log = tmp_path / "server.log"
    with keyed_app_server(free_port(), f"sqlite:///{tmp_path / 'santa.db'}", log, messages_stub.url) as base:
        page = browser_once.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        page.set_default_timeout(browser.STEP_MS)
        try:
            step("server and browser")

            # 1. Upload, choose strata, seed and spec, create; sample 1 is reviewed while the page polls.
            page.goto(f"{base}/batch", wait_until="domcontentloaded")
            browser.wait_until_rendered(page, "Batch")
            upload(page, "batch_file", "emails.csv", data)
            wait_for_text(page, "Detected CSV", 10, "after the upload")
            pick(page, "batch_strata", "template")
            type_in(page, "batch_seed", str(vb.SEED))
            type_in(page, "batch_spec", vb.SPEC, tag="textarea")
            expect(widget(page, "batch_message_batches").locator("input")).not_to_be_checked()
            expect(widget(page, "batch_seed").locator("input")).to_have_value(str(vb.SEED))
            expect(widget(page, "batch_strata")).to_contain_text("template")
            browser.assert_no_error(page, "the new-batch form")
            page.get_by_role("button", name="Create the batch and review sample 1 (30 of 200 items)").click()
            wait_for_text(page, "Batch #1 — emails.csv", 15, "after Create")
            # The view moves to the sample's progress (or its result, if the sample was quicker than this check):
            # a rerun keeps the scroll, and the long form had left it on Cost and Export.
            expect(page.locator(MAIN).get_by_text("Batch #1 — emails.csv")).to_be_in_viewport(ratio=1)
            expect(page.locator(MAIN).get_by_text(re.compile(r"^Sample 1: ")).first).to_be_in_viewport(ratio=1)
            wait_for_text(page, f"strata template · seed {vb.SEED}", 10, "the new batch's settings")
            step("batch created")
            wait_for_text(page, "Sample 1: 26 NICE, 4 NAUGHTY of 30", SAMPLE_S, "sample 1")
            step("sample 1 reviewed")

            # 2. The one pattern, its reach, one item's own fix, the approval.
            wait_for_text(page, PATTERN, 10, "sample 1's pattern")
            wait_for_text(page, TITLE, 10, "the pattern's title: the criterion's name and the flagged phrase")
            # The page draws its elements one after another: wait for the check's caption, then read the page.
            wait_for_text(
                page,
                "recognises 4 of the 4 sampled item(s) showing the pattern and 0 of the 26 that do not",
                15,
                "the signature's check",
            )
            idle(page)
            shown = main_text(page)
            assert shown.count("Recognised in unsampled items by") == 1, shown  # one pattern, not four
            page.get_by_role("button", name="Ask the fix agent").click()
            wait_for_text(page, REACH, FIX_S, "after Ask the fix agent")
            idle(page)
            step("fixes prepared")
            pick(page, "batch_open_*", "item-025")
            diff = page.locator('[data-testid="stCode"]').filter(
                has_text=f"- {vb.defects(item_025)[0]}"
            )  # its sentence
            expect(diff).to_have_count(1)
            shown = diff.inner_text()
            assert "expected within" in shown and vb.defects(item_050)[0] not in shown  # its own fix, not the example's
            type_in(page, "batch_reason_*", "we cannot promise timing")
            page.get_by_role("button", name="Approve and apply to the batch").click()
            wait_for_text(page, "Fix applied: 7 item(s) of the batch changed.", 30, "after Approve")
            wait_for_text(page, "Items that need a person", 10, "after Approve")
            step("fix approved")

            # 3. The one item no fix reached, fixed by hand.
            expect(widget(page, "batch_hand_item_1").get_by_role("combobox")).to_have_value("item-125")
            text = widget(page, "batch_hand_text_1_item-125").locator("textarea")
            # The box is drawn before its value arrives on a busy machine: wait for the text, then read it.
            expect(text).to_have_value(re.compile("Lifetime results are guaranteed"))
            current = text.input_value()
            assert "Lifetime results are guaranteed" in current, current
            text.fill(vb.hand_fix(current))
            widget(page, "batch_hand_reason_1_item-125").locator("input").fill("rewrote the promise")
            page.get_by_role("button", name="Save my edit").click()
            wait_for_text(page, "Saved: item item-125 is fixed by hand.", 30, "after Save my edit")
            idle(page)
            assert "Items that need a person" not in main_text(page)
            step("fixed by hand")

            # 4. Resample until clean; the stopping rule.
            page.get_by_role("button", name="Resample: draw sample 2").click()
            wait_for_text(page, "Sample 2: 30 NICE, 0 NAUGHTY of 30", SAMPLE_S, "sample 2")
            wait_for_text(page, CLEAN, 10, "sample 2's stopping rule")
            idle(page)
            shown = main_text(page)
            assert RULE.search(shown), shown
            assert "Caveat" not in shown, shown  # no item left needing a fix, no pattern dismissed
            browser.assert_no_error(page, "the clean batch")
            step("sample 2 clean")

            # 5. The CSV as the browser downloads it.
            with page.expect_download() as download:
                page.locator(MAIN).get_by_role("button", name="Download CSV").click()
            assert download.value.suggested_filename == "emails-verified.csv"
            exported = rows(Path(download.value.path()).read_bytes())
            step("downloaded")
        except BaseException:
            page.screenshot(path=str(tmp_path / "batch-failure.png"), full_page=True)  # what the person saw
            raise
        finally:
            page.context.close()

    assert set(exported) == set(uploaded)
    assert {r["santa_status"] for r in exported.values()} == {"fixed", "verified", "fixed by hand", "not sampled"}
    assert exported["item-125"]["santa_status"] == "fixed by hand"
    assert exported["item-125"]["output"] == vb.hand_fix(uploaded["item-125"]["output"])
    for key, row in uploaded.items():
        if key in defective:
            assert "guaranteed" not in exported[key]["output"], (key, exported[key]["output"])
            assert exported[key]["santa_status"] in ("fixed", "fixed by hand", "verified"), (key, exported[key])
        else:
            assert exported[key]["output"].encode() == row["output"].encode(), key  # byte for byte
            assert exported[key]["santa_status"] in ("verified", "not sampled"), (key, exported[key])
    server_log = log.read_text(errors="replace")
    assert "Traceback" not in server_log, f"the server logged a traceback:\n{server_log}"
    print("steps (s since start):", steps)
