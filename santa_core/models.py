"""Types of the Santa Method: spec, output, rubric, review, gate, fix proposal, run state.

These are plain pydantic models with no I/O. Every other module speaks in these words.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Verdict = Literal["PASS", "FAIL"]
Slot = Literal["B", "C", "D"]
"""B and C judge every round; D is the third reviewer a rubric asks for on its high-risk criteria."""
Severity = Literal["critical", "suggestion"]

CATEGORIES = (
    "factual accuracy",
    "hallucination-free",
    "completeness",
    "compliance",
    "internal consistency",
    "technical correctness",
)

MAX_TEXT_CHARS = 200_000
"""Largest spec or output accepted (characters); larger pastes get a clear error."""


class Criterion(BaseModel):
    """One rubric line: an objective pass condition and the signal that it failed."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=64, pattern=r"^[a-z0-9_\-]+$")
    name: str = Field(min_length=1)
    category: str = Field(min_length=1)
    pass_condition: str = Field(min_length=1)
    fail_signal: str = Field(min_length=1)
    severity: Severity = "critical"
    check: dict | None = None
    """Optional deterministic check, e.g. {"type": "forbidden_terms", "terms": [...]}."""
    retired: bool = False
    """A retired criterion stays in its rubric's document (its id stays reserved) but is no
    longer judged: it is left out of the resolved rubric reviewers see."""
    # Left out of dumps while false: a rubric without it dumps (and hashes, in runs and records) as before.
    third_reviewer: bool = Field(default=False, exclude_if=lambda v: not v)
    """A high-risk criterion: a third reviewer (slot D) judges it too, and the round ships only when all three pass."""


class Rubric(BaseModel):
    """A named, versioned list of criteria."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    version: int = 1
    domain: str = "general"
    description: str = ""
    criteria: list[Criterion] = Field(min_length=1)

    def criterion_ids(self) -> list[str]:
        """Ids in rubric order."""
        return [c.id for c in self.criteria]

    def advisory_ids(self) -> list[str]:
        """Ids of "suggestion" criteria: reported, never blocking."""
        return [c.id for c in self.criteria if c.severity == "suggestion"]

    def third_reviewer_ids(self) -> list[str]:
        """Ids of the high-risk criteria a third reviewer (slot D) judges as well; empty: two reviewers."""
        return [c.id for c in self.criteria if c.third_reviewer]

    def high_risk(self) -> Rubric | None:
        """The rubric the third reviewer sees: only its high-risk criteria (None when it has none)."""
        chosen = [c for c in self.criteria if c.third_reviewer]
        return self.model_copy(update={"criteria": chosen}) if chosen else None


RUBRIC_NAME_PATTERN = r"^[a-z0-9][a-z0-9_\-]{0,63}$"
"""Stored rubric names: lower-case letters, digits, '-' and '_' (they appear in commands and URLs)."""


class RubricDocument(BaseModel):
    """What a rubric author writes and a version stores: its own criteria plus what it extends.

    `extends` lists other stored rubrics as "name@version" (a bare "name" means its latest
    version when the document is saved or imported, and is pinned then). Resolving a document
    composes the parents' criteria first, then its own active ones, into a `Rubric`.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=RUBRIC_NAME_PATTERN)
    version: int = Field(default=1, ge=1, le=2**31 - 1, strict=True)  # an SQL integer; `true` is not 1
    domain: str = Field(default="general", min_length=1, max_length=64)
    description: str = ""
    extends: list[str] = Field(default_factory=list)
    criteria: list[Criterion] = Field(default_factory=list)


class CriterionDraft(BaseModel):
    """A criterion while it is being edited: every field may still be empty or wrong."""

    id: str = ""
    name: str = ""
    category: str = ""
    pass_condition: str = ""
    fail_signal: str = ""
    severity: str = "critical"
    check: dict | None = None
    retired: bool = False
    third_reviewer: bool = False


class RubricDraft(BaseModel):
    """A rubric document while it is being edited (the input of the linter)."""

    name: str = ""
    domain: str = "general"
    description: str = ""
    extends: list[str] = Field(default_factory=list)
    criteria: list[CriterionDraft] = Field(default_factory=list)


# --- the reviewer's answer: the schema of the method -------------------------------------


class CheckResult(BaseModel):
    """A reviewer's result for one criterion."""

    criterion: str = Field(description="criterion id from the rubric")
    result: Verdict
    detail: str = Field(default="", description='"" for a PASS; for a FAIL, one short sentence on what fails')


class ReviewIssue(BaseModel):
    """One problem a reviewer found."""

    criterion: str = Field(description="criterion id from the rubric")
    description: str = Field(description="what is wrong and why it fails the criterion")
    evidence: str = Field(default="", description="exact text copied from the output that shows the problem")
    missing: bool = Field(
        default=False,
        description="true only when the problem is something absent from the output, so there is nothing to quote",
    )


class Review(BaseModel):
    """One reviewer's structured verdict (the answer contract)."""

    verdict: Verdict
    checks: list[CheckResult]
    critical_issues: list[ReviewIssue]
    suggestions: list[str]

    def failed_checks(self) -> list[CheckResult]:
        """Checks whose result is FAIL."""
        return [c for c in self.checks if c.result == "FAIL"]


class Usage(BaseModel):
    """Token usage of one or more LLM calls (None fields coalesced to 0)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )


CallPurpose = Literal["review", "fix", "screen"]
"""What a model call is for: a review, a fix plan, or the injection screen."""


class LLMCall(BaseModel):
    """Record of one request/response pair, kept for the call log."""

    purpose: CallPurpose
    model: str
    request: dict
    response: str = ""
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str | None = None


ScreenRole = Literal["spec and output", "spec", "output"]
"""What a screen read: a round's spec and output together (rows of an earlier version: one of them)."""
ScreenVerdict = Literal["clean", "took_over", "quoted", "error"]
ScreenCheck = Literal["key", "extraction"]
"""Which model check of the screen: `key` (repeat a fresh key while ignoring the text) or `extraction` (quote every
sentence of the text that addresses an automated reader or gives a verdict; `santa_core.checks.extraction`)."""


class ScreenResult(BaseModel):
    """The known-answer screen of one text: asked to repeat a fresh key while ignoring the text,
    did the screening model answer with exactly the key?

    `clean`: it did. `took_over`: it answered something else, so the text took over a model.
    `error`: the screen could not tell (the call failed); the round fails closed.

    The extraction check (`check` "extraction") is stored the same way: `clean` when no quote of its answer is
    found in the text, `quoted` when one is (`quotes`: those found, as the text spells them: the evidence).
    """

    role: ScreenRole
    text_hash: str
    model: str
    verdict: ScreenVerdict
    secret: str = ""
    answer: str = ""
    error: str | None = None
    cost_usd: float = 0.0
    cached: bool = False
    """True: the verdict of an earlier screen of the same text by the same model (no call made)."""
    calls: list[LLMCall] = Field(default_factory=list)
    check: ScreenCheck = "key"
    quotes: list[str] = Field(default_factory=list)
    """The extraction check's quotes found in the text (empty for the key check)."""

    @property
    def entry(self) -> str:
        """Where a round keeps this result among its screens (`screen_entry`)."""
        return screen_entry(self.role, self.check)


def screen_entry(role: str, check: ScreenCheck = "key") -> str:
    """The key of a screen among a round's screens: its role for the key check (as rows before the extraction
    check were keyed), "<role> (extraction)" for the extraction check."""
    return role if check == "key" else f"{role} ({check})"


class ReviewStatus(StrEnum):
    """What happened when a reviewer slot was asked for a verdict."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    PENDING = "pending"  # a person has not filled the slot yet


class ReviewOutcome(BaseModel):
    """A reviewer slot's result for one round: a typed review, or an error that is not a pass."""

    slot: Slot
    reviewer: str
    status: ReviewStatus
    review: Review | None = None
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    raw_response: str = ""
    calls: list[LLMCall] = Field(default_factory=list)


# --- gate, merged issues ------------------------------------------------------------------

Attribution = Literal["both", "B", "C", "D", "check"]
"""Who flagged a merged issue: "both" is B and C; "D" the third reviewer alone (an issue B or C raised too keeps theirs)."""


class MergedIssue(BaseModel):
    """A de-duplicated critical issue with who flagged it."""

    criterion: str
    description: str
    evidence: str = ""
    flagged_by: Attribution


class GateDecision(StrEnum):
    NICE = "NICE"
    NAUGHTY = "NAUGHTY"


class CheckOutcome(BaseModel):
    """Result of one criterion's deterministic check."""

    criterion: str
    check_type: str
    result: Verdict
    detail: str
    evidence: str = ""


class GateResult(BaseModel):
    """The AND gate's decision for one round."""

    decision: GateDecision
    issues: list[MergedIssue]
    reasons: list[str] = Field(default_factory=list)
    reviewer_error: bool = False
    injection: bool = False
    disagreement: bool = False
    """One reviewer PASSed a critical criterion the other FAILed."""
    checks: list[CheckOutcome] | None = None
    """Every deterministic check's outcome as the gate saw it (None: a round stored before they were kept)."""


# --- fix proposals ------------------------------------------------------------------------


class FixEdit(BaseModel):
    """Replace one exact span of the output; the only kind of change the fix agent may make."""

    issue: int = Field(description="index of the merged issue this edit fixes")
    before: str = Field(description="exact text copied from the current output")
    after: str = Field(description="replacement text")


class FixPlan(BaseModel):
    """What the fix agent answers: a list of edits (its answer contract)."""

    edits: list[FixEdit]


class RejectedEdit(BaseModel):
    """An edit that could not be applied, with why."""

    edit: FixEdit
    reason: str


FixState = Literal["fixed", "not fixed", "unanchored", "failed"]


class IssueFix(BaseModel):
    """What a fix proposal did about one flagged issue, numbered as the page numbers issues (from 1)."""

    number: int
    criterion: str
    state: FixState
    reason: str = ""


class FixProposal(BaseModel):
    """The fix agent's revision: applied edits, rejected edits and the resulting text."""

    issues: list[MergedIssue]
    edits: list[FixEdit]
    rejected: list[RejectedEdit] = Field(default_factory=list)
    before_text: str
    proposed_text: str
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    calls: list[LLMCall] = Field(default_factory=list)
    error: str | None = None


# --- run state ----------------------------------------------------------------------------


class RunStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    AWAITING_HUMAN_REVIEW = "awaiting_human_review"
    AWAITING_APPROVAL = "awaiting_approval"
    SHIPPED = "shipped"
    ESCALATED = "escalated"
    RESOLVED_SHIPPED = "resolved_shipped"
    RESOLVED_REJECTED = "resolved_rejected"
    INTERRUPTED = "interrupted"
    SAMPLED = "sampled"
    """A batch sample's review came back NAUGHTY: the batch groups it into a pattern and fixes it there."""


class EscalationReason(StrEnum):
    ROUND_CAP = "round_cap"
    REVIEWER_ERROR = "reviewer_error"
    BUDGET = "budget"
    REJECTED_FIX = "rejected_fix"
    INJECTION = "injection"
    FIX_FAILED = "fix_failed"
    DISAGREEMENT = "disagreement"
    """Still NAUGHTY at the round cap while the reviewers disagree on a critical criterion."""
    PROVIDER_FAILED = "provider_failed"
    """Nobody judged the output: the injection screen or a reviewer got no answer from the model provider."""


FINAL_STATUSES = frozenset(
    {RunStatus.SHIPPED, RunStatus.RESOLVED_SHIPPED, RunStatus.RESOLVED_REJECTED, RunStatus.SAMPLED}
)
SETTLED_STATUSES = frozenset({*FINAL_STATUSES, RunStatus.ESCALATED})
"""Statuses in which no reviewer is waited for: a run's reviews are no longer blind."""


class RunState(BaseModel):
    """The engine's view of a run; only `engine.advance` produces a new one."""

    model_config = ConfigDict(frozen=True)

    status: RunStatus = RunStatus.QUEUED
    round: int = 1
    max_rounds: int = 3
    round_cap: int = 3
    escalation_reason: EscalationReason | None = None
    note: str = ""
    review_only: bool = Field(default=False, exclude=True)
    """A batch sample's review: one round, no fix, no escalation (the batch fixes by pattern).
    Left out of dumps: it is fixed when the run is made, and the audit hashes of a run's states
    stay as they were."""
