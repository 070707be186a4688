"""docs/architecture.md stays true about what changes under it: every migration is in its list, and the run
page's live interval is the one the page uses."""

from __future__ import annotations

import re
from pathlib import Path

from ui.run_view import LIVE_EVERY_S

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_the_migration_list_names_every_revision() -> None:
    revisions = sorted(
        p.name[:4] for p in (ROOT / "storage" / "migrations" / "versions").glob("[0-9][0-9][0-9][0-9]_*.py")
    )
    assert revisions, "no migrations found"
    row = next(line for line in DOC.splitlines() if line.startswith("| `migrations/`"))
    assert sorted(set(re.findall(r"`(\d{4})`", row))) == revisions


def test_the_run_page_polls_as_often_as_the_doc_says() -> None:
    assert f"every {LIVE_EVERY_S:g} s" in DOC
