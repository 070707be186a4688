"""Patterns over untrusted text in bounded time: the second wall behind patterns written to run in linear time.

Every pattern of the injection detector is written so that it cannot backtrack more than linearly (atomic
groups, possessive repeats, a repeat that starts only where a run of its characters starts); the fuzz test
in tests/core/checks/test_linear_time.py holds every text check to that. This module is the wall behind it:
the patterns run on the `regex` engine, which takes a timeout and releases the GIL while it matches (so one
run's check does not stop the other users' pages on a server where runs are threads), and a check opens a
`budget` that every search in it draws from. A search past the budget raises `Unfinished`, which the check
turns into a finding, never into a clean result: a text nobody could check goes to a person.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import regex

__all__ = ["Pattern", "Unfinished", "budget", "escape", "search"]

escape = regex.escape

# Why this thread's CPU time: a budget must measure the work of the check it bounds. Process CPU time (the clock
# of the `regex` engine's own timeout, C `clock()`) also counts every other thread of the server, so four runs
# checking at once spent each other's budgets and sent clean texts to a person. Each search still gets a timeout
# on the engine's clock, BACKSTOP times what is left: it stops one search that would never end (so a budget of
# B spends at most about (1 + BACKSTOP) x B), and a busy server seldom makes that many times the process's CPU pass
# during one linear search (each takes well under a second); if it does, the text goes to a person, never through.
_deadline: ContextVar[float | None] = ContextVar("santa_check_deadline", default=None)
BACKSTOP = 3.0
"""A search's own timeout (process CPU seconds) is this many times the budget left in this thread."""


class Unfinished(Exception):
    """A text check ran past its budget: what it would have found is unknown."""


@contextmanager
def budget(seconds: float) -> Iterator[None]:
    """Every search of a `Pattern` in this block (this thread, this context) shares `seconds` of this thread's CPU.

    A budget inside another one ends no later than the outer one.
    """
    until = time.thread_time() + seconds
    outer = _deadline.get()
    token = _deadline.set(until if outer is None else min(until, outer))
    try:
        yield
    finally:
        _deadline.reset(token)


def _left() -> float | None:
    """The timeout of the next search: BACKSTOP times the CPU seconds left in this thread's budget (None: no
    budget is open); `Unfinished` once the budget is spent."""
    until = _deadline.get()
    if until is None:
        return None
    left = until - time.thread_time()
    if left <= 0:
        raise Unfinished
    return left * BACKSTOP


def search(pattern: str, text: str, flags: int = 0) -> regex.Match[str] | None:
    """The first match of a pattern built at run time (the engine caches it), drawing from the active budget."""
    try:
        return regex.search(pattern, text, flags, timeout=_left())
    except TimeoutError as exc:
        raise Unfinished from exc


class Pattern:
    """A pattern compiled by the `regex` engine whose every search draws from the active budget."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self._compiled: regex.Pattern[str] | None = None

    @property
    def _rx(self) -> regex.Pattern[str]:
        """The compiled pattern, compiled at its first search: a process compiles only the patterns it uses (a page
        or a command that never checks a text pays nothing, and a language's table is compiled when a text holds
        one of its trigger words). Two threads compiling at once both get an equal pattern."""
        rx = self._compiled
        if rx is None:
            rx = self._compiled = regex.compile(self.pattern, self.flags)
        return rx

    def compile(self) -> Pattern:
        """Compile now (a test that every pattern is well formed; a warm-up); returns the pattern itself."""
        self._rx  # noqa: B018 - the property compiles
        return self

    def finditer(self, text: str, pos: int = 0, endpos: int | None = None) -> list[regex.Match[str]]:
        """Every match, as a list (the timeout covers the whole scan)."""
        try:
            return list(self._rx.finditer(text, pos, len(text) if endpos is None else endpos, timeout=_left()))
        except TimeoutError as exc:
            raise Unfinished from exc

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> regex.Match[str] | None:
        """The first match from `pos`, or None."""
        try:
            return self._rx.search(text, pos, len(text) if endpos is None else endpos, timeout=_left())
        except TimeoutError as exc:
            raise Unfinished from exc

    def match(self, text: str, pos: int = 0, endpos: int | None = None) -> regex.Match[str] | None:
        """A match that starts at `pos`, or None."""
        try:
            return self._rx.match(text, pos, len(text) if endpos is None else endpos, timeout=_left())
        except TimeoutError as exc:
            raise Unfinished from exc

    def fullmatch(self, text: str) -> regex.Match[str] | None:
        """A match of the whole text, or None."""
        try:
            return self._rx.fullmatch(text, timeout=_left())
        except TimeoutError as exc:
            raise Unfinished from exc

    def sub(self, repl: str | Callable[[regex.Match[str]], str], text: str) -> str:
        """The text with every match replaced."""
        try:
            return self._rx.sub(repl, text, timeout=_left())
        except TimeoutError as exc:
            raise Unfinished from exc

    def findall(self, text: str) -> list:
        """Every match's groups (as `re.findall`)."""
        try:
            return self._rx.findall(text, timeout=_left())
        except TimeoutError as exc:
            raise Unfinished from exc

    def __repr__(self) -> str:
        return f"Pattern({self.pattern!r})"
