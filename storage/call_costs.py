"""Reads of the call log for cost estimates: the average review call per rubric and model.

The Review and Batch pages estimate a round's cost before it starts (`santa_core.reports.round_cost`); where
the log holds enough recent review calls of the rubric and model, their average answer (the provider's own
token count, reasoning included) replaces the guess of a clean terse answer; the input is still counted from
each item's own prompt.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func
from sqlmodel import col

from santa_core.providers import canonical
from santa_core.reports.round_cost import MeasuredCost
from storage.queries import select_columns
from storage.tables import LLMCallRow, RunRow
from storage.times import utc
from storage.transactions import StoreBase


class CallCostStore(StoreBase):
    """Averages over the `llm_call` log (read only)."""

    def review_call_averages(self, rubric_name: str, since: datetime) -> dict[str, MeasuredCost]:
        """Per model (canonical id): the count and average usage of the review calls with `rubric_name` made
        since `since`. Only calls that reported usage count (a call that failed before an answer has none)."""
        c = LLMCallRow
        stmt = (
            select_columns(
                c.model,
                func.count(),
                func.avg(c.input_tokens),
                func.avg(c.output_tokens),
                func.avg(c.cache_creation_input_tokens),
                func.avg(c.cache_read_input_tokens),
            )
            .join(RunRow, col(RunRow.id) == col(c.run_id))
            .where(
                c.purpose == "review",
                RunRow.rubric_name == rubric_name,
                c.created_at >= utc(since),
                c.input_tokens + c.cache_creation_input_tokens + c.cache_read_input_tokens > 0,
            )
            .group_by(c.model)
        )
        with self._read() as s:
            rows = s.exec(stmt).all()
        found: dict[str, list[tuple]] = {}
        for model, calls, *averages in rows:  # `claude-x` and `anthropic:claude-x` are one model
            found.setdefault(canonical(model), []).append((int(calls), [float(a or 0) for a in averages]))
        return {model: _pooled(groups) for model, groups in found.items()}


def _pooled(groups: list[tuple[int, list[float]]]) -> MeasuredCost:
    """One average from several spellings' averages, weighted by their call counts."""
    calls = sum(n for n, _ in groups)
    means = [sum(n * avg[i] for n, avg in groups) / calls for i in range(4)]
    return MeasuredCost(calls, *means)
