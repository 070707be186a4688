"""Spot-check rules and the spot-checks they draw: the record of each draw and of the blind review."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import UniqueConstraint
from sqlmodel import Field, SQLModel

from storage.tables.columns import JSON_OR_NULL, UTC_TS, run_fk, ts_column


class SpotRuleRow(SQLModel, table=True):
    """A standing order to spot-check a share of a rubric's shipped runs. Its parameters are never updated
    (a change is a new rule); only `active` and `retired_at`/`retired_by` change, once."""

    __tablename__ = "spot_rule"

    id: int | None = Field(default=None, primary_key=True)
    rubric_name: str = Field(index=True)
    share: float
    floor: int = 0
    panel: str | None = None
    domain: str | None = None
    seed: str
    """Made by the desk when the rule is saved (never by a person): with a run's id it decides the draw."""
    created_by: str
    created_at: datetime = ts_column()
    active: bool = True
    retired_by: str | None = None
    retired_at: datetime | None = Field(default=None, sa_type=UTC_TS)
    replaces: int | None = None
    """The rule this one took over from (retired in the same transaction)."""


class SpotCheckRow(SQLModel, table=True):
    """One shipped run drawn by one rule (never twice: unique rule and run), with what decided the draw and,
    once submitted, the person's blind verdicts."""

    __tablename__ = "spot_check"
    __table_args__ = (UniqueConstraint("rule_id", "run_id"),)

    id: int | None = Field(default=None, primary_key=True)
    rule_id: int = Field(foreign_key="spot_rule.id", index=True)
    run_id: int = run_fk()
    round_no: int
    """The shipped round: its output is the text judged."""
    rubric_name: str
    rubric_version: int
    drawn_by: str
    """"share" (number below the share) or "floor" (the week's floor topped up)."""
    seed: str
    share: float
    number: float
    """The run's draw number under the seed, in [0, 1)."""
    status: str = Field(default="open", index=True)
    owner: str | None = None
    due_at: datetime | None = Field(default=None, sa_type=UTC_TS)
    created_at: datetime = ts_column()
    submitted_by: str | None = None
    submitted_at: datetime | None = Field(default=None, sa_type=UTC_TS)
    judgements: list | None = Field(default=None, sa_type=JSON_OR_NULL)
    """[{criterion, verdict, evidence}] as submitted (NULL while open)."""
