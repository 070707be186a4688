"""The Reviewer and Fixer protocols and the request type a reviewer is allowed to see."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
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
from santa_core.pricing import estimate_call_usd


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
    """The injection screen's two model checks: the known-answer screen (`santa_core.checks.screen`) and the
    extraction check (`santa_core.checks.extraction`). Must never raise."""

    name: str

    def screen(self, text: str, role: ScreenRole) -> ScreenResult:
        """Ask a model to repeat a fresh key while ignoring `text`; `error` when it could not tell."""
        ...

    def extract(self, spec: str, output: str, role: ScreenRole = "spec and output") -> ScreenResult:
        """Ask a model to quote the texts' sentences that address an automated reader or give a verdict, checked
        against the texts (`quoted` when one is found in them); `error` when it could not tell."""
        ...


PERSON = "person"
"""Reviewer name for a slot that a human fills in the app."""


# --- the write-ahead call log: the one door every paid request passes ---------------------------

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
    """Called by a model client right before it sends `body`; an error here means: do not send.

    No journal is no exception: a request nothing would put on record is refused (CallNotRecorded), so no
    path (a batch, a trial, a tool) can pay for a call the log, the budget and the cost figures never see."""
    on_send = _ON_SEND.get()
    if on_send is None:
        raise CallNotRecorded(
            f"not sent: no call log is open for this {purpose} call to {model} "
            "(every paid request is put on record before it leaves)"
        )
    try:
        on_send(purpose, model, body)
    except Exception as exc:  # noqa: BLE001 - whatever stops the note stops the request
        raise CallNotRecorded(
            f"not sent: the call could not be put on record first ({type(exc).__name__}: {exc})".splitlines()[0]
        ) from exc


class CallNotRecorded(RuntimeError):
    """A request was not sent because its *sent* note could not be committed, or no call log was open (fail
    closed: no paid call that the log, the budget and a resume would not know of)."""


@dataclass(frozen=True)
class Served:
    """What a model call served: exactly one of a run (and its round and slot), a batch's own work, a trial."""

    run_id: int | None = None
    round_no: int = 0
    slot: Slot | None = None
    batch_id: int | None = None
    trial_key: str | None = None

    def __post_init__(self) -> None:
        if sum(x is not None for x in (self.run_id, self.batch_id, self.trial_key)) != 1:
            raise ValueError("a call serves exactly one of a run, a batch or a trial")


class CallLog(Protocol):
    """Where calls that serve no run's stored review, screen or proposal are put on record (storage gives it)."""

    def note_call_sent(self, served: Served, purpose: str, model: str, request: dict, estimate_usd: float) -> None:
        """Commit a call as *sent* before its request leaves (counted at `estimate_usd` until answered)."""
        ...

    def note_calls_answered(self, served: Served, calls: list[LLMCall]) -> None:
        """Commit the answer (or failure) rows of calls noted as sent."""
        ...


def journal_to(log: CallLog, served: Served) -> AbstractContextManager[None]:
    """A journal that commits each call made inside as *sent* for `served`, before it leaves."""
    return journaled(
        lambda purpose, model, body: log.note_call_sent(served, purpose, model, body, estimate_call_usd(model, body))
    )


def new_trial_key(kind: str) -> str:
    """A fresh key naming one trial's calls ("try:…", "recheck:…", "connection:…") before the trial is stored."""
    return f"{kind}:{uuid.uuid4().hex}"
