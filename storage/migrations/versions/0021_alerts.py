"""The alert outbox: `alert` (an event written in the transaction of what it reports) and `alert_delivery` (each
try at sending it to a hook). Both are new and empty: nothing to seal at upgrade.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-05 14:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0021"
down_revision: str | Sequence[str] | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the alert and alert_delivery tables."""
    op.create_table(
        "alert",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("subject", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("payload", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], name=op.f("fk_alert_run_id_run")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert")),
        sa.UniqueConstraint("key", name=op.f("uq_alert_key")),
    )
    op.create_index(op.f("ix_alert_kind"), "alert", ["kind"], unique=False)
    op.create_index(op.f("ix_alert_run_id"), "alert", ["run_id"], unique=False)
    op.create_index(op.f("ix_alert_done"), "alert", ["done"], unique=False)
    op.create_table(
        "alert_delivery",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("alert_id", sa.Integer(), nullable=False),
        sa.Column("hook", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["alert_id"], ["alert.id"], name=op.f("fk_alert_delivery_alert_id_alert")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_delivery")),
    )
    op.create_index(op.f("ix_alert_delivery_alert_id"), "alert_delivery", ["alert_id"], unique=False)


def downgrade() -> None:
    """Drop both tables."""
    op.drop_index(op.f("ix_alert_delivery_alert_id"), table_name="alert_delivery")
    op.drop_table("alert_delivery")
    op.drop_index(op.f("ix_alert_done"), table_name="alert")
    op.drop_index(op.f("ix_alert_run_id"), table_name="alert")
    op.drop_index(op.f("ix_alert_kind"), table_name="alert")
    op.drop_table("alert")
