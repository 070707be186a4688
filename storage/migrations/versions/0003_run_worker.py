"""Run worker: which process claimed a running run, so only orphaned runs are interrupted.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02 10:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add run.worker."""
    with op.batch_alter_table("run") as batch:
        batch.add_column(sa.Column("worker", sqlmodel.sql.sqltypes.AutoString(), nullable=True))


def downgrade() -> None:
    """Drop run.worker."""
    with op.batch_alter_table("run") as batch:
        batch.drop_column("worker")
