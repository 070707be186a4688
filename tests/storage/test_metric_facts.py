"""The metric facts kept current by every write (`storage.metric_facts`): the incremental
criterion_day rollup equals a rebuild and a refresh is idempotent, the backfill fills the facts
of runs that have none, and the facts follow later changes (a person's review once the gate is
in, an escape, a resolution, replaced reviews) without counting anything twice; on SQLite and,
when SANTA_TEST_POSTGRES_URL is set, on PostgreSQL.
"""

from __future__ import annotations

import pytest
from sqlalchemy import delete, update
from sqlmodel import Session, select

from santa_core.models import ReviewOutcome, ReviewStatus
from santa_core.reports import metrics as m
from santa_core.reports.metrics import MetricsFilter
from santa_core.reviewers.base import PERSON
from santa_core.run.runner import Runner
from storage import metric_facts as sm
from storage.metric_derivation import COUNTERS, DAY_KEY
from storage.runs import RunStore
from storage.tables import CriterionDayRow, CriterionResultRow, RunMetricRow, RunRow
from tests.support import metrics_history
from tests.support.metrics_history import (
    DESK1,
    HAIKU,
    OPUS,
    Case,
    Seeded,
    create,
    make_runner,
    new_repo,
    on,
    outcome,
    person_pass,
    seed,
)
from tests.support.report_figures import same, table

history = metrics_history.history  # the fixture (an imported name would trip ruff's F811)


# --- consistency -----------------------------------------------------------------------


DAY_COLUMNS = [CriterionDayRow.__table__.c[k] for k in (*DAY_KEY, *COUNTERS)]


def day_rows(s: Session) -> dict[tuple, tuple]:
    """criterion_day by key (rows whose counters all went back to 0 hold nothing)."""
    n = len(DAY_KEY)
    return {tuple(r[:n]): tuple(r[n:]) for r in s.exec(select(*DAY_COLUMNS)).all() if any(r[n:])}


def rebuilt_equals_incremental(repo: RunStore, refresh_all: bool = False) -> tuple[dict, dict]:
    """(criterion_day as kept by every write, as `rebuild_rollup` computes it); nothing is kept."""
    with Session(repo.engine) as s:
        tx = s.begin()
        try:
            kept = day_rows(s)
            if refresh_all:  # refresh is idempotent: running it again moves nothing
                for run_id in s.exec(select(RunRow.id)).all():
                    sm.refresh(s, run_id)
                assert day_rows(s) == kept
            sm.rebuild_rollup(s)
            return kept, day_rows(s)
        finally:
            tx.rollback()


def test_incremental_rollup_equals_rebuild(history: Seeded) -> None:
    kept, rebuilt = rebuilt_equals_incremental(history.repo, refresh_all=True)
    assert kept == rebuilt and kept


def test_backfill_fills_facts_of_runs_without_any(db_url: str) -> None:
    repo = new_repo(db_url)
    seed(repo)
    before = repo.metrics.report(MetricsFilter()).model_dump()
    with Session(repo.engine) as s, s.begin():  # as in a database from before the facts existed
        for table_ in (CriterionDayRow, CriterionResultRow, RunMetricRow):
            s.exec(delete(table_))
    assert repo.metrics.report(MetricsFilter()).empty
    assert sm.backfill(repo.engine, batch=4) == 11  # batches of 4, 4, 3
    assert sm.backfill(repo.engine) == 0
    assert same(repo.metrics.report(MetricsFilter()).model_dump(), before)
    kept, rebuilt = rebuilt_equals_incremental(repo)
    assert kept == rebuilt
    repo.engine.dispose()


def test_backfill_recomputes_facts_from_before_the_cache_columns(db_url: str) -> None:
    """Migration 0012 leaves the old rows' review_* tokens NULL (and their savings gross): the hit rate says how
    many runs it cannot count, never 0 %, until start-up's backfill recomputes them."""
    repo = new_repo(db_url)
    seed(repo)
    before = repo.metrics.report(MetricsFilter())
    assert before.headline.cache_hit_rate and before.headline.cache_unknown_runs == 0
    with Session(repo.engine) as s, s.begin():
        s.exec(
            update(RunMetricRow).values(
                review_input_tokens=None,
                review_cache_write_tokens=None,
                review_cache_read_tokens=None,
                cache_savings_usd=0.0324,
            )
        )
    stale = repo.metrics.report(MetricsFilter()).headline
    assert (stale.cache_unknown_runs, stale.review_prompt_tokens, stale.cache_hit_rate) == (11, 0, None)
    assert sm.backfill(repo.engine, batch=4) == 11
    assert sm.backfill(repo.engine) == 0
    after = repo.metrics.report(MetricsFilter())
    assert same(after.model_dump(), before.model_dump())
    assert after.headline.cache_savings_usd == pytest.approx(0.0324 - 0.00025)  # net again
    repo.engine.dispose()


# --- facts follow later changes ---------------------------------------------------------------


def fresh(db_url: str, *cases: Case) -> tuple[RunStore, Runner, dict[str, int]]:
    repo = new_repo(db_url)
    runner = make_runner(repo)
    ids = {case.key: create(repo, case) for case in cases}
    for run_id in ids.values():
        runner.execute(run_id)
    return repo, runner, ids


def whole(repo: RunStore) -> m.MetricsReport:
    return repo.metrics.report(MetricsFilter())


def test_a_person_review_counts_for_the_person_filter_once_the_gate_is_in(db_url: str) -> None:
    repo, runner, ids = fresh(db_url, Case("f-person", on(4, 1), DESK1, ("PPPP",), None, gen=0.5))
    try:
        assert repo.metrics.report(MetricsFilter(people=["pat"])).headline.runs == 0
        person_pass(repo, ids["f-person"], "pat")
        # pat's review is in, the gate is not: a run under pat now would tell another person reviewer so
        assert repo.metrics.report(MetricsFilter(people=["pat"])).headline.runs == 0
        h = whole(repo).headline  # blind: no round, no generation cost, no review cost yet
        assert (h.runs, h.rounds, h.generation_runs, h.review_cost_usd) == (1, 0, 0, 0.0)
        runner.execute(ids["f-person"])
        assert repo.metrics.report(MetricsFilter(people=["pat"])).headline.runs == 1
        h = whole(repo).headline
        assert (h.rounds, h.generation_runs, h.review_cost_usd) == (1, 1, pytest.approx(0.03))
    finally:
        runner.shutdown()
        repo.engine.dispose()


def test_facts_follow_an_escape_and_a_resolution(db_url: str) -> None:
    repo, runner, ids = fresh(
        db_url, Case("f-ship", on(4, 1), DESK1, ("PPPP",), ("PPPP",)), Case("f-err", on(4, 2), DESK1, ("E",), ("PPPP",))
    )
    try:
        before = whole(repo)
        h = before.headline
        assert (h.finished, h.shipped, h.escapes, h.escape_rate, h.first_pass_rate) == (2, 1, 0, 0.0, 0.5)
        repo.report_escape(ids["f-ship"], "facts", "found later", "critical", "ann")
        h = whole(repo).headline
        assert (h.shipped, h.escapes, h.escaped_runs, h.escape_rate) == (1, 1, 1, 1.0)
        repo.resolve_escalation(ids["f-err"], "ship_as_is", "bob", "checked by hand")
        after = whole(repo)
        h = after.headline
        # resolved_shipped joins the shipped runs; still 2 finished runs and 1 first pass
        assert (h.runs, h.finished, h.shipped, h.escapes, h.escape_rate, h.first_pass_rate) == (2, 2, 2, 1, 0.5, 0.5)
        assert [(r.rounds, r.status, r.runs) for r in after.rounds] == [(1, "resolved_shipped", 1), (1, "shipped", 1)]
        assert after.criteria == before.criteria  # no criterion counted twice
        assert same(after.model_dump(include={"reviewers"}), before.model_dump(include={"reviewers"}))
        kept, rebuilt = rebuilt_equals_incremental(repo, refresh_all=True)
        assert kept == rebuilt
    finally:
        runner.shutdown()
        repo.engine.dispose()


def test_facts_follow_replaced_reviews(db_url: str) -> None:
    repo, runner, ids = fresh(
        db_url,
        Case("f-wait", on(4, 1), DESK1, ("FPPP",), ("PPPP",)),
        Case("f-person", on(4, 1), DESK1, ("PPPP",), None),
    )
    try:
        t = table(whole(repo))
        # f-wait/1: facts fp, the rest pp (short check PASS). f-person/1 is blind: B answered, the
        # person has not, so nothing of the round counts (B's FAILs, cost or latency would leak)
        assert t["facts"] == (0, 0, 1, 0, 1, 0, 0, 0) and t["tone"] == (1, 0, 0, 0, 0, 0, 0, 0)
        assert [(r.reviewer, r.reviews, r.cost_usd) for r in whole(repo).reviewers] == [
            (HAIKU, 1, pytest.approx(0.01)),
            (OPUS, 1, pytest.approx(0.03)),
        ]  # ties by name
        # a pending row in the person's slot changes nothing
        repo.save_review(ids["f-person"], 1, ReviewOutcome(slot="C", reviewer=PERSON, status=ReviewStatus.PENDING))
        assert table(whole(repo)) == t
        # the person's review is in but the gate is not: still blind
        person_pass(repo, ids["f-person"], "pat")
        assert table(whole(repo)) == t
        # the gate is in: the round counts, B's answer and the person's, 4 pp
        runner.execute(ids["f-person"])
        report = whole(repo)
        assert table(report)["facts"] == (1, 0, 1, 0, 1, 0, 0, 0)
        assert table(report)["tone"] == (2, 0, 0, 0, 0, 0, 0, 0)
        assert report.headline.unscored == 0 and report.headline.compared_pairs == 8
        assert [(r.reviewer, r.reviews) for r in report.reviewers] == [(OPUS, 2), (HAIKU, 1), (PERSON, 1)]
        # B's review of f-wait/1 is replaced: facts fp → pp, short pp → fp (B fails the suggestion)
        repo.save_review(ids["f-wait"], 1, outcome(OPUS, "B", DESK1, "PPPF"))
        report = whole(repo)
        assert table(report)["facts"] == (2, 0, 0, 0, 0, 0, 0, 0)
        assert table(report)["short"] == (1, 0, 1, 0, 1, 0, 0, 0)
        assert report.headline.compared_pairs == 8  # still one pair per criterion and round
        opus = report.reviewers[0]
        # still 2 OPUS answers (one per run); every call was paid: 2 for f-wait/1 + 1 for f-person = 3 × 0.03
        assert (opus.reviewer, opus.reviews) == (OPUS, 2) and opus.cost_usd == pytest.approx(0.09)
        repo.save_review(ids["f-wait"], 1, outcome(OPUS, "B", DESK1, "PPPF"))  # the same again: nothing moves
        assert same(whole(repo).model_dump(), report.model_dump())
        kept, rebuilt = rebuilt_equals_incremental(repo, refresh_all=True)
        assert kept == rebuilt
    finally:
        runner.shutdown()
        repo.engine.dispose()


def test_cache_savings_follow_what_a_call_was_charged() -> None:
    """A Message Batches call pays half of its list price, so it saves half; a 1-hour write costs its own premium;
    a model with no listed price saves nothing on paper."""
    from types import SimpleNamespace

    from santa_core.models import Usage
    from santa_core.pricing import cache_savings_usd, cost_usd
    from storage.metric_derivation import _call_savings

    usage = Usage(input_tokens=100, output_tokens=50, cache_creation_input_tokens=0, cache_read_input_tokens=4000)
    listed = cost_usd("claude-sonnet-5-5", usage)

    def call(cost: float, model: str = "claude-sonnet-5-5", request: dict | None = None, write: int = 0):
        return SimpleNamespace(
            model=model,
            input_tokens=100,
            output_tokens=50,
            cache_read_input_tokens=4000,
            cache_creation_input_tokens=write,
            cost_usd=cost,
            request_json=request,
        )

    full = cache_savings_usd("claude-sonnet-5-5", 4000, 0)
    assert _call_savings(call(listed)) == pytest.approx(full) and full > 0
    assert _call_savings(call(listed / 2)) == pytest.approx(full / 2)  # a batch call
    assert _call_savings(call(listed, model="local:qwen3")) == 0.0
    assert _call_savings(call(0.0)) == pytest.approx(full)  # a row stored with no cost: no discount inferred
    one_hour = {"system": [{"type": "text", "text": "p", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}
    paid = cost_usd("claude-sonnet-5-5", usage.model_copy(update={"cache_creation_input_tokens": 1000}), write_ttl="1h")
    assert _call_savings(call(paid, request=one_hour, write=1000)) == pytest.approx(
        cache_savings_usd("claude-sonnet-5-5", 4000, 1000, write_ttl="1h")
    )
