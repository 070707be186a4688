"""Stored rubrics as the pages and actions see them, and the contract of the rubric store.

`storage.rubrics.RubricStore` implements `Store`: every save is a new immutable version; runs keep
the version they were judged by; trials ("Try it", re-checks of past runs) are appended.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from pydantic import BaseModel

from santa_core.models import CheckOutcome, ReviewOutcome, Rubric, RubricDocument
from santa_core.reviewers.base import CallLog
from santa_core.roles import Permission


class RubricNotFound(LookupError):
    """No stored rubric (or no such version of it)."""


class RubricSaveError(ValueError):
    """A document that cannot be saved; `errors` holds one message per problem."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


class RubricConflict(RuntimeError):
    """Someone saved a newer version while this one was being edited."""


class RubricSummary(BaseModel):
    """The latest version of one rubric, for lists."""

    name: str
    domain: str
    version: int
    description: str
    extends: list[str]
    criteria: int
    author: str
    saved_at: datetime


class VersionInfo(BaseModel):
    """Who saved a version, when and why."""

    name: str
    version: int
    author: str
    created_at: datetime
    change_note: str
    source: str


class SaveResult(BaseModel):
    """The version a save or import produced (or found unchanged)."""

    name: str
    version: int
    created: bool


class TrialView(BaseModel):
    """One stored trial: deterministic check outcomes and, if asked, one reviewer's verdict."""

    id: int
    kind: str
    run_id: int | None
    rubric_name: str
    rubric_version: int | None
    output_hash: str
    checks: list[CheckOutcome]
    reviewer: str | None
    review_status: str | None
    verdict: str | None
    review: dict | None
    error: str | None
    cost_usd: float
    actor: str
    created_at: datetime


class Store(CallLog, Protocol):
    """What the rubric pages and actions read and write through."""

    def names(self) -> list[str]:
        """Every stored rubric name."""
        ...

    def document(self, name: str, version: int | None = None) -> RubricDocument:
        """The authored document of a version (the latest when None)."""
        ...

    def resolved(self, name: str, version: int | None = None) -> Rubric:
        """The rubric a version resolves to: what reviewers see."""
        ...

    def latest_version(self, name: str) -> int | None:
        """The newest version number, or None for an unknown name."""
        ...

    def lookup(self, name: str, version: int | None) -> tuple[RubricDocument, Rubric]:
        """A stored version for resolving `extends` (RubricCompositionError when missing)."""
        ...

    def list_rubrics(self) -> list[RubricSummary]:
        """The latest version of every rubric."""
        ...

    def versions(self, name: str) -> list[VersionInfo]:
        """Every version of a rubric, newest first."""
        ...

    def export(self, name: str, version: int | None = None, fmt: str = "yaml") -> str:
        """A version as the canonical YAML or JSON file."""
        ...

    def save(
        self,
        doc: RubricDocument,
        author: str,
        note: str,
        base_version: int | None,
        source: str = "studio",
        suggestion_key: str | None = None,
    ) -> SaveResult:
        """Save a new version made from `base_version` (RubricSaveError, RubricConflict: nothing saved); with
        `suggestion_key`, refused (SuggestionDecided) when that suggestion was decided on already."""
        ...

    def import_text(self, text: str, fmt: str, author: str, note: str = "") -> SaveResult:
        """Store a rubric file as the next version (or its own, newer, number)."""
        ...

    def require(self, actor: str, permission: Permission) -> None:
        """Refuse (PermissionDenied) an actor whose stored roles do not allow the permission; writes nothing."""
        ...

    def record_trial(
        self,
        kind: str,
        rubric: Rubric,
        output: str,
        checks: list[CheckOutcome],
        outcome: ReviewOutcome | None,
        actor: str,
        run_id: int | None = None,
        stored_version: int | None = None,
        verdict: str | None = None,
        trial_key: str | None = None,
    ) -> int:
        """Append one trial (its calls, named by `trial_key`, already on record); its id."""
        ...

    def trials(
        self, kind: str | None = None, run_ids: list[int] | None = None, limit: int = 200, rubric: str | None = None
    ) -> list[TrialView]:
        """Stored trials, newest first."""
        ...

    def final_outputs(self, run_ids: list[int]) -> dict[int, tuple[str, str]]:
        """run id -> (spec, final output) for finished runs."""
        ...
