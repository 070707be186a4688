"""Reviewer and fix agent backed by the Anthropic Messages API (structured outputs).

Fail closed: every way a call can go wrong (HTTP error after our retries, timeout,
refusal, truncation, an answer that does not validate) comes back as an error outcome with a
human-readable reason. Nothing here raises and nothing here turns a failure into a verdict.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
from anthropic.types import Message
from pydantic import BaseModel

from santa_core.checks.extraction import EXTRACT_MAX_TOKENS, extraction_prompt
from santa_core.checks.screen import SCREEN_MAX_TOKENS, screen_prompt
from santa_core.models import CallPurpose, Review, ReviewStatus, Usage
from santa_core.pricing import cost_usd, estimate_call_usd
from santa_core.reviewers.base import CallNotRecorded, ReviewRequest
from santa_core.reviewers.caching import LEDGER, CacheLedger, breakpoint_block, ttl_of
from santa_core.reviewers.calls import (
    DEFAULT_ANSWER_ATTEMPTS,
    DEFAULT_MAX_TOKENS,
    MAX_RETRY_TOKENS,
    CallResult,
    ModelFixer,
    ModelReviewer,
    StructuredCaller,
    review_outcome,
    summarise_validation,
    validate_answer,
)
from santa_core.reviewers.prompts import Prompt, build_review_prompt
from santa_core.reviewers.retries import DEFAULT_RETRIES, RETRY_HEADER, retries_note, status_text, without_sdk_retries
from santa_core.reviewers.screening import ModelScreen, ScreenAnswer, empty_answer

__all__ = [
    "DEFAULT_ANSWER_ATTEMPTS",
    "DEFAULT_MAX_TOKENS",
    "MAX_RETRY_TOKENS",
    "AnthropicFixer",
    "AnthropicReviewer",
    "AnthropicScreen",
    "CallResult",
    "review_outcome",
    "summarise_validation",
]

# Only these mean "the model finished its answer"; anything else (max_tokens, refusal,
# pause_turn, tool_use, context window exceeded, unknown) cannot hold a complete verdict.
COMPLETE_STOP_REASONS = frozenset({"end_turn", "stop_sequence"})


MAX_USAGE_TOKENS = 10_000_000
"""More tokens than any one call could carry: a usage above it is nonsense, not a bill."""
DEFAULT_EFFORT = "medium"
"""output_config.effort of a reviewer or fix call (None sends no effort)."""


def request_body(
    model: str, max_tokens: int, prompt: Prompt, schema: type[BaseModel], effort: str | None, cache: str | None = None
) -> dict:
    """The exact body sent (as parse(output_format=schema) builds it); the key is in headers only.

    `cache` ("5m", "1h"): a cache breakpoint after the system prefix with that lifetime (see caching.py); None:
    no breakpoint, nothing written to the cache.
    """
    output_config: dict[str, Any] = {"effort": effort} if effort else {}
    output_config["format"] = {"type": "json_schema", "schema": anthropic.transform_schema(schema)}
    system = [dict(block) for block in prompt.system]
    if cache and system:
        system[-1] = breakpoint_block(system[-1]["text"], cache)
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "messages": [{"role": "user", "content": prompt.user}],
        "output_config": output_config,
    }


def review_body(
    model: str,
    request: ReviewRequest,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    effort: str | None = DEFAULT_EFFORT,
    batch: bool = False,
    ledger: CacheLedger = LEDGER,
) -> dict:
    """The body of one review call (fresh fence nonce, a cache breakpoint where the ledger says it pays); the sync
    reviewer and batches share it."""
    prompt = build_review_prompt(request.rubric, request.spec, request.output)
    return request_body(model, max_tokens, prompt, Review, effort, cache=planned(ledger, model, prompt, batch))


def planned(ledger: CacheLedger, model: str, prompt: Prompt, batch: bool = False) -> str | None:
    """The cache breakpoint lifetime of a request with `prompt`'s system prefix, noting it as sent."""
    return ledger.plan(model, "".join(b["text"] for b in prompt.system), batch=batch) if prompt.system else None


def text_of(message: Message) -> str:
    """Concatenated text blocks; thinking and other blocks are skipped by type, not position."""
    return "".join(getattr(b, "text", "") or "" for b in message.content or [] if b.type == "text")


def usage_of(message: Message) -> Usage:
    """Usage of an answer; the API may send null for any counter, read as 0."""
    raw = message.usage
    names = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return Usage(**{n: max(0, int(getattr(raw, n, 0) or 0)) for n in names})  # a negative count is no refund


def check_answer(
    message: Message, text: str, schema: type[BaseModel], purpose: CallPurpose, model: str, max_tokens: int
) -> tuple[BaseModel | None, str | None]:
    """Validate a 200 answer: complete stop reason, then the schema. Returns (parsed, error)."""
    who = "screening model" if purpose == "screen" else "fix agent" if purpose == "fix" else "reviewer"
    stop = message.stop_reason
    if stop == "refusal":
        return None, f"{who} {model} refused to answer"
    if stop == "max_tokens":
        return None, f"answer was cut off at max_tokens={max_tokens} (truncated JSON)"
    if stop not in COMPLETE_STOP_REASONS:
        return None, f"answer did not finish (stop_reason={stop!r})"
    return validate_answer(text, schema, purpose, model)


def answer_result(
    message: Message, body: dict, schema: type[BaseModel], purpose: CallPurpose, latency_s: float, batch: bool = False
) -> CallResult:
    """Validate and price a returned Message: the one path from an answer to a CallResult."""
    model, max_tokens = body["model"], body["max_tokens"]
    text, usage = text_of(message), usage_of(message)
    parsed, error = check_answer(message, text, schema, purpose, model, max_tokens)
    status = ReviewStatus.OK if error is None else ReviewStatus.ERROR
    # No usage (or nonsense) from a server behind ANTHROPIC_BASE_URL is no free call: count its upper bound.
    reported = (
        usage.input_tokens + usage.output_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    )
    if 0 < reported <= MAX_USAGE_TOKENS:
        cost = cost_usd(model, usage, batch=batch, write_ttl=ttl_of(body))
    else:
        usage, cost = Usage(), estimate_call_usd(model, body)
    return CallResult(
        parsed,
        text,
        usage,
        error,
        status,
        latency_s,
        body,
        cost,
        retryable=error is not None,
        truncated=message.stop_reason == "max_tokens",
    )


def describe_status_error(exc: anthropic.APIStatusError) -> str:
    """'rate limited (429 rate_limit_error) after 3 retries: <API message>'."""
    return status_text(exc.status_code, exc.type, exc.response.request, exc.api_message)


def describe_failure(exc: Exception, timeout: float) -> tuple[ReviewStatus, str]:
    """Map an exception from the call to (status, human-readable reason); never re-raises."""
    if isinstance(exc, CallNotRecorded):
        return ReviewStatus.ERROR, str(exc)
    if isinstance(exc, anthropic.APITimeoutError):
        return (ReviewStatus.TIMEOUT, f"timed out: no answer within {timeout:g}s{retries_note(exc.request)}")
    if isinstance(exc, anthropic.APIStatusError):
        return ReviewStatus.ERROR, describe_status_error(exc)
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc
        return ReviewStatus.ERROR, f"could not reach the API{retries_note(exc.request)}: {cause}"
    if isinstance(exc, anthropic.APIError):
        return ReviewStatus.ERROR, f"API error: {exc.message}"
    if isinstance(exc, json.JSONDecodeError):
        return ReviewStatus.ERROR, f"API response was not JSON: {exc}"
    if isinstance(exc, TypeError) and "authentication" in str(exc):
        # The SDK raises TypeError at call time when no key is configured.
        return ReviewStatus.ERROR, "no Anthropic API key configured (set ANTHROPIC_API_KEY)"
    return ReviewStatus.ERROR, f"unexpected {type(exc).__name__}: {exc}"


class AnthropicCaller(StructuredCaller):
    """A Claude model behind the Messages API: a lazily built client and its body, send and failure rules."""

    effort: str | None = DEFAULT_EFFORT
    ledger: CacheLedger = LEDGER
    connection_errors = (anthropic.APIConnectionError,)

    def __init__(
        self,
        model: str,
        client: anthropic.Anthropic | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = 120.0,
        max_retries: int = DEFAULT_RETRIES,
        effort: str | None = DEFAULT_EFFORT,
        answer_attempts: int = DEFAULT_ANSWER_ATTEMPTS,
        ledger: CacheLedger = LEDGER,
    ) -> None:
        # Explicitly StructuredCaller's (not the next class in a reviewer's or screen's MRO).
        StructuredCaller.__init__(self, model, client, max_tokens, timeout, max_retries, answer_attempts)
        self.effort = effort
        self.ledger = ledger

    @property
    def client(self) -> anthropic.Anthropic:
        """The SDK client; built on first use so importing and configuring never need a key."""
        if self._client is None:
            # No retries in the SDK: ours (`retries.send_with_retries`) put each attempt on record before it leaves.
            self._client = anthropic.Anthropic(max_retries=0, timeout=self.timeout)
        self._client = without_sdk_retries(self._client)
        return self._client

    def body(self, max_tokens: int, prompt: Prompt, schema: type[BaseModel]) -> dict:
        """The Messages API body (output_config.format with the SDK's own schema transform), with a cache
        breakpoint after the shared prefix where the ledger says a read is coming."""
        return request_body(
            self.model, max_tokens, prompt, schema, self.effort, cache=planned(self.ledger, self.model, prompt)
        )

    def _send(self, body: dict, retries: int = 0) -> Message:
        """POST /v1/messages with the logged body, once; returns the answer, not yet validated."""
        # create(), not parse(): parse() validates inside the SDK and raises on a bad answer,
        # losing the raw text and the billed usage. The body is the same one parse() sends
        # (request_body uses the SDK's own transform_schema), and we validate it ourselves.
        message = self.client.messages.create(**body, timeout=self.timeout, extra_headers={RETRY_HEADER: str(retries)})
        if not isinstance(message, Message):
            raise TypeError(f"API answer was not a message: {type(message).__name__}")
        return message

    def _answer(
        self, answer: Message, body: dict, schema: type[BaseModel], purpose: CallPurpose, latency_s: float
    ) -> CallResult:
        return answer_result(answer, body, schema, purpose, latency_s)

    def _failure(self, exc: Exception) -> tuple[ReviewStatus, str]:
        return describe_failure(exc, self.timeout)

    def _answered(self, exc: Exception) -> bool:
        # A 200 whose body is not a message (not JSON, the wrong shape): the server answered, so it may have billed.
        return isinstance(exc, anthropic.APIResponseValidationError | json.JSONDecodeError)


class AnthropicReviewer(AnthropicCaller, ModelReviewer):
    """A Claude model in a reviewer slot. `name` is the model id."""


class AnthropicFixer(AnthropicCaller, ModelFixer):
    """A Claude model as the fix agent. `name` is the model id."""


def screen_body(model: str, text: str, key: str) -> dict:
    """The body of one known-answer screen call: plain text, no schema, no thinking, a short answer."""
    prompt = screen_prompt(text, key)
    return {"model": model, "max_tokens": SCREEN_MAX_TOKENS, "messages": [{"role": "user", "content": prompt.user}]}


def screen_answer_error(message: Message, text: str, model: str) -> str | None:
    """Why a 200 screen answer cannot be judged (refused, unfinished), else None.

    A truncated answer is judged, not an error: a model that runs past a short key has already
    left the instruction behind. An empty answer is an error (it says nothing either way).
    """
    if error := stop_error(message, model):
        return error
    if not text.strip():
        return empty_answer(model)
    return None


def stop_error(message: Message, model: str) -> str | None:
    """Why a 200 screen or extraction answer did not end as an answer (refused, unfinished), else None. Cut off at
    max_tokens is an ending: the key check judges it, the extraction check reads the lines it finished."""
    stop = message.stop_reason
    if stop == "refusal":
        return f"screening model {model} refused to answer"
    if stop not in COMPLETE_STOP_REASONS and stop != "max_tokens":
        return f"answer did not finish (stop_reason={stop!r})"
    return None


def extract_body(model: str, spec: str, output: str) -> dict:
    """The body of one extraction call: plain text, no schema, no thinking, room for a few quotes."""
    prompt = extraction_prompt(spec, output)
    return {"model": model, "max_tokens": EXTRACT_MAX_TOKENS, "messages": [{"role": "user", "content": prompt.user}]}


class AnthropicScreen(AnthropicCaller, ModelScreen):
    """A (cheap) Claude model as the known-answer screen. `name` is the model id."""

    def __init__(
        self,
        model: str,
        client: anthropic.Anthropic | None = None,
        timeout: float = 60.0,
        max_retries: int = DEFAULT_RETRIES,
        answer_attempts: int = DEFAULT_ANSWER_ATTEMPTS,
    ) -> None:
        AnthropicCaller.__init__(
            self, model, client, SCREEN_MAX_TOKENS, timeout, max_retries, effort=None, answer_attempts=answer_attempts
        )

    def _screen_body(self, text: str, key: str) -> dict:
        return screen_body(self.model, text, key)

    def _read_screen(self, answer: Message, body: dict) -> ScreenAnswer:
        text, usage = text_of(answer), usage_of(answer)
        return ScreenAnswer(
            text,
            usage,
            cost_usd(self.model, usage),
            screen_answer_error(answer, text, self.model),
            cut_off=answer.stop_reason == "max_tokens",
        )

    def _extract_body(self, spec: str, output: str) -> dict:
        return extract_body(self.model, spec, output)

    def _read_extraction(self, answer: Message, body: dict) -> ScreenAnswer:
        text, usage = text_of(answer), usage_of(answer)
        return ScreenAnswer(
            text,
            usage,
            cost_usd(self.model, usage),
            stop_error(answer, self.model),
            cut_off=answer.stop_reason == "max_tokens",
        )
