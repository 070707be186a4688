"""A run's rows inside one transaction: locking and reading the run and its rounds, every child
row fetched together, and the money spent per run.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam
from sqlmodel import Session, col, select

from storage import spend
from storage.errors import RoundNotFound, RunNotFound
from storage.metric_facts import touch
from storage.queries import stored_id
from storage.rows import decision_of, gate_of, outcome_of, proposal_of, screen_of
from storage.tables import (
    CallSentRow,
    DecisionRow,
    LLMCallRow,
    MergedIssueRow,
    ProposalRow,
    ReviewRow,
    RoundRow,
    RunRow,
    ScreenRow,
)
from storage.times import utc
from storage.views import RoundView


def lock_run(s: Session, run_id: int) -> RunRow:
    """The run row, locked for this transaction (RunNotFound if missing)."""
    row = s.exec(_LOCK_RUN, params={"run_id": run_id}).first()
    if row is None:
        raise RunNotFound(run_id)
    touch(s, run_id)  # every write to a run locks it first: its metric facts follow
    return row


def get_run(s: Session, run_id: int) -> RunRow:
    """The run row (RunNotFound if missing)."""
    row = s.get(RunRow, run_id)
    if row is None:
        raise RunNotFound(run_id)
    return row


def round_row(s: Session, run_id: int, round_no: int) -> RoundRow | None:
    """The round row, if stored."""
    return s.exec(_ROUND_ROW, params={"run_id": run_id, "round_no": round_no}).first()


# Built once, the run and round as bound parameters: every write to a run locks it, most read its round.
_LOCK_RUN = select(RunRow).where(RunRow.id == bindparam("run_id")).with_for_update()
_ROUND_ROW = select(RoundRow).where(RoundRow.run_id == bindparam("run_id"), RoundRow.round_no == bindparam("round_no"))


def require_round(s: Session, run_id: int, round_no: int) -> RoundRow:
    """The round row (RoundNotFound if missing)."""
    row = round_row(s, run_id, round_no)
    if row is None:
        raise RoundNotFound(run_id, round_no)
    return row


@dataclass
class RunRows:
    """Every child row of a run (or of one of its rounds), fetched in one snapshot."""

    rounds: list[RoundRow]
    reviews: list[ReviewRow]
    issues: list[MergedIssueRow]
    proposals: list[ProposalRow]
    decisions: list[DecisionRow]
    calls: dict[int, LLMCallRow]
    screens: list[ScreenRow]
    spends: list[spend.Spend]
    """What the run's calls cost, per round (the one definition, cut-off calls included)."""

    def round_record(self, rnd: RoundRow) -> dict[str, Any]:
        """RoundRecord fields of one stored round."""
        n = rnd.round_no
        proposals = [p for p in self.proposals if p.round_no == n]
        # Asking the fix agent again sets the newest proposal aside until the next one is stored.
        retries = sum(d.action == "retry_fix" for d in self.decisions if d.round_no == n)
        return {
            "round_no": n,
            "output_text": rnd.output_text,
            "reviews": {r.slot: outcome_of(r, self.calls) for r in self.reviews if r.round_no == n},
            "gate": gate_of(rnd, [i for i in self.issues if i.round_no == n]),
            "proposal": proposal_of(proposals[-1], self.calls) if len(proposals) > retries else None,
            "fix_attempts": len(proposals),
            # appended oldest first: the latest screen of each role counts
            "screens": {(sc := screen_of(r, self.calls)).entry: sc for r in self.screens if r.round_no == n},
        }

    def round_view(self, rnd: RoundRow) -> RoundView:
        """A RoundView of one stored round (its cost: every call of the round, superseded proposals and calls
        cut off included)."""
        n = rnd.round_no
        return RoundView(
            **self.round_record(rnd),
            output_hash=rnd.output_hash,
            started_at=utc(rnd.started_at),
            decisions=[decision_of(d) for d in self.decisions if d.round_no == n],
            cost_usd=spend.usd(self.spends, round_no=n),
        )


def children(s: Session, model: Any, run_id: int, round_no: int | None) -> list[Any]:
    """Rows of `model` for the run (and round), oldest first."""
    params = {"run_id": run_id} if round_no is None else {"run_id": run_id, "round_no": round_no}
    return list(s.exec(_children(model, round_no is not None), params=params).all())


@functools.cache
def _children(model: Any, by_round: bool) -> Any:
    """`children`'s SELECT with the run (and round) as bound parameters: built once per table, not per call (every
    view of a run reads its rows this way, a few times a step)."""
    stmt = select(model).where(model.run_id == bindparam("run_id"))
    if by_round:
        stmt = stmt.where(model.round_no == bindparam("round_no"))
    return stmt.order_by(model.id)


def calls_by_id(s: Session, ids: Iterable[int]) -> dict[int, LLMCallRow]:
    """llm_call rows by id."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = s.exec(select(LLMCallRow).where(col(LLMCallRow.id).in_(wanted))).all()
    return {stored_id(row): row for row in rows}


def run_rows(s: Session, run_id: int, round_no: int | None = None) -> RunRows:
    """All child rows of a run (or one round)."""
    reviews = children(s, ReviewRow, run_id, round_no)
    proposals = children(s, ProposalRow, run_id, round_no)
    screens = children(s, ScreenRow, run_id, round_no)
    call_ids = [i for row in (*reviews, *proposals) for i in row.call_ids] + [r.call_id for r in screens if r.call_id]
    rounds = sorted(children(s, RoundRow, run_id, round_no), key=lambda r: r.round_no)
    return RunRows(
        rounds=rounds,
        reviews=reviews,
        issues=children(s, MergedIssueRow, run_id, round_no),
        proposals=proposals,
        decisions=children(s, DecisionRow, run_id, round_no),
        calls=calls_by_id(s, call_ids),
        screens=screens,
        spends=[x for x in spend.spends(s, "run_id", [run_id]) if round_no is None or x.round_no == round_no],
    )


def costs(s: Session, run_ids: list[int]) -> dict[int, float]:
    """Money spent per run, by the one definition (`storage.spend`): every call's cost, failed calls at their
    estimate, and each call cut off before its answer was stored at its estimate (the most it may have cost)."""
    return spend.spent(s, "run_id", run_ids)


def cut_off_calls(s: Session, run_ids: list[int]) -> list[CallSentRow]:
    """Calls of these runs put on record as sent whose answer was never stored, oldest first."""
    return spend.cut_off_calls(s, "run_id", run_ids)
