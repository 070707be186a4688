"""Display pieces shared by the pages: reviews, gate banner, issues, proposal diff.

Model and user text is shown with st.text / st.code / dataframes — never as HTML — because it
is untrusted (it may contain markup meant for the reviewer or the reader).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from santa_core import pricing, words
from santa_core.checks import run_criterion_checks
from santa_core.checks.forms import describe_check
from santa_core.models import (
    CheckOutcome,
    FixProposal,
    GateDecision,
    GateResult,
    IssueFix,
    MergedIssue,
    ReviewOutcome,
    Rubric,
    RunStatus,
    ScreenResult,
)
from santa_core.reviewers.base import PERSON
from santa_core.run.fixer import issue_fixes
from santa_core.run.gate import slot_passes, why_not_pass
from santa_core.text import unified_diff
from santa_core.words import usd  # noqa: F401  (pages write money as `components.usd`: one rule, the core's)
from ui import table_fit
from ui.safe import escape_markdown

ATTRIBUTION = {"both": "B and C", "B": "B only", "C": "C only", "check": "deterministic check"}

WRAP_LINES = table_fit.WRAP_LINES
"""The most lines a wrapped table row is tall; a longer cell shows whole when clicked."""


def fitted_config(fitted: table_fit.Fit, config: dict | None = None) -> dict:
    """`config` (column name → st.column_config entry) with every column's width set to the fitted one."""
    config = dict(config or {})
    for column, width in fitted.widths.items():
        entry = config.get(column)
        config[column] = ({**entry, "width": width} if isinstance(entry, dict)
                          else st.column_config.Column(entry if isinstance(entry, str) else None, width=width))
    return config


def labels_of(config: dict | None) -> dict[str, str]:
    """The headers `config` gives columns (where they differ from the column's name)."""
    return {c: e["label"] for c, e in (config or {}).items() if isinstance(e, dict) and e.get("label")}


def full_table(frame: pd.DataFrame, wide: tuple[str, ...] = (), room: int = table_fit.MAIN_PX,
               config: dict | None = None, breakable: tuple[str, ...] = ()) -> None:
    """A read-only table with every row on the page (no scroll area after the tenth) whose columns fit in
    `room` px (the main area by default; table_fit.CARD_PX in one of two side-by-side columns): its long
    text columns (`wide`) take the room the others leave, and every cell that does not fit on one line
    wraps, the rows as tall as the longest needs (up to WRAP_LINES lines; no word is broken but in the
    `breakable` columns, names with e-mail addresses).

    Why a row height: Streamlit wraps cell text only in rows taller than 4rem (64 px), and a row height is
    one for the whole table; a table whose texts fit on one line keeps the one-line rows.
    """
    fitted = table_fit.fit(frame, room, wide=tuple(c for c in wide if c in frame.columns), labels=labels_of(config),
                           breakable=breakable)
    st.dataframe(frame, hide_index=True, width="stretch", height="content", row_height=fitted.row_height,
                 column_config=fitted_config(fitted, config))


def status_label(status: RunStatus | str) -> str:
    """A run status in words: plain text (no icon), as select boxes and table cells can only show plain text."""
    return words.status(status)


def review_card(outcome: ReviewOutcome | None, slot: str, model: str, hidden: bool = False,
                criteria: list[str] | None = None, advisory: list[str] | None = None) -> None:
    """One reviewer's verdict, per-criterion checks, issues, suggestions, tokens, cost, latency."""
    st.markdown(f"**Reviewer {slot}** · {escape_markdown(model)}")
    if hidden:
        st.info("Hidden until both reviews are in (reviewers judge blind).")
        return
    if outcome is None:
        st.caption("No review yet.")
        return
    if outcome.review is None:
        st.error(f"{outcome.status.value.upper()}: counted as FAIL")
        st.text(outcome.error or "no verdict")
    elif slot_passes(outcome, criteria or [], advisory or []):
        st.success("PASS")
    elif outcome.review.verdict == "PASS":  # the gate's words for why this PASS does not count
        st.error("FAIL — " + escape_markdown("; ".join(why_not_pass(outcome, criteria or [], advisory or []))))
    else:
        st.error("FAIL")
    if outcome.review is not None:
        _review_body(outcome)
    if outcome.reviewer.startswith(f"{PERSON}:"):  # a person's review ("person:<id>"): no tokens, price or latency
        return
    u = outcome.usage
    st.caption(f"{u.input_tokens:,} in / {u.output_tokens:,} out tokens · "
               f"{usd(outcome.cost_usd) if pricing.is_known(outcome.reviewer) else pricing.PRICE_UNKNOWN} · "
               f"{outcome.latency_s:.1f}s")


def _review_body(outcome: ReviewOutcome) -> None:
    review = outcome.review
    checks = pd.DataFrame([c.model_dump() for c in review.checks], columns=["criterion", "result", "detail"])
    full_table(checks, wide=("detail",), room=table_fit.CARD_PX)  # a card is half the page wide
    if review.critical_issues:
        st.markdown("Critical issues")
        for issue in review.critical_issues:
            st.text(f"• [{issue.criterion}] {issue.description}" + (f"\n  “{issue.evidence}”" if issue.evidence else ""))
    if review.suggestions:
        with st.expander(f"Suggestions ({len(review.suggestions)})"):
            for s in review.suggestions:
                st.text(f"• {s}")


SCREEN_WORDS = {"clean": "repeated the key", "took_over": "was taken over", "error": "failed"}


def screen_line(screens: dict[str, ScreenResult]) -> None:
    """One caption for the round's known-answer screens (nothing when the round was not screened)."""
    if not screens:
        return
    parts = []
    for role, sc in sorted(screens.items()):
        said = sc.error if sc.verdict == "error" else repr(sc.answer.strip()[:80])
        if sc.cached:
            how = " (screened before)"
        elif not sc.secret:  # never asked: the screen could not run here (no key, an unknown provider)
            how = f" (could not run: {sc.error})"
        else:
            how = f" (asked for {sc.secret}, answered {said})"
        parts.append(f"{role}: {sc.model} {SCREEN_WORDS.get(sc.verdict, sc.verdict)}{how}")
    st.caption(escape_markdown("Injection screen · " + " · ".join(parts)))


def gate_banner(gate: GateResult) -> None:
    """NICE or NAUGHTY, with the reasons."""
    if gate.decision == GateDecision.NICE:
        st.success("NICE — both reviewers PASS. Ship it.", icon=":material/celebration:")
    else:
        reasons = list(dict.fromkeys(gate.reasons)) or ["not both PASS"]  # each reason once
        st.error("NAUGHTY — " + escape_markdown("; ".join(reasons)))


def issues_table(issues: list[MergedIssue]) -> None:
    """Merged critical issues with who flagged them."""
    if not issues:
        return
    rows = [{"#": i + 1, "criterion": it.criterion, "issue": it.description, "evidence": it.evidence,
             "flagged by": ATTRIBUTION.get(it.flagged_by, it.flagged_by)} for i, it in enumerate(issues)]
    full_table(pd.DataFrame(rows), wide=("issue", "evidence"))


def readable_diff(before: str, after: str, old: str = "current output", new: str = "proposed output") -> str:
    """A unified diff of two texts for st.code(language='diff'); "(no change)" when they are equal."""
    return unified_diff(before, after, old, new, exact_line_ends=False) or "(no change)"


FIX_STATES = {"fixed": "fixed", "not fixed": "not fixed", "unanchored": "unanchored: a person fixes it",
              "failed": "failed"}


def unfixed(proposal: FixProposal) -> list[IssueFix]:
    """The issues this proposal leaves as they are (every state but fixed)."""
    return [f for f in issue_fixes(proposal) if f.state != "fixed"]


def remaining_words(left: list[IssueFix]) -> str:
    """"issue 2 stays unfixed" / "issues 2 and 3 stay unfixed"."""
    numbers = [str(f.number) for f in left]
    listed = numbers[0] if len(numbers) == 1 else ", ".join(numbers[:-1]) + " and " + numbers[-1]
    return f"issue {listed} stays unfixed" if len(numbers) == 1 else f"issues {listed} stay unfixed"


def proposal_view(proposal: FixProposal, by_person: bool = False) -> None:
    """The fix proposal: what it did per issue, each edit beside its issue, refused edits, and the diff."""
    if proposal.error:
        st.warning(f"The fix agent failed: {escape_markdown(proposal.error)}")
    if not by_person:
        rows = [{"#": f.number, "criterion": f.criterion, "fix": FIX_STATES[f.state], "why": f.reason}
                for f in issue_fixes(proposal)]
        full_table(pd.DataFrame(rows), wide=("why",))
        if left := unfixed(proposal):
            st.warning(escape_markdown(f"Partial proposal: {remaining_words(left)}. Approving it sends the output "
                                       "with that defect to fresh reviewers; fix it in the box below, or reject."))
    for edit in proposal.edits:
        issue = proposal.issues[edit.issue] if edit.issue < len(proposal.issues) else None
        left, right = st.columns(2)
        left.caption(escape_markdown(f"Issue {edit.issue + 1}" + (f" · {issue.criterion}" if issue else "")))
        left.text(issue.description if issue else "")
        right.code(f"- {edit.before}\n+ {edit.after}", language="diff")
    for rejected in proposal.rejected:
        st.warning(f"Edit not applied: {escape_markdown(rejected.reason)}")
        st.code(f"- {rejected.edit.before}\n+ {rejected.edit.after}", language="diff")
    st.code(readable_diff(proposal.before_text, proposal.proposed_text), language="diff", wrap_lines=True)


def checks_table(checks: list[CheckOutcome]) -> None:
    """One line per deterministic check: criterion, type, PASS/FAIL and what it found."""
    if not checks:
        st.caption("No criterion carries a deterministic check.")
        return
    rows = [{"criterion": c.criterion, "check": c.check_type, "result": c.result,
             "detail": c.detail} for c in checks]
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
        checks_table(checks)


def rubric_table(rubric: Rubric) -> None:
    """The criteria a run is judged by (its own copy of the rubric version), one line each."""
    with st.expander(f"Rubric {rubric.name} v{rubric.version}: {len(rubric.criteria)} criteria"):
        rows = [{"id": c.id, "name": c.name, "category": c.category, "severity": c.severity,
                 "pass condition": c.pass_condition, "fail signal": c.fail_signal,
                 "check": describe_check(c.check) if c.check else ""} for c in rubric.criteria]
        full_table(pd.DataFrame(rows), wide=("pass condition", "fail signal"))
