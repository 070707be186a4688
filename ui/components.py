"""Display pieces shared by the pages: statuses, tables, gate banner, issues, proposal diff.

Model and user text is shown with st.text / st.code / dataframes — never as HTML — because it
is untrusted (it may contain markup meant for the reviewer or the reader).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st

from santa_core import words
from santa_core.checks import run_criterion_checks
from santa_core.checks.forms import describe_check
from santa_core.models import (
    CheckOutcome,
    FixProposal,
    GateDecision,
    GateResult,
    IssueFix,
    MergedIssue,
    Rubric,
    RunStatus,
)
from santa_core.run.fixer import issue_fixes
from santa_core.sentence_diff import sentence_diff
from santa_core.words import usd  # noqa: F401  (pages write money as `components.usd`: one rule, the core's)
from ui import proposal_cards, table_fit
from ui.safe import escape_markdown

ATTRIBUTION = {
    "both": "B and C",
    "B": "B only",
    "C": "C only",
    "D": "D only (third reviewer)",
    "check": "deterministic check",
}

WRAP_LINES = table_fit.WRAP_LINES
"""The most lines a wrapped table row is tall; a longer cell shows whole when clicked."""


def fitted_config(fitted: table_fit.Fit, config: dict | None = None) -> dict:
    """`config` (column name → st.column_config entry) with every column's width set to the fitted one."""
    config = dict(config or {})
    for column, width in fitted.widths.items():
        entry = config.get(column)
        config[column] = (
            {**entry, "width": width}
            if isinstance(entry, dict)
            else st.column_config.Column(entry if isinstance(entry, str) else None, width=width)
        )
    return config


def labels_of(config: dict | None) -> dict[str, str]:
    """The headers `config` gives columns (where they differ from the column's name)."""
    return {c: e["label"] for c, e in (config or {}).items() if isinstance(e, dict) and e.get("label")}


def full_table(
    frame: pd.DataFrame,
    wide: tuple[str, ...] = (),
    room: int = table_fit.MAIN_PX,
    config: dict | None = None,
    breakable: tuple[str, ...] = (),
) -> None:
    """A read-only table with every row on the page (no scroll area after the tenth) whose columns fit in
    `room` px (the main area by default; table_fit.CARD_PX in one of two side-by-side columns): its long
    text columns (`wide`) take the room the others leave, and every cell that does not fit on one line
    wraps, the rows as tall as the longest needs (up to WRAP_LINES lines; no word is broken but in the
    `breakable` columns, names with e-mail addresses).

    Why a row height: Streamlit wraps cell text only in rows taller than 4rem (64 px), and a row height is
    one for the whole table; a table whose texts fit on one line keeps the one-line rows.
    """
    fitted = table_fit.fit(
        frame, room, wide=tuple(c for c in wide if c in frame.columns), labels=labels_of(config), breakable=breakable
    )
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        height="content",
        row_height=fitted.row_height,
        column_config=fitted_config(fitted, config),
    )


def status_label(status: RunStatus | str) -> str:
    """A run status in words: plain text (no icon), as select boxes and table cells can only show plain text."""
    return words.status(status)


def gate_banner(gate: GateResult, reviewers: int = 2) -> None:
    """NICE or NAUGHTY, with the reasons (`reviewers`: how many judged the round, 3 with a third reviewer)."""
    if gate.decision == GateDecision.NICE:
        who = "all three reviewers" if reviewers == 3 else "both reviewers"
        st.success(f"NICE — {who} PASS. Ship it.", icon=":material/celebration:")
    else:
        reasons = list(dict.fromkeys(gate.reasons)) or ["not both PASS"]  # each reason once
        st.error("NAUGHTY — " + escape_markdown("; ".join(reasons)))


def named(names: Mapping[str, str] | None, criterion: str) -> str:
    """A criterion as people read it: its name from the rubric (`names`: id → name), else what was stored."""
    return (names or {}).get(criterion, criterion)


def issues_table(issues: list[MergedIssue], names: Mapping[str, str] | None = None) -> None:
    """Merged critical issues with who flagged them, each criterion by its name (`names`: id → name)."""
    if not issues:
        return
    rows = [
        {
            "#": i + 1,
            "criterion": named(names, it.criterion),
            "issue": it.description,
            "evidence": it.evidence,
            "flagged by": ATTRIBUTION.get(it.flagged_by, it.flagged_by),
        }
        for i, it in enumerate(issues)
    ]
    full_table(pd.DataFrame(rows), wide=("issue", "evidence"))


def readable_diff(before: str, after: str, old: str = "current output", new: str = "proposed output") -> str:
    """The changed sentences of two texts with one sentence of context, for st.code(language='diff', wrap_lines=True);
    "(no change)" when they are equal. Every page's diff for people is this one, so no page shows a long text twice."""
    return sentence_diff(before, after, old, new)


FIX_STATES = {
    "fixed": "fixed",
    "not fixed": "not fixed",
    "unanchored": "unanchored: a person fixes it",
    "failed": "failed",
}


def unfixed(proposal: FixProposal) -> list[IssueFix]:
    """The issues this proposal leaves as they are (every state but fixed)."""
    return [f for f in issue_fixes(proposal) if f.state != "fixed"]


def _numbers(fixes: list[IssueFix]) -> str:
    """ "2" / "2 and 3" / "2, 3 and 5"."""
    numbers = [str(f.number) for f in fixes]
    return numbers[0] if len(numbers) == 1 else ", ".join(numbers[:-1]) + " and " + numbers[-1]


def remaining_words(left: list[IssueFix]) -> str:
    """ "issue 2 stays unfixed" / "issues 2 and 3 stay unfixed"."""
    return f"issue {_numbers(left)} stays unfixed" if len(left) == 1 else f"issues {_numbers(left)} stay unfixed"


def approve_label(left: list[IssueFix], unsure: list[IssueFix]) -> str:
    """The Approve button's words for the text in the box (`fixer.judge_text`): what stays unfixed, what to check."""
    parts = [remaining_words(left)] if left else []
    if unsure:
        parts.append(f"check issue{'s' if len(unsure) > 1 else ''} {_numbers(unsure)} yourself")
    return "Approve — " + "; ".join(parts) if parts else "Approve"


BOX_BELOW = "fix it in the box below, or reject"
"""What to do about a partial proposal where the page offers the approval's edit box."""


def proposal_view(
    proposal: FixProposal,
    by_person: bool = False,
    names: dict[str, str] | None = None,
    decided_below: bool = False,
    remedy: str = BOX_BELOW,
) -> None:
    """The fix proposal: what it did per issue, then (unless the decision below shows them, `decided_below`) one
    card per edit and per refused edit, and the changed sentences of the whole text (`remedy`: what this page
    offers against what stays unfixed)."""
    if proposal.error:
        st.warning(f"The fix agent failed: {escape_markdown(proposal.error)}")
    if not by_person:
        rows = [
            {"#": f.number, "criterion": named(names, f.criterion), "fix": FIX_STATES[f.state], "why": f.reason}
            for f in issue_fixes(proposal)
        ]
        full_table(pd.DataFrame(rows), wide=("why",))
        if left := unfixed(proposal):
            st.warning(
                escape_markdown(
                    f"Partial proposal: {remaining_words(left)}. Approving it sends the output "
                    "with that defect to fresh reviewers" + (f"; {remedy}." if remedy else ".")
                )
            )
    if decided_below and (proposal.edits or proposal.rejected):
        st.caption("Each edit is shown below, with your decision, where you keep or drop it.")
        return
    proposal_cards.edit_cards(proposal, names or {})
    proposal_cards.refused_cards(proposal, names or {})
    if proposal.proposed_text != proposal.before_text:
        st.code(readable_diff(proposal.before_text, proposal.proposed_text), language="diff", wrap_lines=True)


def checks_table(checks: list[CheckOutcome], names: Mapping[str, str] | None = None) -> None:
    """One line per deterministic check: criterion (by its name), type, PASS/FAIL and what it found."""
    if not checks:
        st.caption("No criterion carries a deterministic check.")
        return
    rows = [
        {"criterion": named(names, c.criterion), "check": c.check_type, "result": c.result, "detail": c.detail}
        for c in checks
    ]
    full_table(pd.DataFrame(rows), wide=("detail",))


@st.cache_data(max_entries=64, show_spinner=False)
def _current_checks(rubric_json: str, text: str) -> list[CheckOutcome]:
    """Checks of a round whose gate has not run yet (or predates stored outcomes), computed now."""
    return run_criterion_checks(Rubric.model_validate_json(rubric_json), text)


def round_checks(rubric: Rubric, text: str, gate: GateResult | None) -> None:
    """The deterministic checks of one round, like a review's checks: as stored with the gate when it ran."""
    if not any(c.check for c in rubric.criteria):
        return
    stored = gate is not None and gate.checks is not None
    checks = gate.checks if stored else _current_checks(rubric.model_dump_json(), text)  # type: ignore[union-attr]
    passed = sum(c.result == "PASS" for c in checks)
    with st.expander(f"Deterministic checks ({passed} of {len(checks)} pass)"):
        if not stored:
            st.caption("Computed now with the current checks: this round's gate has not stored its own yet.")
        checks_table(checks, {c.id: c.name for c in rubric.criteria})


def rubric_table(rubric: Rubric) -> None:
    """The criteria a run is judged by (its own copy of the rubric version), one line each."""
    with st.expander(f"Rubric {rubric.name} v{rubric.version}: {len(rubric.criteria)} criteria"):
        rows = [
            {
                "id": c.id,
                "name": c.name,
                "category": c.category,
                "severity": c.severity,
                "pass condition": c.pass_condition,
                "fail signal": c.fail_signal,
                "check": describe_check(c.check) if c.check else "",
            }
            for c in rubric.criteria
        ]
        full_table(pd.DataFrame(rows), wide=("pass condition", "fail signal"))
