"""Used PostgreSQL test databases put back as their template left them, for the next test of this process.

PostgreSQL takes 0.4-0.8 s of wall time (its own CPU and a checkpoint) to copy a migrated template (CREATE DATABASE
... TEMPLATE), and a storage test on PostgreSQL waited that long for each copy. A copy a test has used is put back
instead: every connection to it ended, every table emptied (DELETE) and refilled with the template's rows, every sequence
set where the template's stands, then renamed to a name no test has seen (so no engine, migration mark or other
state a process keeps per URL carries over). A copy whose schema is not the template's any more (a test that
migrated down, added or dropped a table, column, index, constraint or function) is dropped instead, as is one that
cannot be put back in full: a test never starts from anything but the template's state.
"""

from __future__ import annotations

import atexit
import time
import uuid
from dataclasses import dataclass, field

import psycopg
from sqlalchemy import Connection, Engine, make_url

FINGERPRINT = """
SELECT md5(coalesce(string_agg(item, E'\\n' ORDER BY item), '')) FROM (
    SELECT 'rel ' || c.relname || ' ' || c.relkind::text || ' ' || coalesce(c.relacl::text, '') AS item
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog',
    'information_schema', 'pg_toast') AND n.nspname NOT LIKE 'pg_temp%' AND n.nspname NOT LIKE 'pg_toast_temp%'
    UNION ALL SELECT 'col ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' '
        || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL SELECT 'con ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace
    UNION ALL SELECT 'idx ' || indexrelid::regclass::text || ' ' || pg_get_indexdef(indexrelid) FROM pg_index
    WHERE indrelid::regclass::text NOT LIKE 'pg_%'
    UNION ALL SELECT 'trg ' || tgname || ' ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL SELECT 'fn ' || p.oid::regprocedure::text || ' ' || md5(p.prosrc) FROM pg_proc p
    WHERE p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
    UNION ALL SELECT 'ns ' || nspname FROM pg_namespace
    UNION ALL SELECT 'ext ' || extname || ' ' || extversion FROM pg_extension
    UNION ALL SELECT 'type ' || typname FROM pg_type WHERE typnamespace = 'public'::regnamespace
    UNION ALL SELECT 'set ' || array_to_string(setconfig, ',') FROM pg_db_role_setting
        WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
) AS items
"""
"""One hash of a database's schema: relations, columns, constraints, indexes, triggers, functions, schemas,
extensions, types and the database's own settings."""


@dataclass
class Snapshot:
    """A template as a test starts from it: its schema's hash, each table's rows, each sequence's place."""

    fingerprint: str
    tables: list[str]
    rows: dict[str, bytes]
    sequences: dict[str, tuple[int, bool]]
    free: list[str] = field(default_factory=list)
    """Copies put back, ready for the next test (this process only)."""


_SNAPSHOTS: dict[str, Snapshot] = {}
_BASE: list[str] = []


def new_name() -> str:
    """A database name no test has used."""
    return f"santa_test_{uuid.uuid4().hex[:12]}"


def _connect(base: str, database: str) -> psycopg.Connection:
    url = make_url(base).set(drivername="postgresql", database=database)
    return psycopg.connect(url.render_as_string(hide_password=False))


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _snapshot(base: str, template: str) -> Snapshot:
    """The template's schema hash, rows and sequences (read once; no test writes to a template)."""
    with _connect(base, template) as conn:
        fingerprint = conn.execute(FINGERPRINT).fetchone()[0]
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        rows: dict[str, bytes] = {}
        for table in tables:
            with conn.cursor().copy(f"COPY public.{_quoted(table)} TO STDOUT") as copy:
                data = b"".join(bytes(chunk) for chunk in copy)
            if data:
                rows[table] = data
        sequences = {}
        for (name,) in conn.execute("SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'").fetchall():
            last, called = conn.execute(f"SELECT last_value, is_called FROM public.{_quoted(name)}").fetchone()
            sequences[name] = (int(last), bool(called))
    return Snapshot(fingerprint, tables, rows, sequences)


def _until_left(conn: Connection, name: str) -> None:
    """Wait (up to 2 s) until no session is on `name`: a closed or ended session leaves a moment after, and a
    RENAME that finds one still there sleeps 100 ms before it looks again."""
    for _ in range(400):
        sessions = conn.exec_driver_sql("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (name,))
        if not sessions.scalar():
            return
        time.sleep(0.005)


def take(template: str) -> str | None:
    """A put-back copy of `template` (None: none is free, make one)."""
    snapshot = _SNAPSHOTS.get(template)
    return snapshot.free.pop() if snapshot and snapshot.free else None


def put_back(admin: Engine, base: str, name: str, template: str) -> bool:
    """Put the used copy `name` back as `template` is, under a new name, for the next test; False when it is still
    there under `name` for the caller to drop (a copy renamed but not put back in full is dropped here)."""
    try:
        if template not in _SNAPSHOTS:
            _SNAPSHOTS[template] = _snapshot(base, template)
            if not _BASE:
                _BASE.append(base)
                atexit.register(drop_all, base)
        snapshot = _SNAPSHOTS[template]
        fresh = new_name()
        # The test's own sessions (pools, threads it left behind) end first, then the copy takes a name no one
        # knows before it is put back: nothing the test left running can reach it any more.
        with admin.connect() as conn:
            conn.exec_driver_sql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )
            _until_left(conn, name)
            conn.exec_driver_sql(f"ALTER DATABASE {_quoted(name)} RENAME TO {_quoted(fresh)}")
    except Exception:  # noqa: BLE001 - anything amiss: the copy is dropped (by the caller), as before the pool
        return False
    try:
        with _connect(base, fresh) as conn:
            if conn.execute(FINGERPRINT).fetchone()[0] != snapshot.fingerprint:
                raise LookupError("the test changed the schema")
            conn.execute("SET session_replication_role = replica")  # the rows are the template's: no key checks
            for table in snapshot.tables:  # DELETE: TRUNCATE makes each table's files anew (0.3 s), this 8 ms
                conn.execute(f"DELETE FROM public.{_quoted(table)}")
            for table, data in snapshot.rows.items():
                with conn.cursor().copy(f"COPY public.{_quoted(table)} FROM STDIN") as copy:
                    copy.write(data)
            for sequence, (last, called) in snapshot.sequences.items():
                conn.execute("SELECT setval(%s, %s, %s)", (f"public.{_quoted(sequence)}", last, called))
    except Exception:  # noqa: BLE001 - not put back in full: dropped here (the caller knows its old name only)
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {_quoted(fresh)} WITH (FORCE)")
        return True  # nothing left for the caller to drop
    snapshot.free.append(fresh)
    return True


def drop_all(base: str) -> None:
    """Drop every free copy (at the end of the test process)."""
    from sqlalchemy import create_engine

    from storage.db import normalise_url

    free = [name for snapshot in _SNAPSHOTS.values() for name in snapshot.free]
    for snapshot in _SNAPSHOTS.values():
        snapshot.free.clear()
    if not free:
        return
    admin = create_engine(normalise_url(base), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            for name in free:
                conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {_quoted(name)} WITH (FORCE)")
    finally:
        admin.dispose()
