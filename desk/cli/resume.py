"""`resume RUN_ID` and `resume --all`: carry on with runs a crash, a kill or a stop left behind, without the
app, from their last committed step (a stored review is never asked for again). SIGINT and SIGTERM stop
it as they stop `review` (`desk.cli.driving`).

`resume RUN_ID` of a run that could not be reviewed because the model provider failed is the run page's Try again
(`santa_core.run.actions.try_again`: a new round, paid, refused over budget). `--all` never tries one again: each
attempt is paid, so a person names the run.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from desk.cli.common import CLI_ACTOR, EXIT_INTERNAL, BadInput, load_secrets_file, open_desk, say
from desk.cli.driving import drive
from desk.cli.review import print_review
from santa_core import words
from santa_core.models import EscalationReason, RunStatus

if TYPE_CHECKING:  # annotations only
    from desk import Desk

RESUMABLE = (RunStatus.INTERRUPTED, RunStatus.QUEUED, RunStatus.RUNNING)
"""Statuses `resume` carries on from (`running` only when the process that worked on it is gone)."""
SEVERITY = (EXIT_INTERNAL, 1, 3, 0)
"""`resume --all` exits with the first of these codes that any of its runs has."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`resume RUN_ID | --all [--json]`."""
    rs = sub.add_parser(
        "resume",
        help="carry on with an interrupted run (or every one) without the app; a run the "
        "model provider failed is tried again",
    )
    rs.add_argument("run_id", type=int, nargs="?", help="the run number")
    rs.add_argument(
        "--all",
        action="store_true",
        help="every interrupted or queued run, and every running one whose process is gone",
    )
    rs.add_argument("--json", action="store_true", help="print one JSON object per run")


def _resumable(desk: Desk, run_id: int) -> int:
    """Put one run back in the queue; BadInput when there is nothing to resume."""
    from santa_core.run import actions
    from santa_core.run.runner import Conflict
    from storage.errors import RunNotFound

    try:
        state = desk.runs.load_run(run_id).state
    except RunNotFound as exc:
        raise BadInput(f"{exc}; see the runs list in the app") from exc
    status = state.status
    if status == RunStatus.ESCALATED and state.escalation_reason == EscalationReason.PROVIDER_FAILED:
        try:
            actions.try_again(desk.runs, run_id, CLI_ACTOR)
        except (actions.ActionError, ValueError) as exc:  # over budget, or someone resolved it meanwhile
            raise BadInput(f"run {run_id} was not tried again: {exc}") from exc
        return run_id
    if status == RunStatus.RUNNING and run_id not in actions.interrupt_orphans(desk.runs):
        raise BadInput(f"run {run_id} is running in a live process; nothing to resume")
    status = desk.runs.load_run(run_id).state.status
    if status not in RESUMABLE:
        raise BadInput(
            f"run {run_id} is {words.status(status)}; only interrupted, queued or orphaned "
            "running runs resume, and a run the model provider failed is tried again"
        )
    if status == RunStatus.INTERRUPTED:
        try:
            actions.resume(desk.runs, run_id, CLI_ACTOR)
        except (Conflict, actions.ActionError) as exc:  # another `resume` (or the app) took it first
            raise BadInput(f"run {run_id} was resumed by another process meanwhile; nothing to resume") from exc
    return run_id


def _to_resume(desk: Desk, args: argparse.Namespace) -> list[int]:
    from desk.wiring import left_behind
    from santa_core.run import actions
    from santa_core.run.runner import Conflict

    if args.all == (args.run_id is not None):
        raise BadInput("usage: give a RUN_ID or --all")
    if not args.all:
        return [_resumable(desk, args.run_id)]
    actions.interrupt_orphans(desk.runs)
    # A batch's sample runs are its driver's (a paused batch holds them back; a Message Batch pays for them).
    now = datetime.now(UTC)
    runs = [run for run in desk.runs.runs_to_resume() if left_behind(run, now)]
    taken = []
    for run in runs:
        if run.status == RunStatus.INTERRUPTED:
            try:
                actions.resume(desk.runs, run.id, CLI_ACTOR)
            except (Conflict, actions.ActionError):  # another process resumed it meanwhile: its run, not ours
                continue
        taken.append(run.id)
    return taken


def run_resume(args: argparse.Namespace) -> int:
    """`resume`: requeue, drive to a stop, print each run; the exit code as `review`'s (see SEVERITY for --all)."""
    load_secrets_file()
    desk = open_desk()
    try:
        run_ids = _to_resume(desk, args)
        for run_id in run_ids:
            for call in desk.runs.get_run_view(run_id).cut_off:
                say(f"run {run_id}: cut off before its answer was stored, asked again: {call.describe()}")
        drive(desk, run_ids)
        results = [desk.run_json(run_id) for run_id in run_ids]
    finally:
        desk.close()
    if not results:
        say("santa: nothing to resume")
        return 0
    codes = [print_review(result, args.json) for result in results]
    return next(code for code in SEVERITY if code in codes)
