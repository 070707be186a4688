"""SQLModel tables: what a run, its rounds, reviews, proposals and decisions look like on disk.

Rows are plain records; `storage.rows` turns them into the `santa_core` models and back.
Datetimes are stored as UTC (SQLite hands them back naive; `storage.times.utc` re-attaches UTC).
One module per record kind; this package names them all and the schema's order.
`decision`, `state_change`, `llm_call` and `settings` are append-only: no code path updates or
deletes them.
"""

from __future__ import annotations

from sqlmodel import SQLModel

from storage.tables.alerts import AlertDeliveryRow, AlertRow
from storage.tables.batches import (
    BatchChangeRow,
    BatchItemRow,
    BatchPatternRow,
    BatchRow,
    BatchSampleItemRow,
    BatchSampleRow,
)
from storage.tables.columns import JSON_OR_NULL, UTC_TS, UsageColumns
from storage.tables.metrics import CriterionDayRow, CriterionResultRow, RunMetricRow
from storage.tables.people import AuditEventRow, AuditHeadRow, PersonRow
from storage.tables.rubrics import RubricVersionRow, SuggestionDecisionRow, TrialRow
from storage.tables.runs import (
    CallSentRow,
    DecisionRow,
    EscalationRow,
    EscapeRow,
    LLMCallRow,
    MergedIssueRow,
    ProposalRow,
    ReviewRow,
    RoundRow,
    RunRow,
    ScreenRow,
    SettingsRow,
    StateChangeRow,
)
from storage.tables.spot_checks import SpotCheckRow, SpotRuleRow

TABLES: tuple[type[SQLModel], ...] = (
    BatchRow,
    BatchItemRow,
    BatchSampleRow,
    RunRow,
    RoundRow,
    ReviewRow,
    MergedIssueRow,
    ProposalRow,
    DecisionRow,
    EscalationRow,
    LLMCallRow,
    StateChangeRow,
    SettingsRow,
    RubricVersionRow,
    TrialRow,
    PersonRow,
    EscapeRow,
    AuditEventRow,
    AuditHeadRow,
    RunMetricRow,
    CriterionResultRow,
    CriterionDayRow,
    BatchSampleItemRow,
    BatchPatternRow,
    BatchChangeRow,
    ScreenRow,
    CallSentRow,
    SpotRuleRow,
    SpotCheckRow,
    AlertRow,
    AlertDeliveryRow,
    SuggestionDecisionRow,
)
"""Every table of the schema, parents first."""

APPEND_ONLY = frozenset(
    {
        "decision",
        "state_change",
        "llm_call",
        "settings",
        "rubric_version",
        "rubric_trial",
        "escape",
        "audit_event",
        "batch_change",
        "screen",
        "llm_call_sent",
        "rubric_suggestion",
    }
)
"""Tables whose rows are never updated or deleted."""

__all__ = [
    "APPEND_ONLY",
    "AlertDeliveryRow",
    "AlertRow",
    "JSON_OR_NULL",
    "TABLES",
    "UTC_TS",
    "UsageColumns",
    "AuditEventRow",
    "AuditHeadRow",
    "BatchChangeRow",
    "BatchItemRow",
    "BatchPatternRow",
    "BatchRow",
    "BatchSampleItemRow",
    "BatchSampleRow",
    "CallSentRow",
    "CriterionDayRow",
    "CriterionResultRow",
    "DecisionRow",
    "EscalationRow",
    "EscapeRow",
    "LLMCallRow",
    "MergedIssueRow",
    "PersonRow",
    "ProposalRow",
    "ReviewRow",
    "RoundRow",
    "RubricVersionRow",
    "RunMetricRow",
    "RunRow",
    "ScreenRow",
    "SettingsRow",
    "SpotCheckRow",
    "SpotRuleRow",
    "StateChangeRow",
    "SuggestionDecisionRow",
    "TrialRow",
]
