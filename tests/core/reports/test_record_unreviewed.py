"""The verification record of a round nobody could judge (the model provider failed; issue 34).

Through the app's wiring on SQLite against the loopback Messages API (the helpers of tests/core/run/test_unreviewed.py):
a screen outage, then Try again that ships. The readable record (HTML, PDF) says the first round could not be
reviewed, with the failed call in the provider's words, never "NAUGHTY" alone; the JSON keeps the stored gate beside
`reviewed: false` and the words. Expected strings are written out by hand.
"""

from __future__ import annotations

import json

from desk.wiring import Desk
from santa_core.reports.record import to_json
from santa_core.reports.record_html import to_html
from santa_core.reports.record_pdf import to_pdf
from santa_core.run import actions
from storage.records import verification_record
from tests.core.reports.test_record import pdf_text
from tests.core.run import test_unreviewed
from tests.core.run.test_unreviewed import DEFECTIVE, EDITOR, run_once, screen_outage
from tests.support.messages_api import MessagesStub, repeat_key

desk = test_unreviewed.desk  # the fixture (an imported name would trip ruff's F811)

FAILED = (
    "the injection screen (claude-haiku-5-5) could not be run: "
    "Server error (HTTP 500: api error) after 3 retries: Internal server error."
)


def outage_then_shipped(desk: Desk, stub: MessagesStub) -> int:
    """A screen outage in round 1, then Try again: round 2 is judged NICE and ships."""
    run_id = screen_outage(desk, stub)
    stub.screen = repeat_key
    actions.try_again(desk.runs, run_id, EDITOR)
    desk.runner.execute(run_id)
    return run_id


def test_the_html_record_says_the_round_could_not_be_reviewed(desk: Desk, messages_stub: MessagesStub) -> None:
    page = to_html(verification_record(desk.runs, outage_then_shipped(desk, messages_stub)))
    assert "<h2>Round 1 — could not be reviewed: the model provider failed</h2>" in page
    assert "<h3>Gate: could not be reviewed (stored as NAUGHTY: it fails closed, nothing ships)</h3>" in page
    assert f"<p>Could not be reviewed: the model provider failed: {FAILED}</p>" in page
    assert "<h2>Round 2 — NICE</h2>" in page and "<h3>Gate: NICE</h3>" in page
    # The audit row of round 1's gate says what the stored decision means; round 2's says NICE.
    assert (
        "decision: could not be reviewed (stored as NAUGHTY: it fails closed, nothing ships) · issues: 0 · round: 1"
    ) in page
    assert "decision: NICE · issues: 0 · round: 2" in page
    assert "— NAUGHTY" not in page and "Gate: NAUGHTY" not in page and "decision: NAUGHTY" not in page


def test_the_pdf_record_says_the_round_could_not_be_reviewed(desk: Desk, messages_stub: MessagesStub) -> None:
    text = pdf_text(to_pdf(verification_record(desk.runs, outage_then_shipped(desk, messages_stub))))
    assert "Round 1 - could not be reviewed: the model provider failed" in text
    assert r"Gate: could not be reviewed \(stored as NAUGHTY: it fails closed, nothing ships\)" in text  # PDF escapes
    assert "Could not be reviewed: the model provider failed: the injection screen" in text
    assert "Round 2 - NICE" in text and "Gate: NAUGHTY" not in text


def test_the_json_keeps_the_stored_gate_and_says_nobody_judged_it(desk: Desk, messages_stub: MessagesStub) -> None:
    data = json.loads(to_json(verification_record(desk.runs, outage_then_shipped(desk, messages_stub))))
    first, second = data["rounds"]
    assert (first["gate"]["decision"], first["reviewed"], first["unreviewed"]) == ("NAUGHTY", False, FAILED)
    assert (second["gate"]["decision"], second["reviewed"], second["unreviewed"]) == ("NICE", True, "")


def test_a_judged_naughty_round_is_still_called_naughty(desk: Desk, messages_stub: MessagesStub) -> None:
    run_id, _ = run_once(desk, output=DEFECTIVE)
    record = verification_record(desk.runs, run_id)
    page = to_html(record)
    assert "<h2>Round 1 — NAUGHTY</h2>" in page and "<h3>Gate: NAUGHTY</h3>" in page
    assert "could not be reviewed" not in page
    assert (record.rounds[0].reviewed, record.rounds[0].unreviewed) == (True, "")
