"""Row seals: the rows that exist at upgrade are sealed in the audit chain, so `audit verify` can tell a
row changed later outside the desk from one written before seals existed (`storage.seals`).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 20:00:00
"""

from collections.abc import Sequence

from alembic import op
from sqlmodel import Session

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """One `rows.sealed` event for every existing sealed row (none on a new database)."""
    from storage.chain import append
    from storage.seals import SEAL_ACTION, seal_all

    conn = op.get_bind()
    seals = seal_all(conn)
    if seals:
        with Session(bind=conn) as s:
            append(s, "system", SEAL_ACTION, "rows", f"{len(seals)} rows sealed at upgrade",
                         detail={"rows": seals})


def downgrade() -> None:
    """Nothing to undo: the seal event stays in the append-only chain."""
