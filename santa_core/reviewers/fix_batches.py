"""The fix agent's per-item fixes of a batch pattern as one Message Batch, at the batch discount.

When a batch reviews through the Message Batches API, the fixes a pattern's approval needs for the
items it reaches (`santa_core.batch.fixing`) go the same way: one job per item, the exact body the
sync fix agent sends (`batch=True` for the cache plan), submitted once, polled until it ends, each
answer validated like a sync answer and priced at the batch rate (`answer_result(batch=True)`).
`Answered` hands an answer to `propose_fix`, so the scope rule applies exactly as for a sync call.
`OnRecord` puts every call of a fix agent on record: sent (committed) before it leaves, answered after.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import anthropic
from anthropic.types import Message
from pydantic import BaseModel, ConfigDict, Field, model_validator

from santa_core.models import CallPurpose, FixPlan, LLMCall
from santa_core.reviewers import message_batches as mb
from santa_core.reviewers.anthropic import DEFAULT_EFFORT, DEFAULT_MAX_TOKENS, answer_result, planned, request_body
from santa_core.reviewers.base import FixAnswer, Fixer, FixRequest, OnSend, journaled
from santa_core.reviewers.caching import LEDGER
from santa_core.reviewers.calls import fix_answer
from santa_core.reviewers.prompts import build_fix_prompt


class FixJob(BaseModel):
    """One item's fix in a Message Batch: its custom_id, the fix agent's model and request, the body sent."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    purpose: ClassVar[CallPurpose] = "fix"

    custom_id: str
    model: str = Field(min_length=1)
    request: FixRequest
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=1)
    effort: str | None = DEFAULT_EFFORT
    params: dict = Field(default_factory=dict)

    @model_validator(mode="after")
    def _fill_params(self) -> FixJob:
        if not self.params:
            prompt = build_fix_prompt(self.request.spec, self.request.output, self.request.issues)
            self.__dict__["params"] = request_body(
                self.model,
                self.max_tokens,
                prompt,
                FixPlan,
                self.effort,
                cache=planned(LEDGER, self.model, prompt, True),
            )
        return self


def answers(client: anthropic.Anthropic, batch_id: str, jobs: Sequence[FixJob]) -> dict[str, FixAnswer]:
    """Every job's answer by custom_id once the batch has ended (a job with no result line is an error answer)."""
    by_id = {job.custom_id: job for job in jobs}
    status = mb.poll(client, batch_id)
    found = mb.read_results(
        client,
        batch_id,
        by_id,
        lambda job, result: _answer(job, result, status.latency_s),
        lambda job: FixAnswer(plan=None, error="the results hold two lines for this request"),
    )
    missing = FixAnswer(plan=None, error=f"no result returned for this request in message batch {batch_id}")
    return {cid: found.get(cid, missing) for cid in by_id}


def _answer(job: FixJob, result: Any, latency_s: float) -> FixAnswer:
    """One result as the fix agent's answer: validated like a sync answer, priced at the batch rate."""
    kind = getattr(result, "type", None)
    if kind == "errored":
        return unanswered(job, f"batch request errored: {mb._error_text(result)}")
    if kind != "succeeded" or not isinstance(getattr(result, "message", None), Message):
        return unanswered(job, f"the batch request did not succeed ({kind})")
    return fix_answer(answer_result(result.message, job.params, FixPlan, "fix", latency_s, batch=True), job.model)


class Answered:
    """A fix agent that hands back an answer the Message Batch already gave (for `propose_fix`)."""

    def __init__(self, name: str, answer: FixAnswer) -> None:
        self.name, self.answer = name, answer

    def propose(self, request: FixRequest) -> FixAnswer:
        return self.answer


def unanswered(job: FixJob, error: str) -> FixAnswer:
    """A job the API says it did not process (errored, canceled, expired, refused): an error answer whose call row
    answers the job's *sent* note at no cost (the API bills only the requests it processed)."""
    return FixAnswer(
        plan=None, error=error, calls=[LLMCall(purpose="fix", model=job.model, request=job.params, error=error)]
    )


class OnRecord:
    """A fix agent whose every call is on record: `note` commits it as sent before the request leaves (raising
    stops it), `keep` stores the answered calls after, whatever the answer."""

    def __init__(self, fixer: Fixer, note: OnSend, keep: Callable[[list[LLMCall]], None]) -> None:
        self.fixer, self.name, self.note, self.keep = fixer, fixer.name, note, keep

    def propose(self, request: FixRequest) -> FixAnswer:
        with journaled(self.note):  # (per thread: each worker thread of the caller opens its own)
            answer = self.fixer.propose(request)
        self.keep(answer.calls)
        return answer
