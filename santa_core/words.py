"""Plain words for every code a person sees: run statuses, escalation reasons, decisions, settings,
audit actions, pattern statuses. One place, so the pages, the command line and the verification
record say the same thing.

Codes stay what is stored, hashed and exported (JSON, CSV, the audit chain); only what a person
reads is words. A page shows the words and keeps the code within reach (a tooltip, a column's
help), because the code is what the JSON record and the command line print.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

from santa_core.config import Defaults
from santa_core.models import EscalationReason, ReviewStatus, RunStatus
from santa_core.roles import ROLE_LABEL

R, S = EscalationReason, RunStatus

STATUS: dict[RunStatus, str] = {
    S.QUEUED: "queued",
    S.RUNNING: "reviewing",
    S.AWAITING_HUMAN_REVIEW: "waiting for a person reviewer",
    S.AWAITING_APPROVAL: "waiting for approval of the fix",
    S.SHIPPED: "shipped (NICE)",
    S.ESCALATED: "escalated",
    S.RESOLVED_SHIPPED: "shipped by a person",
    S.RESOLVED_REJECTED: "rejected by a person",
    S.INTERRUPTED: "interrupted",
    S.SAMPLED: "sampled (NAUGHTY: the batch fixes it by pattern)",
}
"""A run's status as a sentence fragment."""

REASON: dict[EscalationReason, str] = {
    R.ROUND_CAP: "still NAUGHTY after the last round",
    R.REVIEWER_ERROR: "a reviewer failed",
    R.BUDGET: "budget spent",
    R.REJECTED_FIX: "fix rejected by a person",
    R.INJECTION: "injection attempt",
    R.FIX_FAILED: "fix could not be applied",
    R.DISAGREEMENT: "reviewers disagree",
    R.PROVIDER_FAILED: "could not be reviewed, the model provider failed",
}
"""Why a run escalated, in a few words (the table cell, the filter, the heading)."""

REASON_HELP: dict[EscalationReason, str] = {
    R.ROUND_CAP: "Still NAUGHTY after the last allowed round.",
    R.REVIEWER_ERROR: "A reviewer failed (error, timeout, refusal or invalid answer) after retries.",
    R.BUDGET: "The run spent its budget.",
    R.REJECTED_FIX: "A person rejected the fix proposal.",
    R.INJECTION: "The output contains text addressed to the reviewers.",
    R.FIX_FAILED: "The fix agent produced no edit that could be applied.",
    R.DISAGREEMENT: "Still NAUGHTY at the round cap and the reviewers disagree on a critical criterion: "
    "the rubric may need tightening.",
    R.PROVIDER_FAILED: "Nobody judged the output: the injection screen or a reviewer got no answer from the model "
    "provider (a server error, an overload, a timeout). Nothing ships; try again once it answers.",
}
"""Why a run escalated, as a sentence."""

RESOLUTION: dict[str, str] = {
    "ship_as_is": "Ship as is",
    "rereview": "Edit and send for fresh review",
    "reject": "Reject",
}
"""How a person resolves an escalation (`santa_core.run.store.Resolution`)."""

DECISION: dict[str, str] = {
    "approve": "approved the fix",
    "edit": "edited and approved the fix",
    "reject": "rejected the fix",
    "retry_fix": "asked the fix agent again",
    "auto_approve": "fix approved automatically",
    "ship_as_is": "shipped as is",
    "rereview": "edited and sent for fresh review",
    "resolve_reject": "rejected the escalated run",
    "try_again": "tried again after the model provider failed",
}
"""A decision on a round (`santa_core.run.store.DecisionAction`)."""

REVIEW_STATUS: dict[ReviewStatus, str] = {
    ReviewStatus.OK: "answered",
    ReviewStatus.ERROR: "error",
    ReviewStatus.TIMEOUT: "timed out",
    ReviewStatus.PENDING: "not in yet",
}

SCREEN_VERDICT: dict[str, str] = {
    "clean": "repeated the key",
    "took_over": "was taken over",
    "error": "failed",
    "quoted": "quoted sentences of the text",
}
"""The injection screen's verdicts (`santa_core.models.ScreenVerdict`)."""
EXTRACTION_VERDICT: dict[str, str] = {
    "clean": "quoted nothing found in the text",
    "quoted": "quoted sentences of the text",
    "error": "failed",
}
"""The extraction check's verdicts, where they read otherwise than the key check's."""
SCREEN_CHECK: dict[str, str] = {"key": "known-answer screen", "extraction": "extraction check"}
"""The injection screen's model checks (`santa_core.models.ScreenCheck`)."""

RUBRIC_SOURCE: dict[str, str] = {
    "studio": "edited in the rubric studio",
    "import": "imported from a file",
    "builtin": "built into Santa",
}
"""How a rubric version was made (`santa_core.rubrics.store.RubricVersion.source`)."""

PATTERN_STATUS: dict[str, str] = {
    "open": "waiting for a decision",
    "proposed": "fix proposed, waiting for a decision",
    "applied": "fix approved and applied",
    "dismissed": "dismissed",
}
"""A batch pattern's status."""

PATTERN_KIND: dict[str, str] = {"issue": "pattern", "review_failed": "review failed", "unexplained": "unexplained"}
"""What a batch pattern groups (`santa_core.batch.patterns.PatternKind`)."""

SETTING: dict[str, str] = {
    "reviewer_b": "Reviewer B",
    "reviewer_c": "Reviewer C",
    "reviewer_d": "Reviewer D (high-risk criteria)",
    "fixer": "Fix agent",
    "screen": "Injection screen",
    "screen_model": "Screening model",
    "max_rounds": "Max rounds before escalation",
    "budget_usd": "Budget per run (USD)",
    "rubric": "Rubric",
    "display_name": "Display name of the local user",
    "due_hours": "Due time per escalation reason",
}
"""Each saved setting (a field of `santa_core.config.Defaults`) by its label on the Settings page."""

AUDIT_ACTION: dict[str, str] = {
    "run.created": "run started",
    "run.state": "run status changed",
    "round.started": "round started",
    "round.gate": "gate decided",
    "review.saved": "review saved",
    "review.assigned": "reviewer slot assigned",
    "screen.saved": "injection screen saved",
    "proposal.saved": "fix proposed",
    "escalation.opened": "escalation opened",
    "escalation.assigned": "escalation assigned",
    "escalation.due_set": "escalation due time set",
    "escalation.resolved": "escalation resolved",
    "escape.reported": "escape reported",
    "spot_rule.saved": "spot-check rule saved",
    "spot_rule.retired": "spot-check rule retired",
    "spot_check.drawn": "spot-check drawn",
    "spot_check.assigned": "spot-check assigned",
    "spot_check.due_set": "spot-check due time set",
    "spot_check.submitted": "spot-check submitted",
    "rubric.saved": "rubric version saved",
    "rubric.trial": "rubric tried",
    "settings.saved": "settings saved",
    "person.signed_in_first": "first sign-in",
    "person.renamed": "display name changed",
    "person.roles_set": "roles changed",
    "rows.sealed": "rows sealed",
    "batch.created": "batch created",
    "batch.sampled": "batch sample drawn",
    "batch.paused": "batch paused",
    "batch.resumed": "batch resumed",
    "batch.retried": "batch retried",
    "batch.fix_applied": "batch fix applied",
    "batch.pattern_dismissed": "batch pattern dismissed",
    "batch.fixes_retried": "batch fixes' Message Batch tried again",
    "batch.signature_set": "batch pattern's signature set",
    "batch.item_edited_by_hand": "batch item fixed by hand",
}
"""Audit trail actions (`decision.<action>` takes its words from DECISION)."""

ENTITY: dict[str, str] = {
    "rubric_trial": "rubric trial",
    "batch_item": "batch item",
    "batch_sample": "batch sample",
    "batch_pattern": "batch pattern",
}
"""Audit entity types that are not already a word."""


class Worded(str):
    """Words that keep their code: the string is what a person reads, `.code` what is stored (the
    verification record's HTML puts it in a tooltip)."""

    code: str

    def __new__(cls, text: str, code: object) -> Worded:
        obj = super().__new__(cls, text)
        obj.code = str(code)
        return obj


def _lookup(table: Mapping, code: object) -> str | None:
    # A StrEnum member is its str value (equal, same hash): one lookup serves both.
    return table.get(code)


def readable(code: object) -> str:
    """A code nobody gave words yet, made readable (`new_code` → "new code"), never shown raw."""
    text = str(code)
    return text.replace("_", " ").replace(".", ": ", 1) if "." in text else text.replace("_", " ")


def capital(text: str) -> str:
    """Words that start a label: the first letter upper case, the rest as written (NAUGHTY stays)."""
    return text[:1].upper() + text[1:]


def status(code: RunStatus | str) -> str:
    """A run status in words."""
    return _lookup(STATUS, code) or readable(code)


def reason(code: EscalationReason | str | None) -> str:
    """An escalation reason in words ("" for none)."""
    return "" if code is None else _lookup(REASON, code) or readable(code)


def reason_help(code: EscalationReason | str) -> str:
    """An escalation reason as a sentence."""
    return _lookup(REASON_HELP, code) or ""


def decision(code: str) -> str:
    """A decision on a round in words."""
    return DECISION.get(code) or readable(code)


def resolution(code: str | None) -> str:
    """An escalation's resolution in words ("" for none)."""
    return "" if not code else RESOLUTION.get(code) or readable(code)


def pattern_status(code: str) -> str:
    """A batch pattern's status in words."""
    return PATTERN_STATUS.get(code) or readable(code)


def review_status(code: ReviewStatus | str) -> str:
    """What happened when a reviewer slot was asked, in words."""
    return _lookup(REVIEW_STATUS, code) or readable(code)


def rubric_source(code: str) -> str:
    """How a rubric version was made, in words."""
    return RUBRIC_SOURCE.get(code) or readable(code)


def screen_verdict(code: str, check: str = "key") -> str:
    """The injection screen's verdict in words (of its extraction check when `check` says so)."""
    return (
        (EXTRACTION_VERDICT.get(code) if check == "extraction" else None) or SCREEN_VERDICT.get(code) or readable(code)
    )


def screen_check(code: str) -> str:
    """The injection screen's model check in words."""
    return SCREEN_CHECK.get(code) or readable(code)


def status_line(status_code: RunStatus | str, reason_code: EscalationReason | str | None = None) -> Worded:
    """A run's status with its escalation reason: "escalated (reviewers disagree)", code "escalated (disagreement)"."""
    if not reason_code:
        return Worded(status(status_code), status_code)
    return Worded(f"{status(status_code)} ({reason(reason_code)})", f"{status_code} ({reason_code})")


def worded(say: Callable[[str], str], value: object) -> Worded:
    """`say(value)` as Worded, keeping the value as its code."""
    return Worded(say(str(value)), value)


def setting(key: str) -> str:
    """A saved setting by its Settings label."""
    return SETTING.get(key) or readable(key)


def audit_action(code: str) -> str:
    """An audit action in words."""
    if code.startswith("decision."):
        return "decision: " + decision(code.removeprefix("decision."))
    return AUDIT_ACTION.get(code) or readable(code)


def entity(code: str) -> str:
    """An audit entity type in words."""
    return ENTITY.get(code) or readable(code)


def note(text: str) -> str:
    """A state change's note: free text, or an escalation reason's code (the engine's note when it has no other)."""
    return _lookup(REASON, text) or text


def role(code: str) -> str:
    """A role in words ("compliance officer"); any other value as it is."""
    return _lookup(ROLE_LABEL, code) or code


def usd(amount: float) -> str:
    """Dollars as people read them, one rule everywhere: 4 significant figures under $1 (trailing zeros dropped,
    never fewer than 2 decimals) and 2 decimals from $1: $0.000751, $0.00259, $0.019, $0.50, $1.50, $1,234.57."""
    # Why significant figures: a review call costs fractions of a cent, and a fixed number of decimals shows it
    # either as $0.0000 or with padding zeros that make like amounts look unlike ($0.002590 beside $0.0190).
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    if amount == 0:
        return "$0.00"
    decimals = max(2, 3 - math.floor(math.log10(amount)))
    text = f"{amount:.{decimals}f}"
    if float(text) >= 1:  # $1 and over, also when rounding carried a figure like 0.99996 up to 1.000
        return f"{sign}${amount:,.2f}"
    whole, fraction = text.split(".")
    return f"{sign}${whole}.{fraction.rstrip('0').ljust(2, '0')}"


def _free(code: str) -> str:
    return code


DETAIL: dict[str, Callable[[str], str]] = {
    "from": status,
    "to": status,
    "reason": note,
    "note": note,
    "resolution": resolution,
    "changed": setting,
    "roles": role,
    "before": role,
    "after": role,
}
"""Audit detail keys whose values are codes (`before`/`after` hold roles when roles change); other values are
free text, numbers or hashes and are shown as they are."""


def detail(values: Mapping[str, object]) -> str:
    """An audit event's detail for reading: `key: value` pairs with the codes among the values as words."""

    def one(key: str, value: object) -> str:
        if isinstance(value, list | tuple):
            return ", ".join(one(key, v) for v in value)
        if isinstance(value, Mapping):
            return "{" + detail(value) + "}"
        if value is None:
            return "—"
        return DETAIL.get(key, _free)(value) if isinstance(value, str) else str(value)

    return " · ".join(f"{readable(k)}: {one(k, v)}" for k, v in values.items())


def legend(table: Mapping, codes: Iterable[object] | None = None) -> str:
    """'words = `code`' lines for a tooltip: where a page shows words, the stored code is one hover away."""
    keys = list(table) if codes is None else list(dict.fromkeys(codes))
    return "  \n".join(f"{_lookup(table, k) or readable(k)} = `{k}`" for k in keys)


def setting_codes() -> list[str]:
    """Every saved setting's key, from the settings model itself."""
    return list(Defaults.model_fields)


def percent(value: float | None) -> str:
    """A share as people read it: one decimal under 10 % (2.1 %, 0.8 %), whole from there (18 %); — when undefined."""
    if value is None:
        return "—"
    shown = value * 100
    return f"{shown:.1f} %" if round(shown, 1) < 10 else f"{shown:.0f} %"


def with_interval(value: float | None, low: float | None, high: float | None, level: float = 0.95) -> str:
    """'2.1 % (95 % CI 0.8–4.5 %)': a rate with its interval; — when nothing was observed."""
    if value is None or low is None or high is None:
        return "—"
    return f"{percent(value)} ({level * 100:.0f} % CI {percent(low).removesuffix(' %')}–{percent(high)})"


def escapes_sentence(k: int, n: int, low: float | None, high: float | None) -> str:
    """'escapes 2.1 % (95 % CI 0.8–4.5 %) from 140 spot-checks' (no spot-check yet: says so)."""
    if n == 0:
        return "no spot-check submitted yet: no escape rate to state"
    noun = "spot-check" if n == 1 else "spot-checks"
    return f"escapes {with_interval(k / n, low, high)} from {n:,} {noun}"


def misses_sentence(model: str, criterion_name: str, misses: int, n: int) -> str:
    """'gpt-5.4-nano misses *no outcome guarantees* 18 % of the time, n = 61'."""
    return f"{model} misses *{criterion_name}* {percent(misses / n)} of the time, n = {n:,}"
