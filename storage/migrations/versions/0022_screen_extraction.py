"""The extraction check (issue 36): a screen row says which model check it holds, and the extraction's quotes.

`screen.kind` NULL is the known-answer (key) check, as every old row; `screen.quotes` NULL in every old row. Both
NULL, so the row seals stay valid (a NULL column is not hashed).

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-05 17:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0022"
down_revision: str | Sequence[str] | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add screen.kind and screen.quotes."""
    with op.batch_alter_table("screen") as batch:
        batch.add_column(sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch.add_column(sa.Column("quotes", sa.JSON(none_as_null=True), nullable=True))


def downgrade() -> None:
    """Drop screen.kind and screen.quotes."""
    with op.batch_alter_table("screen") as batch:
        batch.drop_column("quotes")
        batch.drop_column("kind")
