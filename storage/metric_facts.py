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
only sums and counts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from functools import cache
from typing import Any

from sqlalchemy import Engine, Index, and_, bindparam, case, delete, func, insert, or_, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from santa_core.models import SETTLED_STATUSES, Usage
from santa_core.pricing import cache_savings_usd, cost_usd, is_known
from santa_core.reviewers.base import PERSON
from santa_core.reviewers.caching import ttl_of
from storage.spend import REVIEW_PURPOSES, Spend, costed, usd
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
from storage.tables.columns import not_null, table_of
from storage.times import utc
from storage.unjudged import unjudged_rounds

ERRORS = ("error", "timeout")
"""Review statuses that are reviewer errors (never a PASS)."""
ANSWERED = ("ok", *ERRORS)
"""Review statuses that count as an answer (a pending person slot does not)."""
DIMS = ("day", "rubric_name", "rubric_version", "domain", "reviewer_b", "reviewer_c")
"""The view dimensions every fact row carries."""
DAY_KEY = (*DIMS, "criterion", "category", "severity")
"""criterion_day's unique key."""
COUNTERS = ("pp", "pf", "fp", "ff", "b_fail", "c_fail", "check_fail", "unscored")
"""criterion_day's summed columns."""
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


# --- deriving one run's facts (pure over row-like objects, so the benchmark can reuse it) -----


def run_dims(run: Any) -> dict[str, Any]:
    """The view dimensions of a run row."""
    return {
        "day": utc(run.created_at).date().isoformat(),
        "rubric_name": run.rubric_name,
        "rubric_version": run.rubric_version,
        "domain": str(run.rubric_json.get("domain") or "general"),
        "reviewer_b": run.reviewer_b,
        "reviewer_c": run.reviewer_c,
    }


def _slot_figures(slot: str, reviews: Sequence[Any], spends: Sequence[Spend]) -> dict[str, Any]:
    """Answers, errors, latency and cost of one reviewer slot."""
    mine = [r for r in reviews if r.slot == slot and r.status in ANSWERED]
    key = slot.lower()
    return {
        f"{key}_reviews": len(mine),
        f"{key}_errors": sum(r.status in ERRORS for r in mine),
        f"{key}_latency_s": sum(r.latency_s for r in mine),
        f"{key}_latency_max_s": max((r.latency_s for r in mine), default=0.0),
        f"{key}_cost_usd": usd(spends, ("review",), slot=slot),
    }


def _round_latency(reviews: Sequence[Any]) -> tuple[int, float]:
    """(rounds with an answer, sum over them of the slower reviewer's latency)."""
    slowest: dict[int, float] = {}
    for r in reviews:
        if r.status in ANSWERED:
            slowest[r.round_no] = max(slowest.get(r.round_no, 0.0), r.latency_s)
    return len(slowest), sum(slowest.values())


REVIEW_CALLS = REVIEW_PURPOSES
"""The calls whose cost is review cost (the reviewers' and the injection screen's): the cache hit rate is theirs."""


def _review_prompt(calls: Sequence[Any]) -> dict[str, int]:
    """Input tokens of the review calls: uncached, written to the prompt cache, read from it."""
    mine = [c for c in calls if c.purpose in REVIEW_CALLS]
    return {
        "review_input_tokens": sum(c.input_tokens for c in mine),
        "review_cache_write_tokens": sum(c.cache_creation_input_tokens for c in mine),
        "review_cache_read_tokens": sum(c.cache_read_input_tokens for c in mine),
    }


def before_nice(rounds: Sequence[Any]) -> list[int]:
    """The NAUGHTY rounds before the run's first NICE one with no injection found: only whether these were judged
    moves a figure (first pass, iterations), so only these are read back to ask."""
    first = min((r.round_no for r in rounds if r.gate_decision == "NICE"), default=0)
    return [r.round_no for r in rounds if r.gate_decision == "NAUGHTY" and not r.gate_injection and r.round_no < first]


def derive_run_metric(
    run: Any,
    rounds: Sequence[Any],
    reviews: Sequence[Any],
    calls: Sequence[Any],
    escapes: int,
    hidden: bool = False,
    sent: Sequence[Any] = (),
    unjudged: Collection[int] = (),
) -> dict[str, Any]:
    """The run_metric row of a run, from its run, round, review, llm_call and llm_call_sent rows (a sent note no
    call answers is a call cut off, counted at its estimate by its purpose and slot).

    `unjudged`: the rounds nobody could judge (the model provider failed, `storage.unjudged`): no iteration, so a
    run NICE after Try again passed first time; they still count in cost and in the rounds started.

    `hidden`: the run is blind, so its rounds and generation cost stay out too (per-round and
    review ÷ generation figures would otherwise move without the costs that go with them).
    """
    first_nice = min((r.round_no for r in rounds if r.gate_decision == "NICE"), default=None)
    nice_round = None if first_nice is None else first_nice - sum(n < first_nice for n in unjudged)
    reviewed, latency = _round_latency(reviews)
    # The one definition of cost (`storage.spend`): every call's cost plus each cut-off call's estimate.
    spends = costed(
        [Spend(run.id, 0, c.purpose, c.slot, c.cost_usd) for c in calls], sent, answers=(c.request_hash for c in calls)
    )
    return {
        "run_id": run.id,
        **run_dims(run),
        "created_by": run.created_by,
        "status": run.status,
        "rounds": 0 if hidden else run.round,
        "nice_round": nice_round,
        "generation_cost_usd": None if hidden else run.generation_cost_usd,
        # The injection screen is part of verifying, so its cost counts with the reviews'.
        "review_cost_usd": usd(spends, REVIEW_CALLS),
        "fix_cost_usd": usd(spends, ("fix",)),
        "input_tokens": sum(c.input_tokens for c in calls),
        "output_tokens": sum(c.output_tokens for c in calls),
        "cache_write_tokens": sum(c.cache_creation_input_tokens for c in calls),
        "cache_read_tokens": sum(c.cache_read_input_tokens for c in calls),
        "cache_savings_usd": sum(map(_call_savings, calls)),
        **_review_prompt(calls),
        "escapes": escapes,
        **_slot_figures("B", reviews, spends),
        **_slot_figures("C", reviews, spends),
        "rounds_reviewed": reviewed,
        "round_latency_s": latency,
    }


def _results(review_json: dict | None) -> dict[str, str]:
    """criterion → PASS/FAIL of one review (a criterion checked twice counts as FAIL if either is)."""
    out: dict[str, str] = {}
    for check in (review_json or {}).get("checks") or []:
        cid, result = check.get("criterion"), check.get("result")
        if isinstance(cid, str) and result in ("PASS", "FAIL") and out.get(cid) != "FAIL":
            out[cid] = result
    return out


def _check_results(gate_checks: list | None) -> dict[str, str]:
    """criterion → PASS/FAIL of the round's deterministic checks."""
    return _results({"checks": gate_checks or []})


def derive_criteria(run: Any, rounds: Sequence[Any], reviews: Sequence[Any]) -> list[dict[str, Any]]:
    """The criterion_result rows of a run: every rubric criterion of every judged round.

    A round is judged once a reviewer answered or the gate stored its checks. Results for ids that
    are not in the run's rubric are ignored; a reviewer that errored, is pending or skipped a
    criterion leaves it empty (unscored).
    """
    dims = run_dims(run)
    criteria = [
        (c["id"], c.get("category", ""), c.get("severity", "critical")) for c in run.rubric_json.get("criteria", [])
    ]
    by_round: dict[int, dict[str, dict[str, str]]] = defaultdict(dict)
    answered: set[int] = set()
    for r in reviews:
        if r.status in ANSWERED:
            answered.add(r.round_no)
            by_round[r.round_no][r.slot] = _results(r.review_json if r.status == "ok" else None)
    rows = []
    for rnd in sorted(rounds, key=lambda r: r.round_no):
        if rnd.round_no not in answered and rnd.gate_checks is None:
            continue
        checks, slots = _check_results(rnd.gate_checks), by_round.get(rnd.round_no, {})
        for cid, category, severity in criteria:
            rows.append(
                {
                    "run_id": run.id,
                    "round_no": rnd.round_no,
                    "criterion": cid,
                    "category": category,
                    "severity": severity,
                    "b": slots.get("B", {}).get(cid),
                    "c": slots.get("C", {}).get(cid),
                    "check_result": checks.get(cid),
                    **dims,
                }
            )
    return rows


def counters(b: str | None, c: str | None, check: str | None) -> dict[str, int]:
    """One criterion_result row's contribution to criterion_day."""
    pair = b is not None and c is not None
    return {
        "pp": int(pair and b == "PASS" and c == "PASS"),
        "pf": int(pair and b == "PASS" and c == "FAIL"),
        "fp": int(pair and b == "FAIL" and c == "PASS"),
        "ff": int(pair and b == "FAIL" and c == "FAIL"),
        "b_fail": int(b == "FAIL"),
        "c_fail": int(c == "FAIL"),
        "check_fail": int(check == "FAIL"),
        "unscored": int(not pair),
    }


def rollup(rows: Iterable[dict[str, Any]], sign: int = 1) -> dict[tuple, Counter]:
    """criterion_day deltas of criterion_result rows, by key (sign -1: taking them away)."""
    out: dict[tuple, Counter] = defaultdict(Counter)
    for row in rows:
        out[tuple(row[k] for k in DAY_KEY)].update(
            {k: sign * v for k, v in counters(row["b"], row["c"], row["check_result"]).items()}
        )
    return out


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


def _call_savings(c: Any) -> float:
    """Net cache savings of one stored call: at list price, scaled by what the call was actually charged against its
    list price (a Message Batches call pays half of everything, its savings too). A model with no listed price
    saves nothing on paper (its cost is an upper bound, not a bill)."""
    read, write = c.cache_read_input_tokens, c.cache_creation_input_tokens
    if not (read or write) or not is_known(c.model):
        return 0.0
    ttl = ttl_of(c.request_json or {})
    listed = cost_usd(
        c.model,
        Usage(
            input_tokens=c.input_tokens,
            output_tokens=c.output_tokens,
            cache_creation_input_tokens=write,
            cache_read_input_tokens=read,
        ),
        write_ttl=ttl,
    )
    # A call stored with no cost (an older row) says nothing about a discount: counted at list price.
    charged = min(1.0, c.cost_usd / listed) if listed > 0 and c.cost_usd > 0 else 1.0
    return cache_savings_usd(c.model, read, write, write_ttl=ttl) * charged


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
