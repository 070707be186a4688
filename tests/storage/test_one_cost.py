"""One definition of cost, the same figure from every reader: a run whose calls include two timed-out reviewer
calls (stored failed, at their estimate) and a dropped connection (on record as sent, never answered: cut off)
shows one spend on the run (budget, page view, runs list), in `--json`, on Metrics (review, fix and reviewer C
splits) and in the verification record; a batch's spend is its runs' calls plus its own fix calls. Each figure is
checked against the rows summed here in plain SQL. SQLite and (when configured) PostgreSQL.
"""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlmodel import Session

from santa_core.batch.store import BatchConfig, ItemIn
from santa_core.models import LLMCall, ReviewOutcome, ReviewStatus, RunState, RunStatus, ScreenResult, Usage
from santa_core.reports.metrics import MetricsFilter
from santa_core.reports.record_html import to_html
from santa_core.rubrics.library import load_builtin
from storage.batches import BatchStore
from storage.hashing import json_hash
from storage.records import verification_record
from storage.runs import RunStore
from storage.tables import CallSentRow, LLMCallRow
from storage.workers import host_name
from tests.conftest import granted_store

GENERAL = load_builtin("general")
MODEL = "claude-sonnet-5-5"
ANSWERED, SCREEN, TIMED_OUT, DROPPED = 0.03, 0.004, 0.25, 0.4
"""What each call cost: B's answer, the screen's, each of C's timed-out attempts (its estimate), the fix call cut
off by a dropped connection (its estimate)."""
PAID = ANSWERED + SCREEN + 2 * TIMED_OUT + DROPPED


@pytest.fixture
def repo(db_url: str) -> RunStore:
    return granted_store(db_url)


def body(n: int) -> dict:
    return {"model": MODEL, "messages": [{"role": "user", "content": f"request {n}"}], "max_tokens": 64}


def sent(repo: RunStore, run_id: int, n: int, slot: str | None, purpose: str, estimate: float) -> None:
    """The write-ahead note of request `n`, as the runner makes it before the request leaves."""
    repo.note_sent(run_id, 1, slot, purpose, MODEL, body(n), estimate)


def costly_run(repo: RunStore, spec: str = "Announce the launch.") -> int:
    """A run whose round 1 has B's answer, C's two timed-out attempts, a screen and a fix call cut off."""
    run_id = repo.create_run(
        spec=spec, output="Launched in 2018.", rubric=GENERAL, reviewer_b=MODEL, reviewer_c=MODEL, fixer=MODEL
    )
    repo.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
    sent(repo, run_id, 1, "B", "review", 0.05)
    repo.save_review(
        run_id,
        1,
        ReviewOutcome(
            slot="B",
            reviewer=MODEL,
            status=ReviewStatus.ERROR,
            error="unreadable answer",
            cost_usd=ANSWERED,
            calls=[
                LLMCall(
                    purpose="review",
                    model=MODEL,
                    request=body(1),
                    response="?",
                    cost_usd=ANSWERED,
                    usage=Usage(input_tokens=900, output_tokens=40),
                )
            ],
        ),
    )
    for n in (2, 3):
        sent(repo, run_id, n, "C", "review", TIMED_OUT)
    repo.save_review(
        run_id,
        1,
        ReviewOutcome(
            slot="C",
            reviewer=MODEL,
            status=ReviewStatus.TIMEOUT,
            error="timed out after 60 s (2 attempts)",
            calls=[
                LLMCall(purpose="review", model=MODEL, request=body(n), error="ReadTimeout", cost_usd=TIMED_OUT)
                for n in (2, 3)
            ],
        ),
    )
    sent(repo, run_id, 4, None, "screen", 0.01)
    repo.save_screen(
        run_id,
        1,
        ScreenResult(
            role="spec and output",
            text_hash="h",
            model=MODEL,
            verdict="clean",
            secret="K",
            answer="K",
            cost_usd=SCREEN,
            calls=[LLMCall(purpose="screen", model=MODEL, request=body(4), cost_usd=SCREEN)],
        ),
    )
    sent(repo, run_id, 5, None, "fix", DROPPED)  # the connection dropped: no answer was ever stored
    return run_id


def killed(repo: RunStore, run_id: int) -> None:
    """The run's process was killed (kill -9): its claim names a process that is gone, so nobody waits for the
    answers it had asked for (they are cut off, not in flight)."""
    with repo.engine.begin() as conn:
        conn.execute(text("UPDATE run SET worker = :w WHERE id = :r"), {"w": f"{host_name()}:999999999:1", "r": run_id})


def summed(repo: RunStore, where: str, **params: object) -> float:
    """The spend of the calls `where` names, summed from the rows here: llm_call costs plus the estimates of sent
    notes no llm_call row of the same owner and request answers."""
    with Session(repo.engine) as s:
        calls = s.execute(text(f"SELECT COALESCE(SUM(cost_usd), 0) FROM llm_call c WHERE {where}"), params).scalar()
        cut = s.execute(
            text(
                f"SELECT COALESCE(SUM(estimate_usd), 0) FROM llm_call_sent c WHERE {where} AND NOT EXISTS (SELECT 1 "
                "FROM llm_call a WHERE a.request_hash = c.request_hash AND (a.run_id = c.run_id OR a.batch_id = c.batch_id))"
            ),
            params,
        ).scalar()
    return float(calls) + float(cut)


def test_failed_and_cut_off_calls_count_at_their_estimate_in_every_reader(repo: RunStore) -> None:
    run_id = costly_run(repo)
    other = costly_run(repo, spec="Another run with the same requests.")  # its answers answer none of run 1's notes
    killed(repo, run_id)
    expected = summed(repo, "run_id = :r", r=run_id)
    assert expected == pytest.approx(PAID)
    view = repo.get_run_view(run_id)
    figures = {
        "spent_usd": repo.spent_usd(run_id),
        "budget": repo.load_run(run_id).spent_usd,
        "run view": view.total_cost_usd,
        "rounds": sum(r.cost_usd for r in view.rounds),
        "runs list": next(r.cost_usd for r in repo.list_runs() if r.id == run_id),
        "--json": repo.run_json(run_id)["cost_usd"],
        "--json rounds": sum(r["cost_usd"] for r in repo.run_json(run_id)["rounds"]),
        "record": verification_record(repo, run_id).total_cost_usd,
    }
    assert figures == {k: pytest.approx(expected) for k in figures}
    assert [(c.purpose, c.estimate_usd) for c in view.cut_off] == [("fix", DROPPED)]
    assert [c["purpose"] for c in repo.run_json(run_id)["cut_off_calls"]] == ["fix"]
    record = verification_record(repo, run_id)
    assert [(c.purpose, c.estimate_usd) for c in record.cut_off_calls] == [("fix", DROPPED)]
    assert "$0.934, with 1 call(s) cut off before their answer was stored" in to_html(record)
    # Metrics: both runs, split by what each call was for (the cut-off call's purpose is on its note).
    report = repo.metrics.report(MetricsFilter())
    headline = report.headline
    both = summed(repo, "run_id IN (:a, :b)", a=run_id, b=other)
    assert headline.total_cost_usd == pytest.approx(both) == pytest.approx(2 * PAID)
    assert headline.review_cost_usd == pytest.approx(
        summed(repo, "run_id IN (:a, :b) AND purpose IN ('review', 'screen')", a=run_id, b=other)
    )
    assert (
        headline.fix_cost_usd
        == pytest.approx(summed(repo, "run_id IN (:a, :b) AND purpose = 'fix'", a=run_id, b=other))
        == pytest.approx(2 * DROPPED)
    )
    # B and C are one model here: the reviewer's figure is both slots' review calls.
    assert {r.reviewer: r.cost_usd for r in report.reviewers}[MODEL] == pytest.approx(
        summed(repo, "run_id IN (:a, :b) AND purpose = 'review'", a=run_id, b=other)
    )


def test_a_request_sent_twice_and_answered_once_left_one_call_cut_off(repo: RunStore) -> None:
    run_id = costly_run(repo)
    before = repo.spent_usd(run_id)
    sent(repo, run_id, 1, "B", "review", 0.05)  # B's request again (a resume), never answered
    assert repo.spent_usd(run_id) == pytest.approx(before + 0.05)
    assert repo.metrics.report(MetricsFilter()).headline.total_cost_usd == pytest.approx(before + 0.05)


# --- a batch ---------------------------------------------------------------------------------


def batch_with_runs(repo: RunStore) -> tuple[BatchStore, int, list[int]]:
    """A batch of four items whose sample's runs each paid like `costly_run`'s round."""
    store = BatchStore(repo)
    config = BatchConfig(
        name="b.csv",
        file_format="csv",
        columns=["id", "output"],
        id_column="id",
        output_column="output",
        spec="Announce the launch.",
        rubric=GENERAL,
        reviewer_b=MODEL,
        reviewer_c=MODEL,
        fixer=MODEL,
        min_sample=2,
        sample_rate=0.5,
    )
    batch_id = store.create(config, [ItemIn(key=str(i), output=f"Launched in 201{i}.") for i in range(4)], "ann")
    sample_id = store.draw_sample(batch_id, "ann")
    runs = [store.start_review(sample_id, item) for item in store.pending_items(sample_id)]
    for run_id in runs:
        repo.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
        sent(repo, run_id, 2, "C", "review", TIMED_OUT)
        repo.save_review(
            run_id,
            1,
            ReviewOutcome(
                slot="C",
                reviewer=MODEL,
                status=ReviewStatus.TIMEOUT,
                error="timed out",
                calls=[
                    LLMCall(purpose="review", model=MODEL, request=body(2), error="ReadTimeout", cost_usd=TIMED_OUT)
                ],
            ),
        )
        sent(repo, run_id, 3, "B", "review", ANSWERED)  # cut off
    return store, batch_id, runs


def own_fix_calls(repo: RunStore, batch_id: int) -> None:
    """The batch's own pattern-fix calls, as its store logs them: one answered, one cut off."""
    with Session(repo.engine) as s:
        for n, estimate in ((7, 0.09), (8, 0.11)):
            s.add(
                CallSentRow(
                    batch_id=batch_id,
                    round_no=1,
                    purpose="fix",
                    model=MODEL,
                    request_hash=json_hash(body(n)),
                    estimate_usd=estimate,
                )
            )
        s.add(
            LLMCallRow(
                batch_id=batch_id,
                round_no=1,
                purpose="fix",
                model=MODEL,
                request_json=body(7),
                content_hash="x",
                request_hash=json_hash(body(7)),
                cost_usd=0.06,
            )
        )
        s.commit()


def test_a_batch_costs_its_runs_calls_and_its_own_fix_calls(repo: RunStore) -> None:
    store, batch_id, runs = batch_with_runs(repo)
    own_fix_calls(repo, batch_id)
    expected = summed(repo, f"run_id IN ({', '.join(map(str, runs))})") + summed(repo, "batch_id = :b", b=batch_id)
    assert expected == pytest.approx(len(runs) * (TIMED_OUT + ANSWERED) + 0.06 + 0.11)
    assert store.cost(batch_id) == pytest.approx(expected)
    assert sum(s.cost_usd for s in store.get(batch_id).samples) == pytest.approx(expected - 0.06 - 0.11)
    assert sum(repo.spent_usd(r) for r in runs) == pytest.approx(expected - 0.06 - 0.11)


def test_fix_calls_from_before_they_were_logged_still_count_once(repo: RunStore) -> None:
    store, batch_id, runs = batch_with_runs(repo)
    reviews = store.cost(batch_id)
    [pattern] = store.save_patterns(
        store.get(batch_id).latest.id, [{"key": "p", "criterion": "facts", "title": "t", "items": []}]
    )
    with repo.engine.begin() as conn:  # a fix paid before fix calls were logged: only the pattern's running total
        conn.execute(text("UPDATE batch_pattern SET fix_spent_usd = 0.06 WHERE id = :p"), {"p": pattern.id})
    assert store.cost(batch_id) == pytest.approx(reviews + 0.06)
    own_fix_calls(repo, batch_id)  # the same 0.06 answer on record now, and a call cut off: counted once
    assert store.cost(batch_id) == pytest.approx(reviews + 0.06 + 0.11)
