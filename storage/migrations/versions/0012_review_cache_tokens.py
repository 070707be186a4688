"""The prompt cache on the Metrics page: run_metric keeps the input tokens of the review calls (uncached,
written to the cache, read from it), so the cache hit rate can be summed, and its cache_savings_usd
becomes net of the cache-write premium.

The three columns are nullable: NULL marks a fact row from before this revision. Such rows are recomputed
from their runs' own rows (with the net savings) when the desk opens the database
(`storage.metric_facts.backfill`, called by `storage.startup.init_db`); nothing is rewritten here.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("review_input_tokens", "review_cache_write_tokens", "review_cache_read_tokens")


def upgrade() -> None:
    """Add run_metric's review_* token columns (NULL until start-up recomputes the row)."""
    with op.batch_alter_table("run_metric", schema=None) as batch_op:
        for name in COLUMNS:
            batch_op.add_column(sa.Column(name, sa.Integer(), nullable=True))


def downgrade() -> None:
    """Drop them."""
    with op.batch_alter_table("run_metric", schema=None) as batch_op:
        for name in reversed(COLUMNS):
            batch_op.drop_column(name)
