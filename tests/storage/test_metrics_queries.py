"""How the Metrics page's reads reach the facts (`storage.metrics`, indexes in `storage.metric_facts.INDEXES`):
the drill-down reads only the failed rows' partial indexes, the day sums and the filters' choices follow
`ix_run_metric_day_panel` and `ix_run_metric_view` (no sort of every run), the person filter finds the runs a person started by index,
and one pass over run_metric gives the same day and reviewer sums as a pass per day and per slot.

The plans are SQLite's on the seeded history with no planner statistics, as a desk has them (it never
runs ANALYZE). A dropped or changed index, or a drill-down condition its partial index does not cover,
shows up here as a scan or a sort, long before a large history feels it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import Session, col, func, select

from santa_core.reports import metrics_totals
from santa_core.reports.metrics import MetricsFilter
from storage import metrics as queries
from storage.tables import RunMetricRow
from tests.support import metrics_history
from tests.support.metrics_history import HAIKU, Seeded

history = metrics_history.history  # the fixture (an imported name would trip ruff's F811)


@contextmanager
def statements(engine: sa.Engine) -> Iterator[list[tuple[str, Any]]]:
    """The SQL statements run on `engine` inside the block (BEGIN left out)."""
    seen: list[tuple[str, Any]] = []

    def keep(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
        if not statement.startswith("BEGIN"):
            seen.append((statement, parameters))

    sa.event.listen(engine, "before_cursor_execute", keep)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", keep)


def plans(seeded: Seeded, read: Callable[[], object]) -> list[str]:
    """SQLite's query plan of each statement `read` runs, one string per statement."""
    if seeded.repo.engine.dialect.name != "sqlite":
        pytest.skip("query plans are SQLite's")
    with statements(seeded.repo.engine) as seen:
        read()
    with seeded.repo.engine.connect() as conn:
        return [
            " ; ".join(row[3] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params))
            for sql, params in seen
        ]


@pytest.mark.parametrize(
    ("filters", "pick"),
    [
        pytest.param({}, {"criterion": "facts"}, id="criterion"),
        pytest.param({}, {"category": "completeness"}, id="category"),
        pytest.param({"people": ["bob"]}, {"criterion": "facts"}, id="person-criterion"),
        pytest.param({"people": ["bob"], "rubrics": ["desk"]}, {"category": "compliance"}, id="person-category"),
    ],
)
def test_the_drill_down_reads_only_the_failed_rows(history: Seeded, filters: dict, pick: dict) -> None:
    store = history.repo.metrics
    found = plans(history, lambda: store.failed_runs(MetricsFilter(**filters), limit=1, **pick))
    assert len(found) == 2  # the newest runs with their status; the count, as there are more than `limit`
    index = f"ix_criterion_result_failed_{next(iter(pick))}"
    for plan in found:
        assert f"COVERING INDEX {index}" in plan, plan  # no criterion_result row is read from the table
        assert "SCAN criterion_result" not in plan.replace(f"SCAN criterion_result USING COVERING INDEX {index}", "")


def test_the_day_sums_and_the_choices_need_no_sort(history: Seeded) -> None:
    store = history.repo.metrics
    sums, rounds, criteria, names, options, days, people = plans(
        history, lambda: (store.report(MetricsFilter()), store.options())
    )[:7]
    assert sums.startswith("SCAN run_metric USING INDEX ix_run_metric_day_panel") and "TEMP B-TREE" not in sums
    # the criteria's names: one run per rubric version, from the view index, each run's row by its key
    assert names.startswith("MATERIALIZE") and "COVERING INDEX ix_run_metric_view" in names, names
    assert "TEMP B-TREE" not in names and "SEARCH run USING INTEGER PRIMARY KEY" in names, names
    assert options == "SCAN run_metric USING COVERING INDEX ix_run_metric_view"
    assert days.count("SEARCH run_metric USING COVERING INDEX ix_run_metric_day") == 2 and "SCAN run_metric" not in days
    assert people == "SCAN run_metric USING COVERING INDEX ix_run_metric_created_by"
    person = plans(history, lambda: store.report(MetricsFilter(people=["bob"])))
    assert all("COVERING INDEX ix_run_metric_created_by (created_by=?)" in plan for plan in person), person


def test_one_pass_gives_the_day_and_reviewer_sums(history: Seeded) -> None:
    """The same sums as counting each day, and each reviewer slot, on its own."""
    r = RunMetricRow
    for f in (MetricsFilter(), MetricsFilter(reviewers=[HAIKU]), MetricsFilter(people=["bob"])):
        with Session(history.repo.engine) as s:
            days, reviewers = queries._run_sums(s, f)
            runs = dict(s.exec(select(r.day, func.count()).where(*queries.where(r, f)).group_by(r.day)).all())
            by_slot = {
                (slot, name): (reviews, cost)
                for slot in ("b", "c")
                for name, reviews, cost in s.exec(
                    select(
                        getattr(r, f"reviewer_{slot}"),
                        func.sum(getattr(r, f"{slot}_reviews")),
                        func.sum(getattr(r, f"{slot}_cost_usd")),
                    )
                    .where(*queries.where(r, f))
                    .group_by(getattr(r, f"reviewer_{slot}"))
                ).all()
            }
            finished = s.exec(
                select(func.count()).where(col(r.status).in_(metrics_totals.FINISHED), *queries.where(r, f))
            ).one()
        assert {d.day.isoformat(): d.runs for d in days} == runs
        assert sum(d.finished for d in days) == finished
        assert sorted((t.reviewer, t.reviews, round(t.cost_usd, 9)) for t in reviewers) == sorted(
            (name, reviews, round(cost, 9)) for (_, name), (reviews, cost) in by_slot.items()
        )
