"""Shared pytest fixtures."""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
import tenacity
from sqlalchemy import create_engine, make_url
from streamlit import config as st_config

import santa_core.run  # noqa: F401 - (the reviewers' modules import the run's, which import them back)
from santa_core.reviewers import message_batches, retries
from storage.db import is_sqlite, make_engine, normalise_url
from storage.runs import RunStore
from storage.startup import init_db
from tests.support import pg_pool
from tests.support.chat_api import ChatStub
from tests.support.messages_api import MessagesStub, santa_scenario
from tests.support.one_door import one_door
from tests.support.schedule import longest_first


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """One worker more than the cores (at most 4): a good part of the suite waits on subprocesses, servers and
    browsers, and an extra worker fills a core meanwhile (2 cores: about 8 % less time than 2 workers)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):  # xdist's own override, honoured as xdist would
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    return min(4, len(os.sched_getaffinity(0)) + 1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, each worker's share of the tests opens with its long ones (tests/support/schedule.py)."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    order = longest_first([item.nodeid for item in items], workers)
    items[:] = [items[i] for i in order]


@pytest.fixture(autouse=True)
def no_retry_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries of model requests wait nothing in tests (a retry-after the stub sends is still honoured)."""
    monkeypatch.setattr(retries, "BACKOFF", tenacity.wait_none())
    monkeypatch.setattr(message_batches, "CREATE_BACKOFF", 0.0)


@pytest.fixture
def messages_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[MessagesStub]:
    """A running loopback Messages API; ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY point at it."""
    stub = MessagesStub().start()
    # Env too, so code that builds its own client (CLI, app, runner) hits the stub, never the API.
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    yield stub
    stub.stop()


@pytest.fixture
def chat_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatStub]:
    """A running loopback Chat Completions API; OPENAI_BASE_URL/OPENAI_API_KEY point at it (provider `openai`)."""
    stub = ChatStub().start()
    monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai")
    yield stub
    stub.stop()


def pytest_configure(config: pytest.Config) -> None:
    """AppTest keeps an unpicklable dict in session state; the committed config forbids those."""
    st_config.set_option("runner.enforceSerializableSessionState", False)
    # The address the committed config serves (this machine only), wherever pytest starts: unset means every
    # interface, where the app refuses a desk without sign-in (ui/access.py; tests of other addresses set theirs).
    st_config.set_option("server.address", "localhost")
    # The command-line and server tests start many Python processes. Each would compile this
    # project's modules again when bytecode writing is off (PYTHONDONTWRITEBYTECODE, common in
    # containers): they write it next to the sources as this process does (tests/__init__.py). No
    # PYTHONPYCACHEPREFIX: under one, Python reads no bytecode from the installed packages' own __pycache__
    # and compiles streamlit, anthropic, openai... anew (about 6 s of CPU a process until the cache is warm, and
    # a fresh CI virtualenv's path never is; 14 interpreters start at once in tests/cli/test_entrypoints.py).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    # Model providers come from the environment: a developer's own OpenAI key or named endpoints would change
    # the default panel under the tests. Tests that want a second provider set it up themselves.
    for key in [k for k in os.environ if k.startswith(("OPENAI_", "SANTA_PROVIDER_")) or k == "SANTA_OPENAI_MODELS"]:
        os.environ.pop(key)


_real_connect = socket.socket.connect
_LOOPBACK = ("127.", "::1", "localhost", "0:0:0:0:0:0:0:1")


def _loopback_only(sock: socket.socket, address: object) -> object:
    """Refuse any connection that is not to this machine: no test may reach the network."""
    host = address[0] if isinstance(address, tuple) else str(address)
    if sock.family == socket.AF_UNIX or str(host).startswith(_LOOPBACK):
        return _real_connect(sock, address)
    raise OSError(f"test tried to reach the network: {address!r}")


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs with outbound connections limited to loopback."""
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)


@pytest.fixture(autouse=True)
def fresh_cache_ledger() -> None:
    """Every test starts as a fresh process: no prompt prefix sent yet, so no cache breakpoint is planned from an
    earlier test's requests (santa_core.reviewers.caching)."""
    from santa_core.reviewers.caching import LEDGER

    LEDGER.clear()


@pytest.fixture(autouse=True)
def pages_write_through_actions() -> Iterator[None]:
    """Every test fails when a page or ui/ module wrote through a concrete store (not the core's actions)."""
    with one_door() as page_writes:
        yield
    assert page_writes == [], "pages must write through santa_core's actions"


# --- databases: every storage test runs on SQLite and, when configured, on PostgreSQL --------

PG_URL = os.environ.get("SANTA_TEST_POSTGRES_URL", "")
"""A PostgreSQL server for storage tests (scripts/pg_test_server.sh); empty: SQLite only."""


def _pg_database(base: str, template: str | None = None) -> Iterator[str]:
    """A fresh PostgreSQL database for one test (empty, or a copy of `template`), dropped afterwards. A copy is taken
    from this process's pool of used copies put back as the template is (`tests/support/pg_pool.py`) when one is
    there: PostgreSQL takes 0.4-0.8 s to copy a migrated template, the test waiting all along."""
    admin = create_engine(normalise_url(base), isolation_level="AUTOCOMMIT")
    name = pg_pool.take(template) if template else None
    if name is None:
        name = pg_pool.new_name()
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    try:
        url = make_url(normalise_url(base)).set(database=name)
        yield url.render_as_string(hide_password=False)
    finally:
        if not (template and pg_pool.put_back(admin, base, name, template)):
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture(scope="session")
def pg_template() -> Iterator[str]:
    """A PostgreSQL database as `init_db` leaves a new one (migrated, built-in rubrics seeded), made once per test
    process: each test's database is a copy (CREATE DATABASE … TEMPLATE), not migrated again (about 0.3 s a test)."""
    database = _pg_database(PG_URL)
    url = next(database)
    engine = init_db(url, mark_interrupted=False)
    engine.dispose()  # a template takes no connection while it is copied
    yield make_url(url).database
    pg_pool.drop_all(PG_URL)
    database.close()


_SQLITE_TEMPLATES: dict[bool, Path] = {}
"""This process's template files: False as `init_db` leaves a new database, True with `TEST_PEOPLE` granted too."""


def _sqlite_template(granted: bool) -> Path:
    """The template file (made on first use): migrated and seeded by `init_db`, and for `granted` a copy of that
    with `grant()` of the test people done through the stores (their rows, audit events and seals as grant makes
    them). Its write-ahead log folded into the file, so that a plain copy of the file is the whole database."""
    import sqlite3

    if granted not in _SQLITE_TEMPLATES:
        folder = tempfile.mkdtemp(prefix="santa-template-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        template = Path(folder) / "santa.db"
        url = f"sqlite:///{template}"
        if granted:
            _copy_sqlite(_sqlite_template(False), template)
            engine = make_engine(url)
            grant(RunStore(engine))
        else:
            engine = init_db(url, mark_interrupted=False)
        engine.dispose()
        conn = sqlite3.connect(template)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()  # the last connection closes: SQLite deletes the (empty) log
        _SQLITE_TEMPLATES[granted] = template
    return _SQLITE_TEMPLATES[granted]


def _copy_sqlite(source: Path, target: Path) -> None:
    """`target` a copy of the database at `source`: a copy of the file (0.3 ms of CPU, no fsync) when no
    write-ahead log is next to it, else through SQLite's backup API (2 ms of CPU and about 25 ms waiting on fsync),
    which copies what a log still holds too."""
    import sqlite3

    if not Path(f"{source}-wal").exists():
        shutil.copyfile(source, target)
        return
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def migrated_sqlite(path: Path, granted: bool = False) -> str:
    """A SQLite database at `path` as `init_db` leaves a new one (`granted`: and `grant()` of `TEST_PEOPLE` after
    it), copied from one made once per test process (migrating and seeding a new file takes 0.16 s, granting the
    test people 35 ms, in over a thousand tests); its URL."""
    _copy_sqlite(_sqlite_template(granted), path)
    return f"sqlite:///{path}"


DB_KINDS = [
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.skipif(not PG_URL, reason="SANTA_TEST_POSTGRES_URL not set")),
]


def new_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """`db_url`'s database of the kind `request.param` names (a module that overrides `db_url` starts here)."""
    if request.param == "sqlite":
        yield migrated_sqlite(tmp_path / "santa.db")
    else:
        yield from _pg_database(PG_URL, request.getfixturevalue("pg_template"))


@pytest.fixture(params=DB_KINDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL of a new database as `init_db` leaves it (SQLite temp file, or a fresh Postgres database), copied from
    a template made once per test process."""
    yield from new_database(request, tmp_path)


@pytest.fixture(params=DB_KINDS)
def empty_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL of an empty database (no tables: what migrations start from)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'santa.db'}"
    else:
        yield from _pg_database(PG_URL)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A clean environment for the command line: a temporary database, no saved settings, no API key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SANTA_", "ANTHROPIC_", "OPENAI_"))}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'santa.db'}", PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    return env


TEST_PEOPLE: dict[str, tuple[str, ...]] = {
    "ann": ("admin",),
    "bob": ("admin",),
    "lee": ("admin",),
    "editor@example.com": ("editor",),
    "officer@example.com": ("compliance_officer",),
    "author@example.com": ("rubric_author",),
    "viewer@example.com": ("viewer",),
    "admin@example.com": ("admin",),
}
"""People the tests act as: the short names may do everything, the e-mails have one role each."""


def grant(repo: RunStore, people: dict[str, tuple[str, ...]] | None = None) -> RunStore:
    """Give test actors their roles (storage refuses actions by people without the right role)."""
    for person, roles in (people or TEST_PEOPLE).items():
        repo.people.set_roles(person, roles, actor="local")
    return repo


def granted_store(db_url: str, mark_interrupted: bool = True) -> RunStore:
    """`grant(RunStore(init_db(db_url, mark_interrupted)))` for the new database `db_url` (the fixture's, not opened
    yet). On SQLite the file is replaced by a copy of the template whose test people have their roles already (the
    same rows, audit events and seals, made once per process: eight write transactions less a test); opening a new
    database marks no run interrupted (it has none), so that the order of the two does not matter."""
    if granted_by_copy(db_url):
        return RunStore(init_db(db_url, mark_interrupted=mark_interrupted))
    return grant(RunStore(init_db(db_url, mark_interrupted=mark_interrupted)))


def granted_by_copy(db_url: str) -> bool:
    """Whether `db_url` was a SQLite file still byte for byte the new database `migrated_sqlite` copies (nothing has
    opened it), now replaced by a copy of the template with `TEST_PEOPLE` granted. False: nothing done (PostgreSQL,
    or a database a fixture had filled, such as a copy of a run): the caller grants as before."""
    import filecmp

    path = Path(make_url(db_url).database or "") if is_sqlite(db_url) else None
    if path is None or not path.is_file() or not filecmp.cmp(path, _sqlite_template(False), shallow=False):
        return False
    if Path(f"{path}-wal").exists():
        return False
    migrated_sqlite(path, granted=True)
    return True


@pytest.fixture
def desk_env(tmp_path: Path, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunStore]:
    """A fresh database and a stand-in model for each test; no cached desk leaks between tests."""
    url = migrated_sqlite(tmp_path / "santa.db", granted=True)  # TEST_PEOPLE granted in the template
    monkeypatch.setenv("DATABASE_URL", url)
    messages_stub.handler = santa_scenario
    st.cache_resource.clear()
    yield RunStore(init_db(url, mark_interrupted=False))
    stop_opened_desks()
    st.cache_resource.clear()


def stop_opened_desks() -> None:
    """The desks the pages opened take no more work: no sweep of their test's database for runs left behind
    (`desk.wiring.sweep`) and no further step or request of a run still in flight, which would otherwise reach the
    next test's model server (its address is read from the environment at each call)."""
    from ui import app_desk

    for opened in app_desk._opened:
        if opened.sweeping is not None:
            opened.sweeping.set()
        opened.runner.stop()
