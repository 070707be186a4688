"""The metric facts of runs with calls on the write-ahead log are recomputed under the one definition of cost.

Before, a run's Metrics figures left out its calls cut off before their answer was stored (the run page counted
them at their estimate). Dropping those runs' `run_metric` rows makes the desk's start-up backfill
(`storage.metric_facts.backfill`) derive them again, cut-off calls included; `criterion_result` and
`criterion_day` do not depend on cost and stay as they are.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05 06:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Drop the facts of every run with a sent note (the backfill at start-up derives them again)."""
    op.execute(
        sa.text(
            "DELETE FROM run_metric WHERE run_id IN "
            "(SELECT DISTINCT run_id FROM llm_call_sent WHERE run_id IS NOT NULL)"
        )
    )


def downgrade() -> None:
    """Nothing to undo: the facts are derived data."""
