"""The third reviewer (slot D): which runs have one, and what a run may name for it.

A rubric marks its high-risk criteria `third_reviewer`; a run on such a rubric names a model for slot D, which
judges those criteria alongside B and C, and the round ships only when all three pass. D is always a model: a
person slot is refused, because the desk's person-review queue fills B and C (a D nobody can fill would leave
the run waiting for ever).
"""

from __future__ import annotations

from santa_core.models import Rubric
from santa_core.reviewers.base import PERSON


class ThirdReviewerProblem(ValueError):
    """The run's third reviewer does not fit its rubric (missing, or a person)."""


def third_reviewer_for(rubric: Rubric, model: str | None) -> str | None:
    """The model a new run stores for slot D: `model` when the rubric has high-risk criteria, None when it has none
    (no third reviewer is paid for nothing). Raises ThirdReviewerProblem when one is needed and none (or a person)
    is named: every door that starts a run reaches this, so no run on such a rubric starts with two reviewers."""
    ids = rubric.third_reviewer_ids()
    if not ids:
        return None
    model = (model or "").strip()
    if not model:
        raise ThirdReviewerProblem(
            f"rubric {rubric.name} v{rubric.version} asks for a third reviewer on "
            f"{', '.join(ids)}: name a model for reviewer D"
        )
    if model == PERSON:
        raise ThirdReviewerProblem("reviewer D must be a model: people review in slots B and C")
    return model
