"""The one definition of what calls cost, read by every figure of money spent.

What a set of calls cost (a run's, a round's, a batch's own) is, everywhere it is shown (run page, runs list,
`--json`, Metrics, Batch page, verification record): the sum of its `llm_call` rows' `cost_usd` (every attempt:
answered, or failed and counted at its estimate; a Message Batch item at the batch price) plus, for every
`llm_call_sent` row that no `llm_call` row of the same request answers, its `estimate_usd` (a call cut off by a
crash, a kill or a lost connection, counted at the most it may have cost). The per-table `cost_usd` of reviews,
proposals and screens say what one step's answer cost; they are never summed for a total (a review asked again
replaces its row, not the calls it paid for, and a call of no step would be left out).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from sqlalchemy import bindparam, func
from sqlmodel import Session, col, select

from storage.queries import select_columns
from storage.tables import CallSentRow, LLMCallRow, RunRow

Owner = Literal["run_id", "batch_id"]
"""What a call served, by its column: a run, or a batch's own work (its pattern fixes)."""
REVIEW_PURPOSES = ("review", "screen")
"""Calls whose cost is review cost (the reviewers' and the injection screen's: the screen is part of verifying)."""
Sent = TypeVar("Sent")


@dataclass(frozen=True)
class Spend:
    """What some calls of one owner, round, purpose and slot cost: answered or failed calls (their `llm_call` rows)
    or one call cut off (its `llm_call_sent` row's estimate)."""

    owner: int
    round_no: int
    purpose: str
    slot: str | None
    usd: float
    cut_off: bool = False


def unanswered(sent: Sequence[Sent], answered: Iterable[Any], key: Callable[[Sent], Any]) -> list[Sent]:
    """The sent notes (oldest first) that no answer accounts for: each answer (its `key`, such as its request
    hash) accounts for one note with that key, oldest first; a request sent twice and answered once left one
    call cut off."""
    left = Counter(answered)
    out = []
    for row in sent:
        if left[key(row)] > 0:
            left[key(row)] -= 1
        else:
            out.append(row)
    return out


def usd(
    spends: Iterable[Spend], purposes: Sequence[str] | None = None, slot: str | None = None, round_no: int | None = None
) -> float:
    """The cost of the spends of these purposes (all if None), slot and round (any if None)."""
    return sum(
        x.usd
        for x in spends
        if (purposes is None or x.purpose in purposes)
        and (slot is None or x.slot == slot)
        and (round_no is None or x.round_no == round_no)
    )


def by_owner(spends: Iterable[Spend], owners: Iterable[int]) -> dict[int, float]:
    """Cost per owner (0.0 for an owner with no calls)."""
    out = dict.fromkeys(owners, 0.0)
    for x in spends:
        out[x.owner] = out.get(x.owner, 0.0) + x.usd
    return out


def costed(
    answered: Iterable[Spend],
    sent: Sequence[Any],
    owner: Owner = "run_id",
    key: Callable[[Any], Any] = lambda row: row.request_hash,
    answers: Iterable[Any] = (),
) -> list[Spend]:
    """The one definition: what the answered and failed calls cost (their `llm_call` rows, as spends), plus each
    sent note (`llm_call_sent`) that no answer (`answers`, by `key`) accounts for, at its estimate."""
    cut = unanswered(sent, answers, key)
    return [
        *answered,
        *(Spend(getattr(x, owner), x.round_no, x.purpose, x.slot, x.estimate_usd, cut_off=True) for x in cut),
    ]


def _owned(owner: Owner) -> Callable[[Any], Any]:
    """A note's or an answer's key: its owner and request hash (an answer accounts only for its own owner's note)."""
    return lambda row: (getattr(row, owner), row.request_hash)


def _sent_and_answers(s: Session, owner: Owner, ids: Sequence[int]) -> tuple[list[CallSentRow], list[tuple]]:
    """These owners' sent notes (oldest first) and their answers' keys."""
    sent_stmt, answers_stmt, batch_stmt = _sent_and_answers_stmts(owner)
    params = {"ids": list(ids)}
    sent = s.exec(sent_stmt, params=params).all()
    answers = [tuple(a) for a in s.exec(answers_stmt, params=params).all()]
    if batch_stmt is not None:
        # A sample's Message Batch items are on record with the batch before it is made (their runs do not exist
        # yet); each answer is stored on its item's run when the batch is collected, and accounts for its note.
        answers += [tuple(a) for a in s.exec(batch_stmt, params=params).all()]
    return list(sent), answers


@functools.cache
def _sent_and_answers_stmts(owner: Owner) -> tuple[Any, Any, Any]:
    """`_sent_and_answers`' SELECTs for one kind of owner, the owners' ids bound as `ids`: built once, not per call
    (every view of a run's money reads them)."""
    sent_col, call_col = getattr(CallSentRow, owner), getattr(LLMCallRow, owner)
    ids: Any = bindparam("ids", expanding=True)
    sent = select(CallSentRow).where(col(sent_col).in_(ids)).order_by(col(CallSentRow.id))
    answers = select(call_col, LLMCallRow.request_hash).where(
        col(call_col).in_(ids), col(LLMCallRow.request_hash).is_not(None)
    )
    if owner != "batch_id":
        return sent, answers, None
    by_batch = (
        select(RunRow.batch_id, LLMCallRow.request_hash)
        .join(RunRow, col(RunRow.id) == col(LLMCallRow.run_id))
        .where(col(RunRow.batch_id).in_(ids), col(LLMCallRow.request_hash).is_not(None))
    )
    return sent, answers, by_batch


def cut_off_calls(s: Session, owner: Owner, ids: Sequence[int]) -> list[CallSentRow]:
    """Calls put on record as sent that no stored answer accounts for (cut off by a crash, a kill or a lost
    connection), oldest first."""
    if not ids:
        return []
    sent, answers = _sent_and_answers(s, owner, ids)
    return unanswered(sent, answers, _owned(owner))


def spends(s: Session, owner: Owner, ids: Sequence[int]) -> list[Spend]:
    """Every cost of these owners' calls: `llm_call` sums per round, purpose and slot, and each cut-off call."""
    if not ids:
        return []
    rows = s.exec(_sums(owner), params={"ids": list(ids)}).all()
    sent, answers = _sent_and_answers(s, owner, ids)
    return costed(
        [Spend(o, n, purpose, slot, float(total)) for o, n, purpose, slot, total in rows],
        sent,
        owner,
        _owned(owner),
        answers,
    )


@functools.cache
def _sums(owner: Owner) -> Any:
    """`spends`' SELECT of call sums for one kind of owner, the owners' ids bound as `ids` (built once)."""
    c = LLMCallRow
    owner_col = getattr(c, owner)
    ids: Any = bindparam("ids", expanding=True)
    return (
        select_columns(owner_col, c.round_no, c.purpose, c.slot, func.coalesce(func.sum(c.cost_usd), 0.0))
        .where(col(owner_col).in_(ids))
        .group_by(owner_col, col(c.round_no), col(c.purpose), col(c.slot))
    )


def spent(s: Session, owner: Owner, ids: Sequence[int]) -> dict[int, float]:
    """What each owner's calls cost (the one definition)."""
    return by_owner(spends(s, owner, ids), ids)
