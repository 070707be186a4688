"""Row seals: the rows that exist at upgrade are sealed in the audit chain, so `audit verify` can tell a
row changed later outside the desk from one written before seals existed (`storage.seals`).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 20:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """One `rows.sealed` event for every existing row of the first six sealed tables (none on a new database)."""
    from storage.seals import FIRST_SEALED, seal_at_upgrade, seals_at_upgrade

    conn = op.get_bind()
    seal_at_upgrade(conn, seals_at_upgrade(conn, new=FIRST_SEALED))


def downgrade() -> None:
    """Nothing to undo: the seal event stays in the append-only chain."""
