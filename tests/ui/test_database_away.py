"""A page while the database does not answer (a restart, a failover, an outage): it says so in words, that nothing is
lost and to reload, instead of a traceback; and it does not wait for the database (the runs' own wait is the
workers', `desk.outage`). A statement that is wrong is still an error: only a database away is taken for one."""

from __future__ import annotations

import psycopg
import pytest
import sqlalchemy.exc
from streamlit.testing.v1 import AppTest

from storage.runs import RunStore


def refused(*_args: object, **_kwargs: object) -> None:
    cause = psycopg.OperationalError('connection to server at "127.0.0.1", port 5432 failed: Connection refused')
    raise sqlalchemy.exc.OperationalError("SELECT …", {}, cause)


def first_run() -> AppTest:
    """The app's first run (any later read is refused the same way)."""
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.run()
    return at


def test_a_page_says_the_database_does_not_answer_in_words(desk_env: RunStore, monkeypatch) -> None:
    monkeypatch.setattr(RunStore, "list_escalations", refused)  # the sidebar's first read on every page
    at = first_run()
    assert not at.exception
    text = " ".join(e.value for e in at.error)
    assert "The database does not answer right now" in text and "Nothing is lost" in text
    assert "Connection refused" in text  # what failed, in one line


def test_any_other_database_error_is_still_shown_as_an_error(desk_env: RunStore, monkeypatch) -> None:
    def wrong(*_args: object, **_kwargs: object) -> None:
        raise sqlalchemy.exc.ProgrammingError("SELECT …", {}, psycopg.errors.UndefinedColumn("no such column"))

    monkeypatch.setattr(RunStore, "list_escalations", wrong)
    at = first_run()
    assert at.exception  # not taken for an outage
    assert not any("does not answer" in e.value for e in at.error)


@pytest.mark.parametrize(
    "state, away",
    [("08006", True), ("57P01", True), ("57P03", True), ("57014", False), ("40P01", False), ("23505", False)],
)
def test_which_database_errors_mean_it_is_away(state: str, away: bool) -> None:
    """SQLSTATE classes 08 (connection) and 57P (shutdown, starting up) are an outage; a cancelled statement, a
    deadlock or a unique violation is not."""
    from desk.outage import database_away

    exc = psycopg.errors.lookup(state)("x")
    assert database_away(sqlalchemy.exc.OperationalError("SELECT", {}, exc)) is away
    assert database_away(psycopg.OperationalError("connection refused")) is True  # no SQLSTATE: the client's own
