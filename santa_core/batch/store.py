"""A batch as the driver and the pages see it, and the persistence contract of the batch driver.

`storage.batches.BatchStore` implements `Store`; every method is its own committed transaction,
so a restart loses nothing that was shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel, Field

from santa_core.batch import sampling
from santa_core.models import LLMCall, MergedIssue, Rubric, RunStatus
from santa_core.roles import Permission

DONE = (RunStatus.SHIPPED.value, RunStatus.SAMPLED.value)
"""A sample review's run is done when its gate said NICE (shipped) or NAUGHTY (sampled)."""
OPEN_PATTERNS = ("open", "proposed")
"""Pattern statuses that still wait for a decision (and block the next sample)."""


class BatchProblem(ValueError):
    """A batch request that cannot be done as asked (the message says why)."""


class BatchConfig(BaseModel):
    """How a batch is verified: where its items came from, the rubric, the reviewers and the sampling."""

    name: str
    file_format: str
    columns: list[str]
    layout: dict[str, Any] = Field(default_factory=dict)
    """delimiter, newline and bom of the file, for the export."""
    id_column: str
    output_column: str
    spec_column: str | None = None
    spec: str = ""
    strata: list[str] = Field(default_factory=list)
    rubric: Rubric
    reviewer_b: str
    reviewer_c: str
    fixer: str
    sample_rate: float = sampling.DEFAULT_RATE
    min_sample: int = sampling.MIN_SAMPLE
    seed: int = 1
    concurrency: int = 4
    message_batches: bool = False
    auto_approve: bool = False
    confidence: float = sampling.CONFIDENCE
    source: str = "app"


class ItemIn(BaseModel):
    """One item of an uploaded file."""

    key: str
    output: str
    spec: str | None = None
    strata: dict[str, str] = Field(default_factory=dict)
    record: dict[str, Any] = Field(default_factory=dict)


class Item(BaseModel):
    """A stored item with its current text."""

    id: int
    position: int
    key: str
    output: str
    original_output: str
    spec: str
    strata: dict[str, str]
    record: dict[str, Any]

    @property
    def stratum(self) -> tuple[str, ...]:
        """The item's stratum: its values of the batch's strata columns, in order."""
        return tuple(self.strata.values())

    @property
    def changed(self) -> bool:
        return self.output != self.original_output


class SampledReview(BaseModel):
    """One sampled item and where its review stands."""

    item_id: int
    key: str
    run_id: int | None
    """None until the review starts."""
    status: RunStatus | None
    output: str
    """The text that was reviewed."""
    strata: dict[str, str]
    reviewer_error: bool = False
    issues: list[MergedIssue] = Field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.status is not None and self.status.value in DONE

    @property
    def nice(self) -> bool:
        return self.status == RunStatus.SHIPPED


class SampleProgress(BaseModel):
    """A sample and how far its reviews are."""

    id: int
    batch_id: int
    number: int
    seed: int
    size: int
    created_at: datetime
    finished_at: datetime | None
    api_batch_id: str | None
    api_status: str | None
    done: int
    nice: int
    naughty: int
    errors: int
    cost_usd: float
    interrupted: int = 0
    """Reviews stopped by a worker error (they resume when the sample is driven again)."""
    active: int = 0
    """Reviews queued or running right now (in this process or another)."""
    last_activity: datetime | None = None
    """When a review of the sample last changed state."""
    seconds_done: float
    """Time during which at least one finished review of the sample was running (for the ETA).

    Why not the time since the sample started: a pause (or the app being down) would count as
    time spent reviewing, and the ETA would grow with every minute paused.
    """

    @property
    def seconds_left(self) -> float | None:
        """About how long the rest of the sample takes at the pace so far (None: no pace yet, or done)."""
        if self.finished or self.done <= 0 or self.seconds_done <= 0:
            return None
        return self.seconds_done / self.done * (self.size - self.done)

    @property
    def finished(self) -> bool:
        return self.done >= self.size

    @property
    def clean(self) -> bool:
        return self.finished and self.nice == self.size


class Batch(BaseModel):
    """A batch as its page shows it."""

    id: int
    name: str
    created_at: datetime
    created_by: str
    config: BatchConfig
    paused: bool
    items: int
    samples: list[SampleProgress]

    @property
    def latest(self) -> SampleProgress | None:
        return self.samples[-1] if self.samples else None


class PatternRecord(BaseModel):
    """A stored pattern."""

    id: int
    sample_id: int
    key: str
    criterion: str
    title: str
    pattern: dict[str, Any]
    status: str
    proposal: dict[str, Any] | None
    approved_edits: list[dict[str, Any]] | None
    decided_by: str | None
    reason: str
    item_fixes: dict[str, dict[str, Any]] | None = None
    """Item key → the fix prepared for it (`santa_core.batch.reach.ItemPlan`), None until prepared."""

    @property
    def waiting(self) -> bool:
        """Still waiting for a decision (it blocks the next sample)."""
        return self.status in OPEN_PATTERNS


class ItemChange(BaseModel):
    """What one approved fix does to one item."""

    item_id: int
    before_text: str
    after_text: str
    applied: list[dict[str, Any]] = Field(default_factory=list)
    skipped: list[dict[str, Any]] = Field(default_factory=list)


class BatchChange(BaseModel):
    """One item changed by one pattern's fix (append-only): before, after, the edits and who approved it."""

    id: int
    batch_id: int
    item_id: int
    pattern_id: int
    created_at: datetime
    actor: str
    before_text: str
    after_text: str
    before_hash: str
    after_hash: str
    applied: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    by_hand: bool = False
    """A person's own edit in the app (not a pattern's fix)."""


def busy_seconds(spans: Iterable[tuple[datetime, datetime]]) -> float:
    """Seconds covered by at least one of the (start, end) spans: overlaps count once, gaps not at all."""
    total, reach = 0.0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total, reach = total + max(0.0, (end - start).total_seconds()), max(start, end)
        elif end > reach:
            total, reach = total + (end - reach).total_seconds(), end
    return total


class Store(Protocol):
    """What the batch driver persists through (`storage.batches.BatchStore`)."""

    def create(self, config: BatchConfig, items: Sequence[ItemIn], actor: str) -> int:
        """Store a batch and its items; its id."""
        ...

    def batches(self, limit: int = 200) -> list[Batch]:
        """Every batch, newest first."""
        ...

    def get(self, batch_id: int) -> Batch:
        """One batch with its samples (BatchProblem when there is none)."""
        ...

    def items(self, batch_id: int) -> list[Item]:
        """The batch's items in file order, with their current text."""
        ...

    def progress(self, sample_id: int) -> SampleProgress:
        """A sample and how far its reviews are."""
        ...

    def reviews(self, sample_id: int) -> list[SampledReview]:
        """Every sampled item and where its review stands."""
        ...

    def run_ids(self, sample_id: int) -> list[int]:
        """The runs of the sample's reviews that have started."""
        ...

    def unfinished_samples(self) -> list[int]:
        """Samples whose reviews are not all in."""
        ...

    def ungrouped_samples(self) -> list[int]:
        """Finished samples with a failed review and no stored pattern."""
        ...

    def patterns(self, batch_id: int, sample_id: int | None = None) -> list[PatternRecord]:
        """The batch's patterns (of one sample)."""
        ...

    def pattern(self, pattern_id: int) -> PatternRecord:
        """One stored pattern."""
        ...

    def changes(self, batch_id: int, skipped: bool = False) -> list[BatchChange]:
        """Every change a fix made (with `skipped`: also the items that could not take it)."""
        ...

    def cost(self, batch_id: int) -> float:
        """Money spent on the batch's reviews."""
        ...

    def require(self, actor: str, permission: Permission) -> None:
        """Refuse (PermissionDenied) an actor without the permission."""
        ...

    def draw_sample(self, batch_id: int, actor: str) -> int:
        """Draw and store the next sample; its id."""
        ...

    def pending_items(self, sample_id: int) -> list[int]:
        """Sampled items whose review has not started, in file order."""
        ...

    def start_review(self, sample_id: int, item_id: int) -> int:
        """Make the queued run that reviews a sampled item (once); its id."""
        ...

    def finish_sample(self, sample_id: int) -> SampleProgress:
        """Mark a sample finished once every review is in (idempotent)."""
        ...

    def set_api(
        self, sample_id: int, api_batch_id: str | None, api_status: str | None, jobs: list[dict[str, Any]] | None = None
    ) -> None:
        """Remember the Message Batches API's batch of a sample."""
        ...

    def api_jobs(self, sample_id: int) -> list[dict[str, Any]]:
        """The jobs a sample's Message Batch was made of."""
        ...

    def set_paused(self, batch_id: int, paused: bool, actor: str) -> None:
        """Pause or resume a batch."""
        ...

    def record_retry(self, batch_id: int, actor: str) -> None:
        """Put a person's Try again on record."""
        ...

    def is_paused(self, batch_id: int) -> bool:
        """Whether the batch is paused."""
        ...

    def save_patterns(self, sample_id: int, patterns: Iterable[dict[str, Any]]) -> list[PatternRecord]:
        """Store a finished sample's patterns (once)."""
        ...

    def save_proposal(self, pattern_id: int, proposal: dict[str, Any], actor: str) -> None:
        """Store the fix agent's proposal for a pattern."""
        ...

    def apply_fix(
        self,
        pattern_id: int,
        edits: list[dict[str, Any]],
        changes: Sequence[ItemChange],
        actor: str,
        reason: str = "",
        excluded: Mapping[str, str] | None = None,
        included: Mapping[str, str] | None = None,
    ) -> int:
        """Apply an approved fix to the items it changes; how many changed. `excluded` (item key → why) is kept with
        the decision; a change to an item excluded from another pattern's fix is refused unless `included` names it
        (`santa_core.batch.exclusions`)."""
        ...

    def dismiss(self, pattern_id: int, actor: str, reason: str) -> None:
        """Leave a pattern unfixed, with why."""
        ...

    def save_item_fixes(self, pattern_id: int, fixes: dict[str, dict[str, Any]], actor: str) -> None:
        """Keep the fixes prepared for every item a waiting pattern reaches (the newest count)."""
        ...

    def set_signature(self, pattern_id: int, signature: list[str], check: dict[str, Any], actor: str) -> PatternRecord:
        """A person's signature for a waiting pattern, validated by the caller (prepared fixes are dropped)."""
        ...

    def note_fix_sent(self, pattern_id: int, purpose: str, model: str, request: dict, estimate_usd: float) -> None:
        """Commit a fix agent call for the pattern as sent (batch_id set) before its request leaves."""
        ...

    def save_fix_calls(self, pattern_id: int, calls: Sequence[LLMCall]) -> None:
        """Store the fix agent's answered calls for the pattern (the pattern's fix cost grows by theirs)."""
        ...

    def set_fix_batch(self, pattern_id: int, state: dict[str, Any] | None, expect: Any = ...) -> bool:
        """Remember where the pattern's fixes' Message Batch stands (None: there is none); with `expect`, only when its
        status is that (None: no batch), else False and nothing written."""
        ...

    def note_auto_fix(self, pattern_id: int, note: str, claim: bool = False) -> bool:
        """Keep what auto-approve did with a pattern; with `claim`, only if it never took it up (False then)."""
        ...

    def record_fix_retry(self, pattern_id: int, actor: str) -> None:
        """Put a person's Try again of a pattern's fixes on record (refused without the right to decide fixes)."""
        ...

    def edit_by_hand(
        self, pattern_id: int, item_id: int, before_text: str, after_text: str, actor: str, reason: str
    ) -> None:
        """A person's own edit of one item the pattern's fix could not reach, recorded as theirs."""
        ...
