"""A reviewer's card and the round's injection screen, as a person reads them.

A card leads with what failed: each flagged criterion by its name (its id in the tooltip), with the reviewer's
detail and evidence in full; the criteria that passed are folded. A reviewer whose answer gave no verdict is said in
a sentence, the raw error in a detail. The screen is one line ("Injection screen: passed"); its key and answer sit
in the detail, because a person deciding needs the outcome, not the key.

Model text is shown with st.text (never as markdown or HTML): it is untrusted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from santa_core import pricing, words
from santa_core.models import CheckResult, GateResult, ReviewIssue, ReviewOutcome, ReviewStatus, Rubric, ScreenResult
from santa_core.reviewers.base import PERSON
from santa_core.run.gate import slot_passes, why_not_pass
from santa_core.run.unreviewed import no_answer
from ui.components import usd
from ui.safe import escape_markdown


@dataclass
class Finding:
    """What one review says of one criterion: its check, and the critical issues it lists on it."""

    criterion: str
    name: str
    check: CheckResult | None = None
    issues: list[ReviewIssue] = field(default_factory=list)
    advisory: bool = False

    @property
    def flagged(self) -> bool:
        """Failed, listed as an issue, or not checked at all: each of them keeps the review from passing."""
        return self.check is None or self.check.result == "FAIL" or bool(self.issues)


def _key(criterion: str) -> str:
    """The gate's matching of a review's criterion to the rubric's (case and surrounding space aside)."""
    return criterion.strip().casefold()


def findings(outcome: ReviewOutcome, rubric: Rubric) -> tuple[list[Finding], list[Finding]]:
    """(flagged, passed) findings of a valid review, each in rubric order; criteria the rubric does not hold
    (a reviewer's own id) come after it, by the name the reviewer gave."""
    review = outcome.review
    assert review is not None
    names = {_key(c.id): c.name for c in rubric.criteria}
    advisory = {_key(c) for c in rubric.advisory_ids()}
    found: dict[str, Finding] = {
        _key(c.id): Finding(c.id, c.name, advisory=_key(c.id) in advisory) for c in rubric.criteria
    }
    for check in review.checks:
        key = _key(check.criterion)
        found.setdefault(key, Finding(check.criterion, names.get(key, check.criterion)))
        if found[key].check is None or check.result == "FAIL":  # a FAIL among two checks of one criterion wins
            found[key].check = check
    for issue in review.critical_issues:
        key = _key(issue.criterion)
        found.setdefault(key, Finding(issue.criterion, names.get(key, issue.criterion)))
        found[key].issues.append(issue)
    shown = list(found.values())  # every rubric criterion: one the review did not check is flagged as such
    return [f for f in shown if f.flagged], [f for f in shown if not f.flagged]


MOST_SAID = 1_500
"""The most characters of one reviewer's detail, issue or quote a card shows: a reviewer may quote a whole
200,000-character paragraph, and the card would then show the text again (the round's output is one click away)."""


def clip(text: str, most: int = MOST_SAID) -> str:
    """`text`, or its start and how much more there is."""
    return text if len(text) <= most else f"{text[:most]}… ({len(text) - most:,} more characters)"


def reviews_in(reviews: dict[str, ReviewOutcome]) -> dict[str, ReviewOutcome]:
    """The round's reviews that are in: a person's slot held by a pending row is still open (as storage counts it)."""
    return {slot: o for slot, o in reviews.items() if o.status != ReviewStatus.PENDING}


def no_verdict(outcome: ReviewOutcome) -> str:
    """Why a slot gave no verdict, as a sentence (the raw error is the detail)."""
    who = f"Reviewer {outcome.slot}"
    if outcome.status == ReviewStatus.TIMEOUT:
        return f"{who} did not answer in time"
    if (outcome.error or "").startswith("compromised:"):  # santa_core.checks.echo: the PASS echoes the output
        return f"{who}'s PASS was compromised: it repeats a verdict or an instruction found in the output"
    if outcome.raw_response.strip():
        return f"{who}'s answer could not be read as a verdict"
    return f"{who} could not be asked: the call to the model failed"


def worded_gate(gate: GateResult, reviews: dict[str, ReviewOutcome]) -> GateResult:
    """The gate as shown: a reviewer's failure said in the card's sentence, not its raw error (which the card's detail
    holds); the stored gate is untouched."""
    said = {why_not_pass(o, [])[0]: f"{no_verdict(o)}: counted as FAIL" for o in reviews.values() if o.review is None}
    return gate.model_copy(update={"reasons": [said.get(r, r) for r in gate.reasons]})


def review_card(
    outcome: ReviewOutcome | None,
    slot: str,
    model: str,
    rubric: Rubric,
    hidden: bool = False,
    missing: str = "No review yet.",
) -> None:
    """One reviewer's verdict, flagged criteria with their evidence, passed ones folded, suggestions, cost
    (`missing`: what an empty slot says)."""
    st.markdown(f"**Reviewer {slot}** · {escape_markdown(model)}")
    if hidden:
        st.info("Hidden until both reviews are in (reviewers judge blind).")
        return
    if outcome is None:
        st.caption(escape_markdown(missing))
        return
    if slot == "D":  # the third reviewer judges the high-risk criteria only: its card lists those
        rubric = rubric.high_risk() or rubric
    criteria, advisory = rubric.criterion_ids(), rubric.advisory_ids()
    if no_answer(outcome):  # the provider failed: no verdict at all, so not called a FAIL
        st.warning("No answer from the model provider: not a verdict.")
        with st.expander("What went wrong"):
            st.text(outcome.error or "no answer")
    elif outcome.review is None:
        st.error(f"{no_verdict(outcome)}: counted as FAIL.")
        with st.expander("What went wrong"):
            st.text(outcome.error or "no verdict")
    elif slot_passes(outcome, criteria, advisory):
        st.success("PASS")
    elif outcome.review.verdict == "PASS":  # the gate's words for why this PASS does not count
        st.error("FAIL — " + escape_markdown("; ".join(why_not_pass(outcome, criteria, advisory))))
    else:
        st.error("FAIL")
    if outcome.review is not None:
        _review_body(outcome, rubric)
    by_person = outcome.reviewer == PERSON or outcome.reviewer.startswith(f"{PERSON}:")  # stored as "person:<id>"
    if not by_person:  # a person's review has no tokens, no price and no model latency
        u = outcome.usage
        price = usd(outcome.cost_usd) if pricing.is_known(outcome.reviewer) else pricing.PRICE_UNKNOWN
        st.caption(f"{u.input_tokens:,} in / {u.output_tokens:,} out tokens · {price} · {outcome.latency_s:.1f}s")


def _criterion(finding: Finding, icon: str) -> None:
    """A criterion's name, the id in its tooltip (the id is what the JSON record and the command line print)."""
    advisory = " · advisory, does not block" if finding.advisory else ""
    st.markdown(f"{icon} **{escape_markdown(finding.name)}**{advisory}", help=f"Criterion id: `{finding.criterion}`")


def _review_body(outcome: ReviewOutcome, rubric: Rubric) -> None:
    """Flagged criteria first, each with what the reviewer said in full; the passed ones in one fold."""
    review = outcome.review
    assert review is not None
    flagged, passed = findings(outcome, rubric)
    for f in flagged:
        _criterion(f, ":red[:material/cancel:]")
        if f.check is None:
            st.caption("Not checked by this reviewer.")
        elif f.check.detail:
            st.text(clip(f.check.detail))
        for issue in f.issues:
            st.text(f"• {clip(issue.description)}" + (f"\n  “{clip(issue.evidence)}”" if issue.evidence else ""))
    if passed:
        with st.expander(f"{len(passed)} criteri{'on' if len(passed) == 1 else 'a'} passed"):
            for f in passed:
                _criterion(f, ":green[:material/check_circle:]")
                if f.check is not None and f.check.detail:
                    st.caption(escape_markdown(f.check.detail))
    if review.suggestions:
        with st.expander(f"Suggestions ({len(review.suggestions)})"):
            for s in review.suggestions:
                st.text(f"• {s}")


def never_asked(sc: ScreenResult) -> bool:
    """The screen could not run here (no key, an unknown provider): no key was drawn (the key check), no call made
    (the extraction check), no earlier verdict reused."""
    return not sc.cached and (not sc.secret if sc.check == "key" else not sc.calls and not sc.answer)


def screen_summary(screens: dict[str, ScreenResult]) -> str:
    """The screen's outcome in a few words: "passed", "failed: …" or "not run: …" (no key, no answer)."""
    if took := [sc.role for _, sc in sorted(screens.items()) if sc.verdict == "took_over"]:
        return f"failed: the {' and the '.join(took)} took over the screening model"
    if quoted := [sc.role for _, sc in sorted(screens.items()) if sc.verdict == "quoted"]:
        return (
            f"failed: the {' and the '.join(quoted)} hold sentences that address an automated reader or give a "
            "verdict (extraction check)"
        )
    errors = [sc for _, sc in sorted(screens.items()) if sc.verdict == "error"]
    if errors and all(never_asked(sc) for sc in errors):  # never asked: no key, unknown provider
        return f"not run: {errors[0].error or 'the screening model could not be called'}"
    if errors:
        return "failed: the screening model's call failed, so the text could not be cleared"
    return "passed"


def screen_line(screens: dict[str, ScreenResult]) -> None:
    """The round's known-answer screen as one line, its key and answer in the detail (nothing when not screened)."""
    if not screens:
        return
    summary = screen_summary(screens)
    icon = ":material/verified_user:" if summary == "passed" else ":material/gpp_maybe:"
    with st.expander(escape_markdown(f"Injection screen: {summary}"), icon=icon):
        for _, sc in sorted(screens.items()):
            said = sc.error if sc.verdict == "error" else repr(sc.answer.strip()[:80])
            if sc.cached:
                how = " (screened before)"
            elif never_asked(sc):  # the screen could not run here (no key, an unknown provider)
                how = f" (could not run: {sc.error})"
            elif sc.check == "extraction":
                how = f" (asked to quote sentences for an automated reader, answered {said})"
            else:
                how = f" (asked for {sc.secret}, answered {said})"
            verdict = words.screen_verdict(sc.verdict, sc.check)
            what = sc.role if sc.check == "key" else f"{sc.role}, {words.screen_check(sc.check)}"
            st.caption(escape_markdown(f"{what}: {sc.model} {verdict}{how}"))
            for quote in sc.quotes:
                st.caption(escape_markdown(f"quoted from the text: {quote[:300]!r}"))
