"""The Metrics page's facts: run_metric (one row per run), criterion_result (one row per criterion
and round) and criterion_day (criterion results summed per day and view), and run.generation_cost_usd.

The facts are filled for existing runs when the app opens the database (storage.metrics.backfill).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 21:44:23.054864
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the three fact tables and add run.generation_cost_usd."""
    op.create_table(
        "criterion_day",
        sa.Column("day", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("rubric_name", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("rubric_version", sa.Integer(), nullable=False),
        sa.Column("domain", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("reviewer_b", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("reviewer_c", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("criterion", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("category", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("severity", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("pp", sa.Integer(), nullable=False),
        sa.Column("pf", sa.Integer(), nullable=False),
        sa.Column("fp", sa.Integer(), nullable=False),
        sa.Column("ff", sa.Integer(), nullable=False),
        sa.Column("b_fail", sa.Integer(), nullable=False),
        sa.Column("c_fail", sa.Integer(), nullable=False),
        sa.Column("check_fail", sa.Integer(), nullable=False),
        sa.Column("unscored", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_criterion_day")),
        sa.UniqueConstraint(
            "day",
            "rubric_name",
            "rubric_version",
            "domain",
            "reviewer_b",
            "reviewer_c",
            "criterion",
            "category",
            "severity",
            name="uq_criterion_day_key",
        ),
    )
    with op.batch_alter_table("criterion_day", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_criterion_day_day"), ["day"], unique=False)

    op.create_table(
        "criterion_result",
        sa.Column("day", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("rubric_name", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("rubric_version", sa.Integer(), nullable=False),
        sa.Column("domain", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("reviewer_b", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("reviewer_c", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("round_no", sa.Integer(), nullable=False),
        sa.Column("criterion", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("category", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("severity", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("b", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("c", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("check_result", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], name=op.f("fk_criterion_result_run_id_run")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_criterion_result")),
        sa.UniqueConstraint(
            "run_id", "round_no", "criterion", name=op.f("uq_criterion_result_run_id_round_no_criterion")
        ),
    )
    with op.batch_alter_table("criterion_result", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_criterion_result_criterion"), ["criterion"], unique=False)
        batch_op.create_index(batch_op.f("ix_criterion_result_day"), ["day"], unique=False)
        batch_op.create_index(batch_op.f("ix_criterion_result_run_id"), ["run_id"], unique=False)

    op.create_table(
        "run_metric",
        sa.Column("day", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("rubric_name", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("rubric_version", sa.Integer(), nullable=False),
        sa.Column("domain", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("reviewer_b", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("reviewer_c", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("created_by", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("nice_round", sa.Integer(), nullable=True),
        sa.Column("generation_cost_usd", sa.Float(), nullable=True),
        sa.Column("review_cost_usd", sa.Float(), nullable=False),
        sa.Column("fix_cost_usd", sa.Float(), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("cache_write_tokens", sa.Integer(), nullable=False),
        sa.Column("cache_read_tokens", sa.Integer(), nullable=False),
        sa.Column("cache_savings_usd", sa.Float(), nullable=False),
        sa.Column("escapes", sa.Integer(), nullable=False),
        sa.Column("b_reviews", sa.Integer(), nullable=False),
        sa.Column("b_errors", sa.Integer(), nullable=False),
        sa.Column("b_latency_s", sa.Float(), nullable=False),
        sa.Column("b_latency_max_s", sa.Float(), nullable=False),
        sa.Column("b_cost_usd", sa.Float(), nullable=False),
        sa.Column("c_reviews", sa.Integer(), nullable=False),
        sa.Column("c_errors", sa.Integer(), nullable=False),
        sa.Column("c_latency_s", sa.Float(), nullable=False),
        sa.Column("c_latency_max_s", sa.Float(), nullable=False),
        sa.Column("c_cost_usd", sa.Float(), nullable=False),
        sa.Column("rounds_reviewed", sa.Integer(), nullable=False),
        sa.Column("round_latency_s", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], name=op.f("fk_run_metric_run_id_run")),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_run_metric")),
    )
    with op.batch_alter_table("run_metric", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_run_metric_day"), ["day"], unique=False)

    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("generation_cost_usd", sa.Float(), nullable=True))
    # The person filter looks runs up by reviewer and by decision maker.
    with op.batch_alter_table("review", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_review_reviewer"), ["reviewer"], unique=False)
    with op.batch_alter_table("decision", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_decision_actor"), ["actor"], unique=False)


def downgrade() -> None:
    """Drop what upgrade added."""
    with op.batch_alter_table("decision", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_decision_actor"))
    with op.batch_alter_table("review", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_review_reviewer"))
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.drop_column("generation_cost_usd")

    with op.batch_alter_table("run_metric", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_metric_day"))

    op.drop_table("run_metric")
    with op.batch_alter_table("criterion_result", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_criterion_result_run_id"))
        batch_op.drop_index(batch_op.f("ix_criterion_result_day"))
        batch_op.drop_index(batch_op.f("ix_criterion_result_criterion"))

    op.drop_table("criterion_result")
    with op.batch_alter_table("criterion_day", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_criterion_day_day"))

    op.drop_table("criterion_day")
