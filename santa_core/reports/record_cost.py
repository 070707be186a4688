"""What a run's cost says about its calls cut off: the run page, `--json`, `resume` and the verification record
name them the same way (the figure itself is `storage.spend`'s, the one definition)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from santa_core.words import usd


class CutOffCall(BaseModel):
    """A model call put on record as sent whose answer was never stored (a crash, a kill, a lost
    connection): counted in the run's cost at its estimate, and asked again when the run resumes."""

    round_no: int
    purpose: str
    slot: str | None
    model: str
    estimate_usd: float
    sent_at: datetime

    def describe(self) -> str:
        """'review B (claude-haiku-5-5) in round 1, counted at $0.125'."""
        who = f"{self.purpose} {self.slot}" if self.slot else self.purpose
        return f"{who} ({self.model}) in round {self.round_no}, counted at {usd(self.estimate_usd)}"


ESCAPES = "Escapes (defects reported after the output shipped)"
"""The record's heading of its escapes, saying what an escape is."""


def cost_line(total_usd: float, cut_off: list[CutOffCall]) -> str:
    """The record's cost: '$0.934', and the calls cut off it counts at their estimate when there are any."""
    if not cut_off:
        return usd(total_usd)
    return (
        f"{usd(total_usd)}, with {len(cut_off)} call(s) cut off before their answer was stored, counted at their "
        "estimate (the most they may have cost): " + "; ".join(c.describe() for c in cut_off)
    )
