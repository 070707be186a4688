"""The Message Batches API as the batch driver uses it: one Anthropic client behind the calls it makes.

The batch code (`santa_core.batch`) imports no provider SDK: the desk wires a client (`Client`), the driver hands
it to `BatchApi` and asks it to send a sample's reviews or a pattern's fixes, poll, cancel and collect; what goes
out and comes back is `message_batches`' and `fix_batches`' (jobs, statuses, outcomes, answers, `BatchError`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import anthropic

from santa_core.models import LLMCall, ReviewOutcome
from santa_core.reviewers import fix_batches
from santa_core.reviewers import message_batches as mb
from santa_core.reviewers.base import FixAnswer

Client = anthropic.Anthropic
"""What the desk hands the batch driver (`client_for`): the batch code never looks inside it."""


class BatchApi:
    """The Message Batches calls of a sample's reviews and a pattern's fixes, over one client."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def submit(self, jobs: Sequence[mb.Job], refused: Callable[[list[LLMCall]], None]) -> str:
        """Create one Message Batch of the jobs (each on record as sent first); its API id (`mb.submit`)."""
        return mb.submit(self.client, jobs, refused)

    def poll(self, api_id: str) -> mb.BatchStatus:
        """Where the batch stands (`mb.poll`)."""
        return mb.poll(self.client, api_id)

    def cancel(self, api_id: str) -> mb.BatchStatus:
        """Ask the API to stop the batch (`mb.cancel`)."""
        return mb.cancel(self.client, api_id)

    def reviews(self, api_id: str, jobs: Sequence[mb.ReviewJob]) -> dict[str, ReviewOutcome]:
        """Every review job's outcome by custom_id, once the batch ended (`mb.collect`)."""
        return mb.collect(self.client, api_id, jobs)

    def fixes(self, api_id: str, jobs: Sequence[fix_batches.FixJob]) -> dict[str, FixAnswer]:
        """Every fix job's answer by custom_id, once the batch ended (`fix_batches.answers`)."""
        return fix_batches.answers(self.client, api_id, jobs)
