"""A rubric author's decisions on rubric suggestions: accepted (with the version saved) or dismissed.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-05 13:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0020"
down_revision: str | Sequence[str] | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the rubric_suggestion table (sealed, append-only; empty, so nothing to seal now)."""
    op.create_table(
        "rubric_suggestion",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rubric_name", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("suggestion_key", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("action", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("criterion", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("phrase", sa.Text(), nullable=False),
        sa.Column("runs_json", sa.JSON(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("actor", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rubric_suggestion")),
    )
    op.create_index(op.f("ix_rubric_suggestion_rubric_name"), "rubric_suggestion", ["rubric_name"], unique=False)
    op.create_index(op.f("ix_rubric_suggestion_suggestion_key"), "rubric_suggestion", ["suggestion_key"], unique=False)


def downgrade() -> None:
    """Drop the rubric_suggestion table."""
    op.drop_index(op.f("ix_rubric_suggestion_suggestion_key"), table_name="rubric_suggestion")
    op.drop_index(op.f("ix_rubric_suggestion_rubric_name"), table_name="rubric_suggestion")
    op.drop_table("rubric_suggestion")
