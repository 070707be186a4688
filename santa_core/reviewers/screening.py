"""The injection screen's two model checks on top of the shared structured call (`calls.StructuredCaller`): the
known-answer screen (`santa_core.checks.screen`) and the extraction check (`santa_core.checks.extraction`).

Apart from `calls` because the screen asks for plain text, not a schema, and judges the answer itself: a key
repeated or not, quotes found in the text or not. A provider adapter (`anthropic`, `openai_compat`) gives the bodies
and reads the answers; everything else (the retries of an answer that says nothing, the call-log rows, failing
closed) lives here once. Nothing here raises but `CallNotRecorded` (nothing was sent).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from santa_core.checks.extraction import judge_quotes
from santa_core.checks.screen import SCREEN_MAX_TOKENS, answered_key, new_key, screened_text
from santa_core.models import LLMCall, ScreenResult, ScreenRole, Usage
from santa_core.reviewers.base import CallNotRecorded
from santa_core.reviewers.calls import DEFAULT_ANSWER_ATTEMPTS, CallResult, StructuredCaller, unreadable
from santa_core.reviewers.retries import DEFAULT_RETRIES
from santa_core.text import sha256_text


@dataclass
class ScreenAnswer:
    """A 200 screen answer as a provider reads it: the text, usage, cost, and why it says nothing (or None)."""

    text: str
    usage: Usage
    cost_usd: float
    error: str | None
    cut_off: bool = False
    """The answer ran out of its room (the extraction check reads only the lines it finished)."""


def empty_answer(model: str) -> str:
    """The error of a screen answer with no text (it says nothing either way)."""
    return f"screening model {model} answered with no text"


class ModelScreen(StructuredCaller):
    """A (cheap) model as the known-answer screen. Subclasses give `_screen_body`, `_send`, `_failure`, `_read_screen`."""

    def __init__(
        self,
        model: str,
        client: Any = None,
        timeout: float = 60.0,
        max_retries: int = DEFAULT_RETRIES,
        answer_attempts: int = DEFAULT_ANSWER_ATTEMPTS,
        name: str | None = None,
    ) -> None:
        super().__init__(model, client, SCREEN_MAX_TOKENS, timeout, max_retries, answer_attempts, name)

    def _screen_body(self, text: str, key: str) -> dict:
        """Plain text, no schema, a short answer."""
        raise NotImplementedError

    def _read_screen(self, answer: Any, body: dict) -> ScreenAnswer:
        """The answer (to `body`)'s text, usage and cost; `error` when it cannot be judged (refused, unfinished,
        empty)."""
        raise NotImplementedError

    def _extract_body(self, spec: str, output: str) -> dict:
        """The extraction request (`santa_core.checks.extraction`): plain text, room for a few quotes."""
        raise NotImplementedError

    def _read_extraction(self, answer: Any, body: dict) -> ScreenAnswer:
        """The answer's text, usage and cost; `error` when refused or unfinished (empty is no quote), `cut_off`."""
        raise NotImplementedError

    def screen(self, text: str, role: ScreenRole) -> ScreenResult:
        """Ask the model to repeat a fresh key while ignoring `text`; never raises (a failure is `error`).

        A refused, unfinished or empty answer says nothing either way: it is asked for again (a fresh key),
        up to `answer_attempts` calls, each logged and costed. A verdict (clean, took over) is never asked again.
        """
        return self._asked(lambda: self._screen_once(text, role))

    def extract(self, spec: str, output: str, role: ScreenRole = "spec and output") -> ScreenResult:
        """Ask the model to quote every sentence of the spec and output that addresses an automated reader or gives
        a verdict, in its own call (own fence, own nonce), and check the quotes against the texts; never raises.
        Quoted: any quote found (`extraction.judge_quotes`). Asked again as `screen` is, while the answer says
        nothing (refused, unfinished, cut off before any finding)."""
        return self._asked(lambda: self._extract_once(spec, output, role))

    def _asked(self, once: Callable[[], tuple[ScreenResult, bool]]) -> ScreenResult:
        """`once()` until it gives a verdict, at most `answer_attempts` times; the result carries every call."""
        earlier: list[ScreenResult] = []
        while True:
            result, retryable = once()
            if not retryable or len(earlier) + 1 >= self.answer_attempts:
                break
            earlier.append(result)
        if not earlier:
            return result
        calls = [c for r in (*earlier, result) for c in r.calls]
        error = f"{result.error} (the last of {len(earlier) + 1} attempts)" if result.error else None
        return result.model_copy(
            update={"calls": calls, "error": error, "cost_usd": result.cost_usd + sum(r.cost_usd for r in earlier)}
        )

    def _screen_once(self, text: str, role: ScreenRole) -> tuple[ScreenResult, bool]:
        """One screen call: its result, and whether it was a 200 answer that said nothing (worth asking again)."""
        key = new_key()

        def judge(read: ScreenAnswer, body: dict) -> dict:
            return {"verdict": "error" if read.error else "clean" if answered_key(read.text, key) else "took_over"}

        base = {"role": role, "text_hash": sha256_text(text), "model": self.name, "secret": key}
        return self._once(base, lambda: self._screen_body(text, key), self._read_screen, judge)

    def _extract_once(self, spec: str, output: str, role: ScreenRole) -> tuple[ScreenResult, bool]:
        """One extraction call: its result, and whether its answer said nothing (worth asking again)."""
        text = screened_text(spec, output)

        def judge(read: ScreenAnswer, body: dict) -> dict:
            quotes = [] if read.error else judge_quotes(text, read.text, finished=not read.cut_off)
            if not read.error and not quotes and read.cut_off:
                room = body.get("max_tokens") or body.get("max_completion_tokens")
                read.error = f"the extraction answer was cut off at {room} tokens before any quote found in the text"
            return {"verdict": "error" if read.error else "quoted" if quotes else "clean", "quotes": quotes}

        base = {"role": role, "text_hash": sha256_text(text), "model": self.name, "check": "extraction"}
        return self._once(base, lambda: self._extract_body(spec, output), self._read_extraction, judge)

    def _once(
        self,
        base: dict,
        build: Callable[[], dict],
        read: Callable[[Any, dict], ScreenAnswer],
        judge: Callable[[ScreenAnswer, dict], dict],
    ) -> tuple[ScreenResult, bool]:
        """One call of either check: `build` its body, send it, `read` the answer, `judge` it (the verdict and what
        else the result holds; it may set the answer's error). Its result, and whether it was a 200 answer that
        said nothing (worth asking again). A failed call is an error, never clean."""
        start, body = time.perf_counter(), {}
        failed: list[CallResult] = []
        try:
            body = build()
            answer = self._deliver("screen", body, failed)
        except CallNotRecorded:
            raise  # nothing was sent: the run is interrupted, not screened
        except Exception as exc:  # noqa: BLE001 - fail closed: a failed screen is an error, never clean
            last = self._failed(exc, body, time.perf_counter() - start)
            calls = [r.as_llm_call("screen", self.name) for r in (*failed, last)]
            cost = sum(c.cost_usd for c in calls)
            return ScreenResult(**base, verdict="error", error=last.error, calls=calls, cost_usd=cost), False
        try:
            got = read(answer, body)
        except Exception as exc:  # noqa: BLE001 - an answer no reader foresaw says nothing either way
            bad = unreadable(answer, body, exc, self.name, time.perf_counter() - start)
            got = ScreenAnswer(bad.raw_text, bad.usage, bad.cost_usd, bad.error)
        judged = judge(got, body)
        latency = time.perf_counter() - start
        call = LLMCall(
            purpose="screen",
            model=self.name,
            request=body,
            response=got.text,
            usage=got.usage,
            cost_usd=got.cost_usd,
            latency_s=latency,
            error=got.error,
        )
        calls = [*(r.as_llm_call("screen", self.name) for r in failed), call]
        result = ScreenResult(
            **base, **judged, answer=got.text, error=got.error, calls=calls, cost_usd=sum(c.cost_usd for c in calls)
        )
        return result, result.verdict == "error"
