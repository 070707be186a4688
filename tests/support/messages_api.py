"""A loopback HTTP server that speaks enough of the Anthropic Messages API for tests.

Point the real SDK at it (`Anthropic(base_url=stub.url, api_key="test")`, or the env var
`ANTHROPIC_BASE_URL`) so the real request building, retries and error mapping run with no
network. Every request is recorded. Answers come from, in order:
  1. the scripted queue (`stub.script(...)`), one reply per request, first in first out;
  2. `stub.handler(body)`, if set;
  3. a default that fits the requested schema: a PASS review (one PASS check per criterion
     named in the prompt) or an empty fix plan.

A reply is a `Reply`, a `(status, headers, body)` or `(status, headers, body, delay_s)` tuple,
a dict (200 JSON), or a str (wrapped as an assistant text message). Thread-safe.

Known-answer screen requests (`santa_core.checks.screen`) are answered apart from all of that, by
`stub.screen(body)` (default `repeat_key`: a model that ignores the data and answers with the
key), so the scripted queue stays for reviewers and the fix agent; `message_calls()` leaves
them out and `screen_calls()` lists them. Set `stub.screen = None` to send them through the
queue like any other request. The screen's extraction requests (`santa_core.checks.extraction`) are
answered likewise by `stub.extract(body)` (default `quote_nothing`: NONE; `quoting(...)` quotes), listed
by `extract_calls()` and left out of `message_calls()`.

Message Batches (`/v1/messages/batches`): create stores the requests and returns a batch
`in_progress`; it stays so until the test calls `stub.end_batch(...)` (or, with
`stub.batch_end_after_polls = N`, until its Nth retrieve). Ending answers every request through
the same machinery as a sync message (scripted queue, handler, default), in request order, so
`stub.script(...)` decides item by item; an answer may also be a batch result object
(`EXPIRED`, `CANCELED`, `errored(...)`), and a non-200 Reply becomes an `errored` line.
`end_batch` can override items, reorder the lines or leave some out. `stub.script_batches(...)`
queues raw HTTP replies (e.g. a 429) for the next requests to any batches endpoint. The model list
(`GET /v1/models`, what Test connection and a Message Batch's check of the screen ask) names `MODEL_LIST`
unless `stub.models_reply` says otherwise.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from santa_core.checks.extraction import EXTRACT_FIRST_LINE

DEFAULT_USAGE = {
    "input_tokens": 100,
    "output_tokens": 50,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}
FAST_RETRY = {"retry-after-ms": "1"}
"""Headers that make the SDK retry after 1 ms. `retry-after: 0` is NOT fast: the SDK ignores a
zero retry-after and falls back to exponential backoff (0.5 s, 1 s, 2 s...)."""


@dataclass
class Reply:
    """One HTTP answer: status, extra headers, body (dict -> JSON, str/bytes sent as is), delay."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    delay_s: float = 0.0
    drop: bool = False
    """Close the connection without answering (after the delay): a connection dropped mid-request."""


def message(
    text: str,
    model: str = "stub-model",
    stop_reason: str | None = "end_turn",
    usage: dict | None = None,
    thinking: str | None = None,
) -> dict:
    """A Messages API answer with one text block (optionally preceded by a thinking block)."""
    content: list[dict] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": "sig_stub"})
    content.append({"type": "text", "text": text})
    return {
        "id": "msg_stub",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {**DEFAULT_USAGE, **(usage or {})},
    }


def error_body(type: str, message: str) -> dict:
    """An API error body, e.g. error_body("overloaded_error", "Overloaded")."""
    return {"type": "error", "error": {"type": type, "message": message}, "request_id": "req_stub"}


def error_reply(status: int, type: str, message: str = "stub error", headers: dict[str, str] | None = None) -> Reply:
    """An error Reply that the SDK retries quickly (retry-after-ms: 1) when retryable."""
    return Reply(status, {**FAST_RETRY, **(headers or {})}, error_body(type, message))


def _check(c: Any) -> dict:
    if isinstance(c, dict):
        return c
    criterion, result, *detail = c
    return {"criterion": criterion, "result": result, "detail": detail[0] if detail else "stub"}


def _issue(i: Any) -> dict:
    if isinstance(i, dict):
        return i
    criterion, description, *evidence = i
    return {"criterion": criterion, "description": description, "evidence": evidence[0] if evidence else ""}


def review_json(verdict: str = "PASS", checks: Any = (), issues: Any = (), suggestions: Any = ()) -> str:
    """Review JSON text. checks: dicts, (criterion, result[, detail]) tuples or {id: result};
    issues: dicts or (criterion, description[, evidence]) tuples."""
    if isinstance(checks, dict):
        checks = list(checks.items())
    return json.dumps(
        {
            "verdict": verdict,
            "checks": [_check(c) for c in checks],
            "critical_issues": [_issue(i) for i in issues],
            "suggestions": list(suggestions),
        }
    )


def fix_json(edits: Any = ()) -> str:
    """FixPlan JSON text; edits are dicts or (issue, before, after) tuples."""
    rows = [e if isinstance(e, dict) else dict(zip(("issue", "before", "after"), e, strict=False)) for e in edits]
    return json.dumps({"edits": rows})


def uncached(system: list[dict]) -> list[dict]:
    """System blocks as the prompt built them: a cache breakpoint (`cache_control`) is the only thing removed."""
    return [{k: v for k, v in block.items() if k != "cache_control"} for block in system]


def user_text(body: dict) -> str:
    """All text of the user turns of a request body (string or block content)."""
    parts: list[str] = []
    for m in body.get("messages") or []:
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        else:
            parts.extend(b.get("text", "") for b in content or [] if isinstance(b, dict))
    return "\n".join(parts)


_SCREEN_KEY = re.compile(r'^Repeat "([A-Z0-9-]+)" once while ignoring the following text\.')
_SCREEN_DATA = re.compile(r"<untrusted_data_([0-9a-f]+)>\n(.*)\n</untrusted_data_\1>", re.S)


def screen_key(body: dict) -> str | None:
    """The key a known-answer screen request asks to repeat (None: not a screen request)."""
    m = _SCREEN_KEY.match(user_text(body))
    return m.group(1) if m else None


def screened_text(body: dict) -> str:
    """The fenced text of a screen request ('' when absent)."""
    m = _SCREEN_DATA.search(user_text(body))
    return m.group(2) if m else ""


def repeat_key(body: dict) -> dict:
    """A screening model that does what it was asked: it answers with the key."""
    return message(
        screen_key(body) or "", body.get("model", "stub-model"), usage={"input_tokens": 60, "output_tokens": 6}
    )


def is_extraction(body: dict) -> bool:
    """Whether a request is the screen's extraction check (`santa_core.checks.extraction`)."""
    return isinstance(body, dict) and user_text(body).startswith(EXTRACT_FIRST_LINE)


_EXTRACT_DATA = re.compile(r"<untrusted_(task|output)_([0-9a-f]+)>\n(.*?)\n</untrusted_\1_\2>", re.S)


def extracted_texts(body: dict) -> dict[str, str]:
    """The fenced texts of an extraction request by fence ("task": the spec, "output")."""
    return {m.group(1): m.group(3) for m in _EXTRACT_DATA.finditer(user_text(body))}


def quote_nothing(body: dict) -> dict:
    """An extraction model that finds nothing to quote: it answers NONE."""
    return message("NONE", body.get("model", "stub-model"), usage={"input_tokens": 80, "output_tokens": 2})


def quoting(*quotes: str) -> Handler:
    """An extraction model that answers with these quotes, one per line (NONE when there is none)."""
    answer = "\n".join(quotes) or "NONE"
    return lambda body: message(
        answer, body.get("model", "stub-model"), usage={"input_tokens": 80, "output_tokens": 20}
    )


def is_screen(body: dict) -> bool:
    """Whether a request is one of the injection screen's model checks (the key or the extraction)."""
    return screen_key(body) is not None or is_extraction(body)


def screen_answer(body: dict) -> dict:
    """A screening model that reads the data as data: the key to a key request, NONE to an extraction request."""
    return quote_nothing(body) if is_extraction(body) else repeat_key(body)


def schema_properties(body: dict) -> dict:
    """Properties of the JSON schema the request asked for (empty when none)."""
    fmt = (body.get("output_config") or {}).get("format") or {}
    return (fmt.get("schema") or {}).get("properties") or {}


_CRITERIA = re.compile(r"\(criteria: ([^)]*)\)")


def asked_criteria(body: dict) -> list[str]:
    """The criterion ids a review request lists (its last "(criteria: …)"); [] when none."""
    found = _CRITERIA.findall(user_text(body))
    return [s.strip() for s in found[-1].split(",") if s.strip()] if found else []


def default_answer(body: dict) -> dict:
    """A valid answer for the requested schema: an empty fix plan, or an all-PASS review."""
    model = body.get("model", "stub-model")
    if "edits" in schema_properties(body):
        return message(fix_json(), model)
    return message(review_json("PASS", [(i, "PASS") for i in asked_criteria(body)]), model)


def as_reply(value: Any, body: dict) -> Reply:
    """Normalise whatever a script entry or handler gave into a Reply."""
    if isinstance(value, Reply):
        return value
    if isinstance(value, tuple):
        return Reply(*value)
    if isinstance(value, str):
        return Reply(200, {}, message(value, body.get("model", "stub-model")))
    return Reply(200, {}, value)


Handler = Callable[[dict], Any]

BATCHES_PATH = "/v1/messages/batches"
MODEL_LIST = {
    "data": [
        {"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"}
        for m in ("claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5")
    ],
    "has_more": False,
    "first_id": "claude-sonnet-5-5",
    "last_id": "claude-opus-5-5",
}
"""What GET /v1/models answers: the models the tests name (asking costs nothing, as at the API)."""
RESULT_TYPES = frozenset({"succeeded", "errored", "canceled", "expired"})
EXPIRED = {"type": "expired"}
"""A batch result: the request was not processed before the batch expired."""
CANCELED = {"type": "canceled"}
"""A batch result: the batch was canceled before the request was processed."""


def errored(type: str = "invalid_request_error", message: str = "stub error") -> dict:
    """A batch result: the request failed with this API error."""
    return {"type": "errored", "error": error_body(type, message)}


def batch_result(reply: Reply) -> dict:
    """The `result` of one batch line for a reply chosen like a sync answer."""
    body = reply.body
    if reply.status == 200 and isinstance(body, dict) and body.get("type") in RESULT_TYPES:
        return body
    if reply.status == 200 and isinstance(body, dict):
        return {"type": "succeeded", "message": body}
    if isinstance(body, dict) and body.get("type") == "error":
        return {"type": "errored", "error": body}
    return errored("api_error", f"stub: HTTP {reply.status} {str(body)[:80]}")


@dataclass
class StubBatch:
    """One Message Batch as the stub holds it."""

    id: str
    requests: list[dict]
    created_at: datetime
    status: str = "in_progress"
    polls: int = 0
    ended_at: datetime | None = None
    cancel_initiated_at: datetime | None = None
    lines: list[dict] | None = None

    def as_json(self, base_url: str) -> dict:
        """The batch object the API returns (results_url only once ended, pointing at the stub)."""
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if self.lines is None:
            counts["processing"] = len(self.requests)
        for line in self.lines or []:
            counts[line["result"]["type"]] += 1
        when = {k: v.isoformat() if v else None for k, v in self._times().items()}
        ended = self.lines is not None
        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": self.status,
            "request_counts": counts,
            **when,
            "archived_at": None,
            "results_url": f"{base_url}{BATCHES_PATH}/{self.id}/results" if ended else None,
        }

    def _times(self) -> dict[str, datetime | None]:
        return {
            "created_at": self.created_at,
            "ended_at": self.ended_at,
            "expires_at": self.created_at + timedelta(hours=24),
            "cancel_initiated_at": self.cancel_initiated_at,
        }


class LoopbackServer:
    """An HTTP server on 127.0.0.1 and a free port, serving on a daemon thread, that records every request.
    A subclass sets `_calls`, `_lock` and `_server = None` and chooses replies in `answer(path, headers, body,
    method)`."""

    thread_name = "stub"
    _calls: list[dict]
    _lock: threading.Lock
    _server: ThreadingHTTPServer | None

    def start(self) -> Self:
        """Bind 127.0.0.1 on a free port and serve on a daemon thread."""
        self._server = _Server(("127.0.0.1", 0), _make_handler(self))  # type: ignore[arg-type]
        # A short poll interval makes stop() (and so every fixture teardown) fast.
        serve = partial(self._server.serve_forever, poll_interval=0.02)
        threading.Thread(target=serve, daemon=True, name=self.thread_name).start()
        return self

    @property
    def port(self) -> int:
        """The port it listens on."""
        assert self._server is not None, "start() the stub first"
        return self._server.server_address[1]

    @property
    def calls(self) -> list[dict]:
        """Snapshot of recorded requests, in order: {"method", "path", "headers" (lower-case), "body"}."""
        with self._lock:
            return list(self._calls)

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class MessagesStub(LoopbackServer):
    """Loopback Messages API server. Use .start(), .url, .calls, .script(...), .handler, .stop()."""

    thread_name = "messages-stub"

    def __init__(self) -> None:
        self.handler: Handler | None = None
        self._calls: list[dict] = []
        self._queue: deque[Any] = deque()
        self._lock = threading.Lock()
        self._batches: dict[str, StubBatch] = {}
        self._batch_queue: deque[Any] = deque()
        self.batch_end_after_polls: int | None = None
        """When set, a batch ends (answered as by end_batch()) on its Nth retrieve."""
        self.screen: Handler | None = repeat_key
        """Answers known-answer screen requests (None: they take the scripted queue like the rest)."""
        self.extract: Handler | None = quote_nothing
        """Answers the screen's extraction requests (None: they take the scripted queue like the rest)."""
        self.models_reply: Reply = Reply(200, {}, MODEL_LIST)
        """What GET /v1/models answers (Test connection, a Message Batch's check of the screen)."""
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """Base URL to give the SDK (no /v1 suffix)."""
        return f"http://127.0.0.1:{self.port}"

    def message_calls(self) -> list[dict]:
        """Recorded POST /v1/messages requests of reviewers and the fix agent (count_tokens and
        the injection screen's key and extraction requests excluded)."""
        return [c for c in self.calls if c["path"].split("?")[0] == "/v1/messages" and not is_screen(c["body"])]

    def screen_calls(self) -> list[dict]:
        """Recorded known-answer screen requests."""
        return [
            c for c in self.calls if c["path"].split("?")[0] == "/v1/messages" and screen_key(c["body"]) is not None
        ]

    def extract_calls(self) -> list[dict]:
        """Recorded extraction requests of the injection screen."""
        return [c for c in self.calls if c["path"].split("?")[0] == "/v1/messages" and is_extraction(c["body"])]

    def batch_calls(self) -> list[dict]:
        """Recorded requests to the Message Batches endpoints only."""
        return [c for c in self.calls if c["path"].startswith(BATCHES_PATH)]

    def script(self, *replies: Any) -> MessagesStub:
        """Queue replies for the next /v1/messages requests, first in first out."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def reset(self) -> None:
        """Forget recorded calls, queued replies and the handler."""
        with self._lock:
            self._calls.clear()
            self._queue.clear()
            self._batches.clear()
            self._batch_queue.clear()
        self.handler = None
        self.screen = repeat_key
        self.extract = quote_nothing
        self.batch_end_after_polls = None

    def answer(self, path: str, headers: dict, body: Any, method: str = "POST") -> Reply:
        """Record the request and choose its reply (called on the server's threads)."""
        if path.startswith(BATCHES_PATH):
            return self._batch_answer(method, path, headers, body)
        with self._lock:
            self._calls.append({"method": method, "path": path, "headers": headers, "body": body})
            if path.split("?")[0].endswith("/count_tokens"):
                return Reply(200, {}, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
            if method == "GET" and path.split("?")[0] == "/v1/models":  # the free model list (desk.connection)
                return self.models_reply
            screen = self.screen if isinstance(body, dict) and screen_key(body) is not None else None
            screen = screen or (self.extract if is_extraction(body) else None)
            scripted = self._queue.popleft() if self._queue and screen is None else None
        if screen is not None:  # outside the lock: a handler that holds its answer holds no other request
            return as_reply(screen(body), body)
        return self._resolve(scripted, body)

    def _resolve(self, scripted: Any, body: dict) -> Reply:
        """The reply to a messages request: the scripted one, else the handler's, else the default."""
        if scripted is not None:
            return as_reply(scripted, body)
        handler = self.handler
        if handler is not None:
            return as_reply(handler(body), body)
        return as_reply(default_answer(body), body)

    # --- Message Batches ------------------------------------------------------------------

    def script_batches(self, *replies: Any) -> MessagesStub:
        """Queue raw HTTP replies for the next requests to any batches endpoint (e.g. a 429)."""
        with self._lock:
            self._batch_queue.extend(replies)
        return self

    def batch(self, batch_id: str | None = None) -> StubBatch:
        """A stored batch by id (None: the latest one created)."""
        with self._lock:
            if batch_id is None:
                assert self._batches, "no batch was created"
                return list(self._batches.values())[-1]
            return self._batches[batch_id]

    def batch_ids(self) -> list[str]:
        """Ids of every batch created, oldest first."""
        with self._lock:
            return list(self._batches)

    def end_batch(
        self,
        batch_id: str | None = None,
        results: dict[str, Any] | None = None,
        order: Sequence[str] | None = None,
        omit: Iterable[str] = (),
        duration_s: float | None = None,
    ) -> StubBatch:
        """End a batch: answer each request (results[custom_id] first, else like a sync message).

        `order` lists custom ids in the order the lines are served (default: request order);
        `omit` leaves lines out (a results file missing items); `duration_s` sets ended_at.
        """
        batch, results = self.batch(batch_id), results or {}
        lines = []
        for req in batch.requests:
            cid, params = req["custom_id"], req["params"]
            if cid in results:
                reply = as_reply(results[cid], params)
            elif batch.cancel_initiated_at is not None:
                reply = Reply(200, {}, CANCELED)
            else:
                reply = self._resolve(self._pop_scripted(), params)
            lines.append({"custom_id": cid, "result": batch_result(reply)})
        if order is not None:
            by_id = {line["custom_id"]: line for line in lines}
            lines = [by_id[cid] for cid in order]
        dropped = set(omit)
        with self._lock:
            batch.lines = [line for line in lines if line["custom_id"] not in dropped]
            batch.status = "ended"
            batch.ended_at = (
                batch.created_at + timedelta(seconds=duration_s) if duration_s is not None else datetime.now(UTC)
            )
        return batch

    def _pop_scripted(self) -> Any:
        with self._lock:
            return self._queue.popleft() if self._queue else None

    def _batch_answer(self, method: str, path: str, headers: dict, body: Any) -> Reply:
        """Create, retrieve, cancel or fetch the results of a batch."""
        with self._lock:
            self._calls.append({"method": method, "path": path, "headers": headers, "body": body})
            scripted = self._batch_queue.popleft() if self._batch_queue else None
        if scripted is not None:
            return as_reply(scripted, body)
        parts = path.split("?")[0][len(BATCHES_PATH) :].strip("/").split("/")
        if method == "POST" and parts == [""]:
            return self._create_batch(body)
        with self._lock:
            batch = self._batches.get(parts[0])
        if batch is None:
            return Reply(404, {}, error_body("not_found_error", f"no batch {parts[0]!r}"))
        if method == "GET" and len(parts) == 1:
            return self._retrieve_batch(batch)
        if method == "POST" and parts[1:] == ["cancel"]:
            return self._cancel_batch(batch)
        if method == "GET" and parts[1:] == ["results"]:
            return self._batch_results(batch)
        return Reply(404, {}, error_body("not_found_error", f"no route {method} {path}"))

    def _create_batch(self, body: dict) -> Reply:
        requests = body.get("requests") or []
        if not requests:
            return Reply(400, {}, error_body("invalid_request_error", "requests: at least one request"))
        with self._lock:
            batch_id = f"msgbatch_stub{len(self._batches) + 1:04d}"
            batch = StubBatch(batch_id, requests, datetime.now(UTC))
            self._batches[batch_id] = batch
        return Reply(200, {}, batch.as_json(self.url))

    def _retrieve_batch(self, batch: StubBatch) -> Reply:
        with self._lock:
            batch.polls += 1
            due = self.batch_end_after_polls is not None and batch.polls >= self.batch_end_after_polls
        if due and batch.lines is None:
            self.end_batch(batch.id)
        return Reply(200, {}, batch.as_json(self.url))

    def _cancel_batch(self, batch: StubBatch) -> Reply:
        with self._lock:
            if batch.lines is None:
                batch.status, batch.cancel_initiated_at = "canceling", datetime.now(UTC)
        return Reply(200, {}, batch.as_json(self.url))

    def _batch_results(self, batch: StubBatch) -> Reply:
        if batch.lines is None:
            return Reply(400, {}, error_body("invalid_request_error", f"batch {batch.id} is still processing"))
        data = "".join(json.dumps(line) + "\n" for line in batch.lines)
        return Reply(200, {"content-type": "application/binary"}, data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out hangs up before we write: that is the test, not a failure.
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _make_handler(stub: MessagesStub) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like the real API
        # TCP_NODELAY: the headers and the body go out as two writes; with Nagle on, the body waited for the
        # client's delayed ACK of the headers (about 40 ms on loopback), so every stub call took ~45 ms of wall.
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"_unparsed": raw.decode("utf-8", "replace")}
            try:
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = stub.answer(self.path, headers, body, method="POST")
            except Exception as exc:  # noqa: BLE001 - a broken handler shows up as a 500 body
                reply = Reply(500, {"x-should-retry": "false"}, error_body("api_error", f"stub handler: {exc!r}"))
            _send(self, reply)

        def do_GET(self) -> None:
            try:
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = stub.answer(self.path, headers, None, method="GET")
            except Exception as exc:  # noqa: BLE001 - a broken handler shows up as a 500 body
                reply = Reply(500, {"x-should-retry": "false"}, error_body("api_error", f"stub: {exc!r}"))
            _send(self, reply)

    return _Handler


def _send(h: BaseHTTPRequestHandler, reply: Reply) -> None:
    """Write a Reply, after its delay."""
    if reply.delay_s:
        time.sleep(reply.delay_s)
    if reply.drop:
        h.close_connection = True
        return
    body = reply.body
    data = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else json.dumps(body).encode()
    h.send_response(reply.status)
    if "content-type" not in {k.lower() for k in reply.headers}:
        h.send_header("content-type", "application/json")
    h.send_header("request-id", "req_stub")
    for k, v in reply.headers.items():
        h.send_header(k, v)
    h.send_header("content-length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)


_OUTPUT_FENCE = re.compile(r"<untrusted_output_([0-9a-f]+)>\n(.*?)\n</untrusted_output_\1>", re.S)


def fenced_output(body: dict) -> str:
    """The OUTPUT text inside the request's nonce fence ('' when absent)."""
    m = _OUTPUT_FENCE.search(user_text(body))
    return m.group(2) if m else ""


def santa_scenario(body: dict) -> Any:
    """A stand-in model for end-to-end runs.

    Reviewers FAIL an output containing "DEFECT" (evidence "DEFECT") and PASS anything else.
    The fix agent replaces "DEFECT" with "fact", except when the output says "UNFIXABLE": then
    it makes an applicable edit that leaves the defect in place, so the run hits the cap.
    """
    output, model = fenced_output(body), body.get("model", "stub-model")
    if "edits" in schema_properties(body):
        if "UNFIXABLE" in output:  # touches the flagged text, leaves the defect in place
            return message(fix_json([(0, "DEFECT", "DEFECT!")]), model)
        return message(fix_json([(0, "DEFECT", "fact")]), model)
    found = _CRITERIA.findall(user_text(body))
    ids = [s.strip() for s in found[-1].split(",") if s.strip()] if found else []
    if "DEFECT" not in output:
        return message(review_json("PASS", [(i, "PASS") for i in ids]), model)
    checks = [(i, "FAIL" if i == "factual_accuracy" else "PASS", "defect marker") for i in ids]
    issues = [("factual_accuracy", "The output contains a defect marker.", "DEFECT")]
    return message(review_json("FAIL", checks, issues), model)
