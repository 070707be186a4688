"""How the commands that work runs (`review`, `resume`) drive them, and stop on SIGINT or SIGTERM.

A stop is orderly: no new step starts and no new request leaves; every answer that has arrived is
already committed (each is saved the moment it arrives); the run is marked `interrupted` with the signal
as the reason; one line on stderr; exit 130 (SIGINT) or 143 (SIGTERM). Calls still in flight stay in the
write-ahead call log as cut off, counted at their estimate, and are asked again on resume.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from desk.cli.common import say

if TYPE_CHECKING:  # annotations only
    from desk import Desk


class Stopped(BaseException):
    """SIGINT or SIGTERM arrived. A BaseException, so no `except Exception` on the way swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.name = signal.Signals(signum).name
        self.code = 128 + signum


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise `Stopped` in the main thread while inside."""

    def handler(signum: int, _frame: object) -> None:
        raise Stopped(signum)

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def drive(desk: Desk, run_ids: list[int]) -> None:
    """Work the runs until each needs a person or finishes; on SIGINT/SIGTERM stop as the module says.

    The stop ends the process at once (os._exit): a request in flight may take minutes to answer, and
    the pools' threads would otherwise be waited for.
    """
    futures = [desk.runner.submit(run_id) for run_id in run_ids]
    try:
        with stop_on_signals():
            for future in futures:
                future.result()
    except Stopped as stop:
        for sig in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl-C must not cut the stop short
            signal.signal(sig, signal.SIG_IGN)
        note = f"stopped by {stop.name}"
        # Only the runs this process works on: one another process claimed is that process's to stop.
        stopped = desk.runner.stop_all(note)
        which = ", ".join(map(str, stopped)) or "none"
        again = f"santa resume {stopped[0]}" if len(stopped) == 1 else "santa resume --all"
        say(f"santa: {note}: run(s) {which} interrupted; every answer that came in is kept; carry on with `{again}`")
        sys.stdout.flush()
        os._exit(stop.code)
