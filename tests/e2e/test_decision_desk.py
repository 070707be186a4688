"""The decision desk in a real browser, as an editor and a compliance officer walk it, at 1,280 × 800 and 1,024 × 768
(issue 34's acceptance): the real app (`streamlit run app.py`) with a model key, its reviewers, screen and fix agent
the real Anthropic adapters talking to the loopback Messages API (tests/support/messages_api.py), which answers
like a model that reads the text: each reviewer fails the output on every promise in it, the fix agent rewrites
each promised sentence, and a switch makes the provider fail every call (HTTP 500).

1. A review of an output with two promises, started from the Review form: at both widths its run page shows what
   it needs ("Your decision on the fix …") with the way to the decision inside the first window; the person keeps
   one edit and drops the other (the Approve label says which issue stays unfixed), and the text approved is
   exactly the kept edit applied (read from the database).
2. With the provider failing, a review is "could not be reviewed", never NAUGHTY; Try again (once the provider
   answers again) ships it.
3. Two fixes rejected, so two escalations; one resolved on the Escalations page; the picker then names the run
   whose detail is shown, and no resolution is chosen before the person picks one.
4. A batch whose items hold two different defects ("risk-free", "guarantees", in sentences naming the same
   products), sampled whole: two patterns, each titled by the criterion's name and its phrase.
5. Every page, at both widths: no horizontal overflow, no text cut short, no stored code or internal word
   (snake_case ids, injection-screen keys, raw validation text) in what a person reads
   (tests/support/screens.py's checks, as tests/e2e/test_screens.py uses them).

Every problem of the checks is collected before the test fails, so one run names them all. Chromium as in
test_browser.py.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from santa_core.models import RunStatus
from tests.e2e import test_browser as browser
from tests.e2e.test_screens import SIZES, Desk
from tests.support import metrics_history as mh
from tests.support import two_defects as td
from tests.support.app_server import free_port
from tests.support.batch_browser import idle, keyed_app_server, type_in, upload, widget
from tests.support.messages_api import (
    MessagesStub,
    asked_criteria,
    error_reply,
    fenced_output,
    fix_json,
    message,
    repeat_key,
    review_json,
    schema_properties,
    user_text,
)

chromium = browser.chromium  # the fixture

SPEC = "A two-sentence note for Brightline, a tax app for freelancers. Make no promises about outcomes."
PROMISE = "You are guaranteed to never pay a late penalty again."
RISK = "Switching is completely risk-free."
REWRITES = {PROMISE: "Reminders help you file on time.", RISK: "You can switch back within 30 days."}
DEFECTS = {
    PROMISE: "An outcome is promised that nobody can guarantee.",
    RISK: "A risk is denied that the spec does not allow us to deny.",
}
TWO = f"Brightline files your quarterly taxes in minutes. {PROMISE} {RISK}"
ONE = f"Brightline sorts your receipts. {PROMISE}"
CLEAN = "Brightline sorts your receipts and reminds you before each deadline."
WAIT_S = 60
BATCH_DEFECTS = {output: (phrase, sentence) for output, phrase, sentence in td.items().values()}
"""The two-defect batch's defective items (output → the phrase flagged, its sentence): "risk-free" in half of them,
"guarantees" in the other half, each product with both (tests/support/two_defects.py)."""


def batch_csv() -> bytes:
    """The two-defect batch as a person uploads it: every defective item and the clean ones."""
    rows = [*(output for output, _, _ in td.items().values()), *td.clean().values()]
    return ("id,output\n" + "".join(f"item-{i:02d},{text}\n" for i, text in enumerate(rows))).encode()


PAGES = {
    "review": "Review",
    "batch": "Batch",
    "inbox": "Inbox",
    "escalations": "Escalations",
    "audit": "Audit",
    "rubrics": "Rubrics",
    "people": "People",
    "settings": "Settings",
}
"""The pages step 5 checks at both widths; Metrics and Runs are checked there by tests/e2e/test_screens.py, with a
year of runs."""


class Provider:
    """The loopback model: reads the output under review; `down` makes every call fail."""

    def __init__(self) -> None:
        self.down = False

    def screen(self, body: dict):  # noqa: ANN201 - a stub reply
        return error_reply(500, "api_error", "Internal server error") if self.down else repeat_key(body)

    def answer(self, body: dict):  # noqa: ANN201
        if self.down:
            return error_reply(500, "api_error", "Internal server error")
        model = body.get("model", "stub-model")
        asked = user_text(body)
        if item := BATCH_DEFECTS.get(fenced_output(body)):  # a batch item with one of its two defects
            phrase, sentence = item
            issue = ("factual_accuracy", td.description(phrase, sentence), sentence)
            return message(
                review_json("FAIL", [("factual_accuracy", "FAIL", "A claim the spec forbids.")], [issue]), model
            )
        found = [s for s in DEFECTS if s in asked]
        if "edits" in schema_properties(body):
            return message(fix_json([(i, s, REWRITES[s]) for i, s in enumerate(found)]), model)
        ids = asked_criteria(body)
        if not found:
            return message(review_json("PASS", [(i, "PASS") for i in ids]), model)
        checks = [(i, "FAIL" if i == "factual_accuracy" else "PASS", "A claim the spec forbids.") for i in ids]
        return message(review_json("FAIL", checks, [("factual_accuracy", DEFECTS[s], s) for s in found]), model)


def start_review(desk: Desk, output: str) -> int:
    """The Review form as a person fills it; the new run's number, from the page it opens."""
    page = desk.page
    desk.open("review", "Review")
    type_in(page, "new_spec", SPEC, tag="textarea")
    type_in(page, "new_output", output, tag="textarea")
    page.get_by_role("button", name="Start review").click()
    heading = page.locator("h3").filter(has_text=re.compile(r"^Run #\d+"))
    heading.first.wait_for(timeout=WAIT_S * 1000)
    return int(re.search(r"Run #(\d+)", heading.first.inner_text()).group(1))


def bar_in_view(desk: Desk, run_id: int, link: str, name: str) -> None:
    """At each width: the run page's way to its action is inside the first window; the page passes the checks."""
    from playwright.sync_api import expect

    for size in SIZES:
        desk.resize(*size)
        desk.open(f"review?run={run_id}", "Review")
        jump = desk.page.get_by_role("link", name=link)
        expect(jump).to_be_visible()
        box = jump.bounding_box()
        assert box is not None and box["y"] + box["height"] <= desk.height, (
            f"{name} at {desk.width} px: '{link}' is at {box}, below the first window ({desk.height} px)"
        )
        desk.check(f"run page #{run_id} ({name})")
        desk.shoot(f"run-{name}")
    desk.resize(*SIZES[0])


def wait_for_status(repo, run_id: int, status: RunStatus, round_no: int = 1, timeout_s: float = WAIT_S) -> None:  # noqa: ANN001
    """Until the run is in `status` in round `round_no` (or later), as the database has it."""
    deadline = time.monotonic() + timeout_s
    while (now := repo.load_run(run_id).state).status != status or now.round < round_no:
        assert time.monotonic() < deadline, f"run {run_id} is {now.status} in round {now.round}, not {status}"
        time.sleep(0.2)


def reject_fix(desk: Desk, run_id: int, why: str) -> None:
    """On a run page waiting for approval: Reject and escalate, with a reason."""
    page = desk.page
    desk.open(f"review?run={run_id}", "Review")
    page.get_by_role("link", name="Decide ↓").click()
    reason = page.get_by_label(re.compile(r"^Reason or note"))
    reason.fill(why)
    reason.press("Enter")
    idle(page)
    page.get_by_role("button", name="Reject and escalate", exact=True).click()
    idle(page)


@pytest.mark.timeout(420)
def test_the_decision_desk_at_1280_and_1024(
    chromium: str, browser_once, messages_stub: MessagesStub, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    provider = Provider()
    messages_stub.handler, messages_stub.screen = provider.answer, provider.screen
    url = f"sqlite:///{tmp_path / 'santa.db'}"
    repo = mh.new_repo(url)  # migrated; the server opens it as it is
    shots = [tmp_path / "screens"]
    shots[0].mkdir()
    with keyed_app_server(free_port(), url, tmp_path / "server.log", messages_stub.url) as base:
        page = browser_once.new_page(viewport={"width": SIZES[0][0], "height": SIZES[0][1]})
        page.set_default_timeout(browser.STEP_MS)
        desk = Desk(page, base, shots)
        t0, steps = time.monotonic(), {}
        try:
            # 1. Two promises: the decision in view at both widths; keep one edit, drop the other.
            two = start_review(desk, TWO)
            wait_for_status(repo, two, RunStatus.AWAITING_APPROVAL)
            bar_in_view(desk, two, "Decide ↓", "two-issues")
            desk.open(f"review?run={two}", "Review")
            page.get_by_role("link", name="Decide ↓").click()
            expect(page.get_by_role("heading", name="Your decision on the fix")).to_be_in_viewport()
            widget(page, f"keep_{two}_1_1").get_by_text("Keep").click()  # drop the second edit
            idle(page)
            approve = page.get_by_role("button", name="Approve — issue 2 stays unfixed")
            expect(approve).to_be_visible()
            approve.click()
            wait_for_status(repo, two, RunStatus.AWAITING_APPROVAL, round_no=2)  # the dropped promise flagged again
            approved = repo.load_round(two, 2).output_text
            assert approved == TWO.replace(PROMISE, REWRITES[PROMISE]), approved  # exactly the kept edit

            steps["review"] = round(time.monotonic() - t0, 1)
            # 2. The provider fails: could not be reviewed, then Try again ships it.
            provider.down = True
            outage = start_review(desk, CLEAN)
            wait_for_status(repo, outage, RunStatus.ESCALATED)
            bar_in_view(desk, outage, "Try again ↓", "could-not-be-reviewed")
            shown = desk.text()
            assert "could not be reviewed" in shown.lower() and "NAUGHTY" not in shown, shown
            provider.down = False
            page.get_by_role("link", name="Try again ↓").click()
            page.get_by_role("button", name="Try again", exact=True).click()
            wait_for_status(repo, outage, RunStatus.SHIPPED)

            steps["outage"] = round(time.monotonic() - t0, 1)
            # 3. Two escalations (two fixes rejected); one resolved; the picker and the detail name the same run.
            reject_fix(desk, two, "The second promise is still there.")
            one = start_review(desk, ONE)
            wait_for_status(repo, one, RunStatus.AWAITING_APPROVAL)
            reject_fix(desk, one, "Legal wants to word this one.")
            wait_for_status(repo, two, RunStatus.ESCALATED)
            wait_for_status(repo, one, RunStatus.ESCALATED)
            desk.open("escalations", "Escalations")
            picker = page.get_by_role("combobox", name="Escalated run")
            first = int(re.search(r"Run #(\d+)", picker.input_value()).group(1))
            other = one if first == two else two
            expect(page.locator("h3").filter(has_text=f"Run #{first} ·")).to_be_visible()
            resolve = page.get_by_role("button", name="Record resolution")
            resolve.click()  # nothing chosen: nothing recorded, and the page says so
            idle(page)
            assert repo.load_run(first).state.status == RunStatus.ESCALATED
            page.get_by_text("Reject", exact=True).click()
            why = page.get_by_label("Justification (required)")
            why.fill("Not fit to ship.")
            why.press("Control+Enter")
            page.get_by_role("button", name="Record resolution").click()
            wait_for_status(repo, first, RunStatus.RESOLVED_REJECTED)
            expect(page.locator("h3").filter(has_text=f"Run #{other} ·")).to_be_visible()
            expect(picker).to_have_value(re.compile(rf"^Run #{other} "))  # the picker says the run shown below

            steps["escalations"] = round(time.monotonic() - t0, 1)
            # 4. A batch holding two defects: a sample of every item gives two patterns, titled by the phrase.
            desk.open("batch", "Batch")
            upload(page, "batch_file", "two-defects.csv", batch_csv())
            type_in(page, "batch_spec", SPEC, tag="textarea")
            type_in(page, "batch_rate", "100")
            page.get_by_role("button", name=re.compile(r"^Create the batch and review sample 1")).click()
            expect(page.get_by_text(re.compile(r"Sample 1: \d+ NICE, 8 NAUGHTY of 12"))).to_be_visible(
                timeout=WAIT_S * 1000
            )
            for phrase in (td.RISK, td.GUARANTEE):
                expect(page.get_by_text(f"{td.NAME}: “{phrase}”").first).to_be_visible()
            for size in SIZES:
                desk.resize(*size)
                page.wait_for_timeout(300)  # the page lays itself out again
                desk.check("batch with two patterns")
            desk.resize(*SIZES[0])

            steps["batch"] = round(time.monotonic() - t0, 1)
            # 5. Every page at both widths.
            for size in SIZES:
                desk.resize(*size)
                for path, title in PAGES.items():
                    desk.open(path, title)
                    desk.check(path)
                for run_id, name in ((two, "escalated"), (outage, "shipped-after-try-again")):
                    desk.open(f"review?run={run_id}", "Review")
                    desk.check(f"run page #{run_id} ({name})")
            steps["pages"] = round(time.monotonic() - t0, 1)
            print("steps (s since start):", steps)
        except BaseException:
            page.screenshot(path=str(tmp_path / "decision-desk-failure.png"), full_page=True)
            raise
        finally:
            page.context.close()
    assert not desk.problems, "\n".join(["the screens show these problems:", *desk.problems])
