"""The outage harness (tests/support/outage.py, bench/db_outage.py) measures what it says: two tries of one call
are one call, two slots with different models are two calls, an answer counts as bought twice only when it came
during the outage and its call was asked again after it, and a halted cluster comes back with its data."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from santa_core.models import Rubric
from santa_core.reviewers.anthropic import review_body, screen_body
from santa_core.reviewers.base import ReviewRequest
from santa_core.rubrics.library import load_builtin
from storage.db import normalise_url
from tests.conftest import PG_URL
from tests.support.outage import REVIEW, SCREEN, Call, OwnCluster, bought_twice, call_key, purpose_of, repeated

SPEC = "Announce the Acme rocket."


def request(output: str, rubric: Rubric | None = None) -> ReviewRequest:
    return ReviewRequest(rubric=rubric or load_builtin("general"), spec=SPEC, output=output)


def test_two_tries_of_one_review_are_one_call_and_two_models_are_two() -> None:
    first, second = (
        review_body("claude-haiku-4-5", request("Out #1")),
        review_body("claude-haiku-4-5", request("Out #1")),
    )
    assert first != second  # a fresh fence nonce each time: the bytes differ
    assert call_key(first) == call_key(second)
    assert call_key(first) != call_key(review_body("claude-sonnet-4-5", request("Out #1")))  # slot C's model
    assert call_key(first) != call_key(review_body("claude-haiku-4-5", request("Out #2")))  # another run
    assert purpose_of(first) == REVIEW


def test_two_tries_of_one_screen_are_one_call() -> None:
    first, second = (
        screen_body("m", "spec\n\nout", "FAIL-AAAAAAAAAA"),
        screen_body("m", "spec\n\nout", "FAIL-BBBBBBBBBB"),
    )
    assert call_key(first) == call_key(second)
    assert call_key(first) != call_key(screen_body("m", "spec\n\nother", "FAIL-AAAAAAAAAA"))
    assert purpose_of(first) == SCREEN


def call(key: str, arrived: float, answered: float, status: int = 200) -> Call:
    return Call(REVIEW, "m", key, arrived, answered, status, "")


def test_bought_twice_counts_answers_of_the_outage_asked_again_after_them() -> None:
    calls = [
        call("lost", 9, 12),
        call("lost", 75, 78),  # answered in the outage (10-70), asked again: bought twice
        call("kept", 9, 12),  # answered in the outage, never asked again
        call("before", 5, 8),
        call("before", 80, 83),  # answered before the outage
        call("failed", 9, 12, status=529),
        call("failed", 75, 78),  # a 529 is not paid
        call("after", 68, 72),
        call("after", 80, 83),
    ]  # answered after the return
    assert [(c.key, c.arrived) for c in bought_twice(calls, 10, 70)] == [("lost", 9)]
    assert repeated(calls) == {"lost": 2, "before": 2, "failed": 2, "after": 2}


def test_identical_twin_slots_are_paired_by_occurrence() -> None:
    twins = [call("same", 9, 12), call("same", 9.1, 13)]  # slots B and C, one model: one key
    assert len(bought_twice([*twins, call("same", 75, 78)], 10, 70)) == 1  # one slot asked again, not both
    assert len(bought_twice([*twins, call("same", 75, 78), call("same", 75.1, 79)], 10, 70)) == 2
    assert bought_twice(twins, 10, 70) == []  # the twin's own first request is no repeat


@pytest.mark.skipif(not PG_URL, reason="SANTA_TEST_POSTGRES_URL not set (no PostgreSQL here)")
def test_a_halted_cluster_refuses_connections_and_resumes_with_its_data_on_its_url() -> None:
    with OwnCluster() as cluster:
        url = normalise_url(cluster.url)
        with create_engine(url).begin() as conn:
            conn.execute(text("CREATE TABLE kept (x int); INSERT INTO kept VALUES (33)"))
        cluster.halt()
        with pytest.raises(OperationalError):
            create_engine(url).connect()
        cluster.resume()
        engine = create_engine(url)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT x FROM kept")).scalar_one() == 33
        engine.dispose()
