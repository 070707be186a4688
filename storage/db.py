"""The database engine: URL, SQLite pragmas, migrations and a process-wide engine cache.

Opening the desk's database (migrate, seed, backfill, mark orphaned runs) is `storage.startup`.

SQLite is the default (a file under data/). `DATABASE_URL` switches to PostgreSQL via psycopg 3.
The cache is a plain dict so that this module never imports streamlit; the app wraps
`storage.startup.init_db` in `st.cache_resource` itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event, make_url, text
from sqlalchemy.pool import StaticPool

REPO_ROOT = Path(__file__).resolve().parent.parent
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
BUSY_TIMEOUT_MS = 30_000
READ_ONLY = "santa_read_only"
"""Execution option marking an engine whose transactions only read (see `reader`)."""
_MIGRATE_LOCK_KEY = 7_245_001
"""Postgres advisory lock id that serialises concurrent `migrate` calls."""

_ENGINES: dict[str, Engine] = {}
_ON_DISPOSE: list[Callable[[], None]] = []
"""Callbacks that forget per-engine state when the engines are disposed (see `on_dispose`)."""
_LOCK = threading.Lock()


def normalise_url(url: str) -> str:
    """Map Heroku-style and driverless Postgres URLs onto psycopg 3."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url.removeprefix(prefix)
    return url


def default_url() -> str:
    """`sqlite:///<repo>/data/santa.db`, creating the data folder."""
    data = REPO_ROOT / "data"
    data.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{data / 'santa.db'}"


def database_url() -> str:
    """The configured database URL (env `DATABASE_URL`, else the SQLite default)."""
    return normalise_url(os.environ.get("DATABASE_URL", "").strip() or default_url())


def redacted_url(url: str) -> str:
    """The URL with any password masked, for display."""
    return make_url(url).render_as_string(hide_password=True)


def cannot_open(url: str, exc: BaseException) -> str:
    """One line for a database that would not open: its URL (password masked) and the error's first line."""
    text = str(exc).strip()
    return f"cannot open the database {redacted_url(url)}: {text.splitlines()[0] if text else type(exc).__name__}"


def is_sqlite(url: str) -> bool:
    """True for any sqlite:// URL."""
    return make_url(url).get_backend_name() == "sqlite"


def _sqlite_on_connect(dbapi_conn: Any, _record: Any) -> None:
    """Pragmas on every new connection; autocommit so that `_sqlite_on_begin` owns BEGIN."""
    # Python 3.11's sqlite3 has no `.autocommit`; isolation_level=None stops the driver from
    # issuing its own deferred BEGIN (which loses updates under concurrent writers).
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    for pragma in ("journal_mode=WAL", f"busy_timeout={BUSY_TIMEOUT_MS}", "foreign_keys=ON", "synchronous=NORMAL"):
        cur.execute(f"PRAGMA {pragma}")
    cur.close()


def _sqlite_on_begin(conn: Connection) -> None:
    """Writers take the write lock up front; readers get a deferred (snapshot) transaction."""
    # A deferred transaction that reads and then writes cannot wait for the lock: SQLite
    # answers "database is locked" at once. BEGIN IMMEDIATE waits up to busy_timeout instead.
    read_only = conn.get_execution_options().get(READ_ONLY, False)
    conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


CONNECT_TIMEOUT_S = 10
"""Seconds a PostgreSQL connection may take to open."""
IDLE_IN_TRANSACTION_S = 60.0
"""Seconds a PostgreSQL session may sit idle inside a transaction before the server ends it (SANTA_DB_IDLE_TX_S).

Why: a process paused mid-transaction (SIGSTOP, a frozen VM, a debugger) keeps its row locks while its connection
stays open, so the worker taking its runs over would wait on them for as long as it is paused. No transaction of the
desk waits on anything but the database (a model call is never made inside one), so a minute idle is a stuck one."""


def idle_in_transaction_s() -> float:
    """SANTA_DB_IDLE_TX_S (1 to 3,600 s), default IDLE_IN_TRANSACTION_S; a value that is not a number is ignored."""
    try:
        value = float(os.environ.get("SANTA_DB_IDLE_TX_S", IDLE_IN_TRANSACTION_S))
    except ValueError:
        return IDLE_IN_TRANSACTION_S
    return min(3600.0, max(1.0, value)) if value == value else IDLE_IN_TRANSACTION_S


def _sqlite_engine(url: str) -> Engine:
    """SQLite engine with the pragmas and the BEGIN IMMEDIATE hook."""
    database = make_url(url).database or ""
    memory = database in ("", ":memory:") or database.startswith("file:")
    if not memory:
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
        poolclass=StaticPool if memory else None,
    )
    event.listen(engine, "connect", _sqlite_on_connect)
    event.listen(engine, "begin", _sqlite_on_begin)
    return engine


def make_engine(url: str) -> Engine:
    """A new engine for `url` (SQLite: pragmas + BEGIN IMMEDIATE; Postgres: pool_pre_ping)."""
    url = normalise_url(url)
    if is_sqlite(url):
        return _sqlite_engine(url)
    # A database that takes the connection and never answers fails in CONNECT_TIMEOUT_S, not libpq's two minutes
    # (a page waiting on the open says why sooner); a connect_timeout in the URL wins.
    query = make_url(url).query
    args: dict[str, Any] = {} if "connect_timeout" in query else {"connect_timeout": CONNECT_TIMEOUT_S}
    given = query.get("options", "")  # the URL's own options (a search_path, say) are kept, ours added after them
    given = " ".join(given) if isinstance(given, tuple) else given
    args["options"] = f"{given} -c idle_in_transaction_session_timeout={int(idle_in_transaction_s() * 1000)}".strip()
    return create_engine(url, pool_pre_ping=True, connect_args=args)


def reader(engine: Engine) -> Engine:
    """The same pool, for read-only work: a consistent snapshot without taking the write lock."""
    if engine.dialect.name == "sqlite":
        return engine.execution_options(**{READ_ONLY: True})
    return engine.execution_options(isolation_level="REPEATABLE READ", **{READ_ONLY: True})


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic configured in code (no alembic.ini): script_location is storage/migrations."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    cfg.attributes["connection"] = connection
    return cfg


@cache
def _heads() -> frozenset[str]:
    """The newest revisions of the migrations shipped with this code (read once per process)."""
    return frozenset(ScriptDirectory.from_config(alembic_config()).get_heads())


def migrate(engine: Engine) -> None:
    """Upgrade the database to the newest migration, in one transaction. A database already there is left as it
    is without loading the migration scripts (what alembic's upgrade would then do: nothing, in 7 ms of CPU)."""
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATE_LOCK_KEY})
        if frozenset(MigrationContext.configure(conn).get_current_heads()) == _heads():
            return
        command.upgrade(alembic_config(conn), "head")


def engine_key(url: str | None) -> str:
    """Cache key: the normalised URL, or the configured one."""
    return normalise_url(url) if url else database_url()


def get_engine(url: str | None = None) -> Engine:
    """The process-wide engine for `url` (default: `database_url()`), created once."""
    key = engine_key(url)
    with _LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = make_engine(key)
        return _ENGINES[key]


def on_dispose(forget: Callable[[], None]) -> None:
    """Call `forget` whenever `dispose_engines` runs (state kept per engine elsewhere, e.g. start-up)."""
    _ON_DISPOSE.append(forget)


def dispose_engines() -> None:
    """Close and forget every cached engine (tests, shutdown)."""
    with _LOCK:
        for engine in _ENGINES.values():
            engine.dispose()
        _ENGINES.clear()
        for forget in _ON_DISPOSE:
            forget()
