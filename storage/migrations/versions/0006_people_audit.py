"""People and roles, the hash-chained audit trail, escapes, escalation owners and due dates,
person reviewer assignments and the gate's reviewer-disagreement flag.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 17:20:00
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_STR = sqlmodel.sql.sqltypes.AutoString
_TS = sa.DateTime(timezone=True)
GENESIS = "0" * 64
"""The previous-hash of the first audit event (same constant as storage.audit.GENESIS)."""


def _people() -> None:
    person = op.create_table(
        "person",
        sa.Column("id", _STR(), nullable=False),
        sa.Column("name", _STR(), nullable=False),
        sa.Column("roles", sa.JSON(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.Column("updated_by", _STR(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_person")),
    )
    now = datetime.now(UTC)
    # Out of the box there is one person, the local user, and they may do everything.
    op.bulk_insert(
        person,
        [
            {
                "id": "local",
                "name": "local user",
                "roles": ["admin"],
                "created_at": now,
                "updated_at": now,
                "updated_by": "system",
            }
        ],
    )


def _escapes() -> None:
    op.create_table(
        "escape",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("criterion", _STR(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("severity", _STR(), nullable=False),
        sa.Column("reported_by", _STR(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], name=op.f("fk_escape_run_id_run")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_escape")),
    )
    with op.batch_alter_table("escape") as batch:
        batch.create_index(batch.f("ix_escape_run_id"), ["run_id"], unique=False)


def _audit() -> None:
    op.create_table(
        "audit_event",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("actor", _STR(), nullable=False),
        sa.Column("action", _STR(), nullable=False),
        sa.Column("entity_type", _STR(), nullable=False),
        sa.Column("entity_id", _STR(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("before_hash", _STR(), nullable=True),
        sa.Column("after_hash", _STR(), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("prev_hash", _STR(), nullable=False),
        sa.Column("hash", _STR(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_event")),
        sa.UniqueConstraint("seq", name=op.f("uq_audit_event_seq")),
    )
    with op.batch_alter_table("audit_event") as batch:
        for col in ("created_at", "actor", "action", "run_id"):
            batch.create_index(batch.f(f"ix_audit_event_{col}"), [col], unique=False)
    head = op.create_table(
        "audit_head",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("hash", _STR(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_head")),
    )
    # The head row exists from the start: appenders lock it (FOR UPDATE) instead of racing to create it.
    op.bulk_insert(head, [{"id": 1, "seq": 0, "hash": GENESIS}])


def upgrade() -> None:
    """Create person, escape, audit_event, audit_head; add the new run, round and escalation columns."""
    _people()
    _escapes()
    _audit()
    with op.batch_alter_table("run") as batch:
        batch.add_column(sa.Column("person_b", _STR(), nullable=True))
        batch.add_column(sa.Column("person_c", _STR(), nullable=True))
    with op.batch_alter_table("round") as batch:
        batch.add_column(sa.Column("gate_disagreement", sa.Boolean(), nullable=True))
    with op.batch_alter_table("escalation") as batch:
        batch.add_column(sa.Column("owner", _STR(), nullable=True))
        batch.add_column(sa.Column("due_at", _TS, nullable=True))


def downgrade() -> None:
    """Drop what upgrade added."""
    with op.batch_alter_table("escalation") as batch:
        batch.drop_column("due_at")
        batch.drop_column("owner")
    with op.batch_alter_table("round") as batch:
        batch.drop_column("gate_disagreement")
    with op.batch_alter_table("run") as batch:
        batch.drop_column("person_c")
        batch.drop_column("person_b")
    op.drop_table("audit_head")
    with op.batch_alter_table("audit_event") as batch:
        for col in ("run_id", "action", "actor", "created_at"):
            batch.drop_index(batch.f(f"ix_audit_event_{col}"))
    op.drop_table("audit_event")
    with op.batch_alter_table("escape") as batch:
        batch.drop_index(batch.f("ix_escape_run_id"))
    op.drop_table("escape")
    op.drop_table("person")
