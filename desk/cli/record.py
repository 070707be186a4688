"""`record RUN_ID`: a run's verification record as JSON, HTML or PDF."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from desk.cli.common import EXIT_SHIPPED, BadInput, open_repo, write_out


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`record RUN_ID [--format json|html|pdf] [--out FILE]`."""
    rc = sub.add_parser("record", help="export a run's verification record")
    rc.add_argument("run_id", type=int, help="the run number")
    rc.add_argument("--format", choices=("json", "html", "pdf"), default="json")
    rc.add_argument("--out", help="write to this file instead of standard output")


def run_record(args: argparse.Namespace) -> int:
    """`record RUN_ID`: the verification record as JSON, HTML or PDF."""
    from santa_core.reports.record import VerificationRecord, to_json
    from santa_core.reports.record_html import to_html
    from santa_core.reports.record_pdf import to_pdf
    from storage.errors import RunNotFound
    from storage.records import verification_record

    if args.format == "pdf" and not args.out and sys.stdout.isatty():
        raise BadInput("a PDF is binary: give --out FILE (or redirect standard output to a file)")
    repo = open_repo()
    try:
        record = verification_record(repo, args.run_id)
    except RunNotFound as exc:
        raise BadInput(f"{exc}; see the runs list in the app") from exc
    renderers: dict[str, Callable[[VerificationRecord], str | bytes]] = {
        "json": to_json,
        "html": to_html,
        "pdf": to_pdf,
    }
    render = renderers[args.format]
    write_out(render(record), args.out)
    if args.out:
        print(f"wrote the {args.format} record of run {args.run_id} to {args.out} (record sha256 {record.record_hash})")
    return EXIT_SHIPPED
