"""The escalation queue: resolving an escalated run (ship as is, re-review, reject), owners and due times."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from sqlalchemy import func
from sqlmodel import Session, col, select

from santa_core.models import RunState
from santa_core.roles import Permission, PermissionDenied
from santa_core.run import engine as state_machine
from santa_core.run.actions import refuse_over_budget
from santa_core.run.store import Closing, RoundRecord
from santa_core.run.unchanged import UNCHANGED, rereview_refusal
from storage import audit
from storage.errors import EscalationNotOpen
from storage.people import require
from storage.rounds import add_decision, start_round_row
from storage.rows import check_text, decision_row, escalation_of, state_of
from storage.run_rows import costs, lock_run, require_round, run_rows
from storage.state_changes import RESOLUTION_ACTION, set_state
from storage.tables import EscalationRow, RunRow
from storage.times import utc, utc_or_none
from storage.transactions import StoreBase
from storage.views import EscalationView


def open_escalation_row(s: Session, run_id: int, escalation_id: int | None = None) -> EscalationRow:
    """The run's open escalation; EscalationNotOpen when there is none, or it is not `escalation_id`."""
    stmt = select(EscalationRow).where(EscalationRow.run_id == run_id, EscalationRow.status == "open")
    row = s.exec(stmt.with_for_update()).first()
    if row is None:
        raise EscalationNotOpen(f"run {run_id} has no open escalation: someone resolved it meanwhile; reload")
    if escalation_id is not None and row.id != escalation_id:
        raise EscalationNotOpen(
            f"the escalation you looked at (#{escalation_id}) was resolved meanwhile and run "
            f"{run_id} escalated again (#{row.id}); reload to see what is open now"
        )
    return row


class UnchangedText(ValueError):
    """A re-review of a text both reviewers already judged: it would pay for the same answer again."""


def check_rereview(s: Session, run_id: int, text: str) -> None:
    """Refuse (UnchangedText) a re-review of a text the run's reviewers already fully judged, read inside the
    resolving transaction (`santa_core.run.actions` says so first, in a person's words)."""
    rows = run_rows(s, run_id)
    if problem := rereview_refusal([RoundRecord(**rows.round_record(r)) for r in rows.rounds], text):
        raise UnchangedText(f"{UNCHANGED}{problem}")


class EscalationStore(StoreBase):
    """Escalations: resolve, assign, re-date, list, count the overdue."""

    def resolve_escalation(
        self,
        run_id: int,
        resolution: Closing,
        actor: str,
        justification: str,
        edited_output: str | None = None,
        escalation_id: int | None = None,
    ) -> RunState:
        """Resolve an escalated run in ONE transaction: decision, next round, state, escalation.

        `escalation_id` is the escalation the person looked at: when the run has moved on (someone
        else resolved it and it escalated again), EscalationNotOpen is raised and nothing written,
        so a click never resolves an escalation, or ships an output, the person did not see.

        The new state comes from `santa_core.run.engine.advance(state, Resolve(resolution))`, so the
        engine still decides it; `rereview` starts the next round on `edited_output` (or the
        current output), unless both reviewers already judged exactly that text (UnchangedText, nothing
        written). Raises `engine.InvalidTransition` when the run is not escalated.
        """
        if not justification.strip():
            raise ValueError("a justification is required to resolve an escalation")
        if edited_output is not None:
            if resolution != "rereview":
                raise ValueError("only a re-review may change the output")
            check_text(edited_output, "edited output")
        with self._tx() as s:
            run = lock_run(s, run_id)
            if escalation_id is not None:
                open_escalation_row(s, run_id, escalation_id)
            state = state_of(run)
            new = state_machine.advance(state, state_machine.Resolve(resolution))
            rnd = require_round(s, run_id, state.round)
            after = rnd.output_text if edited_output is None else edited_output
            fresh = resolution in ("rereview", "try_again")  # both review the text again in a new round
            if fresh:
                check_rereview(s, run_id, after)
                # A new round is paid: refused once the budget is spent, on every door (the actions say so first).
                refuse_over_budget(
                    run.budget_usd,
                    costs(s, [run_id])[run_id],
                    "another round" if resolution == "rereview" else "trying again",
                )
            action = RESOLUTION_ACTION[resolution]
            add_decision(s, decision_row(run_id, state.round, action, actor, justification, rnd.output_text, after))
            if fresh:
                start_round_row(s, run_id, new.round, after)
            set_state(s, run, new, actor, new.note, "tried_again" if resolution == "try_again" else None)
            return new

    def list_escalations(self, status: Literal["open", "resolved"] | None = "open") -> list[EscalationView]:
        """Escalations, oldest first (all of them when `status` is None)."""
        stmt = (
            select(EscalationRow, RunRow)
            .join(RunRow, col(RunRow.id) == col(EscalationRow.run_id))
            .order_by(col(EscalationRow.id))
        )
        if status is not None:
            stmt = stmt.where(EscalationRow.status == status)
        with self._read() as s:
            return [escalation_of(esc, run) for esc, run in s.exec(stmt).all()]

    def assign_escalation(self, run_id: int, owner: str | None, actor: str, escalation_id: int | None = None) -> None:
        """Give the run's open escalation an owner who may resolve it (None: unassign)."""
        with self._tx() as s:
            require(s, actor, Permission.ASSIGN)
            if owner:
                try:
                    require(s, owner, Permission.RESOLVE_ESCALATION)
                except PermissionDenied as exc:
                    raise ValueError(f"{owner} cannot own an escalation: {exc}") from exc
            esc = open_escalation_row(s, run_id, escalation_id)
            before, esc.owner = esc.owner, owner or None
            s.add(esc)
            audit.append(
                s,
                actor,
                "escalation.assigned",
                "escalation",
                esc.id,
                run_id=run_id,
                detail={"before": before, "owner": esc.owner},
            )

    def set_due(self, run_id: int, due_at: datetime, actor: str, escalation_id: int | None = None) -> None:
        """Set or change the due time of the run's open escalation."""
        due_at = utc(due_at)
        with self._tx() as s:
            require(s, actor, Permission.ASSIGN)
            esc = open_escalation_row(s, run_id, escalation_id)
            before = utc_or_none(esc.due_at)
            esc.due_at = due_at
            s.add(esc)
            audit.append(
                s,
                actor,
                "escalation.due_set",
                "escalation",
                esc.id,
                run_id=run_id,
                detail={"before": None if before is None else before.isoformat(), "due_at": due_at.isoformat()},
            )

    def overdue_count(self, now: datetime) -> int:
        """Open escalations whose due time has passed."""
        now = utc(now)  # SQLite compares stored UTC wall-clock times: never pass another zone's
        stmt = (
            select(func.count())
            .select_from(EscalationRow)
            .where(
                col(EscalationRow.status) == "open",
                col(EscalationRow.due_at).is_not(None),
                col(EscalationRow.due_at) <= now,
            )
        )
        with self._read() as s:
            return int(s.exec(stmt).one())
