"""The fix agent's side of the method: fix ONLY the merged critical issues.

A fix is a list of exact-text edits (issue, before, after). Edits are applied by position to
the original text, so every byte outside the replaced spans stays identical by construction.
An edit must lie inside the sentence that holds its issue's evidence (`santa_core.scope`); an
issue whose evidence does not point at one place in the output (no quote, too short, not found,
found more than once) is *unanchored* and gets no automatic edit. An edit
whose "before" text is missing, ambiguous, out of scope or overlapping another edit is rejected
and shown, never guessed at. `issue_fixes` says per issue what the proposal did.
"""

from __future__ import annotations

from santa_core.batch.defect import flagged
from santa_core.models import FixEdit, FixPlan, FixProposal, FixState, IssueFix, MergedIssue, RejectedEdit
from santa_core.reviewers.base import PERSON, FixAnswer, Fixer, FixRequest
from santa_core.run.gate import normalise
from santa_core.scope import AMBIGUOUS, anchor, scope_of, stands_in, within
from santa_core.text import starts

PLAN_FLOOR = 300
"""The whole plan may replace half the output, or this many characters of a short one."""
GROWTH = 1000
"""How many characters longer than the text it replaces an edit may be."""
EDITS_PER_ISSUE = 3
"""A flagged issue is one problem; more edits than this for one issue is a rewrite."""


def occurrences(text: str, sub: str) -> list[int]:
    """Start offsets of every occurrence of sub, overlapping ones included ('aa' in 'aaa' → 2), in linear time.

    `str.find` from one occurrence to the next is fastest while they are few, but each call reads `sub` again: a long
    `sub` in a text that repeats it ("a a a …", a reviewer's quote of half of it) cost the text's length times its
    own (200,000 characters: 4.7 s). Once the calls have read `sub` more than about four times the text's length,
    the rest are found in one pass (`text.starts`).
    """
    found: list[int] = []
    if not sub:
        return found
    budget, i = 4 * len(text) + 4096, text.find(sub)
    while i != -1:
        found.append(i)
        if len(found) * len(sub) > budget:
            return found + list(starts(text, sub, i + 1))
        i = text.find(sub, i + 1)
    return found


def _locate(text: str, edit: FixEdit, issues: list[MergedIssue]) -> tuple[int, str | None]:
    """Start offset of the edit's span, or an error saying why it cannot be applied."""
    if not 0 <= edit.issue < len(issues):
        return -1, f"names issue {edit.issue + 1}, which is not one of the flagged issues"
    # Why scope first: "fix only what was flagged" must hold even if the fix agent tries to
    # rewrite more, and with auto-approve no person would notice.
    spans = scope_of(text, issues[edit.issue].evidence)
    if not spans:
        return -1, f"is for an unanchored issue: {anchor(text, issues[edit.issue].evidence)[1]}, so a person fixes it"
    if not edit.before:
        return -1, "has an empty 'before' text"
    found = occurrences(text, edit.before)
    if not found:
        return -1, "'before' text was not found in the output"
    if len(found) > 1:
        return -1, f"'before' text occurs {len(found)} times; it must be unique"
    if not within(spans, found[0], found[0] + len(edit.before)):
        return -1, "reaches beyond the sentence that holds the issue's evidence"
    return found[0], None


def _plan_limits(edit: FixEdit, spans: list[tuple[int, int, FixEdit]], start: int, end: int, budget: int) -> str | None:
    """Why the edit breaks a limit of the plan as a whole, or None."""
    if any(s < end and start < e for s, e, _ in spans):
        return "overlaps another edit"
    if len(edit.after) > len(edit.before) + GROWTH:
        return f"adds {len(edit.after) - len(edit.before):,} characters; a fix may add at most {GROWTH:,}"
    if sum(1 for *_, e in spans if e.issue == edit.issue) >= EDITS_PER_ISSUE:
        return f"is more than {EDITS_PER_ISSUE} edits for one issue"
    if sum(e - s for s, e, _ in spans) + (end - start) > budget:
        return f"would bring the replaced text over {budget:,} characters (half the output)"
    return None


def apply_plan(text: str, plan: FixPlan, issues: list[MergedIssue]) -> tuple[str, list[FixEdit], list[RejectedEdit]]:
    """Apply the plan's valid edits to text; return (new text, applied, rejected)."""
    spans: list[tuple[int, int, FixEdit]] = []
    rejected: list[RejectedEdit] = []
    # Why a budget for the whole plan: each edit may look local, yet many of them together
    # could replace most of the output; "fix only what was flagged" is about the sum.
    budget = max(PLAN_FLOOR, len(text) // 2)
    for edit in plan.edits:
        start, error = _locate(text, edit, issues)
        end = start + len(edit.before)
        error = error or _plan_limits(edit, spans, start, end, budget)
        if error is None and edit.before == edit.after:
            error = "changes nothing"
        if error:
            rejected.append(RejectedEdit(edit=edit, reason=f"edit for issue {edit.issue + 1} {error}"))
        else:
            spans.append((start, end, edit))
    spans.sort(key=lambda s: s[0])
    pieces, cursor = [], 0
    for start, end, edit in spans:
        pieces += [text[cursor:start], edit.after]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), [s[2] for s in spans], rejected


def propose_fix(fixer: Fixer, spec: str, output: str, issues: list[MergedIssue]) -> FixProposal:
    """Ask the fix agent for edits and apply them; the result is a proposal for a person."""
    answer: FixAnswer = fixer.propose(FixRequest(spec=spec, output=output, issues=issues))
    plan = answer.plan or FixPlan(edits=[])
    proposed, applied, rejected = apply_plan(output, plan, issues)
    return FixProposal(
        issues=issues,
        edits=applied,
        rejected=rejected,
        before_text=output,
        proposed_text=proposed,
        usage=answer.usage,
        cost_usd=answer.cost_usd,
        calls=answer.calls,
        error=answer.error,
    )


def issue_fixes(proposal: FixProposal) -> list[IssueFix]:
    """Per flagged issue: fixed (an applied edit changes its quoted text), failed (why), not fixed, or unanchored.

    "Fixed" means the quoted text itself, at the one place it anchors, was replaced, by this issue's
    edit or another's: an edit elsewhere in the sentence leaves the defect where it was. Unanchored
    (see `santa_core.scope.anchor`) says why: no quote, too short, not found, or found more than once.
    """
    text = proposal.before_text
    edited = [(s, s + len(e.before)) for e in proposal.edits for s in occurrences(text, e.before)[:1]]
    fixes = []
    for i, issue in enumerate(proposal.issues):
        state: FixState
        place, why = anchor(text, issue.evidence)
        touched = place is not None and any(s < place[1] and place[0] < e for s, e in edited)
        refused = [r.reason for r in proposal.rejected if r.edit.issue == i]
        # A refused edit labelled with another issue may still have been this issue's fix: say it was refused,
        # never "no edit was proposed" while it is shown on the same page.
        refused += [
            f"an edit of its quoted text was refused: {r.reason}"
            for r in proposal.rejected
            if r.edit.issue != i and place is not None and _overlaps(text, r.edit.before, place)
        ]
        if place is None:
            state, reason = "unanchored", f"{why}, so a person fixes it"
        elif touched:
            state, reason = "fixed", "its quoted text is replaced"
        elif refused:
            state, reason = "failed", refused[0]
        elif proposal.error:
            state, reason = "failed", proposal.error
        elif any(e.issue == i for e in proposal.edits):
            state, reason = "not fixed", "the edits leave its quoted text as it was"
        else:
            state, reason = "not fixed", "no edit was proposed for it"
        fixes.append(IssueFix(number=i + 1, criterion=issue.criterion, state=state, reason=reason))
    return fixes


def touched_issues(proposal: FixProposal, before: str) -> list[int]:
    """Indexes of the issues whose quoted text, at the one place it anchors, an occurrence of `before` overlaps."""
    text = proposal.before_text
    places = [anchor(text, issue.evidence)[0] for issue in proposal.issues]
    return [i for i, place in enumerate(places) if place is not None and _overlaps(text, before, place)]


def _overlaps(text: str, before: str, place: tuple[int, int]) -> bool:
    """Whether some occurrence of `before` in text overlaps `place`."""
    start = max(0, place[0] - len(before))
    return any(
        start + s < place[1] and place[0] < start + s + len(before)
        for s in occurrences(text[start : place[1] + len(before)], before)
    )


def judge_text(proposal: FixProposal, text: str) -> tuple[list[IssueFix], list[IssueFix]]:
    """(the issues `text` leaves unfixed, the issues whose fix in `text` cannot be checked), for the text a person
    is about to approve.

    The proposal's own text is judged as `issue_fixes` judges it. Any other text (a person's edit) is judged by
    its quotes: an issue whose quoted text still stands in it stays unfixed; one whose quote named no place in
    the output (none, too short, not found) cannot be checked, so the person is asked to check it.
    """
    if text == proposal.proposed_text:
        return [f for f in issue_fixes(proposal) if f.state != "fixed"], []
    left, unsure = [], []
    for i, issue in enumerate(proposal.issues):
        place, why = anchor(proposal.before_text, issue.evidence)
        if place is None and why != AMBIGUOUS:
            unsure.append(IssueFix(number=i + 1, criterion=issue.criterion, state="unanchored", reason=why))
        elif stands_in(text, issue.evidence):
            left.append(
                IssueFix(
                    number=i + 1,
                    criterion=issue.criterion,
                    state="not fixed",
                    reason="its quoted text is still in the text",
                )
            )
        elif (words := flagged(issue)) and _count(text, words) >= _count(proposal.before_text, words):
            # The sentence was reworded around the words the reviewer objected to ("risk-free" kept while
            # "everyone who joins" became "all who join"): the quote is gone, the defect is not.
            left.append(
                IssueFix(
                    number=i + 1,
                    criterion=issue.criterion,
                    state="not fixed",
                    reason=f"the words it flags (“{words}”) are still in the text",
                )
            )
    return left, unsure


def _count(text: str, words: str) -> int:
    """How often `words` (normalised, as `flagged` gives them) stand in `text` as whole words."""
    return f" {normalise(text)} ".count(f" {words} ")


def take_edit(text: str, edit: FixEdit) -> tuple[str | None, str]:
    """(text with the edit applied, "") when its 'before' text stands once in `text`, else (None, why not)."""
    found = occurrences(text, edit.before) if edit.before else []
    if len(found) != 1:
        return None, (
            "its 'before' text is not in the box"
            if not found
            else f"its 'before' text stands {len(found)} times in the box"
        )
    return text[: found[0]] + edit.after + text[found[0] + len(edit.before) :], ""


def is_complete(proposal: FixProposal) -> bool:
    """Every flagged issue's quoted text is replaced: the only proposal auto-approve may apply."""
    fixes = issue_fixes(proposal)
    return bool(fixes) and all(f.state == "fixed" for f in fixes)


def anchored(output: str, issues: list[MergedIssue]) -> list[int]:
    """Indexes of the issues whose evidence stands at one place in the output (the only ones a fix agent may edit)."""
    return [i for i, issue in enumerate(issues) if scope_of(output, issue.evidence)]


def fixed_by_person(fixer: str, output: str, issues: list[MergedIssue]) -> bool:
    """A person writes this round's fix: the fix agent is a person, or no issue can be located to edit.

    Why not ask the fix agent when nothing is anchored: none of its edits could be applied, so the
    call would only pay for a proposal that must be refused.
    """
    return fixer == PERSON or not anchored(output, issues)


def keep_edits(proposal: FixProposal, kept: list[int]) -> FixProposal:
    """The proposal with only the applied edits at positions `kept` (a person's choice of single edits)."""
    keep = set(kept)
    edits = [e for i, e in enumerate(proposal.edits) if i in keep]
    text, applied, _ = apply_plan(proposal.before_text, FixPlan(edits=edits), proposal.issues)
    return proposal.model_copy(update={"edits": applied, "proposed_text": text})


def person_fix(output: str, issues: list[MergedIssue]) -> FixProposal:
    """A proposal for a person to write: the flagged issues and the output, unchanged so far."""
    return FixProposal(issues=issues, edits=[], before_text=output, proposed_text=output)
