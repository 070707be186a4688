"""The call log for calls that serve a batch's own work or a rubric trial (a run's calls go through RoundStore).

Both halves of the write-ahead log: `note_call_sent` commits a call as *sent* before its request leaves
(counted at its estimate until an answer row with the same request hash is stored), `note_calls_answered`
commits what came back (or how it failed, with its cost), tied to what the call served.
"""

from __future__ import annotations

from santa_core.models import LLMCall
from santa_core.reviewers.base import Served
from storage.hashing import json_hash
from storage.rows import call_row
from storage.tables import CallSentRow
from storage.transactions import StoreBase
from storage.workers import this_worker


def sent_row(served: Served, purpose: str, model: str, request: dict, estimate_usd: float) -> CallSentRow:
    """The write-ahead row of one call, tied to what it served, from this process."""
    return CallSentRow(
        run_id=served.run_id,
        round_no=served.round_no,
        slot=served.slot,
        batch_id=served.batch_id,
        trial_key=served.trial_key,
        purpose=purpose,
        model=model,
        request_hash=json_hash(request),
        estimate_usd=estimate_usd,
        worker=this_worker(),
    )


class CallLogStore(StoreBase):
    """Implements `santa_core.reviewers.base.CallLog`."""

    def note_call_sent(self, served: Served, purpose: str, model: str, request: dict, estimate_usd: float) -> None:
        """Commit one call as *sent*, before its request leaves."""
        with self._tx() as s:
            s.add(sent_row(served, purpose, model, request, estimate_usd))

    def note_calls_answered(self, served: Served, calls: list[LLMCall]) -> None:
        """Commit the answer (or failure) rows of calls noted as sent."""
        if not calls:
            return
        with self._tx() as s:
            s.add_all(
                [
                    call_row(served.run_id, served.round_no, call, served.slot, served.batch_id, served.trial_key)
                    for call in calls
                ]
            )
