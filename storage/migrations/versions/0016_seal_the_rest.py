"""Seal what the record and the export rely on: `audit verify` covers the call log and its costs, a run's
merged issues, screens, state changes and escapes, batches (items, changes, patterns, samples), rubric
versions and trials, people's roles and the settings (`storage.seals.SEALED`).

The rows that exist at upgrade are sealed, so old data is not reported as written outside the desk. Seals
now leave NULL columns out of a row's hash (a nullable column added later keeps old seals valid): the rows of
the first six sealed tables are sealed again under that rule, each only if it still matches its seal under
the old rule, so a row changed outside the desk before the upgrade is still named by verify.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05 09:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """One `rows.sealed` event: every row of the newly sealed tables, and the first six's rows re-hashed."""
    from storage.seals import FIRST_SEALED, SEALED, full_row_hash, seal_at_upgrade, seals_at_upgrade

    conn = op.get_bind()
    newly = [kind for kind in SEALED if kind not in FIRST_SEALED]
    seal_at_upgrade(conn, seals_at_upgrade(conn, new=newly, rehash=FIRST_SEALED, earlier=full_row_hash))


def downgrade() -> None:
    """Nothing to undo: the seal event stays in the append-only chain. An older desk's verify checks only the
    first six tables, hashing NULL columns too: their rows with a NULL column show as differing there."""
