"""The Reviewer and Fixer protocols and the request type a reviewer is allowed to see."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from santa_core.models import (
    FixPlan,
    LLMCall,
    MergedIssue,
    ReviewOutcome,
    Rubric,
    ScreenResult,
    ScreenRole,
    Slot,
    Usage,
)


class ReviewRequest(BaseModel):
    """Everything a reviewer may see: the rubric, the spec and the output. Nothing else.

    Context isolation is by construction: there is no field for the other reviewer, an
    earlier round or the fix agent, so a reviewer cannot be handed them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rubric: Rubric
    spec: str
    output: str


class FixRequest(BaseModel):
    """Everything the fix agent sees: spec, current output and the merged critical issues."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: str
    output: str
    issues: list[MergedIssue]


class FixAnswer(BaseModel):
    """The fix agent's raw plan plus its cost; applying it is `fixer.apply_plan`'s job."""

    plan: FixPlan | None
    usage: Usage = Usage()
    cost_usd: float = 0.0
    calls: list[LLMCall] = []
    error: str | None = None


@runtime_checkable
class Reviewer(Protocol):
    """One independent judge. Must never raise: failures come back as error outcomes."""

    name: str

    def review(self, request: ReviewRequest, slot: Slot) -> ReviewOutcome:
        """Judge request.output against request.rubric and request.spec."""
        ...


@runtime_checkable
class Fixer(Protocol):
    """The fix agent. Must never raise: failures come back with `error` set."""

    name: str

    def propose(self, request: FixRequest) -> FixAnswer:
        """Propose exact-text edits that fix only request.issues."""
        ...


@runtime_checkable
class Screen(Protocol):
    """The known-answer injection screen (`santa_core.checks.screen`). Must never raise."""

    name: str

    def screen(self, text: str, role: ScreenRole) -> ScreenResult:
        """Ask a model to repeat a fresh key while ignoring `text`; `error` when it could not tell."""
        ...


PERSON = "person"
"""Reviewer name for a slot that a human fills in the app."""


# --- the write-ahead call log -------------------------------------------------------------------

OnSend = Callable[[str, str, dict], None]
"""Called with (purpose, model, body) just before a request leaves; raising stops the request."""
_ON_SEND: ContextVar[OnSend | None] = ContextVar("santa_on_send", default=None)


@contextmanager
def journaled(on_send: OnSend) -> Iterator[None]:
    """Every model call made inside (in this thread) is first noted through `on_send`.

    The runner notes each call as *sent* in its own committed transaction before the request
    leaves, so a process killed while waiting for the answer leaves the call in the log.
    """
    token = _ON_SEND.set(on_send)
    try:
        yield
    finally:
        _ON_SEND.reset(token)


def note_sending(purpose: str, model: str, body: dict) -> None:
    """Called by a model client right before it sends `body`; an error here means: do not send."""
    on_send = _ON_SEND.get()
    if on_send is None:
        return
    try:
        on_send(purpose, model, body)
    except Exception as exc:  # noqa: BLE001 - whatever stops the note stops the request
        raise CallNotRecorded(f"not sent: the call could not be put on record first ({type(exc).__name__}: {exc})"
                              .splitlines()[0]) from exc


class CallNotRecorded(RuntimeError):
    """A request was not sent because its *sent* note could not be committed (fail closed: no paid call
    that the log, the budget and a resume would not know of)."""

