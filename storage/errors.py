"""What the run stores refuse, as exceptions the pages and the command line catch."""

from __future__ import annotations

from santa_core.run.store import Conflict


class RunNotFound(LookupError):
    """No run has this id."""

    def __init__(self, run_id: int) -> None:
        super().__init__(f"run {run_id} does not exist")
        self.run_id = run_id


class RoundNotFound(LookupError):
    """The run has no stored round with this number (start_round was not called)."""

    def __init__(self, run_id: int, round_no: int) -> None:
        super().__init__(f"run {run_id} has no round {round_no}")
        self.run_id, self.round_no = run_id, round_no


class SlotAssigned(ValueError):
    """A person may not fill this reviewer slot: it is someone else's, or they filled the other one."""


class EscalationNotOpen(LookupError):
    """The run has no open escalation to assign, re-date or resolve."""


class RoundConflict(ValueError):
    """start_round with a different text for a round that reviewers already worked on."""


class MoveRefused(ValueError):
    """A person asked `transition` for a move that only system code (or resolve_escalation) makes."""


class ClaimLost(Conflict):
    """A runner's write to a run another process has claimed since: this process was taken for dead (it
    stopped heartbeating) and the run taken over. Refused, so the run is never driven twice."""

    def __init__(self, run_id: int, holder: str) -> None:
        super().__init__(f"run {run_id} is claimed by {holder} now; this process stops touching it")
