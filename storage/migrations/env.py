"""Alembic environment for Santa's schema (configured in code by `storage.db.alembic_config`).

`storage.db.migrate` hands in an open connection (`config.attributes["connection"]`), so the
whole upgrade runs in the caller's transaction. Without one, `DATABASE_URL` is used.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection
from sqlmodel import SQLModel

import storage.tables  # noqa: F401 - registers the tables on SQLModel.metadata
from storage.db import database_url, is_sqlite, make_engine

config = context.config
target_metadata = SQLModel.metadata


def _run(connection: Connection) -> None:
    """Migrate over `connection`; batch mode on SQLite, which has no real ALTER TABLE."""
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_offline() -> None:
    """Emit SQL instead of running it (`alembic upgrade --sql`)."""
    url = config.get_main_option("sqlalchemy.url") or database_url()
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=is_sqlite(url),
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    """Migrate over the handed-in connection, or a fresh engine for DATABASE_URL."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(database_url())
    try:
        with engine.begin() as conn:
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
