"""Reviewer, fix agent and screen behind the OpenAI Chat Completions API, through the official `openai` SDK.

Chat Completions is what OpenAI itself and the compatible servers speak (Gemini's compatible endpoint,
Mistral, DeepSeek, OpenRouter, Ollama, vLLM, LM Studio). Structured answers go through `response_format`
(json_schema with our Review / FixPlan schemas, strict where the server takes it) and are validated by
our own models, so a bad answer is kept raw, costed and counted as a reviewer error exactly as on the
Anthropic path. Fail closed: `finish_reason == "length"`, a refusal, an empty answer, HTTP errors after
our retries and timeouts are errors, never verdicts.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import openai
from openai.lib._parsing._completions import type_to_response_format_param
from openai.types.chat import ChatCompletion
from pydantic import BaseModel

from santa_core.checks.extraction import EXTRACT_MAX_TOKENS, extraction_prompt
from santa_core.checks.screen import SCREEN_MAX_TOKENS, screen_prompt
from santa_core.models import CallPurpose, ReviewStatus, Usage
from santa_core.pricing import cost_usd, estimate_call_usd
from santa_core.providers import scrub_keys
from santa_core.reviewers.base import CallNotRecorded
from santa_core.reviewers.calls import (
    DEFAULT_ANSWER_ATTEMPTS,
    DEFAULT_MAX_TOKENS,
    ROLES,
    CallResult,
    ModelFixer,
    ModelReviewer,
    StructuredCaller,
    raw_of,
    validate_answer,
)
from santa_core.reviewers.prompts import Prompt
from santa_core.reviewers.retries import DEFAULT_RETRIES, RETRY_HEADER, retries_note, status_text, without_sdk_retries
from santa_core.reviewers.screening import ModelScreen, ScreenAnswer, empty_answer

MAX_TOKENS = 10_000_000
"""More tokens than any one call could carry: a usage above it is nonsense, not a bill."""
REASONING_SCREEN_TOKENS = 2048
"""Output room of a screen call on OpenAI's own (reasoning) models: their thinking counts against it."""


def response_format(schema: type[BaseModel], strict: bool = True) -> dict:
    """`response_format` for `schema`, built as the SDK's own parse() builds it (strict JSON schema)."""
    fmt = type_to_response_format_param(schema)
    assert isinstance(fmt, dict) and fmt["type"] == "json_schema"  # what the SDK builds for a model class
    return {**fmt, "json_schema": {**fmt["json_schema"], "strict": strict}}


def system_text(prompt: Prompt) -> str:
    """The system blocks of a prompt as one system message (Chat Completions caches prefixes by itself)."""
    return "\n\n".join(block["text"] for block in prompt.system)


def usage_of(completion: ChatCompletion) -> Usage | None:
    """Usage of a completion: prompt tokens (cached ones apart), completion tokens (reasoning included). None when
    the server reported none or nonsense (negative counts, more cached than prompt tokens): the call is then
    counted at the most it may have cost, never at a made-up 0."""
    raw = completion.usage
    if raw is None:
        return None
    details = raw.prompt_tokens_details
    cached = int((details.cached_tokens if details is not None else 0) or 0)
    prompt, out = int(raw.prompt_tokens or 0), int(raw.completion_tokens or 0)
    if min(prompt, out, cached) < 0 or cached > prompt or (prompt == 0 and out == 0) or max(prompt, out) > MAX_TOKENS:
        return None
    return Usage(input_tokens=prompt - cached, output_tokens=out, cache_read_input_tokens=cached)


def priced(name: str, usage: Usage | None, body: dict) -> tuple[Usage, float]:
    """(usage, cost) of a call: its reported usage at the model's rate, else the request's upper bound."""
    if usage is None:
        return Usage(), estimate_call_usd(name, body)
    return usage, cost_usd(name, usage)


def answer_text(completion: ChatCompletion) -> tuple[str, str | None, str | None]:
    """(content, refusal, finish_reason) of the one choice ('' and None when there is none). Content that is not
    text (a list of parts, a number) raises: such an answer is unreadable, not empty."""
    if not completion.choices:
        return "", None, None
    choice = completion.choices[0]
    content, refusal = choice.message.content, choice.message.refusal
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        content = "".join(str(p.get("text") or "") for p in content)  # the array-of-parts form some servers send
    if content is not None and not isinstance(content, str):
        raise TypeError(f"message content is a {type(content).__name__}, not text")
    if refusal is not None and not isinstance(refusal, str):
        raise TypeError(f"message refusal is a {type(refusal).__name__}, not text")
    return content or "", refusal, choice.finish_reason


def check_answer(
    completion: ChatCompletion, schema: type[BaseModel], purpose: CallPurpose, model: str, max_tokens: int
) -> tuple[BaseModel | None, str | None]:
    """Validate a 200 answer: a choice, no refusal, finished, then the schema. Returns (parsed, error)."""
    who = ROLES[purpose][0]
    text, refusal, finish = answer_text(completion)
    if not completion.choices:
        return None, f"{who} {model} answered with no choices"
    if len(completion.choices) != 1:  # which one would be the verdict? none: fail closed
        return None, f"{who} {model} answered with {len(completion.choices)} choices, not one"
    if refusal:
        return None, f"{who} {model} refused to answer: {refusal.strip()[:200]}"
    if finish == "length":
        return None, f"answer was cut off at max_tokens={max_tokens} (truncated JSON)"
    if finish == "content_filter":
        return None, f"answer was withheld by {model}'s content filter"
    if finish != "stop":
        return None, f"answer did not finish (finish_reason={finish!r})"
    return validate_answer(text, schema, purpose, model)


def describe_failure(exc: Exception, timeout: float, provider: str) -> tuple[ReviewStatus, str]:
    """Map an exception from the call to (status, human-readable reason); never re-raises."""
    if isinstance(exc, CallNotRecorded):
        return ReviewStatus.ERROR, str(exc)
    if isinstance(exc, openai.APITimeoutError):
        return ReviewStatus.TIMEOUT, f"timed out: no answer within {timeout:g}s{retries_note(exc.request)}"
    if isinstance(exc, openai.APIStatusError):
        return ReviewStatus.ERROR, status_text(
            exc.status_code, getattr(exc, "type", None), exc.response.request, exc.message
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return ReviewStatus.ERROR, f"could not reach the {provider} API{retries_note(exc.request)}: {cause}"
    if isinstance(exc, openai.OpenAIError):
        return ReviewStatus.ERROR, f"{provider} API error: {scrub_keys(str(exc))}"
    if isinstance(exc, json.JSONDecodeError):
        return ReviewStatus.ERROR, f"API response was not JSON: {exc}"
    return ReviewStatus.ERROR, f"unexpected {type(exc).__name__}: {exc}"


class ChatCaller(StructuredCaller):
    """A model behind a Chat Completions endpoint. `name` is the desk's id (`openai:gpt-5.4-mini`), `model`
    what the endpoint calls it; `client` is the provider's shared `openai.OpenAI`."""

    connection_errors = (openai.APIConnectionError,)

    def __init__(
        self,
        name: str,
        model: str,
        client: openai.OpenAI,
        provider: str = "openai",
        strict: bool = True,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = 120.0,
        max_retries: int = DEFAULT_RETRIES,
        answer_attempts: int = DEFAULT_ANSWER_ATTEMPTS,
    ) -> None:
        # No retries in the SDK: ours (`retries.send_with_retries`) put each attempt on record before it leaves.
        StructuredCaller.__init__(
            self, model, without_sdk_retries(client), max_tokens, timeout, max_retries, answer_attempts, name=name
        )
        self.provider = provider
        self.strict = strict

    @property
    def _tokens_field(self) -> str:
        # OpenAI's reasoning models refuse max_tokens; most compatible servers only know max_tokens.
        return "max_completion_tokens" if self.provider == "openai" else "max_tokens"

    def body(self, max_tokens: int, prompt: Prompt, schema: type[BaseModel]) -> dict:
        """system (instructions and rubric: the shared prefix), user (fenced data, criterion ids, answer contract),
        the schema. OpenAI caches a long shared prefix by itself; `prompt_cache_key` (OpenAI only: other servers may
        refuse an unknown field) routes the requests of one prefix together so they find it."""
        system = system_text(prompt)
        body = {
            "model": self.model,
            self._tokens_field: max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt.user}],
            "response_format": response_format(schema, self.strict),
        }
        if self.provider == "openai":
            body["prompt_cache_key"] = "santa-" + hashlib.sha256(system.encode()).hexdigest()[:24]
        return body

    def _send(self, body: dict, retries: int = 0) -> ChatCompletion:
        # create(), not parse(): parse() raises on an answer that does not validate, losing the raw text and the
        # billed usage; the body carries the response_format parse() would build, and we validate ourselves.
        completion = self._client.chat.completions.create(
            **body, timeout=self.timeout, extra_headers={RETRY_HEADER: str(retries)}
        )
        if not isinstance(completion, ChatCompletion):
            raise TypeError(f"API answer was not a chat completion: {type(completion).__name__}")
        return completion

    def _answer(
        self, answer: ChatCompletion, body: dict, schema: type[BaseModel], purpose: CallPurpose, latency_s: float
    ) -> CallResult:
        max_tokens = int(body.get(self._tokens_field) or 0)
        text = answer_text(answer)[0]
        usage, cost = priced(self.name, usage_of(answer), body)
        parsed, error = check_answer(answer, schema, purpose, self.name, max_tokens)
        truncated = bool(answer.choices) and answer.choices[0].finish_reason == "length"
        raw = text if text or error is None else raw_of(answer)  # an error with no text keeps the whole answer
        return CallResult(
            parsed,
            raw,
            usage,
            error,
            ReviewStatus.OK if error is None else ReviewStatus.ERROR,
            latency_s,
            body,
            cost,
            retryable=error is not None,
            truncated=truncated,
        )

    def _failure(self, exc: Exception) -> tuple[ReviewStatus, str]:
        return describe_failure(exc, self.timeout, self.provider)

    def _answered(self, exc: Exception) -> bool:
        # A 200 whose body is not a completion (not JSON, a list): the server answered, so it may have billed.
        return isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError | TypeError)


class ChatReviewer(ChatCaller, ModelReviewer):
    """A Chat Completions model in a reviewer slot."""


class ChatFixer(ChatCaller, ModelFixer):
    """A Chat Completions model as the fix agent."""


class ChatScreen(ChatCaller, ModelScreen):
    """A Chat Completions model as the known-answer screen."""

    def __init__(
        self,
        name: str,
        model: str,
        client: openai.OpenAI,
        provider: str = "openai",
        timeout: float = 60.0,
        max_retries: int = DEFAULT_RETRIES,
        answer_attempts: int = DEFAULT_ANSWER_ATTEMPTS,
    ) -> None:
        room = REASONING_SCREEN_TOKENS if provider == "openai" else SCREEN_MAX_TOKENS
        ChatCaller.__init__(self, name, model, client, provider, True, room, timeout, max_retries, answer_attempts)

    def _screen_body(self, text: str, key: str) -> dict:
        prompt = screen_prompt(text, key)
        return {
            "model": self.model,
            self._tokens_field: self.max_tokens,
            "messages": [{"role": "user", "content": prompt.user}],
        }

    def _read_screen(self, answer: Any, body: dict) -> ScreenAnswer:
        """A cut-off answer is judged (a model running past a short key has left the instruction behind); a
        refused, unfinished or empty one says nothing."""
        read = self._read_extraction(answer, body)
        if read.error is None and not read.text.strip():
            read.error = empty_answer(self.name)
        return read

    def _extract_body(self, spec: str, output: str) -> dict:
        prompt = extraction_prompt(spec, output)
        room = self.max_tokens - SCREEN_MAX_TOKENS + EXTRACT_MAX_TOKENS  # a reasoning model's thinking room kept
        return {"model": self.model, self._tokens_field: room, "messages": [{"role": "user", "content": prompt.user}]}

    def _read_extraction(self, answer: Any, body: dict) -> ScreenAnswer:
        """The answer as the extraction check reads it: refused or unfinished says nothing; empty is no quote; cut
        off at its room is read on the lines it finished (`cut_off`)."""
        text, refusal, finish = answer_text(answer)
        usage, cost = priced(self.name, usage_of(answer), body)
        error = None
        if len(answer.choices) > 1:
            error = f"screening model {self.name} answered with {len(answer.choices)} choices, not one"
        elif refusal:
            error = f"screening model {self.name} refused to answer"
        elif finish not in ("stop", "length"):
            error = f"answer did not finish (finish_reason={finish!r})"
        return ScreenAnswer(text, usage, cost, error, cut_off=finish == "length")
