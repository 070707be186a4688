"""Command line for pipelines and scripted checks: `santa`, also run as `python -m santa_core`.

Commands, one module each: `review` (one output), `resume RUN_ID|--all` (carry on after a crash or a
stop; how `review` stops on SIGINT/SIGTERM), `rubric list|export|import` (stored rubric
versions), `record RUN_ID` (a run's verification record), `audit verify|list` (the hash-chained
audit trail), `people list|set` (who may do what), `metrics` (the Metrics page's figures), `spotcheck list|next|submit|draw` (the blind spot-check queue),
`batch FILE` (verify a CSV/JSONL batch by sampling; its report in `batch_report`), `worker` (work the
task engine's queue on PostgreSQL; `--status` shows it). What they
share (exit codes, bad input, reading files, opening the database) is in `common`.

Exit codes: 0 shipped (or any other command that worked), 1 escalated (for `audit verify`: the
chain is broken; for `batch`: no clean sample within --max-samples), 3 waiting for a person, 2 bad
usage or bad input (one line per problem on stderr, nothing changed), 4 an internal error (one line
on stderr). This is a composition root like `app.py`: it wires the pure method to `storage`, and
does so lazily, inside the commands, so `--help` and bad usage answer fast.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

from desk.cli import audit, batch, metrics, people, record, resume, review, rubric, spotcheck, worker
from desk.cli.common import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_SHIPPED, BadInput, CliParser
from desk.cli.driving import Stopped, stop_on_signals
from desk.cli.review import exit_code
from santa_core.roles import PermissionDenied

__all__ = ["build_parser", "exit_code", "main"]

COMMANDS = (review, resume, rubric, metrics, record, audit, people, spotcheck, batch, worker)
"""The command modules, in the order `--help` lists them."""
STORE_COMMANDS = {
    "record": record.run_record,
    "audit": audit.run_audit,
    "people": people.run_people,
    "metrics": metrics.run_metrics,
    "spotcheck": spotcheck.run_spotcheck,
}
"""Commands that open only the store (no runner, no model client); each prints its own answer."""


def build_parser() -> argparse.ArgumentParser:
    """Every command and its options (unset options take the saved defaults later)."""
    parser = CliParser(prog="python -m santa_core", description="Santa Method review desk")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=CliParser)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    # stderr carries one line per problem; tracebacks only when asked for (SANTA_DEBUG=1).
    logging.basicConfig(level=logging.DEBUG if os.environ.get("SANTA_DEBUG") else logging.CRITICAL)
    try:
        args = build_parser().parse_args(argv)
        if args.command == "rubric":
            print(rubric.run_rubric(args))
            return EXIT_SHIPPED
        if args.command in STORE_COMMANDS:
            return STORE_COMMANDS[args.command](args)
        if args.command == "batch":
            return batch.run_batch(args)
        if args.command == "resume":
            with stop_on_signals():
                return resume.run_resume(args)
        if args.command == "worker":  # its own orderly stop on SIGINT/SIGTERM (desk.workers)
            return worker.run_worker(args)
        with stop_on_signals():
            result = review.run_review(args)
        if result.get("status") == "queued" and getattr(args, "enqueue", False):
            print(json.dumps(result) if args.json else f"run {result['run_id']}: queued")
            return EXIT_SHIPPED
    except Stopped as stop:  # before any run was started or after the last one was driven: nothing to mark
        print(f"santa: stopped by {stop.name}; no run was interrupted", file=sys.stderr)
        return stop.code
    except (BadInput, PermissionDenied) as exc:  # a refused --author is bad input, not a crash
        print(f"santa: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:  # noqa: BLE001 - a pipeline must tell a crash from an escalation
        print(f"santa: internal error: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return EXIT_INTERNAL
    return review.print_review(result, args.json)
