"""The call log's average review call per rubric and model (`RunStore.review_call_averages`), read for the
Review and Batch pages' cost estimate: review calls only, of the rubric's runs, within the window, calls that
reported no usage left out, and the two spellings of a Claude model counted as one. SQLite and (when
configured) PostgreSQL.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import Session, select

from santa_core.models import LLMCall, ReviewOutcome, ReviewStatus, Usage
from santa_core.reports.round_cost import MeasuredCost
from santa_core.rubrics.library import load_builtin
from storage.runs import RunStore
from storage.tables import LLMCallRow
from storage.times import utcnow
from tests.conftest import granted_store

CONTENT, GENERAL = load_builtin("content"), load_builtin("general")
HAIKU = "claude-haiku-5-5"


@pytest.fixture
def repo(db_url: str) -> RunStore:
    return granted_store(db_url)


def call(model: str, inp: int, out: int, read: int = 0, purpose: str = "review") -> LLMCall:
    return LLMCall(
        purpose=purpose,
        model=model,
        request={"model": model},
        usage=Usage(input_tokens=inp, output_tokens=out, cache_read_input_tokens=read),
    )


def reviewed(repo: RunStore, rubric, slot: str, *calls: LLMCall) -> int:  # noqa: ANN001
    run_id = repo.create_run(
        spec="Announce the launch.",
        output="Launched in 2018.",
        rubric=rubric,
        reviewer_b=HAIKU,
        reviewer_c="openai:gpt-5.4-nano",
        fixer=HAIKU,
    )
    repo.save_review(
        run_id,
        1,
        ReviewOutcome(
            slot=slot, reviewer=calls[0].model, status=ReviewStatus.ERROR, error="cut off", calls=list(calls)
        ),
    )
    return run_id


def test_averages_per_model_of_the_rubrics_review_calls(repo: RunStore) -> None:
    since = utcnow() - timedelta(days=30)
    assert repo.review_call_averages("content", since) == {}
    reviewed(repo, CONTENT, "B", call(HAIKU, 1000, 100, read=500), call(f"anthropic:{HAIKU}", 2000, 300))
    reviewed(repo, CONTENT, "C", call("openai:gpt-5.4-nano", 800, 60))
    reviewed(repo, CONTENT, "B", call(HAIKU, 0, 0))  # failed before any answer: no usage, not counted
    reviewed(repo, GENERAL, "B", call(HAIKU, 9000, 900))  # another rubric
    screen = reviewed(repo, CONTENT, "C", call(HAIKU, 50, 5))
    with Session(repo.engine) as s:  # a screen call and a fix call of a content run are not review calls
        for purpose in ("screen", "fix"):
            s.add(
                LLMCallRow(
                    run_id=screen,
                    round_no=1,
                    purpose=purpose,
                    model=HAIKU,
                    request_json={},
                    content_hash="x",
                    input_tokens=70_000,
                    output_tokens=7,
                )
            )
        s.commit()
    averages = repo.review_call_averages("content", since)
    assert averages == {
        HAIKU: MeasuredCost(
            calls=3,
            input_tokens=pytest.approx((1000 + 2000 + 50) / 3),
            output_tokens=pytest.approx(405 / 3),
            cache_creation_input_tokens=0.0,
            cache_read_input_tokens=pytest.approx(500 / 3),
        ),
        "openai:gpt-5.4-nano": MeasuredCost(calls=1, input_tokens=800.0, output_tokens=60.0),
    }
    assert repo.review_call_averages("general", since)[HAIKU].calls == 1


def test_only_calls_within_the_window_count(repo: RunStore) -> None:
    old = reviewed(repo, CONTENT, "B", call(HAIKU, 5000, 500))
    reviewed(repo, CONTENT, "B", call(HAIKU, 1000, 100))
    with Session(repo.engine) as s:
        row = s.exec(select(LLMCallRow).where(LLMCallRow.run_id == old)).one()
        row.created_at = utcnow() - timedelta(days=31)
        s.add(row)
        s.commit()
    recent = repo.review_call_averages("content", utcnow() - timedelta(days=30))
    assert recent[HAIKU].calls == 1 and recent[HAIKU].input_tokens == pytest.approx(1000)
    assert repo.review_call_averages("content", utcnow() - timedelta(days=40))[HAIKU].calls == 2
