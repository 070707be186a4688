"""Reviews through the Anthropic Message Batches API: about half price, answered within 24 h.

A batch sample's reviews go out as one Message Batch (`submit`), are tracked (`poll`) and read
back (`collect`) as the same `ReviewOutcome`s the synchronous reviewer produces: the request
params come from the same builder and every answer goes through the same validation, so a
refusal, a truncated or invalid answer, or a PASS that contradicts its own failed checks fails
closed exactly as it does there. Only the price (the rates file's batch discount) and the
latency (see `BatchStatus.latency_s`) differ.

Resuming needs only plain data: the batch id `submit` returns and the job list
(`dump_jobs` / `load_jobs`). A job keeps the exact params it was submitted with, fence nonce
included, so the call log records what was really sent even when collected after a restart.

Each job's request is put on record as sent before the batch is created (the call log's one door,
`note_sending`); its answer row is stored with the item's run when the batch is collected.
Failures of the API calls themselves raise `BatchError` with a readable reason; the caller polls again later.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar, Literal, Protocol, TypeVar, cast

import anthropic
from anthropic.types import Message
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from anthropic.types.messages.batch_create_params import Request
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

from santa_core.models import CallPurpose, LLMCall, Review, ReviewOutcome, ReviewStatus, Slot, Usage
from santa_core.reviewers.anthropic import (
    DEFAULT_EFFORT,
    DEFAULT_MAX_TOKENS,
    CallResult,
    answer_result,
    describe_failure,
    review_body,
    review_outcome,
)
from santa_core.reviewers.base import ReviewRequest, note_sending
from santa_core.reviewers.calls import keep_contract

CUSTOM_ID_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
"""What the API accepts as a request's custom_id (a longer one is a 400 for the whole batch)."""
MAX_BATCH_REQUESTS = 100_000
MAX_BATCH_BYTES = 256_000_000
J = TypeVar("J")
T = TypeVar("T")
"""The API's limits per batch: 100,000 requests or 256 MB (read as 10^6 bytes, the safe side)."""

_CUSTOM_ID = re.compile(CUSTOM_ID_PATTERN)
_NOT_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]+")

_UNPROCESSED = {
    "canceled": "batch request was canceled before it was processed",
    "expired": "batch request expired: the batch reached its 24-hour limit before processing it",
}


class BatchError(RuntimeError):
    """A Message Batches API call failed after the SDK's retries; safe to try again later."""


class BatchNotEnded(BatchError):
    """Results were asked for while the batch is still processing."""


def custom_id_for(*parts: str) -> str:
    """A valid custom_id from any item id and slot, e.g. ("sku 12/é", "B") -> "sku_12_-B-<hash>"."""
    raw = "-".join(parts)
    clean = _NOT_ID_CHAR.sub("_", raw)
    if clean == raw and _CUSTOM_ID.match(clean):
        return clean
    # Changed or too long: a hash of the original keeps two ids that clean up alike apart.
    digest = hashlib.sha256(raw.encode()).hexdigest()[:12]
    return f"{clean[: 64 - len(digest) - 1]}-{digest}"


class Job(Protocol):
    """What a Message Batch sends of a job: its custom_id, model and body, and what the call is for."""

    purpose: ClassVar[CallPurpose]
    custom_id: str
    model: str
    params: dict


class ReviewJob(BaseModel):
    """One review to run in a batch: which model judges which request for which slot.

    `params` is the Messages request body, built once when the job is made (with its own fence
    nonce) and kept, so the job as JSON is all that is needed to resume after a restart.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    purpose: ClassVar[CallPurpose] = "review"

    custom_id: str
    model: str = Field(min_length=1)
    slot: Slot
    request: ReviewRequest
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=1)
    effort: str | None = DEFAULT_EFFORT
    params: dict = Field(default_factory=dict)

    @field_validator("custom_id")
    @classmethod
    def _valid_custom_id(cls, value: str) -> str:
        if not _CUSTOM_ID.match(value):
            raise ValueError(
                f"custom_id {value!r} must be 1-64 letters, digits, '_' or '-' "
                "(the Message Batches API's rule); build it with custom_id_for(item_id, slot)"
            )
        return value

    @model_validator(mode="after")
    def _fill_params(self) -> ReviewJob:
        if not self.params:
            # Frozen model: set the built body once, here, through the instance dict.
            self.__dict__["params"] = review_body(self.model, self.request, self.max_tokens, self.effort, batch=True)
        elif (self.params.get("model"), self.params.get("max_tokens")) != (self.model, self.max_tokens):
            raise ValueError(
                f"job {self.custom_id}: params were built for model {self.params.get('model')!r} "
                f"max_tokens {self.params.get('max_tokens')!r}, not {self.model!r} {self.max_tokens}"
            )
        return self


_JOBS = TypeAdapter(list[ReviewJob])


def dump_jobs(jobs: Sequence[ReviewJob]) -> str:
    """The job list as JSON text, to store next to the batch id."""
    return _JOBS.dump_json(list(jobs)).decode()


def load_jobs(text: str | bytes) -> list[ReviewJob]:
    """The job list back from `dump_jobs` text (params kept as they were submitted)."""
    return _JOBS.validate_json(text)


class RequestCounts(BaseModel):
    """How many requests of a batch are in each state (all but `processing` are 0 until it ends)."""

    processing: int = 0
    succeeded: int = 0
    errored: int = 0
    canceled: int = 0
    expired: int = 0


class BatchStatus(BaseModel):
    """A batch as the API reports it; plain data, safe to store or show."""

    batch_id: str
    processing_status: Literal["in_progress", "canceling", "ended"]
    request_counts: RequestCounts
    created_at: datetime
    expires_at: datetime
    ended_at: datetime | None = None
    cancel_initiated_at: datetime | None = None
    archived_at: datetime | None = None
    results_available: bool = False

    @property
    def ended(self) -> bool:
        """True once every request has succeeded, errored, been canceled or expired."""
        return self.processing_status == "ended"

    @property
    def latency_s(self) -> float:
        """Seconds from submit to end (server clock); 0 while unknown.

        A batch gives no per-request timing, so every review in it gets the batch's wall time:
        how long the sample waited, which is what latency means to the person waiting.
        """
        if self.ended_at is None:
            return 0.0
        return max(0.0, (self.ended_at - self.created_at).total_seconds())


def build_requests(jobs: Iterable[Job]) -> list[Request]:
    """The batch's `requests`: each job's custom_id and the exact params the sync reviewer sends."""
    # a job's params are the body `anthropic.request_body` built, kept as a plain dict (stored as JSON with the job)
    requests = [
        Request(custom_id=job.custom_id, params=cast(MessageCreateParamsNonStreaming, job.params)) for job in jobs
    ]
    _check_unique([r["custom_id"] for r in requests])
    return requests


def _check_unique(custom_ids: list[str]) -> None:
    twice = sorted(cid for cid, n in Counter(custom_ids).items() if n > 1)
    if twice:
        raise ValueError(f"custom_id must be unique within a batch; repeated: {', '.join(twice[:5])}")


def _check_limits(requests: list[Request]) -> None:
    """Refuse a batch the API would reject; splitting a sample into several batches is the caller's."""
    if not requests:
        raise ValueError("a batch needs at least one review job")
    if len(requests) > MAX_BATCH_REQUESTS:
        raise ValueError(
            f"{len(requests)} requests exceed the API's {MAX_BATCH_REQUESTS:,} per batch; split the sample"
        )
    size = len(json.dumps({"requests": requests}).encode())
    if size > MAX_BATCH_BYTES:
        raise ValueError(f"batch is {size:,} bytes, over the API's 256 MB; split the sample")


def _timeout_of(client: anthropic.Anthropic) -> float:
    timeout = client.timeout
    if isinstance(timeout, int | float):
        return float(timeout)
    return float(getattr(timeout, "read", None) or 0.0)


def _api_error(action: str, exc: Exception, client: anthropic.Anthropic) -> BatchError:
    """'could not <action>: rate limited (429 rate_limit_error) after 3 retries: ...'."""
    _, reason = describe_failure(exc, _timeout_of(client))
    return BatchError(f"could not {action}: {reason}")


NOT_TAKEN = (429, 529)
"""Answers to a create that say the batch was not made (rate limited, overloaded): the create is tried again."""


CREATE_RETRIES = 3
"""Creates tried again after an answer that says no batch was made (NOT_TAKEN), backing off."""


def submit(
    client: anthropic.Anthropic, jobs: Sequence[Job], refused: Callable[[list[LLMCall]], None] = lambda calls: None
) -> str:
    """Create one Message Batch from the jobs; returns its API id (store it with the jobs).

    Every job's request is put on record as sent (`note_sending`, once per create) before the batch is created: a
    call log that cannot take them stops the create (CallNotRecorded). A create the API answered without making a
    batch gives `refused` each job's failed call (cost 0: not billed), so none stays counted as cut off.

    No chunking: over 100,000 requests or 256 MB raises ValueError. The API takes no idempotency key, so a
    create is tried again (up to CREATE_RETRIES times, backing off) only after an answer that says no batch
    was made (NOT_TAKEN). One that got no answer (a timeout, a dropped connection) or a server error may have
    made one: it raises BatchError with the SDK's error as its cause, for a person to look before sending again
    (its jobs stay on record as sent, counted at their estimate).
    """
    requests = build_requests(jobs)
    _check_limits(requests)
    action = f"create a message batch of {len(requests)} request(s)"
    create = client.with_options(max_retries=0).messages.batches.create
    for attempt in range(CREATE_RETRIES + 1):
        for job in jobs:
            note_sending(job.purpose, job.model, job.params)  # write-ahead: each item on record before the batch exists
        try:
            return create(requests=requests).id
        except anthropic.APIStatusError as exc:
            error = _api_error(action, exc, client)
            error.__cause__ = exc
            if not may_have_made(error):
                refused([_error_call(job, str(error)) for job in jobs])
            if exc.status_code not in NOT_TAKEN or attempt == CREATE_RETRIES:
                raise error from exc
            time.sleep(_retry_after(exc) or min(0.5 * 2**attempt, 8.0) * CREATE_BACKOFF)
        except Exception as exc:  # noqa: BLE001 - every failure is reported the same readable way
            raise _api_error(action, exc, client) from exc
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


MAX_POLL_FAILURES = 8
"""Message Batch polls (or result reads) that may fail in a row before the desk stops and a person looks (an expired
batch, a revoked key): polling is free, and since the SDK retries nothing, a passing failure must not stop it."""
CREATE_BACKOFF = 1.0
"""Scale of the wait between creates when the API named none (tests set 0)."""


def _error_call(job: Job, error: str) -> LLMCall:
    """A job's request that was refused before any batch was made: its failed call (not billed)."""
    return CallResult(None, "", Usage(), error, ReviewStatus.ERROR, 0.0, job.params).as_llm_call(job.purpose, job.model)


def _retry_after(exc: anthropic.APIStatusError) -> float | None:
    """The wait the API asked for (retry-after, in seconds, at most a minute), if any."""
    try:
        return min(60.0, max(0.0, float(exc.response.headers.get("retry-after", ""))))
    except ValueError:
        return None


def may_have_made(error: BatchError) -> bool:
    """Whether a failed create may have made the batch all the same: it got no answer (a timeout, a dropped
    connection), or a server error or a request timeout answered it."""
    cause = error.__cause__
    if isinstance(cause, anthropic.APIConnectionError):  # (timeouts are connection errors)
        return True
    return isinstance(cause, anthropic.APIStatusError) and (
        cause.status_code == 408 or (cause.status_code >= 500 and cause.status_code not in NOT_TAKEN)
    )


def _status_of(batch: Any) -> BatchStatus:
    return BatchStatus(
        batch_id=batch.id,
        processing_status=batch.processing_status,
        request_counts=RequestCounts.model_validate(batch.request_counts.model_dump()),
        created_at=batch.created_at,
        expires_at=batch.expires_at,
        ended_at=batch.ended_at,
        cancel_initiated_at=batch.cancel_initiated_at,
        archived_at=batch.archived_at,
        results_available=bool(batch.results_url),
    )


def poll(client: anthropic.Anthropic, batch_id: str) -> BatchStatus:
    """The batch's current status (idempotent; call as often as the page or worker likes)."""
    try:
        return _status_of(client.messages.batches.retrieve(batch_id))
    except Exception as exc:  # noqa: BLE001
        raise _api_error(f"read message batch {batch_id}", exc, client) from exc


def cancel(client: anthropic.Anthropic, batch_id: str) -> BatchStatus:
    """Ask the API to stop the batch; requests not yet processed end as `canceled`."""
    try:
        return _status_of(client.messages.batches.cancel(batch_id))
    except Exception as exc:  # noqa: BLE001
        raise _api_error(f"cancel message batch {batch_id}", exc, client) from exc


def collect(client: anthropic.Anthropic, batch_id: str, jobs: Sequence[ReviewJob]) -> dict[str, ReviewOutcome]:
    """Every job's outcome by custom_id, in job order, once the batch has ended.

    Results are matched by custom_id (the API may send them in any order); a job with no line
    in the results is an error outcome, lines for unknown ids are ignored. Raises BatchNotEnded
    while the batch is processing and BatchError when the results cannot be read.
    """
    by_id = {job.custom_id: job for job in jobs}
    _check_unique([job.custom_id for job in jobs])
    # Our own retrieve (the SDK's results() makes another) gives the end time for latency.
    status = poll(client, batch_id)
    if not status.ended:
        raise BatchNotEnded(
            f"message batch {batch_id} is still {status.processing_status} "
            f"({status.request_counts.processing} processing); poll again before {status.expires_at:%Y-%m-%d %H:%M} UTC"
        )
    found = read_results(
        client,
        batch_id,
        by_id,
        lambda job, result: outcome_of(job, result, status.latency_s),
        lambda job: _error_outcome(job, "the results hold two lines for this request", status.latency_s),
    )
    missing = f"no result returned for this request in message batch {batch_id}"
    return {
        cid: found[cid] if cid in found else _error_outcome(job, missing, status.latency_s)
        for cid, job in by_id.items()
    }


def read_results(
    client: anthropic.Anthropic,
    batch_id: str,
    by_id: Mapping[str, J],
    read: Callable[[J, Any], T],
    twice: Callable[[J], T],
) -> dict[str, T]:
    """Stream the results file into `read(job, result)` by custom_id (`twice(job)` for an id answered twice);
    lines for ids we never sent are skipped."""
    found: dict[str, T] = {}
    decoder = None
    try:
        decoder = client.messages.batches.results(batch_id)
        for line in decoder:
            custom_id = getattr(line, "custom_id", None) or ""
            job = by_id.get(custom_id)
            if job is None:
                continue
            # Twice: never seen from the API; if it happens we cannot tell which answer is the real one.
            found[custom_id] = twice(job) if custom_id in found else read(job, getattr(line, "result", None))
    except Exception as exc:  # noqa: BLE001 - a broken stream or bad line: collect again later
        raise _api_error(f"read the results of message batch {batch_id}", exc, client) from exc
    finally:
        if decoder is not None:
            decoder.close()
    return found


def outcome_of(job: ReviewJob, result: Any, latency_s: float = 0.0) -> ReviewOutcome:
    """One batch result as the job's outcome: validated like a sync answer, priced at the batch rate."""
    kind = getattr(result, "type", None)
    try:
        if kind == "succeeded":
            message = result.message
            if not isinstance(message, Message):
                raise TypeError(f"answer was not a message: {type(message).__name__}")
            res = keep_contract(
                answer_result(message, job.params, Review, "review", latency_s, batch=True),
                job.request.rubric,
                job.request.output,
            )
            return review_outcome(res, job.slot, job.model, job.model)
        if kind == "errored":
            return _error_outcome(job, f"batch request errored: {_error_text(result)}", latency_s)
    # Fail closed: a result we cannot read is an error outcome, never a verdict.
    except Exception as exc:  # noqa: BLE001
        return _error_outcome(job, f"could not read the batch result: {type(exc).__name__}: {exc}", latency_s)
    reason = _UNPROCESSED.get(str(kind), f"unknown batch result type {kind!r}")
    return _error_outcome(job, reason, latency_s)


def _error_text(result: Any) -> str:
    """'overloaded_error: Overloaded' from an errored result's error response."""
    inner = getattr(getattr(result, "error", None), "error", None)
    kind = getattr(inner, "type", None) or "unknown error"
    message = getattr(inner, "message", None)
    return f"{kind}: {message}" if message else str(kind)


def _error_outcome(job: ReviewJob, error: str, latency_s: float) -> ReviewOutcome:
    """An error outcome (not a pass) that still logs the request that was sent."""
    res = CallResult(None, "", Usage(), error, ReviewStatus.ERROR, latency_s, job.params)
    return review_outcome(res, job.slot, job.model, job.model)
