"""`worker`: work the task engine's jobs (runs, batch sample reviews) on PostgreSQL, as many processes as the
team wants, on any machine that reaches the database and the model APIs; `worker --status` shows the queues.

`--status` exits 1 when jobs wait and no worker heartbeats (a health check for the fleet), else 0.

SIGTERM or SIGINT stops it in order: no new job, every run in flight finishes its current step (answers
already asked for are stored), then each run is handed over to the other workers through the queue, first in line.
When the database is unreachable, the worker waits for it at most SANTA_WORKER_STOP_GRACE_S (30 s), then says which
runs it could not hand over (the next worker takes them over) and how many answers it drops.

While the database is away the worker keeps its runs and the answers it has (`desk.outage`), and prints one line
when it finds the database away and one when it is back.
"""

from __future__ import annotations

import argparse
import json
import logging

from desk.cli.common import EXIT_BROKEN, EXIT_SHIPPED, BadInput, load_secrets_file, say


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`worker [--concurrency N] [--queues runs,batch] | --status [--json]`."""
    wk = sub.add_parser("worker", help="work queued runs and batch reviews (PostgreSQL)")
    wk.add_argument("--concurrency", type=int, default=8, help="runs worked on at once (default 8)")
    wk.add_argument(
        "--queues",
        default="runs,batch",
        help="queues to work, comma-separated: runs (interactive, first), batch (default both)",
    )
    wk.add_argument("--status", action="store_true", help="print queue depth, job ages and workers, then exit")
    wk.add_argument("--json", action="store_true", help="with --status: one JSON object")


def _queues(text: str) -> tuple[str, ...]:
    from desk.task_engine import QUEUES

    names = tuple(dict.fromkeys(q.strip() for q in text.split(",") if q.strip()))
    if not names or any(q not in QUEUES for q in names):
        raise BadInput(f"--queues takes {', '.join(QUEUES)} (comma-separated), not {text!r}")
    return names


def run_worker(args: argparse.Namespace) -> int:
    """Work jobs until stopped, or print the engine's figures (`--status`)."""
    from desk import task_engine
    from desk.engine_status import status_text
    from storage.db import database_url, redacted_url

    load_secrets_file()
    url = database_url()
    if not task_engine.uses_task_engine(url):
        raise BadInput(
            f"the worker needs DATABASE_URL on PostgreSQL (the task engine's queue); {redacted_url(url)} "
            "is SQLite, where runs work inside the app or the command that starts them"
        )
    if not 1 <= args.concurrency <= 256:
        raise BadInput("--concurrency must be between 1 and 256")
    queues = _queues(args.queues)
    if args.status:
        from desk.cli.common import open_repo

        open_repo()  # migrated, so the figures read the same tables the workers use
        status = task_engine.task_engine(url).status()
        print(json.dumps(status.as_json(), indent=2) if args.json else status_text(status))
        if status.live_workers == 0 and any(q.waiting for q in status.queues):
            say("santa worker: jobs are waiting and no worker is heartbeating: start `santa worker`")
            return EXIT_BROKEN
        return EXIT_SHIPPED
    from desk import wiring
    from desk.cli.common import open_desk
    from desk.workers import work_jobs

    desk = open_desk(queued=True, workers=args.concurrency)
    left = wiring.resubmit_queued(desk.runs, desk.runner)
    samples = (
        desk.batches.resume_unfinished() if task_engine.BATCH in queues else []
    )  # a look at each (one waiting is enough)
    if task_engine.BATCH in queues:
        desk.batches.group_finished()  # samples closed before their failures were grouped (a page never groups)
    say(
        f"santa worker: working {', '.join(queues)} on {redacted_url(url)} with concurrency {args.concurrency}"
        + (f"; {len(left)} queued run(s) left behind put back on the queue" if left else "")
        + (f"; {len(samples)} unfinished batch sample(s) looked at again" if samples else "")
    )
    show_outage_lines()
    engine, host = desk.task_engine, desk.jobs
    assert engine is not None and host is not None  # a desk opened with queued=True has both
    try:
        work_jobs(engine, host, args.concurrency, queues)
    finally:
        desk.runner.shutdown()
    # Handed over: the run moved back to the queue and its job's retry written; a run whose job stayed with this
    # worker (the database went away again) is left for the take-over like the others.
    requeued = engine.jobs.requeued
    say(
        stopped_text(
            [i for i in host.handed_over if i in requeued],
            host.left + [i for i in host.handed_over if i not in requeued],
        )
    )
    return EXIT_SHIPPED


def show_outage_lines() -> None:
    """The desk's own lines about the database going away and coming back, on stderr whatever the log level."""
    from desk.outage import log as outage_log

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    outage_log.addHandler(handler)
    outage_log.setLevel(logging.INFO)
    outage_log.propagate = False


def stopped_text(handed_over: list[int], left: list[int]) -> str:
    """What the worker did with its runs as it stopped, truthfully."""
    from desk.engine_timing import outage_take_over_s
    from desk.outage import OUTAGE

    def runs(ids: list[int]) -> str:
        return ", ".join(f"#{i}" for i in sorted(ids))

    parts = ["santa worker: stopped"]
    parts.append(
        f"handed over to the queue, first in line: {runs(handed_over)}"
        if handed_over
        else "no run in flight to hand over"
        if not left
        else ""
    )
    if left:
        parts.append(
            f"could not hand over {runs(left)} (the database did not answer): the next worker takes them "
            f"over about {outage_take_over_s():g} s after the database answers again"
        )
    if OUTAGE.dropped_answers:
        parts.append(
            f"{OUTAGE.dropped_answers} answer(s) received but not stored were dropped: they are asked for again"
        )
    return "; ".join(p for p in parts if p)
