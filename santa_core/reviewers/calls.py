"""What every model provider shares: one fail-closed structured call, asked again while its answer is bad.

A provider adapter (`anthropic`, `openai_compat`) says how to build a body, send it, read an answer and
name a failure; everything else lives here once: the bounded retry of bad answers (a failed request is sent
again by `retries`), validation by our own models, the call-log rows, the reviewer and fix agent built on top (the screen's two checks: `screening`).
Nothing here raises (but `CallNotRecorded`: nothing was sent) and nothing turns a failure into a verdict.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from santa_core.checks.screen import screened_text
from santa_core.models import (
    CallPurpose,
    FixPlan,
    LLMCall,
    Review,
    ReviewOutcome,
    ReviewStatus,
    Rubric,
    ScreenResult,
    ScreenRole,
    Slot,
    Usage,
)
from santa_core.pricing import estimate_call_usd
from santa_core.reviewers.base import CallNotRecorded, FixAnswer, FixRequest, ReviewRequest, note_sending
from santa_core.reviewers.contract import MAX_SUGGESTIONS, contract_problem
from santa_core.reviewers.prompts import Prompt, build_fix_prompt, build_review_prompt
from santa_core.reviewers.retries import (
    DEFAULT_RETRIES,
    RETRY_STATUSES,
    never_left,
    send_with_retries,
    status_of,
)
from santa_core.text import SURROGATES, control_problem, sha256_text, strings_in

DEFAULT_MAX_TOKENS = 8192
"""max_tokens of a reviewer or fix call: headroom for thinking before the JSON answer."""
DEFAULT_ANSWER_ATTEMPTS = 4
"""Calls at most for one reviewer or fix answer (SANTA_ANSWER_ATTEMPTS): the first and up to three more while the
answer comes back refused, cut off or malformed (as a failed request is retried up to three times)."""
MAX_RETRY_TOKENS = 32_000
"""The most output room a call asked again after a cut-off gets."""

ROLES = {"review": ("reviewer", "review"), "fix": ("fix agent", "fix plan"), "screen": ("screening model", "screen")}
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

    def __post_init__(self) -> None:
        # A lone surrogate (a server that split an emoji in its JSON) can be in no stored text: no database takes one.
        # The answer itself fails its schema (not a unicode string) and is asked again; what is kept of it is
        # escaped, so the run's record is written and the run goes on.
        if SURROGATES.search(self.raw_text):
            self.raw_text = self.raw_text.encode("utf-8", "backslashreplace").decode("utf-8")

    def llm_calls(self, purpose: CallPurpose, model: str) -> list[LLMCall]:
        """Every attempt as a row of the call log, oldest first."""
        return [r.as_llm_call(purpose, model) for r in (*self.earlier, self)]

    def total(self) -> tuple[Usage, float, float]:
        """Usage, cost and latency of every attempt together."""
        usage = sum((r.usage for r in self.earlier), self.usage)
        return (
            usage,
            self.cost_usd + sum(r.cost_usd for r in self.earlier),
            self.latency_s + sum(r.latency_s for r in self.earlier),
        )

    def as_llm_call(self, purpose: CallPurpose, model: str) -> LLMCall:
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


def summarise_validation(exc: ValidationError, limit: int = 3) -> str:
    """A short 'where: what' list of the first pydantic errors."""
    parts = [f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()[:limit]]
    more = exc.error_count() - limit
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def validate_answer(
    text: str, schema: type[BaseModel], purpose: CallPurpose, model: str
) -> tuple[BaseModel | None, str | None]:
    """A finished answer's text against our own schema and the desk's text rule. Returns (parsed, error)."""
    who, what = ROLES[purpose]
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


def fix_answer(res: CallResult, model: str) -> FixAnswer:
    """A fix call's result as the fix agent's answer, with its rows for the call log (every attempt)."""
    usage, cost, _ = res.total()
    return FixAnswer(
        plan=res.parsed if isinstance(res.parsed, FixPlan) else None,
        usage=usage,
        cost_usd=cost,
        calls=res.llm_calls("fix", model),
        error=res.error,
    )


CONTRACT_ATTEMPTS = 2
"""Calls at most for one review while its answer keeps breaking the contract: asked again once, then a reviewer
error (the raw answer kept). A model that will not show its evidence twice is not asked to a third time."""


def keep_contract(res: CallResult, rubric: Rubric, output: str | None = None) -> CallResult:
    """A parsed review that breaks the answer contract becomes a bad answer (asked again); suggestions beyond the
    contract's few are cut (the raw answer keeps them)."""
    review = res.parsed
    if not isinstance(review, Review):
        return res
    if problem := contract_problem(review, rubric, output):
        res.parsed, res.error, res.status, res.retryable = (
            None,
            f"{CONTRACT_BROKEN}: {problem}",
            ReviewStatus.ERROR,
            True,
        )
    elif len(review.suggestions) > MAX_SUGGESTIONS:
        res.parsed = review.model_copy(update={"suggestions": review.suggestions[:MAX_SUGGESTIONS]})
    return res


CONTRACT_BROKEN = "answer broke the contract"


def broke_contract(res: CallResult) -> bool:
    """Whether the answer was refused for breaking the review contract (not for its shape)."""
    return bool(res.error and res.error.startswith(CONTRACT_BROKEN))


def raw_of(answer: Any) -> str:
    """The answer as text for the call log, whatever its shape."""
    try:
        return answer.model_dump_json(warnings=False) if hasattr(answer, "model_dump_json") else str(answer)
    except Exception:  # noqa: BLE001 - a dump that fails still leaves a line in the log
        return repr(answer)[:100_000]


def unreadable(answer: Any, body: dict, exc: Exception, model: str, latency_s: float) -> CallResult:
    """A 200 answer whose shape the reader could not take (wrong types, missing parts): a bad answer, kept raw and
    counted at the most the call may have cost (its usage cannot be trusted), asked again like any bad answer."""
    return CallResult(
        None,
        raw_of(answer),
        Usage(),
        f"answer could not be read ({type(exc).__name__}: {exc})"[:500],
        ReviewStatus.ERROR,
        latency_s,
        body,
        estimate_call_usd(model, body),
        retryable=True,
    )


class StructuredCaller:
    """One model behind a provider's SDK. Subclasses give `body`, `_send`, `_answer` and `_failure`."""

    connection_errors: tuple[type[Exception], ...] = ()
    """The SDK's errors for a request that got no answer (timeouts included)."""

    def __init__(
        self,
        model: str,
        client: Any = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = 120.0,
        max_retries: int = DEFAULT_RETRIES,
        answer_attempts: int = DEFAULT_ANSWER_ATTEMPTS,
        name: str | None = None,
    ) -> None:
        self.model = model
        """The model as the provider's API names it (no desk prefix)."""
        self.name = name or model
        """The desk's id of the model (`openai:gpt-5.4-mini`), what runs and the call log record."""
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        """Retries of a request after a transient failure: ours (the SDK client is used with none), so each
        attempt passes `note_sending` and is its own logged and costed call."""
        self.answer_attempts = max(1, answer_attempts)
        """Calls at most for one answer: a refused, cut-off or malformed answer is asked for again."""
        self._client = client

    # --- what a provider gives --------------------------------------------------------------------
    def body(self, max_tokens: int, prompt: Prompt, schema: type[BaseModel]) -> dict:
        """The exact body of a structured request (the key travels in headers only)."""
        raise NotImplementedError

    def _send(self, body: dict, retries: int = 0) -> Any:
        """Send `body` once (the SDK retries nothing; `retries`: attempts before this one, told to the server as the
        SDK would); returns the provider's answer object, not yet validated."""
        raise NotImplementedError

    def _answer(
        self, answer: Any, body: dict, schema: type[BaseModel], purpose: CallPurpose, latency_s: float
    ) -> CallResult:
        """Validate and price a returned answer."""
        raise NotImplementedError

    def _failure(self, exc: Exception) -> tuple[ReviewStatus, str]:
        """(status, human-readable reason) of an exception from `_send`."""
        raise NotImplementedError

    def _answered(self, exc: Exception) -> bool:
        """Whether `exc` means the server did answer (with something unreadable), so the call may be billed."""
        return False

    def _transient(self, exc: BaseException) -> bool:
        """Worth sending again: a timeout, a lost connection, 408/409/429, any 5xx (529 overloaded included); the
        server's x-should-retry, when it sends one, decides."""
        code = status_of(exc)
        if code is None:
            return isinstance(exc, self.connection_errors)
        said = getattr(getattr(exc, "response", None), "headers", {}).get("x-should-retry")
        return said == "true" if said in ("true", "false") else code in RETRY_STATUSES or code >= 500

    def _may_be_billed(self, exc: BaseException) -> bool:
        """A failure after the request left that no 4xx refused: a timeout, a dropped connection, a 5xx, an
        unreadable 200. It counts at its estimate (the most it may cost). A 4xx is not billed by the APIs, and
        a connection never made sent nothing: those cost 0."""
        code = status_of(exc)
        if isinstance(exc, self.connection_errors) and code is None:
            return not never_left(exc)
        # exc comes from tenacity's outcome (typed BaseException); only an Exception is retried or failed here
        return (code is not None and code >= 500) or self._answered(exc)  # type: ignore[arg-type]

    def _failed(self, exc: BaseException, body: dict, latency_s: float) -> CallResult:
        """A request that failed as the call log keeps it: the reason, and its estimate when it may be billed."""
        status, error = self._failure(exc)  # type: ignore[arg-type]  # as in _may_be_billed
        cost = estimate_call_usd(self.name, body) if body and self._may_be_billed(exc) else 0.0
        return CallResult(None, "", Usage(), error, status, latency_s, body, cost)

    def _deliver(self, purpose: CallPurpose, body: dict, failed: list[CallResult]) -> Any:
        """Send `body` through the door (each attempt on record before it leaves), retrying transient failures
        (each appended to `failed`, with its reason and cost); the answer, or the last failure raised."""
        started = [time.perf_counter()]

        def attempt(retries: int) -> Any:
            started[0] = time.perf_counter()
            note_sending(purpose, self.name, body)  # write-ahead: on record before it leaves
            return self._send(body, retries)

        return send_with_retries(
            attempt,
            self.max_retries,
            self._transient,
            lambda exc: failed.append(self._failed(exc, body, time.perf_counter() - started[0])),
        )

    # --- shared -----------------------------------------------------------------------------------
    def _call(
        self,
        make_body: Callable[[int], dict],
        schema: type[BaseModel],
        purpose: CallPurpose,
        check: Callable[[CallResult], CallResult] | None = None,
    ) -> CallResult:
        """A structured answer, asked for up to `answer_attempts` times while the answer is bad (refused, cut
        off, unfinished, empty, malformed): each attempt a fresh call with the same request, more room after a
        cut-off. HTTP errors and timeouts are sent again by `_deliver`, each attempt its own call. `check` may turn
        a valid answer into a bad one (the review contract). Never raises."""
        max_tokens, asks = self.max_tokens, 0
        earlier: list[CallResult] = []
        while True:
            res = self._call_once(functools.partial(make_body, max_tokens), schema, purpose)
            res = check(res) if check is not None else res
            earlier += res.earlier  # the failed sends before this answer: attempts of their own, not asks
            res.earlier, asks = [], asks + 1
            contract_refusals = sum(map(broke_contract, (*earlier, res)))
            if not res.retryable or asks >= self.answer_attempts or contract_refusals >= CONTRACT_ATTEMPTS:
                break
            earlier.append(res)
            if res.truncated:
                max_tokens = min(2 * max_tokens, MAX_RETRY_TOKENS)
        if asks > 1 and res.error:
            res.error += f" (the last of {asks} attempts)"
        res.earlier = earlier
        return res

    def _call_once(self, make_body: Callable[[], dict], schema: type[BaseModel], purpose: CallPurpose) -> CallResult:
        """One structured call that never raises: any failure becomes `error` with parsed=None; the failed
        sends retried before it are its `earlier`."""
        start, body = time.perf_counter(), {}
        failed: list[CallResult] = []
        try:
            body = make_body()
            answer = self._deliver(purpose, body, failed)
        except CallNotRecorded:
            raise  # nothing was sent: not the model's failure, and no verdict; the run is interrupted, resumable
        # Fail closed: any failure, even one we did not foresee, is an error, never a verdict.
        except Exception as exc:  # noqa: BLE001
            res = self._failed(exc, body, time.perf_counter() - start)
        else:
            try:
                res = self._answer(answer, body, schema, purpose, time.perf_counter() - start)
            except Exception as exc:  # noqa: BLE001 - an answer of a shape no reader foresaw: a bad answer, never a verdict
                res = unreadable(answer, body, exc, self.name, time.perf_counter() - start)
        res.earlier = failed
        return res


class ModelReviewer(StructuredCaller):
    """A model in a reviewer slot."""

    def review(self, request: ReviewRequest, slot: Slot) -> ReviewOutcome:
        """Judge request.output against the rubric (a fresh fence nonce per attempt); errors come back as
        ERROR/TIMEOUT outcomes."""
        res = self._call(
            lambda max_tokens: self.body(
                max_tokens, build_review_prompt(request.rubric, request.spec, request.output), Review
            ),
            Review,
            "review",
            check=lambda r: keep_contract(r, request.rubric, request.output),
        )
        return review_outcome(res, slot, self.name, self.name)


class ModelFixer(StructuredCaller):
    """A model as the fix agent."""

    def propose(self, request: FixRequest) -> FixAnswer:
        """Ask for exact-text edits that fix only request.issues; plan is None on any failure."""
        prompt = build_fix_prompt(request.spec, request.output, request.issues)
        res = self._call(lambda max_tokens: self.body(max_tokens, prompt, FixPlan), FixPlan, "fix")
        return fix_answer(res, self.name)


class UnavailableModel:
    """A model the desk cannot call as configured (an unknown provider, no key): every answer is that error, so
    the slot is a reviewer error and the run escalates (fail closed: never a smaller panel, never a verdict)."""

    def __init__(self, name: str, problem: str) -> None:
        self.name = name
        self.model = name
        self.problem = problem

    def review(self, request: ReviewRequest, slot: Slot) -> ReviewOutcome:
        """An ERROR outcome naming what to configure."""
        return ReviewOutcome(slot=slot, reviewer=self.name, status=ReviewStatus.ERROR, error=self.problem)

    def propose(self, request: FixRequest) -> FixAnswer:
        """No plan: the problem as the error."""
        return FixAnswer(plan=None, error=self.problem)

    def screen(self, text: str, role: ScreenRole) -> ScreenResult:
        """An error result (a screen that cannot run never says clean)."""
        return ScreenResult(
            role=role, text_hash=sha256_text(text), model=self.name, secret="", verdict="error", error=self.problem
        )

    def extract(self, spec: str, output: str, role: ScreenRole = "spec and output") -> ScreenResult:
        """An error result (an extraction check that cannot run never says clean)."""
        return ScreenResult(
            role=role,
            text_hash=sha256_text(screened_text(spec, output)),
            model=self.name,
            verdict="error",
            error=self.problem,
            check="extraction",
        )
