"""The HTML verification record: codes read as words (the code in a tooltip), and hashes that wrap so
the record fits the window."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from typing import get_args

from santa_core import words
from santa_core.models import EscalationReason, RunStatus
from santa_core.reports import record_html
from santa_core.reports.record_html import to_html
from santa_core.reports.record_pdf import to_pdf
from santa_core.run.store import DecisionAction, Resolution
from storage.records import verification_record
from storage.runs import RunStore
from tests.core.reports.test_record import escalated_run, pdf_text, repo  # noqa: F401 - fixtures

CODES = sorted(
    {
        c
        for group in (
            RunStatus,
            EscalationReason,
            get_args(DecisionAction),
            get_args(Resolution),
            words.AUDIT_ACTION,
            words.setting_codes(),
        )
        for c in group
        if "_" in c
    }
)
"""Every code with an underscore a record can carry (the others, such as `shipped`, are words already)."""
HASH = re.compile(r"\b[0-9a-f]{64}\b")
WRAPPING = {("td", "wrap"), ("span", "hash"), ("pre", ""), ("code", "")}
"""Elements (tag, class) whose CSS breaks a 64-character hash anywhere."""


class Reader(HTMLParser):
    """What a browser shows as text (no style, no attributes), the tooltips, and where each hash sits."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str]] = []
        self.text: list[str] = []
        self.titles: list[str] = []
        self.unwrapped: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if attr.get("title"):
            self.titles.append(attr["title"] or "")
        if tag not in {"meta", "br"}:
            self.stack.append((tag, attr.get("class") or ""))

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1][0] in {"style", "title"}:
            return
        self.text.append(data)
        wraps = any((tag, c) in WRAPPING for tag, cls in self.stack for c in ["", *cls.split()])
        self.unwrapped += [] if wraps else HASH.findall(data)


def read(page: str) -> Reader:
    reader = Reader()
    reader.feed(page)
    return reader


def shown_codes(text: str) -> list[str]:
    return [c for c in CODES if re.search(rf"(?<![\w.]){re.escape(c)}(?!\w)", text)]


def test_the_html_record_says_codes_in_words_and_keeps_them_as_tooltips(repo: RunStore, escalated_run: int) -> None:  # noqa: F811
    page = read(to_html(verification_record(repo, escalated_run)))
    text = " ".join(page.text)
    assert shown_codes(text) == []
    assert "shipped by a person" in text and "still NAUGHTY after the last round" in text  # status, reason
    assert "shipped as is" in text and "edited and approved the fix" in text  # decisions
    assert "escalation resolved" in text and "escalation due time set" not in text  # audit actions
    assert "Escapes (defects reported after the output shipped)" in text  # the word is explained where it stands
    assert "Cost $0.00 Generated" in text and "Cost (USD)" not in text  # the stub run cost nothing: written as money
    tips = " ".join(page.titles)
    for code in ("resolved_shipped (round_cap)", "ship_as_is", "round_cap", "escalation.resolved", "edit"):
        assert code in page.titles or code in tips, code
    assert html.escape('"to":"resolved_shipped"', quote=True) not in text  # the detail's JSON is a tooltip


def test_the_pdf_record_says_statuses_and_reasons_in_words(repo: RunStore, escalated_run: int) -> None:  # noqa: F811
    text = pdf_text(to_pdf(verification_record(repo, escalated_run))).replace("\\(", "(").replace("\\)", ")")
    assert "Status: shipped by a person (still NAUGHTY after the last round)" in text
    assert "resolved_shipped" not in text.split("Audit events")[0]  # before the audit trail's exact JSON


def test_every_hash_in_the_html_record_sits_where_it_can_wrap(repo: RunStore, escalated_run: int) -> None:  # noqa: F811
    page = read(to_html(verification_record(repo, escalated_run)))
    assert HASH.findall(" ".join(page.text))  # the record holds hashes: the check below checks something
    assert page.unwrapped == []


def css_rules(css: str) -> dict[str, str]:
    """Selector → declarations, one entry per selector of a rule (`th,td{…}` gives `th` and `td`)."""
    rules: dict[str, str] = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", css):
        for selector in selectors.split(","):
            rules[selector.strip()] = rules.get(selector.strip(), "") + ";" + body.replace(" ", "")
    return rules


def test_the_record_css_keeps_tables_and_hashes_inside_the_window() -> None:
    rules = css_rules(record_html._CSS)
    # A 64-character hash has no break opportunity: without these a hash column sets the table's minimum
    # width (the record was 2,867 px wide in a 1,280 px window).
    assert "overflow-wrap:anywhere" in rules["td.wrap"]
    assert "overflow-wrap:anywhere" not in rules["td"]  # short columns (seq, time) keep their width
    assert "max-width:100%" in rules["table"]
    assert "word-break:break-all" in rules[".hash"] and "word-break:break-all" in rules["code"]
    assert "pre-wrap" in rules["pre"]
    # Two reviews side by side: a grid track of 1fr would grow to its longest unbroken line.
    assert "minmax(0,1fr)minmax(0,1fr)" in rules[".reviews"]
