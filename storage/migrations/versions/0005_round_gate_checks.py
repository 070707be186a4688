"""Round gate checks: the deterministic check outcomes each gate decided on.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 15:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add round.gate_checks (NULL for rounds decided before it existed)."""
    with op.batch_alter_table("round") as batch:
        batch.add_column(sa.Column("gate_checks", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    """Drop round.gate_checks."""
    with op.batch_alter_table("round") as batch:
        batch.drop_column("gate_checks")
