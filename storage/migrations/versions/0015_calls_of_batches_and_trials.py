"""Every paid request on record: the call log serves batches and rubric trials as well as runs.

`llm_call_sent` and `llm_call` name what a call served: a run (`run_id`), a batch's own work such as a
pattern's fix (`batch_id`) or a rubric trial (`trial_key`, written on the trial row too, which is stored
after its calls are). `run_id` becomes optional.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05 05:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CALL_TABLES = ("llm_call_sent", "llm_call")


def upgrade() -> None:
    """run_id nullable; batch_id and trial_key on both call tables; trial_key on rubric_trial."""
    for table in CALL_TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column("run_id", existing_type=sa.Integer(), nullable=True)
            batch_op.add_column(sa.Column("batch_id", sa.Integer(), nullable=True))
            batch_op.add_column(sa.Column("trial_key", sa.String(), nullable=True))
            batch_op.create_foreign_key(f"fk_{table}_batch_id_batch", "batch", ["batch_id"], ["id"])
            batch_op.create_index(op.f(f"ix_{table}_batch_id"), ["batch_id"], unique=False)
            batch_op.create_index(op.f(f"ix_{table}_trial_key"), ["trial_key"], unique=False)
    with op.batch_alter_table("rubric_trial", schema=None) as batch_op:
        batch_op.add_column(sa.Column("trial_key", sa.String(), nullable=True))
        batch_op.create_index(op.f("ix_rubric_trial_trial_key"), ["trial_key"], unique=False)


def downgrade() -> None:
    """Drop them (calls that served no run are dropped with them: run_id is required again)."""
    with op.batch_alter_table("rubric_trial", schema=None) as batch_op:
        batch_op.drop_index(op.f("ix_rubric_trial_trial_key"))
        batch_op.drop_column("trial_key")
    for table in CALL_TABLES:
        calls = sa.table(table, sa.column("run_id"))
        op.execute(calls.delete().where(calls.c.run_id.is_(None)))
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(op.f(f"ix_{table}_trial_key"))
            batch_op.drop_index(op.f(f"ix_{table}_batch_id"))
            batch_op.drop_constraint(f"fk_{table}_batch_id_batch", type_="foreignkey")
            batch_op.drop_column("trial_key")
            batch_op.drop_column("batch_id")
            batch_op.alter_column("run_id", existing_type=sa.Integer(), nullable=False)
