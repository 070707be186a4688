"""What people's judgements tell the desk: labels for reviewer calibration, spot-check outcomes for the escape rate.

A person's verdict on a criterion of a round's text is ground truth for every model that judged the same text.
Spot-checks are the one unbiased sample of shipped work (drawn at random, judged blind), so only they give an
escape rate that can be stated with an interval; reported escapes stay a separate series. The stores produce
these records; `santa_core.reports` computes from them without knowing where they were stored.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from santa_core.models import Verdict

LabelSource = Literal["spot_check", "person_review", "escalation"]
"""Where a person's judgement came from: a blind spot-check of a shipped run, a person filling a reviewer slot,
an escalation resolved with evidence."""


class PersonLabel(BaseModel):
    """One person's verdict on one criterion of one round's text."""

    model_config = ConfigDict(frozen=True)

    run_id: int
    round_no: int
    criterion: str
    verdict: Verdict
    source: LabelSource
    person: str
    at: datetime
    evidence: str = ""


class ModelVerdict(BaseModel):
    """What one model said of one criterion of the round a label judges (the thing calibrated)."""

    model_config = ConfigDict(frozen=True)

    run_id: int
    round_no: int
    slot: str
    model: str
    criterion: str
    verdict: Verdict


class SpotCheckOutcome(BaseModel):
    """One submitted spot-check of a shipped run: which criteria the blind person judged and which they failed."""

    model_config = ConfigDict(frozen=True)

    spot_check_id: int
    run_id: int
    round_no: int
    rubric_name: str
    rubric_version: int
    domain: str
    reviewer_b: str
    reviewer_c: str
    submitted_at: datetime
    judged: tuple[str, ...]
    failed: tuple[str, ...] = Field(default=())
    """Blocking criteria the person failed that a reviewer of the shipped round passed (escapes past the panel)."""
    drawn_by: Literal["share", "floor"] = "share"
    """How the run was drawn: its rule's random share, or the weekly floor's top-up (random within its week)."""
    reviewer_d: str | None = None
    """The third reviewer of the run, when its rubric asked for one: then the panel is three models."""

    @property
    def escaped(self) -> bool:
        """A shipped run the person failed on a criterion a reviewer passed: a miss of the panel."""
        return bool(self.failed)
