"""The verification record's panel line: the reviewers' families, and the third reviewer when the run had one."""

from __future__ import annotations

from typing import Protocol


class Panel(Protocol):
    """What the panel line reads of a record."""

    panel_families: str
    spans_two_families: bool | None
    reviewer_d: str | None


def panel_line(r: Panel) -> str:
    """'Claude + GPT: two model families' or '... one model family: their misses are not independent', then the third
    reviewer of the rubric's high-risk criteria when there was one."""
    third = f"; third reviewer D {r.reviewer_d} on the high-risk criteria" if r.reviewer_d else ""
    return _families(r) + third


def _families(r: Panel) -> str:
    if r.spans_two_families is None:
        return "families not recorded"
    if "person" in r.panel_families.split(" + "):
        return f"{r.panel_families}: a person in the panel"
    if r.spans_two_families:
        return f"{r.panel_families}: two model families"
    if "unknown (" in r.panel_families:
        return f"{r.panel_families}: a model family unknown to the desk, so independence cannot be told"
    return f"{r.panel_families}: one model family, so the reviewers' misses are not independent"
