"""The Batch page's "of full verification" compares like with like: what a batch spent (reviews and fixes) against
full verification with its fixes (every item reviewed by both reviewers plus a fix call per failing item, the
failing share from the first finished sample), so doing full verification itself reads 100 %, at every step.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from santa_core import pricing
from santa_core.batch.report import BatchView, estimate
from santa_core.batch.store import Batch, BatchConfig, Item, SampleProgress
from santa_core.rubrics.library import load_builtin

B, C, FIXER = "claude-haiku-5-5", "claude-sonnet-5-5", "claude-opus-5-5"
CHARS = 400


def config(**kw: object) -> BatchConfig:
    return BatchConfig(
        name="x",
        file_format="csv",
        columns=["id", "output"],
        id_column="id",
        output_column="output",
        spec="s",
        rubric=load_builtin("general"),
        reviewer_b=B,
        reviewer_c=C,
        fixer=FIXER,
        **kw,
    )


def review_usd(chars: int) -> float:
    """One item reviewed by both reviewers, one call at a time (what full verification pays per item)."""
    rubric = len(load_builtin("general").model_dump_json())
    return sum(pricing.estimate_review_usd(m, rubric + chars) for m in (B, C))


def test_full_verification_done_reads_one_hundred_percent_with_its_fixes() -> None:
    # Sample every item (rate 1), 30 of 100 fail, each gets one fix call: that *is* full verification.
    est = estimate(config(sample_rate=1.0), [CHARS] * 100, failing_share=0.3)
    fix_call = pricing.estimate_review_usd(FIXER, CHARS)
    assert est.failing == 30 and est.fix_usd == pytest.approx(30 * fix_call)
    assert est.full_usd == pytest.approx(100 * review_usd(CHARS))
    spent = 100 * review_usd(CHARS) + 30 * fix_call
    assert est.spent_share(spent) == pytest.approx(1.0)
    # The reviews-only figure the page showed before would read above 100 % for the same work.
    assert spent / est.full_usd > 1.05


def test_before_a_sample_is_in_no_fixes_are_assumed_and_the_page_says_so() -> None:
    est = estimate(config(), [CHARS] * 100)
    assert est.failing is None and est.fix_usd == 0 and est.full_with_fixes_usd == est.full_usd
    assert "no fixes yet" in est.how()
    assert est.spent_share(est.full_usd / 4) == pytest.approx(0.25)


def sample(number: int, done: int, naughty: int) -> SampleProgress:
    now = datetime(2026, 1, number, tzinfo=UTC)
    return SampleProgress(
        id=number,
        batch_id=1,
        number=number,
        seed=number,
        size=done,
        created_at=now,
        finished_at=now,
        api_batch_id=None,
        api_status=None,
        done=done,
        nice=done - naughty,
        naughty=naughty,
        errors=0,
        cost_usd=0.0,
        seconds_done=1.0,
    )


def test_the_failing_share_is_the_first_finished_samples() -> None:
    """Later samples draw items not sampled before and follow fixes: their failure share is not the batch's."""
    items = [
        Item(
            id=i, position=i, key=str(i), output="o" * (CHARS - 1), original_output="o", spec="s", strata={}, record={}
        )
        for i in range(200)
    ]
    batch = Batch(
        id=1,
        name="x",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        created_by="ann",
        config=config(),
        paused=False,
        items=200,
        samples=[sample(1, 20, 5), sample(2, 20, 0)],
    )
    view = BatchView(batch=batch, items=items, patterns=[], changes=[], reviews={}, cost_usd=0.0, driving=False)
    est = view.estimate
    assert est.failing == 50  # 5 of 20 → a quarter of 200
    assert est.fix_usd == pytest.approx(50 * pricing.estimate_review_usd(FIXER, CHARS))
    assert "about 50 items the first sample says fail" in est.how()
