"""A text the reviewers already judged is never reviewed again unchanged (issue 18): when a round counts as
judged, and why approving or re-reviewing such a text is refused, in a person's words. Pure: rounds in, words
out; the runner, the actions and the store's resolving transaction all ask here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from santa_core.models import ReviewStatus, Slot
from santa_core.run.fixer import fixed_by_person
from santa_core.run.store import RoundRecord

TWO_SLOTS: tuple[Slot, Slot] = ("B", "C")
UNCHANGED = "Nothing was recorded: "
"""How a refusal of an unchanged text starts (the reason follows)."""


def complete_verdict(rnd: RoundRecord) -> bool:
    """Both reviewers gave a complete verdict on the round's text: a stored gate that is no reviewer failure,
    over a valid answer in each slot.

    Not so when a reviewer erred or timed out, the injection screen failed or stopped the round (no reviewer
    was asked), a budget stop or an interruption came before the gate, or a person slot is still empty:
    then reviewing the same text again is the only way to get an answer.
    """
    gate = rnd.gate
    # B and C always; a third reviewer's (D) answer counts too when the round had one (a D its rubric asked for
    # and did not get is a reviewer error of the gate already).
    slots = {*TWO_SLOTS, *rnd.reviews}
    return (
        gate is not None
        and not gate.reviewer_error
        and all(
            (o := rnd.reviews.get(s)) is not None and o.status == ReviewStatus.OK and o.review is not None
            for s in slots
        )
    )


def judged_before(rounds: Iterable[RoundRecord | None], text: str) -> RoundRecord | None:
    """The round with a complete verdict on exactly `text` among the latest `rounds` that hold that text.

    `rounds` come newest first; the walk stops at the first round with another text, so "unchanged" means
    unchanged since the last review (an edit that restores an older version is a change). Rounds that never
    got a verdict (a budget stop, a reviewer failure, this guard) are walked past. Why: a round whose output
    is unchanged is never reviewed again; it would pay two reviewers for the answer they already gave.
    Compared byte for byte: any edit, however small, is a new text.
    """
    for rnd in rounds:
        if rnd is None or rnd.output_text != text:
            return None
        if complete_verdict(rnd):
            return rnd
    return None


def already_judged(rnd: RoundRecord) -> str:
    """Why a text may not be reviewed again, in words (the start of every refusal)."""
    return (
        f"this text is exactly the output round {rnd.round_no} reviewed, and both reviewers already gave "
        f"their verdict on it ({rnd.gate.decision.value if rnd.gate else 'judged'}), so another round would "
        "only ask them again for the verdict they already gave"
    )


def approval_refusal(fixer: str, rounds: Sequence[RoundRecord], text: str) -> str | None:
    """Why approving `text` is refused, with what to do instead: the reviewers already judged exactly this
    text (e.g. a person's fix approved unedited, or an edit that restores the output they judged). None when
    the next round can change the answer. `rounds`: the run's rounds, oldest first, the current one last."""
    judged = judged_before(reversed(rounds), text)
    if judged is None:
        return None
    rnd = rounds[-1]
    agent = not fixed_by_person(fixer, rnd.output_text, rnd.gate.issues if rnd.gate else [])
    instead = (
        "edit the text to fix the flagged issues"
        + (", ask the fix agent again" if agent else "")
        + ", or reject the fix (a person then ships the output as is or rejects it)"
    )
    return f"{already_judged(judged)}. Instead, {instead}."


def rereview_refusal(rounds: Sequence[RoundRecord], text: str) -> str | None:
    """Why a re-review of `text` is refused (both reviewers already judged exactly this text), with what to do
    instead; None when a fresh review can still give an answer (a reviewer failed on it, a budget stop or an
    interruption came first, the text is edited). `rounds`: oldest first, the current one last."""
    judged = judged_before(reversed(rounds), text)
    if judged is None:
        return None
    return (
        f"{already_judged(judged)}. Instead, edit the output before sending it for fresh review, or ship it as "
        "is or reject it, with your justification."
    )
