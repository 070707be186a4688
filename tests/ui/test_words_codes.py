"""Every code a person can meet has words (santa_core.words): the lists of codes come from the enums,
literals and models themselves, so a new status, reason, decision or setting fails here until it gets
words; audit actions are read from the storage code that appends them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from santa_core import words
from santa_core.batch.patterns import PatternKind
from santa_core.models import EscalationReason, ReviewStatus, RunStatus, ScreenVerdict
from santa_core.roles import Role
from santa_core.run.store import DecisionAction, Resolution

ROOT = Path(__file__).resolve().parents[2]

GROUPS: list[tuple[str, list[str], dict]] = [
    ("run status", list(RunStatus), words.STATUS),
    ("escalation reason", list(EscalationReason), words.REASON),
    ("escalation reason sentence", list(EscalationReason), words.REASON_HELP),
    ("decision", list(get_args(DecisionAction)), words.DECISION),
    ("resolution", list(get_args(Resolution)), words.RESOLUTION),
    ("review status", list(ReviewStatus), words.REVIEW_STATUS),
    ("screen verdict", list(get_args(ScreenVerdict)), words.SCREEN_VERDICT),
    ("pattern kind", list(get_args(PatternKind)), words.PATTERN_KIND),
    ("setting", words.setting_codes(), words.SETTING),
    ("role", list(Role), words.ROLE_LABEL),
]


@pytest.mark.parametrize(("what", "codes", "table"), GROUPS, ids=[g[0] for g in GROUPS])
def test_every_code_has_words(what: str, codes: list[str], table: dict) -> None:
    missing = [c for c in codes if c not in table]
    assert missing == [], f"give these {what} codes words in santa_core/words.py: {missing}"
    assert not [w for c, w in table.items() if "_" in str(w) or (w == c and "_" in c)], "words, not codes"


def appended_actions() -> set[str]:
    """Every literal audit action the storage layer appends: `audit.append(s, actor, "run.created", …)`, also
    `"batch.paused" if paused else "batch.resumed"` (f-strings such as `decision.{action}` are checked below)."""
    found: set[str] = set()
    for path in (ROOT / "storage").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for call in re.finditer(r"audit\.append\(", text):
            found |= set(re.findall(r'(?<!f)"([a-z_]+\.[a-z_]+)"', text[call.end() : call.end() + 160]))
    return found


def test_every_audit_action_the_storage_appends_has_words() -> None:
    actions = appended_actions()
    assert {"run.created", "escalation.resolved", "batch.paused", "batch.resumed"} <= actions  # the scan works
    assert sorted(actions - set(words.AUDIT_ACTION)) == []
    assert words.audit_action("decision.retry_fix") == "decision: asked the fix agent again"


def test_words_keep_their_code_and_unknown_codes_never_show_raw() -> None:
    line = words.status_line(RunStatus.ESCALATED, EscalationReason.ROUND_CAP)
    assert (line, line.code) == ("escalated (still NAUGHTY after the last round)", "escalated (round_cap)")
    assert words.status("resolved_shipped") == words.status(RunStatus.RESOLVED_SHIPPED) == "shipped by a person"
    assert words.reason("not_yet_named") == "not yet named" and words.audit_action("x.new_thing") == "x: new thing"
    assert words.detail(
        {
            "from": "escalated",
            "to": "resolved_shipped",
            "changed": ["budget_usd", "max_rounds"],
            "reviewer_b": "fixer",
            "note": "round_cap",
            "owner": None,
        }
    ) == (
        "from: escalated · to: shipped by a person · changed: Budget per run (USD), Max rounds before escalation · "
        "reviewer b: fixer · note: still NAUGHTY after the last round · owner: —"
    )
    assert "still NAUGHTY after the last round = `round_cap`" in words.legend(words.REASON)
