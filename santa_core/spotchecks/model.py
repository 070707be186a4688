"""What a spot-check rule and a spot-check are, as the core sees them."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from santa_core.models import Criterion, Verdict
from santa_core.providers import family

SpotStatus = Literal["open", "done"]
DrawnBy = Literal["share", "floor"]
"""How a run came to be spot-checked: its number fell under the share, or the weekly floor topped its week up."""
PANEL_JOIN = "+"


def panel_pair(panel: str) -> tuple[str, str]:
    """A panel as written ("Claude + GPT", or two reviewer ids) to its two parts in name order; ValueError else."""
    parts = [p.strip() for p in panel.split(PANEL_JOIN)]
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"a panel is two families or two reviewers joined by '{PANEL_JOIN}', not {panel!r}")
    first, second = sorted(parts, key=str.casefold)
    return first, second


class SpotRule(BaseModel):
    """A standing order: this share of the rubric's shipped runs (at least `floor` a week) goes to a person.

    The parameters never change once saved (a change is a new rule; the old one is retired), so every run is
    drawn under one fixed seed and share for as long as the rule lives."""

    model_config = ConfigDict(frozen=True)

    id: int
    rubric_name: str
    share: float = Field(gt=0, le=1)
    floor: int = Field(default=0, ge=0)
    panel: str | None = None
    domain: str | None = None
    seed: str
    created_by: str
    created_at: datetime
    active: bool = True
    retired_at: datetime | None = None

    def applies(self, rubric_name: str, domain: str, reviewer_b: str, reviewer_c: str) -> bool:
        """Whether a run of this rubric, domain and panel falls under the rule."""
        if rubric_name != self.rubric_name or (self.domain and domain.casefold() != self.domain.casefold()):
            return False
        if not self.panel:
            return True
        want = tuple(p.casefold() for p in panel_pair(self.panel))
        reviewers = tuple(sorted((reviewer_b.casefold(), reviewer_c.casefold())))
        families = tuple(sorted((family(reviewer_b).casefold(), family(reviewer_c).casefold())))
        return want in (reviewers, families)

    @property
    def label(self) -> str:
        """'5 % of general (at least 3 a week), panel Claude + GPT'."""
        text = f"{self.share * 100:g} % of {self.rubric_name}"
        text += f" (at least {self.floor} a week)" if self.floor else ""
        text += f", panel {self.panel}" if self.panel else ""
        return text + (f", domain {self.domain}" if self.domain else "")


class RuleDraft(BaseModel):
    """A rule as a person enters it (share in percent); `santa_core.spotchecks.form.rule_problems` checks it."""

    rubric_name: str
    share_percent: float
    floor: int = 0
    panel: str = ""
    domain: str = ""


class SpotCheck(BaseModel):
    """One shipped run drawn for a blind review, with the record of its draw."""

    model_config = ConfigDict(frozen=True)

    id: int
    rule_id: int
    run_id: int
    round_no: int
    rubric_name: str
    rubric_version: int
    status: SpotStatus
    drawn_by: DrawnBy
    seed: str
    share: float
    number: float
    owner: str | None = None
    due_at: datetime | None = None
    created_at: datetime
    submitted_at: datetime | None = None
    submitted_by: str | None = None

    def overdue(self, now: datetime) -> bool:
        """Open and past its due time."""
        return self.status == "open" and self.due_at is not None and self.due_at <= now


class BlindCase(BaseModel):
    """What the person judging a spot-check sees before submitting: the shipped text, the spec and the run's
    rubric snapshot. Deliberately no field for a reviewer's verdict, so no page or command can show one early."""

    model_config = ConfigDict(frozen=True)

    check: SpotCheck
    spec: str
    text: str
    criteria: tuple[Criterion, ...]


class Judgement(BaseModel):
    """A person's verdict on one criterion (evidence required for a FAIL)."""

    model_config = ConfigDict(frozen=True)

    criterion: str
    verdict: Verdict
    evidence: str = ""


class Compared(BaseModel):
    """After submit: one criterion as the person and each reviewer of the shipped round judged it."""

    model_config = ConfigDict(frozen=True)

    criterion: str
    person: Verdict
    evidence: str
    reviewers: dict[str, Verdict | None]
    """Reviewer id → its verdict on the criterion (None: it gave none)."""
