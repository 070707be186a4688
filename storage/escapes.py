"""Escapes: defects found after a run shipped, reported against the run."""

from __future__ import annotations

from sqlmodel import col, select

from santa_core.models import RunStatus
from santa_core.roles import Permission
from santa_core.text import sha256_text
from storage import audit
from storage.people import require
from storage.queries import stored_id
from storage.rows import check_text, escape_of
from storage.run_rows import lock_run
from storage.tables import EscapeRow
from storage.transactions import StoreBase
from storage.views import EscapeView

SEVERITIES = ("critical", "major", "minor")
"""How bad an escape is, as the reporter judges it."""


class EscapeStore(StoreBase):
    """Report and list escapes."""

    def report_escape(self, run_id: int, criterion: str, description: str, severity: str, actor: str) -> int:
        """Record a defect found after the run shipped; its id."""
        if severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {', '.join(SEVERITIES)}")
        if not criterion.strip():
            raise ValueError("say which criterion the defect falls under")
        check_text(description, "escape description")
        with self._tx() as s:
            require(s, actor, Permission.REPORT_ESCAPE)
            run = lock_run(s, run_id)
            if RunStatus(run.status) not in (RunStatus.SHIPPED, RunStatus.RESOLVED_SHIPPED):
                raise ValueError(f"run {run_id} is {run.status}: escapes are reported on shipped runs only")
            row = EscapeRow(
                run_id=run_id,
                criterion=criterion.strip(),
                description=description.strip(),
                severity=severity,
                reported_by=actor,
                source="reported",
            )
            s.add(row)
            s.flush()
            audit.append(
                s,
                actor,
                "escape.reported",
                "escape",
                row.id,
                run_id=run_id,
                after=sha256_text(row.description),
                detail={"criterion": row.criterion, "severity": severity},
            )
            return stored_id(row)

    def escapes(self, run_id: int | None = None) -> list[EscapeView]:
        """Escapes, oldest first (of one run, or all)."""
        stmt = select(EscapeRow).order_by(col(EscapeRow.id))
        if run_id is not None:
            stmt = stmt.where(EscapeRow.run_id == run_id)
        with self._read() as s:
            return [escape_of(r) for r in s.exec(stmt).all()]
