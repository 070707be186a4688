"""Spot-checks: rules that draw a seeded share of shipped runs (`spot_rule`), the drawn runs with the record of
their draw and the blind verdicts (`spot_check`), and escapes traced to a spot-check (`escape.source`,
`spot_check_id`, `evidence`, `passed_by`; NULL in old rows, which were all reported, so their seals hold).

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05 14:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create spot_rule and spot_check; add the escape's spot-check columns (nullable)."""
    op.create_table(
        "spot_rule",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rubric_name", sa.String(), nullable=False),
        sa.Column("share", sa.Float(), nullable=False),
        sa.Column("floor", sa.Integer(), nullable=False),
        sa.Column("panel", sa.String(), nullable=True),
        sa.Column("domain", sa.String(), nullable=True),
        sa.Column("seed", sa.String(), nullable=False),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("retired_by", sa.String(), nullable=True),
        sa.Column("retired_at", TS, nullable=True),
        sa.Column("replaces", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_spot_rule")),
    )
    op.create_index(op.f("ix_spot_rule_rubric_name"), "spot_rule", ["rubric_name"], unique=False)
    op.create_table(
        "spot_check",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rule_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("round_no", sa.Integer(), nullable=False),
        sa.Column("rubric_name", sa.String(), nullable=False),
        sa.Column("rubric_version", sa.Integer(), nullable=False),
        sa.Column("drawn_by", sa.String(), nullable=False),
        sa.Column("seed", sa.String(), nullable=False),
        sa.Column("share", sa.Float(), nullable=False),
        sa.Column("number", sa.Float(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("owner", sa.String(), nullable=True),
        sa.Column("due_at", TS, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("submitted_by", sa.String(), nullable=True),
        sa.Column("submitted_at", TS, nullable=True),
        sa.Column("judgements", sa.JSON(none_as_null=True), nullable=True),
        sa.ForeignKeyConstraint(["rule_id"], ["spot_rule.id"], name=op.f("fk_spot_check_rule_id_spot_rule")),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], name=op.f("fk_spot_check_run_id_run")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_spot_check")),
        sa.UniqueConstraint("rule_id", "run_id", name=op.f("uq_spot_check_rule_id_run_id")),
    )
    for column in ("rule_id", "run_id", "status"):
        op.create_index(op.f(f"ix_spot_check_{column}"), "spot_check", [column], unique=False)
    with op.batch_alter_table("escape", schema=None) as batch_op:
        batch_op.add_column(sa.Column("source", sa.String(), nullable=True))
        batch_op.add_column(sa.Column("spot_check_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("evidence", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("passed_by", sa.JSON(none_as_null=True), nullable=True))
        batch_op.create_index(batch_op.f("ix_escape_spot_check_id"), ["spot_check_id"], unique=False)


def downgrade() -> None:
    """Drop them (the seal events stay in the append-only chain)."""
    with op.batch_alter_table("escape", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_escape_spot_check_id"))
        for column in ("passed_by", "evidence", "spot_check_id", "source"):
            batch_op.drop_column(column)
    op.drop_table("spot_check")
    op.drop_table("spot_rule")
