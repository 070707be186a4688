"""How a model call is sent again: which failures are worth another try (a retryable status, a 5xx, a timeout, a lost
connection), how long to wait (the server's retry-after, else a jittered backoff), and the words for an HTTP error.
Each attempt is our own, so every attempt the API may bill is on the call log (the SDKs' retries are switched off:
`without_sdk_retries`). Both provider adapters (`anthropic`, `openai_compat`) send through `send_with_retries`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import tenacity

from santa_core.providers import scrub_keys

DEFAULT_RETRIES = 3
"""Retries of one request after a failure worth trying again (RETRY_STATUSES, a 5xx, a timeout, a lost connection)."""
RETRY_STATUSES = frozenset({408, 409, 429})
"""4xx answers worth sending again (as the SDKs retry them); every 5xx is too. Any other 4xx is final."""
MAX_RETRY_AFTER_S = 60.0
"""The longest wait a server's retry-after is honoured for."""
BACKOFF: tenacity.wait.wait_base = tenacity.wait_exponential_jitter(multiplier=0.5, max=8.0, jitter=0.5)
"""The wait before a retry when the server named none (retry-after); tests set it to `tenacity.wait_none()`."""

STATUS_WORDS = {
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
"""Plain words for the HTTP statuses an API answers with (both providers use them)."""


def retries_note(request: Any) -> str:
    """' after N retries', read from the header the SDK stamps on each attempt."""
    try:
        n = int(request.headers.get(RETRY_HEADER, "0"))
    except (AttributeError, RuntimeError, ValueError):
        return ""
    return f" after {n} retries" if n else ""


def status_text(code: int, kind: str | None, request: Any, message: str | None) -> str:
    """'rate limited (429 rate_limit_error) after 3 retries: <API message>' — an HTTP error of either provider, any
    key the server echoed in its message scrubbed."""
    word = STATUS_WORDS.get(code) or ("server error" if code >= 500 else "API error")
    kind = f" {kind}" if kind else ""
    detail = f": {scrub_keys(message)}" if message else ""
    return f"{word} ({code}{kind}){retries_note(request)}{detail}"


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an SDK error carries (None: no answer came, e.g. a timeout or a lost connection)."""
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def retry_after(exc: BaseException) -> float | None:
    """The wait (seconds) the server asked for before a retry (retry-after-ms, retry-after), capped; None: none."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return min(MAX_RETRY_AFTER_S, max(0.0, float(headers.get(name, "")) / scale))
        except (TypeError, ValueError):
            continue
    return None


NEVER_CONNECTED = frozenset({"ConnectError", "ConnectTimeout"})
"""The HTTP library's errors (httpx and its successors name them alike) for a connection that was never made."""


def never_left(exc: BaseException) -> bool:
    """The connection was never made (refused, no such host, connect timeout): the request did not leave."""
    return any(type(cause).__name__ in NEVER_CONNECTED for cause in (exc.__cause__, exc.__context__))


RETRY_HEADER = "x-stainless-retry-count"
"""The header the SDKs stamp with the attempts before this one; we send it ourselves (the SDK's count stays 0)."""


def without_sdk_retries(client: Any) -> Any:
    """The client as it must send: with no retries of its own (a caller's client may carry some)."""
    retries = getattr(client, "max_retries", 0)
    return client.with_options(max_retries=0) if isinstance(retries, int) and retries > 0 else client


def _wait(state: tenacity.RetryCallState) -> float:
    exc = state.outcome.exception() if state.outcome else None
    after = retry_after(exc) if exc is not None else None
    return after if after else BACKOFF(state)


def send_with_retries(
    send: Callable[[int], Any],
    retries: int,
    transient: Callable[[BaseException], bool],
    failed: Callable[[BaseException], None],
) -> Any:
    """`send(n)` (n: retries so far) until it returns, at most `retries` + 1 times while it raises a `transient`
    failure (each such failure first given to `failed`, to be logged and costed as its own attempt), honouring the
    server's retry-after; the last failure, or any other, is raised. Why not the SDK's retries: they are invisible
    to the call log, so an attempt the API may bill would be on no record."""
    attempt = itertools.count()

    def before_sleep(state: tenacity.RetryCallState) -> None:
        # tenacity sleeps only after an attempt, and retries only one that raised (retry_if_exception)
        assert state.outcome is not None
        error = state.outcome.exception()
        assert error is not None
        failed(error)

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(retries + 1),
        retry=tenacity.retry_if_exception(transient),
        wait=_wait,
        reraise=True,
        before_sleep=before_sleep,
    )
    return retrying(lambda: send(next(attempt)))
