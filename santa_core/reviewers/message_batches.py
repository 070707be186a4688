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

Failures of the API calls themselves (after retries of 408/409/429/5xx and connection errors:
the SDK's for reads, `submit`'s own for the create) raise `BatchError` with a readable reason;
the caller polls again later.

A batch is never knowingly created twice. The API takes no idempotency key, so `submit` does
its own retries of the create: after a failure that the server may have accepted anyway (a
timeout, a dropped connection, a 408, 409 or 5xx other than 529) it first looks for the batch
with `find_submitted` (the newest batches of the same size, created since the submit began,
that the caller does not already track) and returns that one instead of sending again. A caller
that stores its jobs before submitting can do the same after a crash between the create and
storing the id. The limit: two desks sharing one API key that create batches of the same size
within the same minutes are indistinguishable, so nothing is adopted and a new batch is made.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import anthropic
from anthropic.types import Message
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

from santa_core.models import Review, ReviewOutcome, ReviewStatus, Slot, Usage
from santa_core.reviewers.anthropic import (
    DEFAULT_EFFORT,
    DEFAULT_MAX_TOKENS,
    CallResult,
    answer_result,
    describe_failure,
    review_body,
    review_outcome,
)
from santa_core.reviewers.base import ReviewRequest

CUSTOM_ID_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
"""What the API accepts as a request's custom_id (a longer one is a 400 for the whole batch)."""
MAX_BATCH_REQUESTS = 100_000
MAX_BATCH_BYTES = 256_000_000
"""The API's limits per batch: 100,000 requests or 256 MB (read as 10^6 bytes, the safe side)."""
SUBMIT_SKEW = timedelta(minutes=5)
"""Slack for the clock difference between this machine and the API when matching created_at."""
LIST_PAGE_SIZE = 100
"""Batches per page when looking for one already submitted (the API allows 1-1000)."""
RETRY_AFTER_CAP_S = 60.0
"""The longest wait a Retry-After header may ask of one create attempt."""
BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0
"""Exponential backoff between create attempts without Retry-After, as the SDK does it."""

_sleep: Callable[[float], None] = time.sleep
"""How `submit` waits between attempts (tests replace it to keep waits instant)."""

_CUSTOM_ID = re.compile(CUSTOM_ID_PATTERN)
_NOT_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]+")

_UNPROCESSED = {
    "canceled": "batch request was canceled before it was processed",
    "expired": "batch request expired: the batch reached its 24-hour limit before processing it",
}


class BatchError(RuntimeError):
    """A Message Batches API call failed after its retries; safe to try again later."""


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


class ReviewJob(BaseModel):
    """One review to run in a batch: which model judges which request for which slot.

    `params` is the Messages request body, built once when the job is made (with its own fence
    nonce) and kept, so the job as JSON is all that is needed to resume after a restart.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

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
            self.__dict__["params"] = review_body(self.model, self.request, self.max_tokens, self.effort)
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


def build_requests(jobs: Iterable[ReviewJob]) -> list[dict]:
    """The batch's `requests`: each job's custom_id and the exact params the sync reviewer sends."""
    requests = [{"custom_id": job.custom_id, "params": job.params} for job in jobs]
    _check_unique([r["custom_id"] for r in requests])
    return requests


def _check_unique(custom_ids: list[str]) -> None:
    twice = sorted(cid for cid, n in Counter(custom_ids).items() if n > 1)
    if twice:
        raise ValueError(f"custom_id must be unique within a batch; repeated: {', '.join(twice[:5])}")


def _check_limits(requests: list[dict]) -> None:
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


def _api_error(action: str, exc: Exception, client: anthropic.Anthropic, retries: int = 0) -> BatchError:
    """'could not <action>: rate limited (429 rate_limit_error) after 3 retries: ...'.

    `retries` counts our own attempts before this one; the SDK's are read from the request.
    """
    _, reason = describe_failure(exc, _timeout_of(client))
    return BatchError(f"could not {action}: {_with_retries(reason, exc, retries)}")


def _with_retries(reason: str, exc: Exception, retries: int) -> str:
    """The reason with ' after N retries' where describe_failure puts it for the SDK's retries."""
    if not retries:
        return reason
    note = f" after {retries} retries"
    anchor = reason  # a timeout: the note ends the reason
    if isinstance(exc, anthropic.APIStatusError):
        anchor = f"({exc.status_code}{f' {exc.type}' if exc.type else ''})"
    elif isinstance(exc, anthropic.APIConnectionError) and not isinstance(exc, anthropic.APITimeoutError):
        anchor = "could not reach the API"
    if anchor in reason:
        return reason.replace(anchor, anchor + note, 1)
    return reason + note


def _as_utc(when: datetime) -> datetime:
    """A naive datetime read as UTC (how the database hands back timestamps)."""
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _total_requests(batch: Any) -> int:
    counts = batch.request_counts
    return sum(int(getattr(counts, name, 0) or 0) for name in RequestCounts.model_fields)


def find_submitted(
    client: anthropic.Anthropic, count: int, since: datetime, known: Collection[str] = ()
) -> str | None:
    """The id of the one untracked, uncanceled batch of `count` requests created since `since`; else None.

    Lists the workspace's batches newest first and stops at the first created before
    `since - SUBMIT_SKEW` (naive `since` is read as UTC). A batch in `known` (ids the caller
    already tracks) is not a candidate. Several candidates are ambiguous: None, never a guess.
    Raises BatchError when the batches cannot be listed.
    """
    cutoff = _as_utc(since) - SUBMIT_SKEW
    skip = set(known)
    found: list[str] = []
    try:
        # Iterating the page fetches the next ones (after_id=last_id) only as far as we read.
        for batch in client.messages.batches.list(limit=LIST_PAGE_SIZE):
            if _as_utc(batch.created_at) < cutoff:
                break  # newest first: every batch after this one is older still
            if batch.id in skip or batch.cancel_initiated_at is not None or _total_requests(batch) != count:
                continue
            found.append(batch.id)
            if len(found) > 1:
                break  # already ambiguous; reading further cannot make it less so
    except Exception as exc:  # noqa: BLE001 - every failure is reported the same readable way
        raise _api_error("list message batches", exc, client) from exc
    return found[0] if len(found) == 1 else None


def _may_have_been_accepted(exc: Exception) -> bool:
    """True when the server may have created the batch although the create failed for us."""
    if isinstance(exc, anthropic.APIConnectionError):  # timeouts included: the answer was lost
        return True
    if isinstance(exc, anthropic.APIStatusError):
        # 429 and 529 refuse the request before any work; 408/409 and other 5xx may come after it.
        code = exc.status_code
        return code in (408, 409) or (code >= 500 and code != 529)
    return False


def _should_retry(exc: Exception) -> bool:
    """The SDK's rule: the server's x-should-retry if sent, else 408/409/429/5xx and connection errors."""
    if isinstance(exc, anthropic.APIStatusError):
        told = exc.response.headers.get("x-should-retry")
        if told in ("true", "false"):
            return told == "true"
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return isinstance(exc, anthropic.APIConnectionError)


def _retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms, retry-after seconds or date); None if not."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return float(headers.get(name)) / scale  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
    try:
        when = email.utils.parsedate_to_datetime(headers.get("retry-after") or "")
    except (TypeError, ValueError):
        return None
    return (_as_utc(when) - datetime.now(UTC)).total_seconds()


def _retry_wait(exc: Exception, retries: int) -> float:
    """Seconds before the next create: Retry-After (at most a minute) else the SDK's jittered backoff."""
    asked = _retry_after_s(getattr(getattr(exc, "response", None), "headers", None))
    if asked is not None and asked > 0:
        return min(asked, RETRY_AFTER_CAP_S)
    backoff = min(BACKOFF_S * 2.0**retries, MAX_BACKOFF_S)
    return backoff * (1 - 0.25 * random.random())


def submit(
    client: anthropic.Anthropic,
    jobs: Sequence[ReviewJob],
    *,
    since: datetime | None = None,
    known: Collection[str] = (),
) -> str:
    """Create one Message Batch from the jobs, never twice; returns its API id (store it with the jobs).

    No chunking: over 100,000 requests or 256 MB raises ValueError. The create is tried up to
    `client.max_retries + 1` times (the SDK's own retries are off: it would resend blindly).
    429 and 529 are retried after Retry-After or backoff; any other 4xx raises BatchError at
    once. After a failure the server may have accepted anyway (timeout, lost connection, other
    5xx), `find_submitted(client, n, since, known)` runs first and a batch it finds is returned
    instead of creating another; `since` defaults to just before the first attempt, `known` are
    the batch ids the caller already tracks. If that look-up itself fails, BatchError (nothing is
    resent while unsure). Same-size batches made by another desk with the same API key in the
    same minutes make the look-up ambiguous: nothing is adopted and the create is retried.
    """
    requests = build_requests(jobs)
    _check_limits(requests)
    since = datetime.now(UTC) if since is None else since
    action = f"create a message batch of {len(requests)} request(s)"
    once = client.with_options(max_retries=0)
    attempts, attempt = max(0, client.max_retries) + 1, 0
    while True:
        try:
            return once.messages.batches.create(requests=requests).id
        except Exception as exc:  # noqa: BLE001 - sorted below, reported the same readable way
            failure, error = exc, _api_error(action, exc, client, attempt)
        retry = attempt + 1 < attempts and _should_retry(failure)
        maybe_accepted = _may_have_been_accepted(failure)
        if retry or maybe_accepted:
            # Before the look-up too: it gives a create the server is still finishing time to show.
            _sleep(_retry_wait(failure, attempt))
        if maybe_accepted:
            found = _look_for_accepted(client, len(requests), since, known, error)
            if found is not None:
                return found
        if not retry:
            raise error from failure
        attempt += 1


def _look_for_accepted(
    client: anthropic.Anthropic, count: int, since: datetime, known: Collection[str], failure: BatchError
) -> str | None:
    """find_submitted after a failed create; if the look-up fails too, stop rather than risk a second batch."""
    try:
        return find_submitted(client, count, since, known)
    except BatchError as exc:
        raise BatchError(f"{failure}; whether the API created it anyway is unknown ({exc})") from exc


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
    found = _read_results(client, batch_id, by_id, status.latency_s)
    missing = f"no result returned for this request in message batch {batch_id}"
    return {
        cid: found[cid] if cid in found else _error_outcome(job, missing, status.latency_s)
        for cid, job in by_id.items()
    }


def _read_results(
    client: anthropic.Anthropic, batch_id: str, by_id: dict[str, ReviewJob], latency_s: float
) -> dict[str, ReviewOutcome]:
    """Stream the results file into outcomes by custom_id; lines for ids we never sent are skipped."""
    found: dict[str, ReviewOutcome] = {}
    decoder = None
    try:
        decoder = client.messages.batches.results(batch_id)
        for line in decoder:
            job = by_id.get(getattr(line, "custom_id", None) or "")
            if job is None:
                continue
            if job.custom_id in found:
                # Never seen from the API; if it happens we cannot tell which answer is the real one.
                found[job.custom_id] = _error_outcome(job, "the results hold two lines for this request", latency_s)
                continue
            found[job.custom_id] = outcome_of(job, getattr(line, "result", None), latency_s)
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
            res = answer_result(message, job.params, Review, "review", latency_s, batch=True)
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
