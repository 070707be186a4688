"""What rubric learning reads (a rubric's recent failures, escapes and NICE runs) and what its author decided.

The failures are the merged issues of every round of the rubric's runs started in the window, each with the text that
round reviewed; the escapes those reported in the window on its runs, with the text the run shipped. A batch's sample
runs are left out: a batch is one generation job, and its failures are already grouped into the batch's patterns.
A decision (accepted, dismissed) is an append-only, sealed row, written in one transaction with its audit event by a
person who may change rubrics.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Literal, cast

from sqlalchemy import func
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import SelectOfScalar

from santa_core.models import Attribution, MergedIssue, RunStatus
from santa_core.roles import Permission
from santa_core.rubrics.learning import WINDOW_DAYS, Decision, LearningItem, Suggestion, SuggestionDecided
from santa_core.text import control_problem
from storage import audit
from storage.people import require
from storage.rubrics import MAX_NOTE_CHARS
from storage.tables import EscapeRow, MergedIssueRow, RoundRow, RunRow, SuggestionDecisionRow
from storage.times import utc, utcnow
from storage.transactions import StoreBase

SuggestionAction = Literal["accepted", "dismissed"]
"""What an author decided on a suggestion (`santa_core.rubrics.learning.Decision.action`)."""
ACTIONS: tuple[SuggestionAction, ...] = ("accepted", "dismissed")
RunIds = SelectOfScalar[int | None]
"""A query of run ids (a subquery of `learning_items`)."""


class SuggestionStore(StoreBase):
    """Rubric learning's reads and a rubric author's decisions (implements `santa_core.rubrics.learning.Log`)."""

    def learning_items(self, rubric: str, days: int = WINDOW_DAYS) -> tuple[list[LearningItem], dict[int, str]]:
        """(the failed rounds and escapes of the rubric's runs in the last `days` days, run id → text of each run
        that shipped NICE in them)."""
        since = utcnow() - timedelta(days=days)
        # A subquery, not a list of ids: a busy rubric's month of runs would pass SQLite's limit of bound values.
        ids = select(col(RunRow.id)).where(
            RunRow.rubric_name == rubric, col(RunRow.batch_id).is_(None), RunRow.created_at >= since
        )
        with self._read() as s:
            return self._failures(s, ids) + self._escapes(s, ids, since), self._nice(s, ids)

    @staticmethod
    def _failures(s: Session, ids: RunIds) -> list[LearningItem]:
        """Each round with merged issues, its issues in order and the text it reviewed."""
        rows = s.exec(
            select(MergedIssueRow, RoundRow.output_text)
            .join(
                RoundRow,
                (col(RoundRow.run_id) == col(MergedIssueRow.run_id))
                & (col(RoundRow.round_no) == col(MergedIssueRow.round_no)),
            )
            .where(col(MergedIssueRow.run_id).in_(ids))
            .order_by(col(MergedIssueRow.run_id), col(MergedIssueRow.round_no), col(MergedIssueRow.idx))
        ).all()
        issues: dict[tuple[int, int], list[MergedIssue]] = defaultdict(list)
        texts: dict[tuple[int, int], str] = {}
        for row, text in rows:
            key = (row.run_id, row.round_no)
            texts[key] = text
            issues[key].append(
                MergedIssue(
                    criterion=row.criterion,
                    description=row.description,
                    evidence=row.evidence,
                    flagged_by=cast(Attribution, row.flagged_by),
                )
            )
        return [LearningItem(run_id=r, ref=n, text=texts[(r, n)], issues=found) for (r, n), found in issues.items()]

    @staticmethod
    def _escapes(s: Session, ids: RunIds, since: datetime) -> list[LearningItem]:
        """Each escape reported in the window, with the text its run shipped (its last round's)."""
        rows = s.exec(
            select(EscapeRow)
            .where(col(EscapeRow.run_id).in_(ids), EscapeRow.created_at >= since)
            .order_by(col(EscapeRow.id))
        ).all()
        shipped = _last_texts(s, sorted({r.run_id for r in rows}))
        # An escape has no reviewer: "both" stands for "not one reviewer's" (the item's source says a person found it).
        # Its evidence is the quote a spot-check gives, when the escape carries one.
        return [
            LearningItem(
                run_id=r.run_id,
                source="escape",
                ref=r.id or 0,
                text=shipped.get(r.run_id, ""),
                issues=[
                    MergedIssue(
                        criterion=r.criterion,
                        description=r.description,
                        evidence=getattr(r, "evidence", "") or "",
                        flagged_by="both",
                    )
                ],
            )
            for r in rows
        ]

    @staticmethod
    def _nice(s: Session, ids: RunIds) -> dict[int, str]:
        """run id → the text of each run that both reviewers passed (shipped NICE, not shipped by a person) and
        nobody found an escape in since: an escaped run is the failing side, and counted clean it would make the
        escaped phrase look common in good text (no forbidden term suggested) and a false alarm of its own check."""
        escaped = select(EscapeRow.run_id).where(col(EscapeRow.run_id).in_(ids))
        return _last_texts(
            s,
            select(col(RunRow.id)).where(
                col(RunRow.id).in_(ids), RunRow.status == RunStatus.SHIPPED, col(RunRow.id).not_in(escaped)
            ),
        )

    def decisions(self, rubric: str) -> list[Decision]:
        """The rubric's suggestion decisions, oldest first."""
        stmt = (
            select(SuggestionDecisionRow)
            .where(SuggestionDecisionRow.rubric_name == rubric)
            .order_by(col(SuggestionDecisionRow.id))
        )
        with self._read() as s:
            return [
                Decision(
                    key=r.suggestion_key,
                    action=cast(SuggestionAction, r.action),
                    criterion=r.criterion,
                    phrase=r.phrase,
                    version=r.version,
                    note=r.note,
                    actor=r.actor,
                    at=utc(r.created_at),
                )
                for r in s.exec(stmt).all()
            ]

    def decide(
        self, suggestion: Suggestion, action: str, actor: str, note: str = "", version: int | None = None
    ) -> int:
        """Record a decision on a suggestion (refused, with nothing written, unless the actor may change rubrics, or
        when the suggestion has a decision already: SuggestionDecided)."""
        if action not in ACTIONS:
            raise ValueError(f"a suggestion is {' or '.join(ACTIONS)}, not {action!r}")
        if problem := control_problem(note, "The note"):
            raise ValueError(problem)
        if len(note) > MAX_NOTE_CHARS:
            raise ValueError(f"the note has {len(note):,} characters; at most {MAX_NOTE_CHARS:,}")
        with self._tx() as s:
            require(s, actor, Permission.EDIT_RUBRIC)
            decided = s.exec(
                select(SuggestionDecisionRow.action).where(SuggestionDecisionRow.suggestion_key == suggestion.key)
            ).first()
            if decided is not None:  # one decision a suggestion: a second would contradict or repeat the first
                raise SuggestionDecided(suggestion.key, decided)
            row = SuggestionDecisionRow(
                rubric_name=suggestion.rubric,
                suggestion_key=suggestion.key,
                action=action,
                criterion=suggestion.criterion,
                kind=suggestion.kind,
                phrase=suggestion.phrase,
                runs_json=list(suggestion.runs),
                version=version,
                note=note.strip(),
                actor=actor,
            )
            s.add(row)
            s.flush()
            audit.append(
                s,
                actor,
                f"rubric.suggestion_{action}",
                "rubric",
                suggestion.rubric,
                detail={
                    "suggestion": suggestion.key,
                    "criterion": suggestion.criterion,
                    "kind": suggestion.kind,
                    "phrase": suggestion.phrase,
                    "runs": list(suggestion.runs),
                    "version": version,
                    "note": note.strip(),
                },
            )
            assert row.id is not None
            return row.id


def _last_texts(s: Session, run_ids: list[int] | RunIds) -> dict[int, str]:
    """run id → the text of its last round (of the runs listed, or those a query selects)."""
    last = (
        select(RoundRow.run_id, func.max(RoundRow.round_no).label("n"))
        .where(col(RoundRow.run_id).in_(run_ids))
        .group_by(col(RoundRow.run_id))
        .subquery()
    )
    stmt = select(RoundRow.run_id, RoundRow.output_text).join(
        last, (last.c.run_id == RoundRow.run_id) & (last.c.n == RoundRow.round_no)
    )
    return dict(s.exec(stmt).all())
