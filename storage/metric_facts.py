"""The Metrics page's facts, kept current in every write transaction.

Three derived tables keep the dashboard fast on a large history (100,000 runs answer in well
under a second; `bench/metrics_dashboard.py` prints the figures):

- `run_metric`: one narrow row per run (status, rounds, costs, tokens, reviewer answers...);
- `criterion_result`: one row per criterion and round (B's, C's and the check's PASS/FAIL);
- `criterion_day`: criterion_result summed per day and view dimensions.

`refresh(session, run_id)` rewrites a run's facts from its own rows, inside the transaction that
changed them (`storage.transactions.Database.write` calls it for every run the transaction touched), so the facts are never
behind the history. It is idempotent; `criterion_day` moves by the difference between the old
and new criterion rows. The definitions of the figures live in `santa_core.reports.metrics`; this module
only sums and counts, over the rows `storage.metric_derivation` derives.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from functools import cache
from typing import Any

from sqlalchemy import Engine, Index, and_, bindparam, case, delete, func, insert, or_, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from santa_core.models import SETTLED_STATUSES
from santa_core.reviewers.base import PERSON
from storage.metric_derivation import (
    COUNTERS,
    DAY_KEY,
    DIMS,
    before_nice,
    derive_criteria,
    derive_run_metric,
    rollup,
)
from storage.queries import not_null
from storage.tables import (
    CallSentRow,
    CriterionDayRow,
    CriterionResultRow,
    EscapeRow,
    LLMCallRow,
    ReviewRow,
    RoundRow,
    RunMetricRow,
    RunRow,
)
from storage.tables.columns import table_of
from storage.unjudged import unjudged_rounds

TOUCHED = "santa.metric_runs"
"""Session.info key: the runs a write transaction changed (their facts are refreshed before commit)."""

# --- the indexes the Metrics page's reads need (migration 0014) ---------------------------------

FAILED_SQL = "b = 'FAIL' OR c = 'FAIL' OR check_result = 'FAIL'"
"""A criterion_result row that failed: the drill-down's rows, and the condition of their partial index
(`storage.metrics.FAILED` is the same condition in the query, so the planner can use it)."""
_result, _metric = table_of(CriterionResultRow).c, table_of(RunMetricRow).c
_FAILED_COLUMNS = (
    _result.run_id,
    _result.criterion,
    _result.category,
    _result.round_no,
    _result.b,
    _result.c,
    _result.check_result,
    _result.day,
    _result.rubric_name,
    _result.rubric_version,
)
"""What the drill-down reads of a failed row: its partial indexes hold all of it (no table lookup)."""
INDEXES = (
    # The drill-down by criterion and by category: the ~4 % of rows that failed, with every column it reads.
    *(
        Index(
            f"ix_criterion_result_failed_{pick.name}",
            pick,
            *(c for c in _FAILED_COLUMNS if c is not pick),
            sqlite_where=text(FAILED_SQL),
            postgresql_where=text(FAILED_SQL),
        )
        for pick in (_result.criterion, _result.category)
    ),
    # The view's runs summed per day and panel in index order (no sort of every run).
    Index("ix_run_metric_day_panel", _metric.day, _metric.reviewer_b, _metric.reviewer_c),
    # The filters' choices, grouped in index order from the index alone.
    Index(
        "ix_run_metric_view",
        _metric.rubric_name,
        _metric.rubric_version,
        _metric.domain,
        _metric.reviewer_b,
        _metric.reviewer_c,
    ),
    # The person filter's runs started by a person, and the people the filter offers.
    Index("ix_run_metric_created_by", _metric.created_by),
)
"""Declared with the tables they index (an Index over a table's columns joins its table's metadata)."""


# --- keeping the facts current ----------------------------------------------------------------


def touch(s: Session, run_id: int) -> None:
    """Note that this transaction changed the run: its facts are refreshed before commit."""
    s.info.setdefault(TOUCHED, set()).add(run_id)


def refresh_touched(s: Session) -> None:
    """Refresh the facts of every run the transaction touched.

    Runs go in id order and criterion_day moves once, by the sum of their changes in key order,
    so two transactions always take their row locks in the same order (no deadlocks).
    """
    delta: dict[tuple, Counter] = defaultdict(Counter)
    for run_id in sorted(s.info.pop(TOUCHED, ())):
        for key, change in _refresh_run(s, run_id).items():
            delta[key].update(change)
    if delta:
        _apply(s.connection(), delta)


def _result_key(row: dict[str, Any]) -> tuple:
    return tuple(row[k] for k in ("round_no", "criterion", "category", "severity", "b", "c", "check_result"))


def blind(run: Any, rounds: Sequence[Any]) -> bool:
    """Whether a person reviewer still judges the run blind (the rule of `RunStore.blind_run_ids`).

    Such a run's reviews, rounds and spend stay out of the facts until the gate of its current
    round is in: a figure that moved when B answered would tell the person what B said.
    """
    if run.status in SETTLED_STATUSES or PERSON not in (run.reviewer_b, run.reviewer_c):
        return False
    return not any(r.round_no == run.round and r.gate_decision is not None for r in rounds)


def refresh(s: Session, run_id: int) -> None:
    """Rewrite one run's run_metric and criterion_result rows and move criterion_day to match."""
    if delta := _refresh_run(s, run_id):
        _apply(s.connection(), delta)


def _refresh_run(s: Session, run_id: int) -> dict[tuple, Counter]:
    """Rewrite one run's run_metric and criterion_result rows; the criterion_day change they make."""
    run = s.get(RunRow, run_id)  # locked and loaded by the caller: no query
    if run is None:
        return {}
    s.flush()
    conn = s.connection()  # plain Core reads: this runs in every write transaction, keep it cheap
    rounds = conn.execute(_ROUNDS, {"run_id": run_id}).all()
    reviews = conn.execute(_REVIEWS, {"run_id": run_id}).all()
    calls = conn.execute(_CALLS, {"run_id": run_id}).all()
    sent = conn.execute(_SENT, {"run_id": run_id}).all()
    hidden = blind(run, rounds)
    if hidden:
        rounds, reviews, calls, sent = [], [], [], []
    escapes = conn.execute(_ESCAPES, {"run_id": run_id}).scalar_one()
    unjudged = unjudged_rounds(s, run_id, before_nice(rounds))
    _upsert(
        conn, table_of(RunMetricRow), derive_run_metric(run, rounds, reviews, calls, escapes, hidden, sent, unjudged)
    )
    new = derive_criteria(run, rounds, reviews)
    old = [dict(r._mapping) for r in conn.execute(_RESULTS, {"run_id": run_id})]
    if sorted(map(_result_key, old)) == sorted(map(_result_key, new)):
        return {}
    delta = rollup(old, -1)
    for key, change in rollup(new).items():
        delta[key].update(change)
    conn.execute(delete(CriterionResultRow).where(col(CriterionResultRow.run_id) == run_id))
    if new:
        conn.execute(insert(CriterionResultRow), new)
    return delta


def _by_run(*columns: Any) -> Any:
    """SELECT columns of one run's rows (run_id as a bound parameter, compiled once)."""
    return select(*columns).where(columns[0].table.c.run_id == bindparam("run_id"))


_ROUNDS = _by_run(RoundRow.round_no, RoundRow.gate_decision, RoundRow.gate_checks, RoundRow.gate_injection)
_REVIEWS = _by_run(ReviewRow.round_no, ReviewRow.slot, ReviewRow.status, ReviewRow.review_json, ReviewRow.latency_s)
_CALLS = _by_run(
    LLMCallRow.purpose,
    LLMCallRow.slot,
    LLMCallRow.model,
    LLMCallRow.cost_usd,
    LLMCallRow.request_hash,
    LLMCallRow.input_tokens,
    LLMCallRow.output_tokens,
    LLMCallRow.cache_creation_input_tokens,
    LLMCallRow.cache_read_input_tokens,
    # The request only where the call wrote to the cache: its breakpoint says the entry's lifetime.
    case((col(LLMCallRow.cache_creation_input_tokens) > 0, col(LLMCallRow.request_json)), else_=None).label(
        "request_json"
    ),
)
_SENT = _by_run(
    CallSentRow.run_id,
    CallSentRow.round_no,
    CallSentRow.purpose,
    CallSentRow.slot,
    CallSentRow.request_hash,
    CallSentRow.estimate_usd,
).order_by(CallSentRow.id)
# Reported escapes only: a spot-check's escapes are the unbiased sample's own series (`SpotCheckStore.outcomes`), and
# counted here too they would mix a random sample into the complaints this figure counts.
_ESCAPES = (
    select(func.count())
    .select_from(EscapeRow)
    .where(
        col(EscapeRow.run_id) == bindparam("run_id"),
        or_(col(EscapeRow.source).is_(None), col(EscapeRow.source) != "spot_check"),
    )
)
_RESULTS = _by_run(
    *(
        getattr(CriterionResultRow, k)
        for k in ("run_id", *DIMS, "round_no", "criterion", "category", "severity", "b", "c", "check_result")
    )
)


@cache
def _upsert_statement(dialect_name: str, table_name: str) -> Any:
    """INSERT ... ON CONFLICT (primary key) DO UPDATE of every other column, built once per dialect."""
    table = RunMetricRow.metadata.tables[table_name]
    stmt = (postgresql if dialect_name == "postgresql" else sqlite).insert(table)
    keys = [c.name for c in table.primary_key]
    return stmt.on_conflict_do_update(
        index_elements=keys, set_={c.name: stmt.excluded[c.name] for c in table.c if c.name not in keys}
    )


def _upsert(conn: Any, table: Any, values: dict[str, Any]) -> None:
    """INSERT the row, or UPDATE the row with the same primary key (SQLite and PostgreSQL)."""
    conn.execute(_upsert_statement(conn.dialect.name, table.name), values)


@cache
def _add_statement(dialect_name: str) -> Any:
    """INSERT a criterion_day row, or ADD its counts to the row with the same key; built once."""
    table = table_of(CriterionDayRow)
    stmt = (postgresql if dialect_name == "postgresql" else sqlite).insert(table)
    return stmt.on_conflict_do_update(
        index_elements=list(DAY_KEY), set_={k: table.c[k] + stmt.excluded[k] for k in COUNTERS}
    )


def _apply(conn: Any, delta: dict[tuple, Counter]) -> None:
    """Add each key's counts to criterion_day (keys in order, so concurrent writers never deadlock)."""
    rows = [
        {**dict(zip(DAY_KEY, key, strict=True)), **{k: delta[key].get(k, 0) for k in COUNTERS}}
        for key in sorted(delta)
        if any(delta[key].values())
    ]
    for row in rows:  # one by one: the order is the lock order
        conn.execute(_add_statement(conn.dialect.name), row)


def rebuild_rollup(s: Session) -> None:
    """Recompute criterion_day from criterion_result in one statement (benchmark fill, repairs)."""
    r = CriterionResultRow
    pair = and_(col(r.b).is_not(None), col(r.c).is_not(None))

    def count(cond: Any) -> Any:
        return func.sum(case((cond, 1), else_=0))

    sums = [
        count(and_(pair, col(r.b) == "PASS", col(r.c) == "PASS")),
        count(and_(pair, col(r.b) == "PASS", col(r.c) == "FAIL")),
        count(and_(pair, col(r.b) == "FAIL", col(r.c) == "PASS")),
        count(and_(pair, col(r.b) == "FAIL", col(r.c) == "FAIL")),
        count(r.b == "FAIL"),
        count(r.c == "FAIL"),
        count(r.check_result == "FAIL"),
        count(~pair),
    ]
    keys = [getattr(r, k) for k in DAY_KEY]
    s.exec(delete(CriterionDayRow))
    s.exec(insert(CriterionDayRow).from_select([*DAY_KEY, *COUNTERS], select(*keys, *sums).group_by(*keys)))


def stale_runs() -> Any:
    """Runs whose facts are missing (a database from before migration 0007) or older than the columns they
    need (before 0012: no review_* tokens, gross cache savings)."""
    old = select(RunMetricRow.run_id).where(col(RunMetricRow.review_cache_read_tokens).is_(None))
    return or_(~col(RunRow.id).in_(select(RunMetricRow.run_id)), col(RunRow.id).in_(old))


def backfill(engine: Engine, batch: int = 200) -> int:
    """Facts for runs that have none yet, or facts from before migration 0012, recomputed; how many."""
    total = 0
    while True:
        with Session(engine) as s, s.begin():
            ids = s.exec(select(col(RunRow.id)).where(stale_runs()).order_by(col(RunRow.id)).limit(batch)).all()
            for run_id in not_null(ids):
                refresh(s, run_id)
        total += len(ids)
        if len(ids) < batch:
            return total
