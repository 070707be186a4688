"""How the verification record names a round nobody could judge: the model provider failed (issue 34).

The stored gate of such a round is NAUGHTY (it fails closed: nothing ships), and the JSON keeps it so, beside
`reviewed: false` and the failed calls' words; but nobody judged the output, so the readable record (HTML, PDF) calls
the round "could not be reviewed" and names the failed calls in the provider's words
(`santa_core.run.unreviewed.could_not_review`), never "NAUGHTY" alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from pydantic import BaseModel

from santa_core import words as w
from santa_core.run.unreviewed import HEADLINE

OUTCOME = HEADLINE[:1].lower() + HEADLINE[1:]
"""A round's outcome when nobody judged it: "could not be reviewed: the model provider failed"."""
GATE = "could not be reviewed (stored as NAUGHTY: it fails closed, nothing ships)"
"""The gate's outcome of such a round: what the stored decision means there."""


class Judged(BaseModel):
    """Whether anybody could judge a record's round (`storage.records` fills it in from the stored round)."""

    unreviewed: str = ""
    """Why nobody could judge the round (the model provider failed: the failed calls' words); "" when judged."""
    reviewed: bool = True
    """False when the model provider failed: the stored gate (NAUGHTY) only holds the output back, it is no verdict."""


class _Gate(Protocol):
    @property
    def decision(self) -> str: ...


class _Round(Protocol):
    """A record's round, as far as its heading and audit rows need it."""

    @property
    def round_no(self) -> int: ...
    @property
    def unreviewed(self) -> str: ...
    @property
    def gate(self) -> _Gate | None: ...


def round_title(rnd: _Round, dash: str) -> str:
    """A round's heading: "Round n", then the gate's decision or that nobody could judge it."""
    outcome = OUTCOME if rnd.unreviewed else rnd.gate and rnd.gate.decision
    return f"Round {rnd.round_no}" + (f" {dash} {outcome}" if outcome else "")


def gate_lines(decision: str, reasons: list[str], unreviewed: str) -> tuple[str, list[str]]:
    """The gate's heading and paragraphs: its decision and reasons, or first that nobody could judge the output."""
    if not unreviewed:
        return f"Gate: {decision}", reasons
    return f"Gate: {GATE}", [f"{HEADLINE}: {unreviewed}", *reasons]


def audit_detail(action: str, detail: Mapping[str, object], rounds: Iterable[_Round]) -> str:
    """An audit event's detail in words; the gate event of a round nobody judged says so instead of "NAUGHTY"."""
    if action == "round.gate" and detail.get("round") in {rnd.round_no for rnd in rounds if rnd.unreviewed}:
        detail = {**detail, "decision": GATE}
    return w.detail(detail)
