"""Third reviewer: the model a run names for slot D, when its rubric has high-risk criteria.

NULL in every old row (they ran two reviewers), so the row seals stay valid (a NULL column is not hashed).

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05 14:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add run.reviewer_d."""
    with op.batch_alter_table("run") as batch:
        batch.add_column(sa.Column("reviewer_d", sqlmodel.sql.sqltypes.AutoString(), nullable=True))


def downgrade() -> None:
    """Drop run.reviewer_d."""
    with op.batch_alter_table("run") as batch:
        batch.drop_column("reviewer_d")
