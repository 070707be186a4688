"""The one door for a person's spot-check writes: rules, the queue, blind submits. Each checks its input here in
the person's words; the store checks the roles inside its own transaction, so a refusal writes nothing."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from datetime import datetime

from santa_core.spotchecks.form import judgement_problems, rule_problems
from santa_core.spotchecks.model import Judgement, RuleDraft, SpotRule
from santa_core.spotchecks.store import SpotCheckError, SpotCheckStore


def new_seed() -> str:
    """A fresh seed for a rule: made by the desk from the OS's randomness, so no person picks which runs a rule
    draws (a chosen seed could be tried until it spares a run)."""
    return secrets.token_hex(16)


def save_rule(
    store: SpotCheckStore, draft: RuleDraft, actor: str, rubric_names: Iterable[str], replaces: int | None = None
) -> SpotRule:
    """Save a rule (a change to a rule is a new rule with a new seed; the old one is retired)."""
    if problems := rule_problems(draft, rubric_names):
        raise SpotCheckError("; ".join(problems))
    return store.save_rule(draft, new_seed(), actor, replaces)


def retire_rule(store: SpotCheckStore, rule_id: int, actor: str) -> None:
    """Stop a rule drawing."""
    store.retire_rule(rule_id, actor)


def assign(store: SpotCheckStore, spot_check_id: int, owner: str | None, actor: str) -> None:
    """Give an open spot-check an owner who may judge it (None: unassign)."""
    store.assign(spot_check_id, owner or None, actor)


def set_due(store: SpotCheckStore, spot_check_id: int, due_at: datetime, actor: str) -> None:
    """Change an open spot-check's due time."""
    store.set_due(spot_check_id, due_at, actor)


def submit(store: SpotCheckStore, spot_check_id: int, judgements: list[Judgement], actor: str) -> list[int]:
    """Submit a blind review: every criterion of the run's rubric judged, evidence for each FAIL; each blocking FAIL
    becomes an escape in the same transaction. The new escape ids."""
    case = store.blind_case(spot_check_id)
    if problems := judgement_problems(case.criteria, judgements):
        raise SpotCheckError("; ".join(problems))
    return store.submit(spot_check_id, judgements, actor)


def draw_spot_checks(store: SpotCheckStore, now: datetime) -> list[int]:
    """The periodic sweep (system code): draw every shipped run not yet drawn under each active rule."""
    return store.draw_spot_checks(now)
