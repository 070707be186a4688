"""A loopback HTTP server that speaks enough of the OpenAI Chat Completions API for tests.

Point the real `openai` SDK at it (`OPENAI_BASE_URL=stub.url`, which ends in `/v1` as compatible servers'
base URLs do) so the real request building, retries and error mapping run with no network. Every request
is recorded. Routes: `POST /v1/chat/completions`, `GET /v1/models` (the models in `stub.models`).

Answers come, in order, from the scripted queue (`stub.script(...)`), `stub.handler(body)`, else a default
that fits the requested schema (an all-PASS review or an empty fix plan). Known-answer screen requests are
answered by `stub.screen(body)` (default: repeat the key). A reply may be a `Reply`, a tuple, a str (the
answer's content), a chat completion dict (has "choices"), or a Messages API message dict (what the
`messages_api` helpers and `santa_scenario` build) — converted, so one scenario serves both providers.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from tests.support.messages_api import (
    FAST_RETRY,
    Handler,
    LoopbackServer,
    Reply,
    default_answer,
    is_extraction,
    is_screen,
    quote_nothing,
    repeat_key,
    screen_key,
    user_text,
)

STOP_TO_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "refusal": "stop"}
DEFAULT_CHAT_USAGE = {"prompt_tokens": 120, "completion_tokens": 60, "cached_tokens": 0}


def completion(
    content: str | None,
    model: str = "stub-model",
    finish_reason: str | None = "stop",
    refusal: str | None = None,
    usage: dict | None = None,
) -> dict:
    """A chat completion with one choice."""
    u = {**DEFAULT_CHAT_USAGE, **(usage or {})}
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": finish_reason,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
            }
        ],
        "usage": {
            "prompt_tokens": u["prompt_tokens"],
            "completion_tokens": u["completion_tokens"],
            "total_tokens": u["prompt_tokens"] + u["completion_tokens"],
            "prompt_tokens_details": {"cached_tokens": u["cached_tokens"]},
        },
    }


def chat_error(
    status: int, message: str = "stub error", type: str = "server_error", headers: dict[str, str] | None = None
) -> Reply:
    """An OpenAI-style error reply that the SDK retries quickly (retry-after-ms: 1) when retryable."""
    return Reply(
        status,
        {**FAST_RETRY, **(headers or {})},
        {"error": {"message": message, "type": type, "param": None, "code": None}},
    )


def as_messages_body(body: dict) -> dict:
    """A chat request seen as a Messages API request, so the Messages helpers (schema_properties, the criteria
    of the prompt, santa_scenario) read it: the user turns, and the schema under output_config.format."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    return {
        "model": body.get("model", "stub-model"),
        "messages": [m for m in body.get("messages") or [] if m.get("role") == "user"],
        "output_config": {"format": {"type": "json_schema", "schema": schema}},
    }


def from_message(msg: dict) -> dict:
    """A Messages API answer as the chat completion a compatible server would send."""
    text = "".join(b.get("text", "") for b in msg.get("content") or [] if b.get("type") == "text")
    stop = msg.get("stop_reason")
    usage = msg.get("usage") or {}
    refusal = "I can't help with that." if stop == "refusal" else None
    return completion(
        None if refusal else text,
        msg.get("model", "stub-model"),
        STOP_TO_FINISH.get(stop, stop),
        refusal,
        {
            "prompt_tokens": int(usage.get("input_tokens", 120)),
            "completion_tokens": int(usage.get("output_tokens", 60)),
        },
    )


def to_chat(value: Any, body: dict) -> Reply:
    """Whatever a script entry or handler gave, as a Reply carrying a chat completion."""
    if isinstance(value, tuple):
        value = Reply(*value)
    if isinstance(value, Reply):
        if value.status == 200 and isinstance(value.body, dict) and value.body.get("type") == "message":
            return Reply(200, value.headers, from_message(value.body), value.delay_s)
        return value
    if isinstance(value, str):
        return Reply(200, {}, completion(value, body.get("model", "stub-model")))
    if isinstance(value, dict) and value.get("type") == "message":
        return Reply(200, {}, from_message(value))
    return Reply(200, {}, value)


def for_chat(handler: Handler) -> Handler:
    """A Messages-API scenario (e.g. `santa_scenario`) as a chat handler."""
    return lambda body: handler(as_messages_body(body))


class ChatStub(LoopbackServer):
    """Loopback Chat Completions server. Use .start(), .url (ends in /v1), .calls, .script(...), .handler, .stop()."""

    thread_name = "chat-stub"

    def __init__(self, models: tuple[str, ...] = ("stub-gpt", "gpt-5.4-mini")) -> None:
        self.handler: Handler | None = None
        """Called with the chat request body; may return anything `to_chat` takes."""
        self.screen: Handler | None = lambda body: repeat_key(as_messages_body(body))
        self.extract: Handler | None = lambda body: quote_nothing(as_messages_body(body))
        """Answers the screen's extraction requests (None: they take the scripted queue like the rest)."""
        self.models = models
        self.models_reply: Reply | None = None
        """When set, GET /v1/models answers with it (e.g. a 401)."""
        self._calls: list[dict] = []
        self._queue: deque[Any] = deque()
        self._lock = threading.Lock()
        self._server = None

    @property
    def url(self) -> str:
        """Base URL to give the SDK (with /v1, as for compatible servers)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_calls(self) -> list[dict]:
        """Chat completion requests of reviewers and the fix agent (screens and extraction requests left out)."""
        return [
            c
            for c in self.calls
            if c["path"].endswith("/chat/completions") and not is_screen(as_messages_body(c["body"]))
        ]

    def screen_calls(self) -> list[dict]:
        """Known-answer screen requests."""
        return [
            c
            for c in self.calls
            if c["path"].endswith("/chat/completions") and screen_key(as_messages_body(c["body"])) is not None
        ]

    def extract_calls(self) -> list[dict]:
        """The injection screen's extraction requests."""
        return [
            c
            for c in self.calls
            if c["path"].endswith("/chat/completions") and is_extraction(as_messages_body(c["body"]))
        ]

    def script(self, *replies: Any) -> ChatStub:
        """Queue replies for the next chat requests, first in first out."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def answer(self, path: str, headers: dict, body: Any, method: str = "POST") -> Reply:
        """Record the request and choose its reply (called on the server's threads)."""
        route = path.split("?")[0]
        with self._lock:
            self._calls.append({"method": method, "path": route, "headers": headers, "body": body})
            if method == "GET" and route == "/v1/models":
                return self.models_reply or Reply(
                    200,
                    {},
                    {
                        "object": "list",
                        "data": [{"id": m, "object": "model", "created": 0, "owned_by": "stub"} for m in self.models],
                    },
                )
            if route != "/v1/chat/completions":
                return Reply(404, {}, {"error": {"message": f"no route {method} {route}", "type": "not_found"}})
            screen = self.screen if screen_key(as_messages_body(body)) is not None else None
            screen = screen or (self.extract if is_extraction(as_messages_body(body)) else None)
            scripted = self._queue.popleft() if self._queue and screen is None else None
        if screen is not None:  # outside the lock: a handler that holds its answer holds no other request
            return to_chat(screen(body), body)
        if scripted is not None:
            return to_chat(scripted, body)
        if self.handler is not None:
            return to_chat(self.handler(body), body)
        return to_chat(default_answer(as_messages_body(body)), body)


def chat_user_text(body: dict) -> str:
    """All user text of a chat request."""
    return user_text(as_messages_body(body))
