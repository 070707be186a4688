"""Batch fixes that reach every item: a pattern keeps the per-item fixes prepared for it (one edit per
matching item, by the approved text rule or by the fix agent) until a person approves them, and a
change can be a person's edit by hand.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 06:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """batch_pattern.item_fixes (JSON, NULL until prepared) and fix_spent_usd (every fix call's cost, superseded
    proposals included); batch_change.by_hand (false for old rows)."""
    with op.batch_alter_table("batch_pattern", schema=None) as batch_op:
        batch_op.add_column(sa.Column("item_fixes", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("fix_spent_usd", sa.Float(), nullable=False, server_default="0"))
    with op.batch_alter_table("batch_change", schema=None) as batch_op:
        batch_op.add_column(sa.Column("by_hand", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    """Drop them."""
    with op.batch_alter_table("batch_change", schema=None) as batch_op:
        batch_op.drop_column("by_hand")
    with op.batch_alter_table("batch_pattern", schema=None) as batch_op:
        batch_op.drop_column("fix_spent_usd")
        batch_op.drop_column("item_fixes")
