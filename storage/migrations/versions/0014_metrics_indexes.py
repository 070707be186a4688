"""The Metrics page under a second at 100,000 runs (`bench/metrics_dashboard.py`): five indexes.

- `ix_criterion_result_failed_criterion` and `_category`: the drill-down's rows (a check that failed,
  about 4 % of criterion_result), partial, by criterion and by category, with every column the
  drill-down reads;
- `ix_run_metric_day_panel`: the view's runs summed per day and panel in index order (no sort);
- `ix_run_metric_view`: the filters' choices, grouped in index order from the index alone;
- `ix_run_metric_created_by`: the runs a person started (the person filter) and the people it offers.

Declared next to the facts they serve (`storage.metric_facts.INDEXES`).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FAILED = "b = 'FAIL' OR c = 'FAIL' OR check_result = 'FAIL'"
FAILED_COLUMNS = (
    "run_id",
    "criterion",
    "category",
    "round_no",
    "b",
    "c",
    "check_result",
    "day",
    "rubric_name",
    "rubric_version",
)


def upgrade() -> None:
    """Create the five indexes."""
    for pick in ("criterion", "category"):
        op.create_index(
            f"ix_criterion_result_failed_{pick}",
            "criterion_result",
            [pick, *(c for c in FAILED_COLUMNS if c != pick)],
            sqlite_where=sa.text(FAILED),
            postgresql_where=sa.text(FAILED),
        )
    op.create_index("ix_run_metric_day_panel", "run_metric", ["day", "reviewer_b", "reviewer_c"])
    op.create_index(
        "ix_run_metric_view", "run_metric", ["rubric_name", "rubric_version", "domain", "reviewer_b", "reviewer_c"]
    )
    op.create_index("ix_run_metric_created_by", "run_metric", ["created_by"])


def downgrade() -> None:
    """Drop them."""
    op.drop_index("ix_run_metric_created_by", table_name="run_metric")
    op.drop_index("ix_run_metric_view", table_name="run_metric")
    op.drop_index("ix_run_metric_day_panel", table_name="run_metric")
    for pick in ("category", "criterion"):
        op.drop_index(f"ix_criterion_result_failed_{pick}", table_name="criterion_result")
