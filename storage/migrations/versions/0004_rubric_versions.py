"""Rubric versions and rubric trials (the Rubrics page: versions, Try it, re-checks).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02 14:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_STR = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    """Create rubric_version and rubric_trial."""
    op.create_table(
        "rubric_version",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", _STR(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("domain", _STR(), nullable=False),
        sa.Column("document_json", sa.JSON(), nullable=False),
        sa.Column("resolved_json", sa.JSON(), nullable=False),
        sa.Column("content_hash", _STR(), nullable=False),
        sa.Column("author", _STR(), nullable=False),
        sa.Column("change_note", sa.Text(), nullable=False),
        sa.Column("source", _STR(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rubric_version")),
        sa.UniqueConstraint("name", "version", name=op.f("uq_rubric_version_name_version")),
    )
    with op.batch_alter_table("rubric_version", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rubric_version_name"), ["name"], unique=False)

    op.create_table(
        "rubric_trial",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", _STR(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("rubric_name", _STR(), nullable=False),
        sa.Column("rubric_version", sa.Integer(), nullable=True),
        sa.Column("rubric_json", sa.JSON(), nullable=False),
        sa.Column("output_text", sa.Text(), nullable=False),
        sa.Column("output_hash", _STR(), nullable=False),
        sa.Column("check_outcomes_json", sa.JSON(), nullable=False),
        sa.Column("reviewer", _STR(), nullable=True),
        sa.Column("review_status", _STR(), nullable=True),
        sa.Column("verdict", _STR(), nullable=True),
        sa.Column("review_json", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("request_json", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("response_text", sa.Text(), nullable=False),
        sa.Column("content_hash", _STR(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("cache_creation_input_tokens", sa.Integer(), nullable=False),
        sa.Column("cache_read_input_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("actor", _STR(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], name=op.f("fk_rubric_trial_run_id_run")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rubric_trial")),
    )
    with op.batch_alter_table("rubric_trial", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rubric_trial_run_id"), ["run_id"], unique=False)


def downgrade() -> None:
    """Drop rubric_trial and rubric_version."""
    with op.batch_alter_table("rubric_trial", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rubric_trial_run_id"))
    op.drop_table("rubric_trial")
    with op.batch_alter_table("rubric_version", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rubric_version_name"))
    op.drop_table("rubric_version")
