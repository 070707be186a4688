"""The saved defaults for new runs (Settings page): append-only rows, the newest counts."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from santa_core.config import Saved
from santa_core.roles import Permission
from storage import audit
from storage.hashing import json_hash
from storage.people import require
from storage.tables import SettingsRow
from storage.transactions import StoreBase


def latest_settings(s: Session) -> dict[str, Any]:
    """The newest saved settings inside a transaction ({} before the first save)."""
    row = s.exec(select(SettingsRow).order_by(col(SettingsRow.id).desc()).limit(1)).first()
    return dict(row.values_json) if row else {}


class SettingsStore(StoreBase):
    """Read and save the defaults."""

    def get_settings(self) -> dict[str, Any]:
        """The saved defaults for new runs ({} before the first save)."""
        with self._read() as s:
            return latest_settings(s)

    def saved_settings(self) -> dict[str, Saved]:
        """The saved defaults, each with the person and time of the save that set its current value (a later save
        that kept it unchanged does not count: the page says who chose it)."""
        with self._read() as s:
            rows = s.exec(
                select(col(SettingsRow.values_json), col(SettingsRow.saved_by), col(SettingsRow.saved_at)).order_by(
                    col(SettingsRow.id)
                )
            ).all()
        found: dict[str, Saved] = {}
        for values, by, at in rows:
            for key, value in (values or {}).items():
                if key not in found or found[key].value != value:
                    found[key] = Saved(value, by, at)
        return found

    def save_settings(self, values: dict[str, Any], actor: str) -> None:
        """Append a settings row: the previous values updated with `values`."""
        with self._tx() as s:
            require(s, actor, Permission.EDIT_SETTINGS)
            before = latest_settings(s)
            merged = {**before, **values}
            s.add(SettingsRow(values_json=merged, saved_by=actor))
            audit.append(
                s,
                actor,
                "settings.saved",
                "settings",
                "defaults",
                before=json_hash(before),
                after=json_hash(merged),
                detail={"changed": sorted(k for k in merged if merged[k] != before.get(k))},
            )
