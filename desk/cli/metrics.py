"""`metrics`: the Metrics page's figures for a view of the run history."""

from __future__ import annotations

import argparse
import sys
from datetime import date
from typing import TYPE_CHECKING

from desk.cli.common import EXIT_SHIPPED, BadInput, as_columns, open_repo

if TYPE_CHECKING:  # annotations only
    from santa_core.reports.metrics import MetricsFilter, MetricsReport
    from storage.metrics import MetricsOptions, MetricsStore


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`metrics [--since DATE] [--until DATE] [--rubric NAME ...] [--json]`."""
    me = sub.add_parser("metrics", help="the Metrics page's figures for a view of the history")
    me.add_argument("--since", type=_day, help="first creation day of the runs, YYYY-MM-DD (UTC)")
    me.add_argument("--until", type=_day, help="last creation day of the runs, YYYY-MM-DD (UTC, included)")
    for flag, help_text, kind in (
        ("--rubric", "rubric name", str),
        ("--version", "rubric version as NAME@N", _version),
        ("--domain", "rubric domain", str),
        ("--reviewer", "reviewer model (slot B or C)", str),
        ("--person", "a person who started, reviewed or decided on the run", str),
    ):
        me.add_argument(
            flag, action="append", default=[], type=kind, help=f"only runs with this {help_text} (repeatable)"
        )
    me.add_argument(
        "--grain",
        choices=("auto", "day", "week", "month"),
        default="auto",
        help="time buckets of the series (default: from the date span)",
    )
    me.add_argument("--json", action="store_true", help="print the whole report as one JSON object")


def _day(text: str) -> date:
    """A YYYY-MM-DD argument."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date written YYYY-MM-DD") from None


def _version(text: str) -> str:
    """A NAME@N argument."""
    from santa_core.reports.metrics import parse_version

    if parse_version(text) is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rubric version written NAME@N (for example general@2)")
    return text


def run_metrics(args: argparse.Namespace) -> int:
    """`metrics`: the same report the Metrics page shows for the same filters."""
    from santa_core.reports.metrics import MetricsFilter

    if args.since and args.until and args.since > args.until:
        raise BadInput(f"--since {args.since} is after --until {args.until}")
    filters = MetricsFilter(
        since=args.since,
        until=args.until,
        rubrics=args.rubric,
        versions=args.version,
        domains=args.domain,
        reviewers=args.reviewer,
        people=args.person,
    )
    store = open_repo().metrics
    for problem in _unknown_filter_values(filters, store.options()):
        print(f"santa: warning: {problem}", file=sys.stderr)
    report = store.report(filters, None if args.grain == "auto" else args.grain)
    print(_json(report, store) if args.json else _metrics_text(report))
    return EXIT_SHIPPED


def _json(report: MetricsReport, store: MetricsStore) -> str:
    """The report with the spot-check escape rate and the reviewers' calibration (over the whole history)."""
    from desk.calibration import figures
    from santa_core.reports.spot_figures import document

    return document(report, figures(store))


def _unknown_filter_values(filters: MetricsFilter, options: MetricsOptions) -> list[str]:
    """Filter values that match nothing in the history (not an error: the view is just empty)."""
    known = {
        "rubric": (filters.rubrics, options.rubrics),
        "version": (filters.versions, options.versions),
        "domain": (filters.domains, options.domains),
        "reviewer": (filters.reviewers, options.reviewers),
        "person": (filters.people, options.people),
    }
    return [
        f"no run in the history has {kind} {value!r}"
        for kind, (wanted, have) in known.items()
        for value in wanted
        if value not in have
    ]


def _metrics_text(report: MetricsReport) -> str:
    """The headline figures, warnings and the most-failed criteria as plain text."""
    from santa_core.reports.metrics import headline_rows
    from santa_core.reports.metrics_words import format_figure

    if report.empty:
        return "no runs match this view yet: start a review, or widen the filters"
    lines = [as_columns([("FIGURE", "VALUE"), *headline_rows(report)])]
    lines += [f"warning: {w}" for w in report.warnings]
    if report.criteria:
        rows = [("CRITERION", "CATEGORY", "FAILED", "BOTH", "B ONLY", "C ONLY", "KAPPA")]
        rows += [
            (
                c.criterion,
                c.category,
                str(c.failed),
                str(c.both),
                str(c.b_only),
                str(c.c_only),
                format_figure(c.kappa, "kappa"),
            )
            for c in report.criteria[:10]
        ]
        lines += ["", as_columns(rows)]
    return "\n".join(lines)
