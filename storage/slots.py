"""Reviewer slots filled by people: who may fill one, the slots still waiting, assignments, and
the runs whose reviews are still blind.
"""

from __future__ import annotations

from sqlmodel import Session, col, select

from santa_core.models import SETTLED_STATUSES, ReviewStatus, RunStatus, Slot
from santa_core.reviewers.base import PERSON
from santa_core.roles import Permission, must_differ
from storage import audit
from storage.errors import SlotAssigned
from storage.people import require
from storage.queries import not_null, stored_id
from storage.run_rows import children, lock_run
from storage.tables import ReviewRow, RoundRow, RunRow
from storage.times import utc
from storage.transactions import StoreBase
from storage.views import PendingReview


def check_person_review(s: Session, run: RunRow, round_no: int, slot: str, person: str) -> None:
    """A person may fill a slot if they may review, the slot is a person's, it is theirs (or
    nobody's), and they did not fill the round's other slot: two slots by one person would not
    be independent."""
    require(s, person, Permission.PERSON_REVIEW)
    column = person_column(run.id, slot)
    reviewer = run.reviewer_b if slot == "B" else run.reviewer_c
    if reviewer != PERSON:
        raise SlotAssigned(f"slot {slot} of run {run.id} is reviewed by {reviewer}, not by a person")
    assignee = getattr(run, column)
    if assignee and assignee != person:
        raise SlotAssigned(f"slot {slot} of run {run.id} is assigned to {assignee}, not {person}")
    others = s.exec(
        select(ReviewRow.reviewer).where(
            ReviewRow.run_id == run.id, ReviewRow.round_no == round_no, ReviewRow.slot != slot
        )
    ).all()
    if must_differ(person) and f"person:{person}" in others:
        raise SlotAssigned(
            f"{person} already reviewed the other slot of round {round_no}; "
            "the two reviews must come from different reviewers"
        )


def person_column(run_id: int | None, slot: str) -> str:
    """The column naming who fills a person slot: B and C only (the third reviewer, D, is always a model)."""
    if slot not in ("B", "C"):
        raise SlotAssigned(f"slot {slot} of run {run_id} is not a person's: only B and C may be filled by people")
    return "person_b" if slot == "B" else "person_c"


def reviewer_slots(run: RunRow) -> list[tuple[Slot, str]]:
    """(slot, reviewer) pairs of a run."""
    return [("B", run.reviewer_b), ("C", run.reviewer_c)]


def person_of(reviewer: str) -> str | None:
    """The person behind a `person:<id>` reviewer name, else None (a model)."""
    return reviewer.removeprefix("person:") if reviewer.startswith("person:") else None


def pending_review(run: RunRow, slot: Slot, reviewer: str, done: dict[str, str]) -> PendingReview:
    """A slot waiting for a person."""
    other = next((r for sl, r in done.items() if sl != slot), None)
    return PendingReview(
        assignee=run.person_b if slot == "B" else run.person_c,
        filled_other_slot_by=None if other is None else person_of(other),
        run_id=stored_id(run),
        round_no=run.round,
        slot=slot,
        reviewer=reviewer,
        rubric_name=run.rubric_name,
        rubric_version=run.rubric_version,
        waiting_since=utc(run.updated_at),
    )


class SlotStore(StoreBase):
    """Person reviewer slots: pending reviews, blind runs, assignments."""

    def pending_human_reviews(self) -> list[PendingReview]:
        """Slots a person still has to fill, for runs `awaiting_human_review`."""
        stmt = (
            select(RunRow).where(col(RunRow.status) == RunStatus.AWAITING_HUMAN_REVIEW.value).order_by(col(RunRow.id))
        )
        with self._read() as s:
            items: list[PendingReview] = []
            for run in s.exec(stmt).all():
                done = {
                    r.slot: r.reviewer
                    for r in children(s, ReviewRow, stored_id(run), run.round)
                    if r.status != ReviewStatus.PENDING.value
                }
                items += [pending_review(run, slot, who, done) for slot, who in reviewer_slots(run) if slot not in done]
            return items

    def blind_run_ids(self) -> set[int]:
        """Runs whose reviews are still blind: a `person` reviewer slot, no gate yet on the current round.

        Pages everyone may read leave these runs' events, reasons and spend out until the gate is
        in: they would show a person reviewer the other review or earlier rounds before theirs.
        Final runs are done; an escalated run waits for a compliance officer, not a reviewer.
        """
        settled = [s.value for s in SETTLED_STATUSES]
        current = (col(RoundRow.run_id) == RunRow.id) & (col(RoundRow.round_no) == RunRow.round)
        stmt = (
            select(RunRow.id)
            .outerjoin(RoundRow, current)  # no stored current round yet: no gate either
            .where(col(RunRow.status).not_in(settled))
            .where((RunRow.reviewer_b == PERSON) | (RunRow.reviewer_c == PERSON))
            .where(col(RoundRow.gate_decision).is_(None))
        )
        with self._read() as s:
            return set(not_null(s.exec(stmt).all()))

    def assign_person_slot(self, run_id: int, slot: Slot, person: str | None, actor: str) -> None:
        """Assign a `person` reviewer slot to someone who may review (None: anyone may take it)."""
        with self._tx() as s:
            require(s, actor, Permission.ASSIGN)
            if person:
                require(s, person, Permission.PERSON_REVIEW)
            run = lock_run(s, run_id)
            column = person_column(run_id, slot)
            before = getattr(run, column)
            setattr(run, column, person or None)
            s.add(run)
            audit.append(
                s,
                actor,
                "review.assigned",
                "run",
                run_id,
                run_id=run_id,
                detail={"slot": slot, "before": before, "person": person or None},
            )
