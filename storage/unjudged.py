"""Which rounds of a run nobody could judge: the model provider failed (issue 34).

The metric facts ask here so that such a round is no iteration: a run that ships NICE after Try again passed on its
first judged round. The one definition is the core's (`santa_core.run.unreviewed.could_not_review`); this module only
reads the round back from its rows. (Not through `storage.run_rows`: that module notes writes for the metric facts,
which ask here, so it would close an import circle.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlmodel import Session, col, select

from santa_core.run.store import RoundRecord
from santa_core.run.unreviewed import could_not_review
from storage.queries import stored_id
from storage.rows import gate_of, outcome_of, screen_of
from storage.tables import LLMCallRow, MergedIssueRow, ReviewRow, RoundRow, ScreenRow


def _round(s: Session, run_id: int, round_no: int) -> RoundRecord | None:
    """The round as the core reads it (its output text left out: the question does not need it)."""

    def rows(model: Any) -> list[Any]:
        return list(
            s.exec(select(model).where(model.run_id == run_id, model.round_no == round_no).order_by(model.id)).all()
        )

    stored, reviews, screens = rows(RoundRow), rows(ReviewRow), rows(ScreenRow)
    if not stored:
        return None
    ids = [i for r in reviews for i in r.call_ids] + [r.call_id for r in screens if r.call_id]
    calls = (
        {stored_id(c): c for c in s.exec(select(LLMCallRow).where(col(LLMCallRow.id).in_(ids))).all()} if ids else {}
    )
    return RoundRecord(
        round_no=round_no,
        output_text="",
        gate=gate_of(stored[0], rows(MergedIssueRow)),
        reviews={r.slot: outcome_of(r, calls) for r in reviews},
        screens={(sc := screen_of(r, calls)).entry: sc for r in screens},
    )  # oldest: the latest counts


def unjudged_rounds(s: Session, run_id: int, round_nos: Iterable[int]) -> set[int]:
    """Of these rounds of the run, the ones nobody could judge (the model provider failed)."""
    return {n for n in round_nos if could_not_review(_round(s, run_id, n))}
