"""A round that could not be reviewed: the model provider failed (issue 34, point 4).

When the known-answer screen could not run, or a reviewer's provider gave no answer at all (a server error, an
overload, a timeout, a lost connection, a model that could not be called), nobody judged the output: the round is
not NAUGHTY, it is unreviewed. It still fails closed (nothing ships; the run escalates as `provider_failed`), but
the words say what happened and a person may simply try again. Pure: a stored round in, words out; the runner, the
actions and the run page all ask here.
"""

from __future__ import annotations

import re

from santa_core.models import GateDecision, ReviewOutcome, ReviewStatus, ScreenResult, Usage
from santa_core.run.gate import checked_out_first
from santa_core.run.store import RoundRecord

HEADLINE = "Could not be reviewed: the model provider failed"
"""What a round (and its run) that nobody could judge is called, wherever a person reads it."""
TRIED_AGAIN = "tried again after the model provider failed"
"""The run's note and the decision's reason (unless the person gives one) of a Try again."""


def no_answer(outcome: ReviewOutcome) -> bool:
    """The reviewer's provider gave no answer: every attempt failed before a response came (or the model could not be
    called at all). A bad answer (refused, cut off, invalid, a compromised PASS) is a reviewer failure, not this."""
    if (
        outcome.review is not None
        or outcome.status not in (ReviewStatus.ERROR, ReviewStatus.TIMEOUT)
        or outcome.raw_response.strip()
    ):
        return False
    # Why the stored answer and usage, not the error text: an answer, however bad, is kept raw and comes with its
    # usage (even a refusal with no text); a request that failed has neither.
    last = outcome.calls[-1] if outcome.calls else None
    return last is None or (not last.response and last.usage == Usage())


_STATUS = re.compile(r"\((\d{3}) ([a-z]{1,40}(?:_[a-z]{1,40}){1,5})\)")
"""The HTTP status and the provider's error type the call describes ("(500 api_error)"): the type is a code."""


def sentence(words: str) -> str:
    """The provider's words as a sentence: a capital first letter and a full stop, the error type in words
    ("(HTTP 500: api error)")."""
    words = _STATUS.sub(lambda m: f"(HTTP {m.group(1)}: {m.group(2).replace('_', ' ')})", words.strip().rstrip("."))
    return words[:1].upper() + words[1:] + "." if words else ""


def _screen_failure(screen: ScreenResult) -> str:
    return f"the injection screen ({screen.model}) could not be run: {sentence(screen.error or 'no answer')}"


def _reviewer_failure(outcome: ReviewOutcome) -> str:
    return f"reviewer {outcome.slot} ({outcome.reviewer}) got no answer: {sentence(outcome.error or 'no answer')}"


def failures(rnd: RoundRecord) -> list[str]:
    """Each call of the round the provider failed, named with the provider's words (empty: none failed)."""
    screens = [_screen_failure(sc) for _, sc in sorted(rnd.screens.items()) if sc.verdict == "error"]
    return screens + [_reviewer_failure(o) for _, o in sorted(rnd.reviews.items()) if no_answer(o)]


def could_not_review(rnd: RoundRecord | None) -> str:
    """Why the round could not be reviewed, naming each failed call; "" when it was judged (or is not decided yet).

    Only a gate with nothing against the output counts: an injection or a named issue is a verdict (NAUGHTY is
    true then, whatever else failed), so it is never hidden behind an outage.
    """
    gate = rnd.gate if rnd is not None else None
    if rnd is None or gate is None or gate.decision != GateDecision.NAUGHTY or gate.injection or gate.issues:
        return ""
    return "; ".join(failures(rnd))


def not_asked(rnd: RoundRecord) -> str:
    """What a reviewer column says when the round was decided without that reviewer."""
    if any(sc.verdict == "error" for sc in rnd.screens.values()):
        return "Not asked: the injection screen could not be run."
    if rnd.gate is not None and rnd.gate.injection:
        return "Not asked: the output addresses the reviewers, so no reviewer was paid to read it."
    if checked_out_first(rnd.gate):
        return (
            "Not asked: a critical deterministic check failed, so no reviewer was paid to read this text; fresh "
            "reviewers judge the fixed one."
        )
    return "Not asked: this round was stopped before the reviewers."
