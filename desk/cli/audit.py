"""`audit verify|list`: the hash-chained audit trail, checked link by link or listed."""

from __future__ import annotations

import argparse
import json

from desk.cli.common import EXIT_BROKEN, EXIT_SHIPPED, BadInput, CliParser, as_columns, open_repo


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`audit verify`, `audit list [filters]`."""
    au = sub.add_parser("audit", help="verify or list the audit trail")
    asub = au.add_subparsers(dest="audit_command", required=True, parser_class=CliParser)
    vf = asub.add_parser("verify", help="recompute the hash chain and every sealed row; exit 1 naming what differs")
    vf.add_argument(
        "--expect",
        metavar="HASH",
        help="a head hash kept outside the database (Audit page, SANTA_AUDIT_ANCHOR_FILE): the chain "
        "must still reach it",
    )
    ls = asub.add_parser("list", help="audit events, newest first")
    ls.add_argument("--run", type=int, help="only events of this run")
    ls.add_argument("--actor", help="only events by this actor (an e-mail, local, worker, cli, ...)")
    ls.add_argument("--action", help="only actions starting with this (e.g. decision. or run.state)")
    ls.add_argument("--limit", type=int, default=50, help="at most this many events (default 50)")
    ls.add_argument("--json", action="store_true", help="print one JSON array")


def run_audit(args: argparse.Namespace) -> int:
    """`audit verify` (exit 1 naming the first broken event) and `audit list`."""
    repo = open_repo()
    if args.audit_command == "verify":
        report = repo.audit.verify(expect=args.expect)
        if report.ok:
            newest = f"; newest hash {report.head_hash}" if report.head_hash else ""
            kept = "; reaches the hash you kept" if report.expected else ""
            print(f"intact: {report.checked} events, {report.rows_checked} rows{kept}{newest}")
            return EXIT_SHIPPED
        if report.broken is not None:
            print(f"broken: {report.broken.describe()}; {report.checked} events before it verified")
        for problem in report.row_problems:
            print(f"differs: {problem}")
        return EXIT_BROKEN
    if args.limit < 1:
        raise BadInput("--limit must be at least 1")
    events = repo.audit.events(run_id=args.run, actor=args.actor, action=args.action, limit=args.limit)
    if args.json:
        print(json.dumps([e.model_dump(mode="json") for e in events], indent=2, ensure_ascii=False))
        return EXIT_SHIPPED
    rows = [("SEQ", "TIME (UTC)", "ACTOR", "ACTION", "ENTITY", "RUN")]
    rows += [
        (
            str(e.seq),
            f"{e.created_at:%Y-%m-%d %H:%M:%S}",
            e.actor,
            e.action,
            f"{e.entity_type} {e.entity_id}",
            "" if e.run_id is None else str(e.run_id),
        )
        for e in events
    ]
    print(as_columns(rows))
    return EXIT_SHIPPED
