"""Reviewer and fix agent backed by the Anthropic Messages API (structured outputs).

Fail closed: every way a call can go wrong (HTTP error after the SDK's retries, timeout,
refusal, truncation, an answer that does not validate) comes back as an error outcome with a
human-readable reason. Nothing here raises and nothing here turns a failure into a verdict.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anthropic
from anthropic.types import Message
from pydantic import BaseModel, ValidationError

from santa_core.checks.screen import SCREEN_MAX_TOKENS, answered_key, new_key, screen_prompt, text_hash
from santa_core.models import (
    FixPlan,
    LLMCall,
    Review,
    ReviewOutcome,
    ReviewStatus,
    ScreenResult,
    ScreenRole,
    Slot,
    Usage,
)
from santa_core.pricing import cost_usd
from santa_core.reviewers.base import CallNotRecorded, FixAnswer, FixRequest, ReviewRequest, note_sending
from santa_core.reviewers.prompts import Prompt, build_fix_prompt, build_review_prompt
from santa_core.text import control_problem, strings_in

# Only these mean "the model finished its answer"; anything else (max_tokens, refusal,
# pause_turn, tool_use, context window exceeded, unknown) cannot hold a complete verdict.
COMPLETE_STOP_REASONS = frozenset({"end_turn", "stop_sequence"})

_STATUS_WORDS = {
    400: "request rejected",
    401: "authentication failed",
    403: "permission denied",
    404: "not found (check the model id)",
    408: "request timed out at the API",
    409: "request conflict",
    413: "request too large",
    429: "rate limited",
    529: "API overloaded",
}

DEFAULT_MAX_TOKENS = 8192
"""max_tokens of a reviewer or fix call: headroom for thinking blocks before the JSON answer."""
DEFAULT_ANSWER_ATTEMPTS = 4
"""Calls at most for one reviewer or fix answer (SANTA_ANSWER_ATTEMPTS): the first and up to three more while the
answer comes back refused, cut off or malformed (as the SDK retries a failed request up to three times)."""
MAX_RETRY_TOKENS = 32_000
"""The most output room a call asked again after a cut-off gets."""
DEFAULT_EFFORT = "medium"
"""output_config.effort of a reviewer or fix call (None sends no effort)."""

_ROLES = {"review": ("reviewer", "review"), "fix": ("fix agent", "fix plan"), "screen": ("screening model", "screen")}
"""purpose -> (who answers, what the answer is called), for error messages."""


@dataclass
class CallResult:
    """What one structured call produced; `parsed` is None whenever `error` is set."""

    parsed: BaseModel | None
    raw_text: str
    usage: Usage
    error: str | None
    status: ReviewStatus
    latency_s: float
    request: dict = field(default_factory=dict)
    cost_usd: float = 0.0
    retryable: bool = False
    """A 200 answer that was refused, cut off, unfinished, empty or malformed: worth asking again."""
    truncated: bool = False
    """Cut off at max_tokens: the next attempt gets more room."""
    earlier: list[CallResult] = field(default_factory=list)
    """Attempts before this one that gave a bad answer (each logged and costed)."""

    def llm_calls(self, purpose: str, model: str) -> list[LLMCall]:
        """Every attempt as a row of the call log, oldest first."""
        return [r.as_llm_call(purpose, model) for r in (*self.earlier, self)]

    def total(self) -> tuple[Usage, float, float]:
        """Usage, cost and latency of every attempt together."""
        usage = sum((r.usage for r in self.earlier), self.usage)
        return (usage, self.cost_usd + sum(r.cost_usd for r in self.earlier),
                self.latency_s + sum(r.latency_s for r in self.earlier))

    def as_llm_call(self, purpose: str, model: str) -> LLMCall:
        """This call as a row of the call log."""
        return LLMCall(
            purpose=purpose,
            model=model,
            request=self.request,
            response=self.raw_text,
            usage=self.usage,
            cost_usd=self.cost_usd,
            latency_s=self.latency_s,
            error=self.error,
        )


def request_body(
    model: str, max_tokens: int, prompt: Prompt, schema: type[BaseModel], effort: str | None
) -> dict:
    """The exact body sent (as parse(output_format=schema) builds it); the key is in headers only."""
    output_config: dict[str, Any] = {"effort": effort} if effort else {}
    output_config["format"] = {"type": "json_schema", "schema": anthropic.transform_schema(schema)}
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": prompt.system,
        "messages": [{"role": "user", "content": prompt.user}],
        "output_config": output_config,
    }


def review_body(
    model: str,
    request: ReviewRequest,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    effort: str | None = DEFAULT_EFFORT,
) -> dict:
    """The body of one review call (fresh fence nonce); the sync reviewer and batches share it."""
    prompt = build_review_prompt(request.rubric, request.spec, request.output)
    return request_body(model, max_tokens, prompt, Review, effort)


def text_of(message: Message) -> str:
    """Concatenated text blocks; thinking and other blocks are skipped by type, not position."""
    return "".join(getattr(b, "text", "") or "" for b in message.content or [] if b.type == "text")


def usage_of(message: Message) -> Usage:
    """Usage of an answer; the API may send null for any counter, read as 0."""
    raw = message.usage
    names = (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    )
    return Usage(**{n: int(getattr(raw, n, 0) or 0) for n in names})


def summarise_validation(exc: ValidationError, limit: int = 3) -> str:
    """A short 'where: what' list of the first pydantic errors."""
    parts = [
        f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()[:limit]
    ]
    more = exc.error_count() - limit
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def check_answer(
    message: Message, text: str, schema: type[BaseModel], purpose: str, model: str, max_tokens: int
) -> tuple[BaseModel | None, str | None]:
    """Validate a 200 answer: complete stop reason, then the schema. Returns (parsed, error)."""
    who, what = _ROLES[purpose]
    stop = message.stop_reason
    if stop == "refusal":
        return None, f"{who} {model} refused to answer"
    if stop == "max_tokens":
        return None, f"answer was cut off at max_tokens={max_tokens} (truncated JSON)"
    if stop not in COMPLETE_STOP_REASONS:
        return None, f"answer did not finish (stop_reason={stop!r})"
    if not text.strip():
        return None, f"{who} {model} answered with no text"
    try:
        parsed = schema.model_validate_json(text)
    except ValidationError as exc:
        return None, f"answer was not valid JSON for the {what} schema: {summarise_validation(exc)}"
    # The desk's text rule holds for what models write too: a fix or a quote holding a control character would
    # ship it (SQLite) or fail to store (PostgreSQL refuses a NUL).
    if problem := next(filter(None, (control_problem(t, "the answer") for t in strings_in(parsed.model_dump()))), None):
        return None, problem.split(": remove it")[0]
    return parsed, None



def answer_result(
    message: Message,
    body: dict,
    schema: type[BaseModel],
    purpose: str,
    latency_s: float,
    batch: bool = False,
) -> CallResult:
    """Validate and price a returned Message: the one path from an answer to a CallResult."""
    model, max_tokens = body["model"], body["max_tokens"]
    text, usage = text_of(message), usage_of(message)
    parsed, error = check_answer(message, text, schema, purpose, model, max_tokens)
    status = ReviewStatus.OK if error is None else ReviewStatus.ERROR
    cost = cost_usd(model, usage, batch=batch)
    return CallResult(parsed, text, usage, error, status, latency_s, body, cost, retryable=error is not None,
                      truncated=message.stop_reason == "max_tokens")


def review_outcome(res: CallResult, slot: Slot, reviewer: str, model: str) -> ReviewOutcome:
    """A review call's result as the slot's outcome, with its rows for the call log (every attempt)."""
    usage, cost, latency = res.total()
    return ReviewOutcome(
        slot=slot,
        reviewer=reviewer,
        status=res.status,
        review=res.parsed if isinstance(res.parsed, Review) else None,
        error=res.error,
        usage=usage,
        cost_usd=cost,
        latency_s=latency,
        raw_response=res.raw_text,
        calls=res.llm_calls("review", model),
    )


def _retries_note(request: Any) -> str:
    """' after N retries', read from the header the SDK stamps on each attempt."""
    try:
        n = int(request.headers.get("x-stainless-retry-count", "0"))
    except (AttributeError, RuntimeError, ValueError):
        return ""
    return f" after {n} retries" if n else ""


def describe_status_error(exc: anthropic.APIStatusError) -> str:
    """'rate limited (429 rate_limit_error) after 3 retries: <API message>'."""
    code = exc.status_code
    word = _STATUS_WORDS.get(code) or ("server error" if code >= 500 else "API error")
    kind = f" {exc.type}" if exc.type else ""
    detail = f": {exc.api_message}" if exc.api_message else ""
    return f"{word} ({code}{kind}){_retries_note(exc.response.request)}{detail}"


def describe_failure(exc: Exception, timeout: float) -> tuple[ReviewStatus, str]:
    """Map an exception from the call to (status, human-readable reason); never re-raises."""
    if isinstance(exc, CallNotRecorded):
        return ReviewStatus.ERROR, str(exc)
    if isinstance(exc, anthropic.APITimeoutError):
        return (
            ReviewStatus.TIMEOUT,
            f"timed out: no answer within {timeout:g}s{_retries_note(exc.request)}",
        )
    if isinstance(exc, anthropic.APIStatusError):
        return ReviewStatus.ERROR, describe_status_error(exc)
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc
        return ReviewStatus.ERROR, f"could not reach the API{_retries_note(exc.request)}: {cause}"
    if isinstance(exc, anthropic.APIError):
        return ReviewStatus.ERROR, f"API error: {exc.message}"
    if isinstance(exc, json.JSONDecodeError):
        return ReviewStatus.ERROR, f"API response was not JSON: {exc}"
    if isinstance(exc, TypeError) and "authentication" in str(exc):
        # The SDK raises TypeError at call time when no key is configured.
        return ReviewStatus.ERROR, "no Anthropic API key configured (set ANTHROPIC_API_KEY)"
    return ReviewStatus.ERROR, f"unexpected {type(exc).__name__}: {exc}"


class _AnthropicCaller:
    """Shared plumbing: a lazily built client and one fail-closed structured call."""

    def __init__(
        self,
        model: str,
        client: anthropic.Anthropic | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = 120.0,
        max_retries: int = 3,
        effort: str | None = DEFAULT_EFFORT,
        answer_attempts: int = DEFAULT_ANSWER_ATTEMPTS,
    ) -> None:
        self.model = model
        self.name = model
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.effort = effort
        self.answer_attempts = max(1, answer_attempts)
        """Calls at most for one answer: a refused, cut-off or malformed answer is asked for again."""
        self._client = client

    @property
    def client(self) -> anthropic.Anthropic:
        """The SDK client; built on first use so importing and configuring never need a key."""
        if self._client is None:
            # Retries (408/409/429/5xx incl. 529, honouring retry-after) are the SDK's job.
            self._client = anthropic.Anthropic(max_retries=self.max_retries, timeout=self.timeout)
        return self._client

    def _send(self, body: dict) -> Message:
        """POST /v1/messages with the logged body; returns the answer, not yet validated."""
        # create(), not parse(): parse() validates inside the SDK and raises on a bad answer,
        # losing the raw text and the billed usage. The body is the same one parse() sends
        # (request_body uses the SDK's own transform_schema), and we validate it ourselves.
        message = self.client.messages.create(**body, timeout=self.timeout)
        if not isinstance(message, Message):
            raise TypeError(f"API answer was not a message: {type(message).__name__}")
        return message

    def _call(self, make_body: Callable[[int], dict], schema: type[BaseModel], purpose: str) -> CallResult:
        """A structured answer, asked for up to `answer_attempts` times while the answer is bad (refused, cut
        off, unfinished, empty, malformed): each attempt a fresh call with the same request, more room after a
        cut-off. HTTP errors and timeouts are not asked again here (the SDK has retried them). Never raises."""
        max_tokens, earlier = self.max_tokens, []
        while True:
            res = self._call_once(lambda room=max_tokens: make_body(room), schema, purpose)
            if not res.retryable or len(earlier) + 1 >= self.answer_attempts:
                break
            earlier.append(res)
            if res.truncated:
                max_tokens = min(2 * max_tokens, MAX_RETRY_TOKENS)
        if earlier and res.error:
            res.error += f" (the last of {len(earlier) + 1} attempts)"
        res.earlier = earlier
        return res

    def _call_once(self, make_body: Callable[[], dict], schema: type[BaseModel], purpose: str) -> CallResult:
        """One structured call that never raises: any failure becomes `error` with parsed=None."""
        start, body = time.perf_counter(), {}
        try:
            body = make_body()
            note_sending(purpose, self.model, body)  # write-ahead: on record before it leaves
            message = self._send(body)
        except CallNotRecorded:
            raise  # nothing was sent: not the model's failure, and no verdict; the run is interrupted, resumable
        # Fail closed: any failure, even one we did not foresee, is an error, never a verdict.
        except Exception as exc:  # noqa: BLE001
            status, error = describe_failure(exc, self.timeout)
            return CallResult(None, "", Usage(), error, status, time.perf_counter() - start, body)
        return answer_result(message, body, schema, purpose, time.perf_counter() - start)


class AnthropicReviewer(_AnthropicCaller):
    """A Claude model in a reviewer slot. `name` is the model id."""

    def review(self, request: ReviewRequest, slot: Slot) -> ReviewOutcome:
        """Judge request.output against the rubric; errors come back as ERROR/TIMEOUT outcomes."""
        res = self._call(lambda max_tokens: review_body(self.model, request, max_tokens, self.effort), Review, "review")
        return review_outcome(res, slot, self.name, self.model)


class AnthropicFixer(_AnthropicCaller):
    """A Claude model as the fix agent. `name` is the model id."""

    def propose(self, request: FixRequest) -> FixAnswer:
        """Ask for exact-text edits that fix only request.issues; plan is None on any failure."""
        prompt = build_fix_prompt(request.spec, request.output, request.issues)
        res = self._call(lambda max_tokens: request_body(self.model, max_tokens, prompt, FixPlan, self.effort),
                         FixPlan, "fix")
        usage, cost, _ = res.total()
        return FixAnswer(plan=res.parsed, usage=usage, cost_usd=cost, calls=res.llm_calls("fix", self.model),
                         error=res.error)


def screen_body(model: str, text: str, key: str) -> dict:
    """The body of one known-answer screen call: plain text, no schema, no thinking, a short answer."""
    prompt = screen_prompt(text, key)
    return {"model": model, "max_tokens": SCREEN_MAX_TOKENS,
            "messages": [{"role": "user", "content": prompt.user}]}


def screen_answer_error(message: Message, text: str, model: str) -> str | None:
    """Why a 200 screen answer cannot be judged (refused, unfinished), else None.

    A truncated answer is judged, not an error: a model that runs past a short key has already
    left the instruction behind. An empty answer is an error (it says nothing either way).
    """
    stop = message.stop_reason
    if stop == "refusal":
        return f"screening model {model} refused to answer"
    if stop not in COMPLETE_STOP_REASONS and stop != "max_tokens":
        return f"answer did not finish (stop_reason={stop!r})"
    if not text.strip():
        return f"screening model {model} answered with no text"
    return None


class AnthropicScreen(_AnthropicCaller):
    """A (cheap) Claude model as the known-answer screen. `name` is the model id."""

    def __init__(self, model: str, client: anthropic.Anthropic | None = None, timeout: float = 60.0,
                 max_retries: int = 3, answer_attempts: int = DEFAULT_ANSWER_ATTEMPTS) -> None:
        super().__init__(model, client, SCREEN_MAX_TOKENS, timeout, max_retries, effort=None,
                         answer_attempts=answer_attempts)

    def screen(self, text: str, role: ScreenRole) -> ScreenResult:
        """Ask the model to repeat a fresh key while ignoring `text`; never raises (a failure is `error`).

        A refused, unfinished or empty answer says nothing either way: it is asked for again (a fresh key),
        up to `answer_attempts` calls, each logged and costed. A verdict (clean, took over) is never asked again.
        """
        earlier: list[ScreenResult] = []
        while True:
            result, retryable = self._screen_once(text, role)
            if not retryable or len(earlier) + 1 >= self.answer_attempts:
                break
            earlier.append(result)
        if not earlier:
            return result
        calls = [c for r in (*earlier, result) for c in r.calls]
        error = f"{result.error} (the last of {len(earlier) + 1} attempts)" if result.error else None
        return result.model_copy(update={"calls": calls, "error": error,
                                         "cost_usd": result.cost_usd + sum(r.cost_usd for r in earlier)})

    def _screen_once(self, text: str, role: ScreenRole) -> tuple[ScreenResult, bool]:
        """One screen call: its result, and whether it was a 200 answer that said nothing (worth asking again)."""
        key, start, body = new_key(), time.perf_counter(), {}
        base = {"role": role, "text_hash": text_hash(text), "model": self.model, "secret": key}
        try:
            body = screen_body(self.model, text, key)
            note_sending("screen", self.model, body)
            message = self._send(body)
        except CallNotRecorded:
            raise  # nothing was sent: the run is interrupted, not screened
        except Exception as exc:  # noqa: BLE001 - fail closed: a failed screen is an error, never clean
            _, error = describe_failure(exc, self.timeout)
            call = LLMCall(purpose="screen", model=self.model, request=body, error=error,
                           latency_s=time.perf_counter() - start)
            return ScreenResult(**base, verdict="error", error=error, calls=[call]), False
        answer, usage = text_of(message), usage_of(message)
        cost = cost_usd(self.model, usage)
        error = screen_answer_error(message, answer, self.model)
        verdict = "error" if error else "clean" if answered_key(answer, key) else "took_over"
        call = LLMCall(purpose="screen", model=self.model, request=body, response=answer, usage=usage,
                       cost_usd=cost, latency_s=time.perf_counter() - start, error=error)
        return ScreenResult(**base, verdict=verdict, answer=answer, error=error, cost_usd=cost, calls=[call]), \
            verdict == "error"
