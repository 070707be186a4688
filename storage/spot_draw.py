"""The draw written down: which shipped runs each active rule sends to a person (`santa_core.spotchecks.draw`
decides; this module finds the runs, records each draw once and audits it).

A run is drawn when it ships, inside the transaction that ships it (`draw_run`, called by
`storage.state_changes.set_state`): the shipping and its draw commit together, so no crash between them can leave
a shipped run out of the draw, and the person who ships sees no choice to make. `draw_all` is the idempotent
sweep a periodic job calls: it draws under rules saved after their runs shipped never (a rule draws only runs
shipped since it was saved) but catches anything the ship-time draw missed, and tops complete weeks up to the
floor. The unique (rule, run) key means a run is never drawn twice for one rule, whoever runs the sweep.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func
from sqlalchemy.orm import load_only
from sqlmodel import Session, col, select

from santa_core import alerts as alert_kinds
from santa_core.config import Defaults
from santa_core.models import RunStatus
from santa_core.spotchecks.draw import draw_number, floor_top_up, is_drawn, week_ended, week_of
from santa_core.spotchecks.model import DrawnBy, SpotRule
from storage import audit
from storage.outbox import emit
from storage.queries import stored_id
from storage.settings import latest_settings
from storage.tables import RunRow, SpotCheckRow, SpotRuleRow, StateChangeRow
from storage.times import utc, utc_or_none

SHIPPED = (RunStatus.SHIPPED.value, RunStatus.RESOLVED_SHIPPED.value)
DRAW_COLUMNS = ("id", "status", "round", "rubric_name", "rubric_version", "rubric_json", "reviewer_b", "reviewer_c")
"""The run columns the sweep's draw reads (the rule's filter and the spot-check's row): not the spec or outputs."""
DUE_REASON = "spot_check"
"""The key of Settings' due hours a new spot-check's due time comes from."""


def rule_of(row: SpotRuleRow) -> SpotRule:
    """The core's rule of a stored one."""
    return SpotRule.model_validate(
        {**row.model_dump(), "created_at": utc(row.created_at), "retired_at": utc_or_none(row.retired_at)}
    )


def _due_hours(s: Session) -> float:
    """Hours from draw to due (Settings' due hours for "spot_check", else the built-in)."""
    return Defaults.model_validate(latest_settings(s)).due_hours_for(DUE_REASON)


def _add(s: Session, rule: SpotRuleRow, run: RunRow, drawn_by: DrawnBy, hours: float) -> int:
    """Record one draw as an open spot-check of the run's current (shipped) round; its id."""
    row = SpotCheckRow(
        rule_id=stored_id(rule),
        run_id=stored_id(run),
        round_no=run.round,
        rubric_name=run.rubric_name,
        rubric_version=run.rubric_version,
        drawn_by=drawn_by,
        seed=rule.seed,
        share=rule.share,
        number=draw_number(rule.seed, stored_id(run)),
    )
    row.due_at = row.created_at + timedelta(hours=hours)
    s.add(row)
    s.flush()
    audit.append(
        s,
        "system",
        "spot_check.drawn",
        "spot_check",
        row.id,
        run_id=run.id,
        detail={
            "rule": rule.id,
            "drawn_by": drawn_by,
            "share": rule.share,
            "number": row.number,
            "due_at": row.due_at.isoformat(),
        },
    )
    _announce(s, row, "drawn")
    return stored_id(row)


def _announce(s: Session, row: SpotCheckRow, moment: str) -> bool:
    """Tell the alert hooks a spot-check is due: once when it is drawn (`moment` "drawn"), and once more per due
    time that has passed (`moment` "overdue")."""
    due = utc(row.due_at).isoformat() if row.due_at else None
    data = {
        "spot_check_id": row.id,
        "run_id": row.run_id,
        "rubric": row.rubric_name,
        "due_at": due,
        "owner": row.owner,
        "drawn_by": row.drawn_by,
        "overdue": moment == "overdue",
    }
    return (
        emit(
            s,
            alert_kinds.SPOT_CHECK_DUE,
            f"spot-check {row.id}",
            data,
            key=f"{alert_kinds.SPOT_CHECK_DUE}:{row.id}:{moment if moment == 'drawn' else due}",
            run_id=row.run_id,
        )
        is not None
    )


def _applies(rule: SpotRuleRow, run: RunRow) -> bool:
    """Whether the run falls under the rule (rubric, domain, panel)."""
    domain = str((run.rubric_json or {}).get("domain", ""))
    return rule_of(rule).applies(run.rubric_name, domain, run.reviewer_b, run.reviewer_c)


def _locked(stmt: Any) -> Any:
    """The rules, locked for this transaction in id order: a sweep and a shipping that draw under one rule at once
    take turns (PostgreSQL; SQLite's write transaction already holds the database), so each sees the other's
    spot-checks and neither trips over the unique (rule, run) key."""
    return stmt.order_by(SpotRuleRow.id).with_for_update()


def draw_run(s: Session, run: RunRow) -> list[int]:
    """At shipping: enter the run into every active rule's share draw; the new spot-check ids."""
    rules = s.exec(
        _locked(select(SpotRuleRow).where(SpotRuleRow.active, SpotRuleRow.rubric_name == run.rubric_name))
    ).all()
    hours, out = None, []
    for rule in rules:
        if not _applies(rule, run) or not is_drawn(rule.seed, rule.share, stored_id(run)):
            continue
        if (
            s.exec(
                select(SpotCheckRow.id).where(SpotCheckRow.rule_id == rule.id, SpotCheckRow.run_id == run.id)
            ).first()
            is not None
        ):
            continue
        hours = _due_hours(s) if hours is None else hours
        out.append(_add(s, rule, run, "share", hours))
    return out


def _shipped_runs(s: Session, rule: SpotRuleRow) -> list[tuple[RunRow, datetime]]:
    """The rule's rubric's shipped runs with the time they shipped, shipped since the rule was saved."""
    shipped_at = (
        select(StateChangeRow.run_id, func.max(StateChangeRow.created_at).label("at"))
        .where(col(StateChangeRow.to_status).in_(SHIPPED))
        .group_by(col(StateChangeRow.run_id))
        .subquery()
    )
    # Only the columns the draw reads: a run's spec and outputs can be large, and this runs every sweep.
    columns = load_only(*(getattr(RunRow, name) for name in DRAW_COLUMNS))
    stmt = (
        select(RunRow, shipped_at.c.at)
        .options(columns)
        .join(shipped_at, shipped_at.c.run_id == RunRow.id)
        .where(
            RunRow.rubric_name == rule.rubric_name,
            col(RunRow.status).in_(SHIPPED),
            shipped_at.c.at >= utc(rule.created_at),
        )
        .order_by(col(RunRow.id))
    )
    return [(run, utc(at)) for run, at in s.exec(stmt).all() if _applies(rule, run)]


def draw_all(s: Session, now: datetime) -> list[int]:
    """The sweep: every active rule's share draw over its shipped runs, then the floor of each complete week."""
    hours, out = _due_hours(s), []
    for rule in s.exec(_locked(select(SpotRuleRow).where(SpotRuleRow.active))).all():
        runs = _shipped_runs(s, rule)
        chosen = set(s.exec(select(SpotCheckRow.run_id).where(SpotCheckRow.rule_id == rule.id)).all())
        for run, _ in runs:
            run_id = stored_id(run)
            if run_id not in chosen and is_drawn(rule.seed, rule.share, run_id):
                out.append(_add(s, rule, run, "share", hours))
                chosen.add(run_id)
        if rule.floor <= 0:
            continue
        weeks: dict = defaultdict(list)
        for run, at in runs:
            weeks[week_of(at)].append(run)
        for week, week_runs in sorted(weeks.items()):
            if not week_ended(week, now):
                continue
            by_id = {r.id: r for r in week_runs}
            for run_id in floor_top_up(rule.seed, rule.floor, by_id, chosen):
                out.append(_add(s, rule, by_id[run_id], "floor", hours))
                chosen.add(run_id)
    return out


def sweep_spot_checks(s: Session, now: datetime) -> int:
    """The periodic pass's draw (each complete week's floor, and any run a shipping missed), then the reminders
    (`remind_spot_checks`); how many events it emitted."""
    return len(draw_all(s, now)) + remind_spot_checks(s, now)


def remind_spot_checks(s: Session, now: datetime) -> int:
    """A reminder for each open spot-check past its due time; how many events it emitted."""
    late = s.exec(
        select(SpotCheckRow)
        .where(
            SpotCheckRow.status == "open", col(SpotCheckRow.due_at).is_not(None), col(SpotCheckRow.due_at) <= utc(now)
        )
        .order_by(col(SpotCheckRow.id))
    ).all()
    # A reminder is keyed by the due time it reminds of: one re-dated after its reminder is reminded again.
    return sum(_announce(s, row, "overdue") for row in late)
