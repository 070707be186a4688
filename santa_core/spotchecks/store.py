"""What the spot-check actions persist through (`storage.spot_checks.SpotCheckStore` implements it)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from santa_core.reports.labels import PersonLabel, SpotCheckOutcome
from santa_core.spotchecks.model import BlindCase, Compared, Judgement, RuleDraft, SpotCheck, SpotRule, SpotStatus


class SpotCheckError(ValueError):
    """A spot-check write that cannot be made as asked (the message says why, in a person's words)."""


class SpotCheckStore(Protocol):
    """Rules, the draw, the queue, blind submits, and the records the metrics read."""

    def rules(self, active_only: bool = True) -> list[SpotRule]:
        """Rules, oldest first."""

    def save_rule(self, draft: RuleDraft, seed: str, actor: str, replaces: int | None = None) -> SpotRule:
        """A new rule (retiring `replaces` in the same transaction); refused without MANAGE_SPOT_CHECKS."""

    def retire_rule(self, rule_id: int, actor: str) -> None:
        """Stop a rule drawing; its spot-checks stay."""

    def draw_spot_checks(self, now: datetime) -> list[int]:
        """The idempotent sweep: every shipped run under every active rule enters the draw once; new ids."""

    def spot_checks(self, status: SpotStatus | None = None) -> list[SpotCheck]:
        """Spot-checks, oldest first."""

    def blind_case(self, spot_check_id: int) -> BlindCase:
        """What the person sees before submitting (no reviewer verdicts)."""

    def assign(self, spot_check_id: int, owner: str | None, actor: str) -> None:
        """Give an open spot-check an owner (None: unassign)."""

    def set_due(self, spot_check_id: int, due_at: datetime, actor: str) -> None:
        """Change an open spot-check's due time."""

    def submit(self, spot_check_id: int, judgements: list[Judgement], actor: str) -> list[int]:
        """Record the blind verdicts and their escapes in one transaction; the new escape ids."""

    def comparison(self, spot_check_id: int) -> list[Compared]:
        """After submit: the person's verdicts beside the reviewers' (refused while open)."""

    def outcomes(self) -> list[SpotCheckOutcome]:
        """Every submitted spot-check, for the escape rate."""

    def labels(self) -> list[PersonLabel]:
        """Every judged criterion of every submitted spot-check, as labels (source "spot_check")."""
