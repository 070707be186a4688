"""The verification record of a run: what a regulated team hands over to show who decided what,
when, on which evidence. Pure: `storage.records` assembles it, this module holds it and its JSON;
`santa_core.reports.record_html` and `santa_core.reports.record_pdf` render it.

Every text the record holds comes with its SHA-256, and the record itself carries
`record_hash`, the SHA-256 of the canonical JSON of every other field but the time it was
generated (so two exports of an unchanged run carry the same hash), so anyone holding the
JSON alone can recompute each round's hash, each decision's before/after hash, each audit
event's hash and link, and the record's own hash. The HTML and PDF are readable renderings of
the same record; the JSON is the exact one.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, computed_field

from santa_core.models import CheckOutcome, CheckResult, Criterion, FixEdit, MergedIssue, RejectedEdit, ReviewIssue
from santa_core.reports.record_cost import CutOffCall
from santa_core.reports.record_unreviewed import Judged
from santa_core.text import canonical_json, sha256_text

FORMAT = "santa.verification-record/1"
"""Names the shape of the record, so a reader knows which fields to expect."""

# --- the record -----------------------------------------------------------------------------


class RecordRubric(BaseModel):
    """The rubric the run was judged by: the resolved criteria reviewers saw."""

    name: str
    version: int
    domain: str
    description: str = ""
    criteria: list[Criterion]
    hash: str
    """sha256 of the canonical JSON of the resolved rubric (name, version, domain, description, criteria)."""


class RecordReview(BaseModel):
    """One reviewer's answer in one round."""

    slot: str
    reviewer: str
    status: str
    verdict: str
    """The verdict the gate counted (an error or a self-contradicting PASS is FAIL)."""
    stated_verdict: str | None = None
    """The verdict the reviewer wrote, when it gave one."""
    checks: list[CheckResult] = Field(default_factory=list)
    issues: list[ReviewIssue] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)
    error: str | None = None
    raw_response: str = ""
    """The reviewer's answer exactly as received (a person's review: its JSON)."""
    raw_response_hash: str
    """sha256 of `raw_response` (the audit event `review.saved` carries it as its after-hash)."""
    cost_usd: float = 0.0


class RecordGate(BaseModel):
    """The AND gate's decision for a round and the issues it merged."""

    decision: str
    reasons: list[str] = Field(default_factory=list)
    issues: list[MergedIssue] = Field(default_factory=list)
    checks: list[CheckOutcome] | None = None
    reviewer_error: bool = False
    injection: bool = False
    disagreement: bool = False


class RecordProposal(BaseModel):
    """The fix agent's proposal for a round."""

    before_hash: str
    proposed_text: str
    proposed_hash: str
    edits: list[FixEdit] = Field(default_factory=list)
    rejected: list[RejectedEdit] = Field(default_factory=list)
    error: str | None = None
    diff: str
    """Unified diff from the round's output to the proposal."""


class RecordDecision(BaseModel):
    """A person's (or auto-approve's) decision, append-only."""

    round_no: int
    action: str
    actor: str
    reason: str
    created_at: datetime
    before_hash: str
    after_hash: str
    after_text: str


class RecordScreen(BaseModel):
    """One known-answer injection screen of the round's spec or output."""

    role: str
    model: str
    verdict: str
    """clean (answered the key), took_over (answered something else) or error (could not tell)."""
    text_hash: str
    secret: str = ""
    answer: str = ""
    error: str | None = None
    cached: bool = False
    """The verdict of an earlier screen of the same text by the same model; no call was made."""
    cost_usd: float = 0.0
    check: str = "key"
    """key (asked to repeat a key) or extraction (asked to quote the sentences that address an automated reader)."""
    quotes: list[str] = Field(default_factory=list)
    """The extraction check's quotes found in the text: the evidence."""


class RecordRound(Judged):
    """One round: the output reviewed, both reviews, the gate, the proposal and the decisions."""

    round_no: int
    started_at: datetime
    output_text: str
    output_hash: str
    reviews: list[RecordReview]
    gate: RecordGate | None = None
    proposal: RecordProposal | None = None
    decisions: list[RecordDecision] = Field(default_factory=list)
    screens: list[RecordScreen] = Field(default_factory=list)
    diff_to_next: str | None = None
    """Unified diff from this round's output to the next round's (None for the last round)."""

    @computed_field  # type: ignore[prop-decorator]  # mypy does not type a decorated property; pydantic's documented form
    @property
    def independent(self) -> bool:
        """False when one person filled both reviewer slots (only the local user of an install
        without sign-in may): the two reviews are then not independent."""
        who = [rv.reviewer for rv in self.reviews]
        return not (len(who) == 2 and who[0] == who[1] and who[0].startswith("person:"))


class RecordStateChange(BaseModel):
    """One committed status change."""

    from_status: str | None
    to_status: str
    actor: str
    note: str
    created_at: datetime


class RecordEscalation(BaseModel):
    """An escalation and how it was resolved."""

    reason: str
    status: str
    created_at: datetime
    owner: str | None = None
    due_at: datetime | None = None
    resolution: str | None = None
    justification: str | None = None
    resolved_by: str | None = None
    resolved_at: datetime | None = None


class RecordEscape(BaseModel):
    """A defect reported after the run shipped."""

    criterion: str
    description: str
    severity: str
    reported_by: str
    created_at: datetime


class RecordAuditEvent(BaseModel):
    """An audit event exactly as hashed (`created_at` is the hashed string: UTC, microseconds)."""

    seq: int
    created_at: str
    actor: str
    action: str
    entity_type: str
    entity_id: str
    run_id: int | None
    before_hash: str | None
    after_hash: str | None
    detail: dict[str, Any]
    prev_hash: str
    hash: str


class VerificationRecord(BaseModel):
    """Everything that shows how a run's output came to be shipped, rejected or left waiting."""

    format: str = FORMAT
    run_id: int
    status: str
    escalation_reason: str | None = None
    spec: str
    spec_hash: str
    rubric: RecordRubric
    reviewer_b: str
    reviewer_c: str
    reviewer_d: str | None = Field(default=None, exclude_if=lambda v: v is None)  # left out when none: hashes stay
    fix_agent: str
    panel_families: str = ""
    """The families of reviewers B and C ("Claude + GPT"; a person is their own)."""
    spans_two_families: bool | None = None
    """Whether B and C came from different model families (their misses closer to independent)."""
    person_b: str | None = None
    person_c: str | None = None
    auto_approve: bool = False
    budget_usd: float | None = None
    created_by: str
    created_at: datetime
    source: str
    total_cost_usd: float = 0.0
    cut_off_calls: list[CutOffCall] = Field(default_factory=list)
    rounds: list[RecordRound]
    final_output: str | None = None
    final_output_hash: str | None = None
    history: list[RecordStateChange]
    escalations: list[RecordEscalation]
    escapes: list[RecordEscape]
    people: dict[str, str] = Field(default_factory=dict)
    """Every actor id in the record, with the person's name and roles when the record was made
    (system code such as `worker` or `gate` is named as such)."""
    audit_events: list[RecordAuditEvent]
    """The run's events in chain order. Each links to the chain's previous event; where that
    event belongs to something else (another run, a role change) it is not in this record,
    and `python -m santa_core audit verify` checks that link against the database."""
    generated_at: datetime
    record_hash: str = ""
    """sha256 of the canonical JSON of every other field but `generated_at` (see `record_hash_of`)."""


UNHASHED = frozenset({"record_hash", "generated_at"})
"""Fields the record hash leaves out: itself, and when the record was generated (so exports of an
unchanged run, in any format, at any time, carry the same hash)."""


def record_hash_of(data: dict[str, Any]) -> str:
    """The record hash of a record as JSON data: every field but `UNHASHED`."""
    return sha256_text(canonical_json({k: v for k, v in data.items() if k not in UNHASHED}))


def sealed(record: VerificationRecord) -> VerificationRecord:
    """The record with its `record_hash` set."""
    return record.model_copy(update={"record_hash": record_hash_of(record.model_dump(mode="json"))})


# --- JSON ------------------------------------------------------------------------------------


def to_json(record: VerificationRecord) -> str:
    """The record as JSON: sorted keys, two-space indent, UTF-8 text; the same record gives the same bytes."""
    return json.dumps(record.model_dump(mode="json"), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


# --- words both renderings use ---------------------------------------------------------------


def when(value: datetime | None) -> str:
    """A time of the record as the renderings show it ("" for none)."""
    return "" if value is None else value.isoformat(sep=" ", timespec="seconds")  # the space: a place to wrap


NOT_INDEPENDENT = (
    "One person filled both reviewer slots of this round: the two reviews are not independent "
    "(allowed only for the local user of an install without sign-in)."
)


def people_rows(r: VerificationRecord) -> list[list[str]]:
    """The record's people as (id, who) rows, by id."""
    return [[pid, who] for pid, who in sorted(r.people.items())]
