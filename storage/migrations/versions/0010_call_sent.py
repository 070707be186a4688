"""The write-ahead call log: a row for every model call before its request leaves, and the request
hash on llm_call that links an answer to its note.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 19:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create llm_call_sent; add llm_call.request_hash."""
    op.create_table(
        "llm_call_sent",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("round_no", sa.Integer(), nullable=False),
        sa.Column("purpose", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("slot", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("model", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("request_hash", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("estimate_usd", sa.Float(), nullable=False),
        sa.Column("worker", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_llm_call_sent_run_id"), "llm_call_sent", ["run_id"], unique=False)
    op.create_index(op.f("ix_llm_call_sent_request_hash"), "llm_call_sent", ["request_hash"], unique=False)
    with op.batch_alter_table("llm_call", schema=None) as batch_op:
        batch_op.add_column(sa.Column("request_hash", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.create_index(batch_op.f("ix_llm_call_request_hash"), ["request_hash"], unique=False)


def downgrade() -> None:
    """Drop llm_call_sent and llm_call.request_hash."""
    with op.batch_alter_table("llm_call", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_llm_call_request_hash"))
        batch_op.drop_column("request_hash")
    op.drop_index(op.f("ix_llm_call_sent_request_hash"), table_name="llm_call_sent")
    op.drop_index(op.f("ix_llm_call_sent_run_id"), table_name="llm_call_sent")
    op.drop_table("llm_call_sent")
