"""A run's state written with everything that goes with it: the state_change row, the audit event,
and opening or closing the run's escalation. Only the engine's moves reach here.
"""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import Session, col, select

from santa_core import alerts as kinds
from santa_core.config import Defaults
from santa_core.models import EscalationReason, RunState, RunStatus
from santa_core.run.store import DecisionAction
from santa_core.text import sha256_text
from storage import audit
from storage.hashing import json_hash
from storage.metric_facts import touch
from storage.outbox import emit
from storage.queries import stored_id
from storage.rows import enum_value, state_of
from storage.settings import latest_settings
from storage.spot_draw import draw_run
from storage.tables import DecisionRow, EscalationRow, RunRow, StateChangeRow
from storage.times import utcnow
from storage.workers import this_worker

RESOLUTION_ACTION: dict[str, DecisionAction] = {
    "ship_as_is": "ship_as_is",
    "rereview": "rereview",
    "reject": "resolve_reject",
    "try_again": "try_again",
}
"""The decision action recorded for each way of resolving an escalation."""


RESOLVED_AS: dict[RunStatus, str] = {RunStatus.RESOLVED_SHIPPED: "ship_as_is", RunStatus.RESOLVED_REJECTED: "reject"}


def set_state(s: Session, row: RunRow, new: RunState, actor: str, note: str, resolution: str | None = None) -> None:
    """Write the state, its state_change row and audit event, and open or close the escalation (`resolution`: how
    it closes, when the new status does not say)."""
    old, run_id = RunStatus(row.status), stored_id(row)
    before = state_of(row)
    touch(s, run_id)
    row.status = new.status.value
    row.round, row.max_rounds, row.round_cap = (new.round, new.max_rounds, new.round_cap)
    row.escalation_reason = enum_value(new.escalation_reason)
    row.note = new.note
    row.updated_at = utcnow()
    # Running: the process that claimed it; queued: the one that queued it, which works it (a sweep of another
    # process leaves it alone while that process lives: it may be waiting for a free thread there).
    row.worker = this_worker() if new.status in (RunStatus.RUNNING, RunStatus.QUEUED) else None
    s.add(row)
    change = StateChangeRow(run_id=run_id, from_status=old.value, to_status=row.status, actor=actor, note=note)
    s.add(change)
    audit.append(
        s,
        actor,
        "run.state",
        "run",
        row.id,
        run_id=row.id,
        before=json_hash(before.model_dump(mode="json")),
        after=json_hash(new.model_dump(mode="json")),
        detail={"from": old.value, "to": row.status, "round": row.round, "note": note, "reason": row.escalation_reason},
    )
    run_alerts(s, row, old, new)
    if new.status == RunStatus.ESCALATED and old != RunStatus.ESCALATED:
        open_escalation(s, row)
    elif old == RunStatus.ESCALATED and new.status != RunStatus.ESCALATED:
        close_escalations(s, run_id, RESOLVED_AS.get(new.status) or resolution or "rereview", actor)
    if new.status in (RunStatus.SHIPPED, RunStatus.RESOLVED_SHIPPED) and old != new.status:
        draw_run(s, row)  # in the shipping transaction: a shipped run never misses its draw (storage.spot_draw)


SHIPPED = frozenset({RunStatus.SHIPPED, RunStatus.RESOLVED_SHIPPED})


def run_alerts(s: Session, row: RunRow, old: RunStatus, new: RunState) -> None:
    """The run's events for the hooks, in the transaction of the move they report: it shipped, it escalated (and
    when its budget stopped it, `budget.exceeded`)."""
    data = {"run_id": row.id, "status": row.status, "round": row.round, "rubric": row.rubric_name}
    subject = f"run {row.id}"
    if new.status in SHIPPED and old not in SHIPPED:
        emit(s, kinds.RUN_SHIPPED, subject, data, run_id=row.id)
    elif new.status == RunStatus.ESCALATED and old != RunStatus.ESCALATED:
        emit(s, kinds.RUN_ESCALATED, subject, {**data, "reason": row.escalation_reason}, run_id=row.id)
        if row.escalation_reason == EscalationReason.BUDGET.value:
            emit(s, kinds.BUDGET_EXCEEDED, subject, {**data, "budget_usd": row.budget_usd}, run_id=row.id)


def open_escalation(s: Session, run: RunRow) -> None:
    """A new open escalation, due after the Settings' default time for its reason."""
    if run.escalation_reason is None:  # the engine escalates with a reason, always
        raise ValueError(f"run {run.id} is escalated without a reason")
    hours = Defaults.model_validate(latest_settings(s)).due_hours_for(run.escalation_reason)
    esc = EscalationRow(run_id=stored_id(run), reason=run.escalation_reason)
    esc.due_at = esc.created_at + timedelta(hours=hours)
    s.add(esc)
    s.flush()
    audit.append(
        s,
        "system",
        "escalation.opened",
        "escalation",
        esc.id,
        run_id=run.id,
        detail={"reason": esc.reason, "due_at": esc.due_at.isoformat()},
    )
    emit(
        s,
        kinds.ESCALATION_OPENED,
        f"escalation {esc.id}",
        {"escalation_id": esc.id, "run_id": run.id, "reason": esc.reason, "due_at": esc.due_at.isoformat()},
        run_id=run.id,
    )


def close_escalations(s: Session, run_id: int, resolution: str, actor: str, why: str | None = None) -> None:
    """Resolve the run's open escalations (justification: `why` or the latest decision)."""
    stmt = select(EscalationRow).where(EscalationRow.run_id == run_id, EscalationRow.status == "open")
    if why is None:
        why = latest_resolution_reason(s, run_id)
    for esc in s.exec(stmt).all():
        esc.status, esc.resolution, esc.resolved_by = "resolved", resolution, actor
        esc.resolved_at, esc.justification = utcnow(), why
        s.add(esc)
        audit.append(
            s,
            actor,
            "escalation.resolved",
            "escalation",
            esc.id,
            run_id=run_id,
            after=None if why is None else sha256_text(why),
            detail={"resolution": resolution, "justification": why},
        )
        emit(
            s,
            kinds.ESCALATION_RESOLVED,
            f"escalation {esc.id}",
            {
                "escalation_id": esc.id,
                "run_id": run_id,
                "reason": esc.reason,
                "resolution": resolution,
                "resolved_by": actor,
            },
            run_id=run_id,
        )


def latest_resolution_reason(s: Session, run_id: int) -> str | None:
    """Reason of the run's latest escalation-resolving decision."""
    stmt = (
        select(DecisionRow.reason)
        .where(DecisionRow.run_id == run_id)
        .where(col(DecisionRow.action).in_(list(RESOLUTION_ACTION.values())))
        .order_by(col(DecisionRow.id).desc())
    )
    return s.exec(stmt).first()
