"""Command line for pipelines and scripted checks.

Commands: `review` (one output), `rubric list|export|import` (stored rubric versions),
`record RUN_ID` (a run's verification record), `audit verify|list` (the hash-chained audit
trail), `people list|set` (who may do what), `metrics` (the Metrics page's figures), `batch FILE`
(verify a CSV/JSONL batch by sampling).

Exit codes: 0 shipped (or any other command that worked), 1 escalated (for `audit verify`: the
chain is broken; for `batch`: no clean sample within --max-samples), 3 waiting for a person, 2 bad
usage or bad input (one line per problem on stderr, nothing changed), 4 an internal error (one line
on stderr). This is a composition root like `app.py`: it is the only santa_core module
that imports `storage`, and it does so lazily, inside the command.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import tomllib
from collections import Counter
from concurrent import futures
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from santa_core.batch.sampling import DEFAULT_RATE, MIN_SAMPLE
from santa_core.config import Defaults, api_key_present, diversity_warning, export_to_env
from santa_core.models import MAX_TEXT_CHARS, Rubric, RunStatus
from santa_core.pricing import is_known
from santa_core.reviewers.base import PERSON
from santa_core.roles import PermissionDenied

if TYPE_CHECKING:  # annotations only: storage is imported inside the commands
    from desk import Desk
    from santa_core.batch.file import BatchFile
    from storage.batches import BatchConfig, PatternRecord, SampledReview, SampleProgress

EXIT_SHIPPED, EXIT_ESCALATED, EXIT_BAD_INPUT, EXIT_WAITING, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_BROKEN = 1
"""`audit verify` found a broken link."""
CLI_ACTOR = "cli"
"""Who the command line acts as: a system actor (whoever can run it can open the database anyway)."""
WAITING = {RunStatus.AWAITING_APPROVAL, RunStatus.AWAITING_HUMAN_REVIEW, RunStatus.QUEUED}


class BadInput(Exception):
    """Bad usage or bad input: reported as one line on stderr with exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise BadInput(f"usage: {message}")


def build_parser() -> argparse.ArgumentParser:
    """The `review` command and its options (unset options take the saved defaults later)."""
    parser = _Parser(prog="python -m santa_core", description="Santa Method review desk")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    rv = sub.add_parser("review", help="review one output against its spec")
    rv.add_argument("--spec", required=True, help="file holding the task specification")
    rv.add_argument("--output", required=True, help="file holding the generated output")
    rv.add_argument("--rubric", help="stored rubric name (latest version) or a YAML/JSON rubric file")
    rv.add_argument("--rubric-version", type=int, help="judge by this version of a stored rubric")
    rv.add_argument("--reviewer-b", help=f"model for reviewer B, or {PERSON!r}")
    rv.add_argument("--reviewer-c", help=f"model for reviewer C, or {PERSON!r}")
    rv.add_argument("--fixer", help="model for the fix agent")
    rv.add_argument("--max-rounds", type=int, help="rounds before escalation (default 3)")
    rv.add_argument("--budget", type=float, help="per-run budget in USD")
    rv.add_argument("--auto-approve", action="store_true", help="apply fix proposals without a person")
    rv.add_argument("--generation-cost", type=float, help="what generating the output cost in USD (for metrics)")
    rv.add_argument("--json", action="store_true", help="print one JSON object")
    _rubric_parser(sub)
    _metrics_parser(sub)
    _record_parser(sub)
    _audit_parser(sub)
    _people_parser(sub)
    _batch_parser(sub)
    return parser


def _rubric_parser(sub: argparse._SubParsersAction) -> None:
    """`rubric list`, `rubric export NAME`, `rubric import FILE`."""
    rb = sub.add_parser("rubric", help="list, export or import stored rubrics")
    rsub = rb.add_subparsers(dest="rubric_command", required=True, parser_class=_Parser)
    ls = rsub.add_parser("list", help="every stored rubric with its latest version")
    ls.add_argument("--json", action="store_true", help="print one JSON array")
    ex = rsub.add_parser("export", help="print a rubric version as YAML or JSON")
    ex.add_argument("name")
    ex.add_argument("--version", type=int, help="version number (default: the latest)")
    ex.add_argument("--format", choices=("yaml", "json"), default="yaml")
    ex.add_argument("--out", help="write to this file instead of standard output")
    im = rsub.add_parser("import", help="store a YAML/JSON rubric file as the next version")
    im.add_argument("file")
    im.add_argument("--note", default="", help="change note kept with the version")
    im.add_argument("--author", default="cli", help="who imports it (default: cli)")


def _record_parser(sub: argparse._SubParsersAction) -> None:
    """`record RUN_ID [--format json|html|pdf] [--out FILE]`."""
    rc = sub.add_parser("record", help="export a run's verification record")
    rc.add_argument("run_id", type=int, help="the run number")
    rc.add_argument("--format", choices=("json", "html", "pdf"), default="json")
    rc.add_argument("--out", help="write to this file instead of standard output")


def _metrics_parser(sub: argparse._SubParsersAction) -> None:
    """`metrics [--since DATE] [--until DATE] [--rubric NAME ...] [--json]`."""
    me = sub.add_parser("metrics", help="the Metrics page's figures for a view of the history")
    me.add_argument("--since", type=_day, help="first creation day of the runs, YYYY-MM-DD (UTC)")
    me.add_argument("--until", type=_day, help="last creation day of the runs, YYYY-MM-DD (UTC, included)")
    for flag, help_text, kind in (("--rubric", "rubric name", str), ("--version", "rubric version as NAME@N", _version),
                                  ("--domain", "rubric domain", str), ("--reviewer", "reviewer model (slot B or C)", str),
                                  ("--person", "a person who started, reviewed or decided on the run", str)):
        me.add_argument(flag, action="append", default=[], type=kind,
                        help=f"only runs with this {help_text} (repeatable)")
    me.add_argument("--grain", choices=("auto", "day", "week", "month"), default="auto",
                    help="time buckets of the series (default: from the date span)")
    me.add_argument("--json", action="store_true", help="print the whole report as one JSON object")


def _day(text: str) -> date:
    """A YYYY-MM-DD argument."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date written YYYY-MM-DD") from None


def _seed(text: str) -> int:
    """A --seed argument: a whole number that fits the stored 32-bit seed."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value < 2**31 - 1:
        raise argparse.ArgumentTypeError(f"{value} is outside 0 to 2,147,483,646")
    return value


def _version(text: str) -> str:
    """A NAME@N argument."""
    from santa_core.reports.metrics import parse_version

    if parse_version(text) is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rubric version written NAME@N (for example general@2)")
    return text


def _audit_parser(sub: argparse._SubParsersAction) -> None:
    """`audit verify`, `audit list [filters]`."""
    au = sub.add_parser("audit", help="verify or list the audit trail")
    asub = au.add_subparsers(dest="audit_command", required=True, parser_class=_Parser)
    asub.add_parser("verify", help="recompute the hash chain; exit 1 naming the first broken event")
    ls = asub.add_parser("list", help="audit events, newest first")
    ls.add_argument("--run", type=int, help="only events of this run")
    ls.add_argument("--actor", help="only events by this actor (an e-mail, local, worker, cli, ...)")
    ls.add_argument("--action", help="only actions starting with this (e.g. decision. or run.state)")
    ls.add_argument("--limit", type=int, default=50, help="at most this many events (default 50)")
    ls.add_argument("--json", action="store_true", help="print one JSON array")


def _people_parser(sub: argparse._SubParsersAction) -> None:
    """`people list`, `people set EMAIL --roles R1,R2 [--name NAME]`."""
    pe = sub.add_parser("people", help="list people or set a person's roles")
    psub = pe.add_subparsers(dest="people_command", required=True, parser_class=_Parser)
    ls = psub.add_parser("list", help="everyone with their roles")
    ls.add_argument("--json", action="store_true", help="print one JSON array")
    setp = psub.add_parser("set", help="set a person's roles (adds the person when new)")
    setp.add_argument("email", help="the person's id: the e-mail they sign in with")
    setp.add_argument("--roles", required=True, help="comma-separated: editor, compliance_officer, rubric_author, "
                                                  "viewer, admin")
    setp.add_argument("--name", help="display name")


def _batch_parser(sub: argparse._SubParsersAction) -> None:
    """`batch FILE [--rubric NAME] [--sample-rate R] [--strata COL,...] [--seed N] [--auto-approve] [--out FILE] ...`."""
    ba = sub.add_parser("batch", help="verify a CSV/JSONL batch by sampling: review a sample, fix its patterns, "
                                      "resample until a sample is clean")
    ba.add_argument("file", help="the batch: a CSV or JSONL file with an id and an output per item")
    ba.add_argument("--id-column", help="column holding each item's unique id (default: id, item_id or key)")
    ba.add_argument("--output-column", help="column holding the output (default: output, text, content, completion "
                                            "or response)")
    ba.add_argument("--spec-column", help="column holding each item's spec (default: spec or specification, if any)")
    one_spec = ba.add_mutually_exclusive_group()
    one_spec.add_argument("--spec", help="one spec for every item without its own")
    one_spec.add_argument("--spec-file", help="file holding one spec for every item without its own")
    ba.add_argument("--strata", type=_columns_list, default=[],
                    help="comma-separated columns to stratify by, e.g. template,locale (length: short/medium/long)")
    ba.add_argument("--rubric", help="stored rubric name (latest version) or a YAML/JSON rubric file")
    ba.add_argument("--rubric-version", type=int, help="judge by this version of a stored rubric")
    ba.add_argument("--reviewer-b", help="model for reviewer B")
    ba.add_argument("--reviewer-c", help="model for reviewer C")
    ba.add_argument("--fixer", help="model for the fix agent")
    ba.add_argument("--sample-rate", type=float, default=DEFAULT_RATE,
                    help=f"share of the batch in each sample (default {DEFAULT_RATE})")
    ba.add_argument("--min-sample", type=int, default=MIN_SAMPLE,
                    help=f"fewest items in a sample (default {MIN_SAMPLE})")
    ba.add_argument("--seed", type=_seed, default=1, help="seed of the draw: the same seed draws the same sample "
                                                          "(default 1; 0 to 2,147,483,646)")
    ba.add_argument("--concurrency", type=int, help="reviews at a time (default 4)")
    ba.add_argument("--message-batches", action="store_true",
                    help="review each sample through the Message Batches API (about half price, slower)")
    ba.add_argument("--max-samples", type=int, default=BATCH_MAX_SAMPLES,
                    help=f"stop after this many samples without a clean one (default {BATCH_MAX_SAMPLES})")
    ba.add_argument("--auto-approve", action="store_true", help="apply each pattern's fix without a person")
    ba.add_argument("--out", help="export the verified batch to this .csv or .jsonl file")
    ba.add_argument("--json", action="store_true", help="print one JSON object")


def _columns_list(text: str) -> list[str]:
    """A comma-separated list of column names (blanks dropped)."""
    return [c.strip() for c in text.split(",") if c.strip()]


def load_secrets_file(path: Path = Path(".streamlit/secrets.toml")) -> None:
    """Like the app: root-level values of .streamlit/secrets.toml become environment variables.

    Values already in the environment win. The file's contents are never printed.
    """
    if not path.is_file():
        return
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(f"{path} is not valid TOML: {exc}") from exc
    export_to_env(data)


def fill_defaults(args: argparse.Namespace, d: Defaults) -> None:
    """Options not given take the saved defaults (the app's Settings), then the built-in ones."""
    for name in ("rubric", "reviewer_b", "reviewer_c", "fixer", "max_rounds"):
        if getattr(args, name) is None:
            setattr(args, name, getattr(d, name))
    if args.budget is None:
        args.budget = d.budget_usd


def read_text(path: str, what: str) -> str:
    """Read a UTF-8 file with a specific message for each way it can be bad."""
    p = Path(path)
    if not p.is_file():
        raise BadInput(f"{what} file not found: {path}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{what} file is not UTF-8 text: {path} (byte {exc.start})") from exc
    if not text.strip():
        raise BadInput(f"{what} file is empty: {path}")
    if len(text) > MAX_TEXT_CHARS:
        raise BadInput(f"{what} file has {len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}")
    return text


def load_rubric(name_or_path: str, store=None, version: int | None = None) -> Rubric:
    """A stored rubric by name (the latest version unless `version`), else a YAML/JSON rubric file."""
    from santa_core.rubrics import library as lib

    if store is not None and name_or_path in store.names():
        try:
            return store.resolved(name_or_path, version)
        except LookupError as exc:
            raise BadInput(str(exc)) from exc
    if store is None and name_or_path in lib.builtin_names() and version in (None, 1):
        return lib.load_builtin(name_or_path)
    if version is not None:
        raise BadInput(f"--rubric-version needs a stored rubric; {name_or_path!r} is not one")
    if Path(name_or_path).is_file():
        try:
            rubric = lib.load_rubric_file(name_or_path, store.lookup if store is not None else None)
        except (lib.RubricFileError, lib.RubricCompositionError) as exc:
            raise BadInput(f"rubric file {name_or_path}: {exc}") from exc
        return _label_file_rubric(rubric, store)
    known = ", ".join(store.names() if store is not None else lib.builtin_names())
    raise BadInput(f"unknown rubric {name_or_path!r}; stored rubrics: {known} (or give a rubric file)")


def _label_file_rubric(rubric: Rubric, store) -> Rubric:
    """A file judged directly keeps its name only when it is exactly that stored version.

    Otherwise the run would claim "acme v1" while judging different criteria; it is recorded as
    "<name> (file)" so the runs list never mistakes it for a stored version.
    """
    if store is None:
        return rubric
    try:
        if store.resolved(rubric.name, rubric.version) == rubric:
            return rubric
    except LookupError:
        pass
    print(f"santa: warning: {rubric.name} v{rubric.version} from the file is not a stored version; "
          f"recorded as {rubric.name!r} (file). Import it to version it.", file=sys.stderr)
    return rubric.model_copy(update={"name": f"{rubric.name} (file)"})


def _validate(args: argparse.Namespace) -> None:
    if not 1 <= args.max_rounds <= 10:
        raise BadInput("--max-rounds must be between 1 and 10")
    if not math.isfinite(args.budget) or args.budget <= 0:
        raise BadInput("--budget must be a number of USD above 0")
    cost = args.generation_cost
    if cost is not None and not (math.isfinite(cost) and 0 <= cost < 1e9):
        raise BadInput("--generation-cost must be a number of USD, 0 or more")
    uses_model = args.reviewer_b != PERSON or args.reviewer_c != PERSON
    if uses_model and not api_key_present():
        raise BadInput("no Anthropic API key: set ANTHROPIC_API_KEY (or use --reviewer-b person "
                       "--reviewer-c person)")


def _warn(args: argparse.Namespace) -> None:
    """The app's warnings, on stderr: reviewers not independent, models without a known price."""
    if warning := diversity_warning(args.reviewer_b, args.reviewer_c):
        print(f"santa: warning: {warning}", file=sys.stderr)
    for model in dict.fromkeys((args.reviewer_b, args.reviewer_c, args.fixer)):
        if model != PERSON and not is_known(model):
            print(f"santa: warning: no price for {model!r}; costed at the highest listed rate", file=sys.stderr)


def _open_desk():
    """The desk for DATABASE_URL; a database that cannot be opened is bad input (exit 2)."""
    from desk import open_desk
    from storage.db import database_url, redacted_url

    try:
        return open_desk(mark_interrupted=False)
    except Exception as exc:  # noqa: BLE001 - whatever stops the database opening is a config problem
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BadInput(f"cannot open the database {redacted_url(database_url())}: {first}") from exc


def run_review(args: argparse.Namespace) -> dict:
    """Create the run, drive it to a stop, and return the run as a JSON-ready dict."""
    load_secrets_file()
    spec, output = read_text(args.spec, "spec"), read_text(args.output, "output")
    desk = _open_desk()
    try:
        fill_defaults(args, desk.defaults())
        rubric = load_rubric(args.rubric, desk.repo.rubrics, args.rubric_version)
        _validate(args)
        _warn(args)
        run_id = desk.repo.create_run(
            spec=spec, output=output, rubric=rubric, reviewer_b=args.reviewer_b,
            reviewer_c=args.reviewer_c, fixer=args.fixer, auto_approve=args.auto_approve,
            budget_usd=args.budget, max_rounds=args.max_rounds, created_by="cli", source="cli",
            generation_cost_usd=args.generation_cost,
        )
        desk.runner.execute(run_id)
        return desk.run_json(run_id)
    finally:
        desk.close()


def run_rubric(args: argparse.Namespace) -> str:
    """`rubric list|export|import`: the text to print (BadInput on a bad name or file)."""
    from santa_core.rubrics import library as lib
    from storage.rubrics import RubricConflict

    store = _open_rubric_store()
    if args.rubric_command == "list":
        return _rubric_list(store.list_rubrics(), args.json)
    if args.rubric_command == "export":
        return _rubric_export(store, args)
    try:
        text = lib.read_rubric_text(Path(args.file))
        result = store.import_text(text, lib.format_of(args.file), args.author, args.note)
    except (lib.RubricFileError, lib.RubricCompositionError) as exc:
        problems = getattr(exc, "errors", None) or [str(exc)]
        raise BadInput(f"rubric file {args.file}: nothing imported:\n" + "\n".join(f"  {e}" for e in problems)) from exc
    except RubricConflict as exc:  # another import of the same name took the version number first
        raise BadInput(f"rubric file {args.file}: nothing imported: {exc}") from exc
    if result.created:
        return f"imported {result.name} v{result.version}"
    return f"unchanged: {result.name} v{result.version} already has this content"


def _open_rubric_store():
    """The stored rubrics alone: no runner and no model client, so rubric commands start fast."""
    return _open_repo().rubrics


def _open_repo():
    """The repository alone: no runner and no model client (like the rubric commands)."""
    from storage.db import database_url, init_db, redacted_url
    from storage.repo import Repo

    try:
        return Repo(init_db(mark_interrupted=False))
    except Exception as exc:  # noqa: BLE001 - whatever stops the database opening is a config problem
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BadInput(f"cannot open the database {redacted_url(database_url())}: {first}") from exc


def _write(data: str | bytes, out: str | None) -> None:
    """Write to the file (BadInput when it cannot be written) or to standard output."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if out:
        try:
            Path(out).write_bytes(raw)
        except OSError as exc:  # a path that cannot be written is bad usage (exit 2), not a crash (exit 4)
            raise BadInput(f"cannot write {out}: {exc.strerror or exc}") from exc
        return
    sys.stdout.flush()
    sys.stdout.buffer.write(raw)
    sys.stdout.buffer.flush()


def run_record(args: argparse.Namespace) -> int:
    """`record RUN_ID`: the verification record as JSON, HTML or PDF."""
    from santa_core.reports.record import to_html, to_json, to_pdf
    from storage.records import verification_record
    from storage.repo import RunNotFound

    if args.format == "pdf" and not args.out and sys.stdout.isatty():
        raise BadInput("a PDF is binary: give --out FILE (or redirect standard output to a file)")
    repo = _open_repo()
    try:
        record = verification_record(repo, args.run_id)
    except RunNotFound as exc:
        raise BadInput(f"{exc}; see the runs list in the app") from exc
    render = {"json": to_json, "html": to_html, "pdf": to_pdf}[args.format]
    _write(render(record), args.out)
    if args.out:
        print(f"wrote the {args.format} record of run {args.run_id} to {args.out} (record sha256 {record.record_hash})")
    return EXIT_SHIPPED


def run_audit(args: argparse.Namespace) -> int:
    """`audit verify` (exit 1 naming the first broken event) and `audit list`."""
    repo = _open_repo()
    if args.audit_command == "verify":
        report = repo.audit.verify()
        if report.ok:
            newest = f"; newest hash {report.head_hash}" if report.head_hash else ""
            print(f"intact: {report.checked} events{newest}")
            return EXIT_SHIPPED
        print(f"broken: {report.broken.describe()}; {report.checked} events before it verified")
        return EXIT_BROKEN
    if args.limit < 1:
        raise BadInput("--limit must be at least 1")
    events = repo.audit.events(run_id=args.run, actor=args.actor, action=args.action, limit=args.limit)
    if args.json:
        print(json.dumps([e.model_dump(mode="json") for e in events], indent=2, ensure_ascii=False))
        return EXIT_SHIPPED
    rows = [("SEQ", "TIME (UTC)", "ACTOR", "ACTION", "ENTITY", "RUN")]
    rows += [(str(e.seq), f"{e.created_at:%Y-%m-%d %H:%M:%S}", e.actor, e.action, f"{e.entity_type} {e.entity_id}",
              "" if e.run_id is None else str(e.run_id)) for e in events]
    print(_columns(rows))
    return EXIT_SHIPPED


def run_metrics(args: argparse.Namespace) -> int:
    """`metrics`: the same report the Metrics page shows for the same filters."""
    from santa_core.reports.metrics import MetricsFilter

    if args.since and args.until and args.since > args.until:
        raise BadInput(f"--since {args.since} is after --until {args.until}")
    filters = MetricsFilter(since=args.since, until=args.until, rubrics=args.rubric, versions=args.version,
                            domains=args.domain, reviewers=args.reviewer, people=args.person)
    store = _open_repo().metrics
    for problem in _unknown_filter_values(filters, store.options()):
        print(f"santa: warning: {problem}", file=sys.stderr)
    report = store.report(filters, None if args.grain == "auto" else args.grain)
    print(report.model_dump_json(indent=2) if args.json else _metrics_text(report))
    return EXIT_SHIPPED


def _unknown_filter_values(filters, options) -> list[str]:
    """Filter values that match nothing in the history (not an error: the view is just empty)."""
    known = {"rubric": (filters.rubrics, options.rubrics), "version": (filters.versions, options.versions),
             "domain": (filters.domains, options.domains), "reviewer": (filters.reviewers, options.reviewers),
             "person": (filters.people, options.people)}
    return [f"no run in the history has {kind} {value!r}"
            for kind, (wanted, have) in known.items() for value in wanted if value not in have]


def _metrics_text(report) -> str:
    """The headline figures, warnings and the most-failed criteria as plain text."""
    from santa_core.reports.metrics import format_figure, headline_rows

    if report.empty:
        return "no runs match this view yet: start a review, or widen the filters"
    lines = [_columns([("FIGURE", "VALUE"), *headline_rows(report)])]
    lines += [f"warning: {w}" for w in report.warnings]
    if report.criteria:
        rows = [("CRITERION", "CATEGORY", "FAILED", "BOTH", "B ONLY", "C ONLY", "KAPPA")]
        rows += [(c.criterion, c.category, str(c.failed), str(c.both), str(c.b_only), str(c.c_only),
                  format_figure(c.kappa, "kappa")) for c in report.criteria[:10]]
        lines += ["", _columns(rows)]
    return "\n".join(lines)


def run_people(args: argparse.Namespace) -> int:
    """`people list` and `people set` (acting as `cli`: how the first admin is made)."""
    from santa_core.roles import ROLE_LABEL, parse_roles
    from storage.people import PeopleError

    repo = _open_repo()
    if args.people_command == "set":
        try:
            roles = parse_roles(r for r in args.roles.split(",") if r.strip())
            if not roles:
                raise PeopleError("give at least one role with --roles")
            person = repo.people.set_roles(args.email, roles, CLI_ACTOR, args.name)
        except ValueError as exc:  # PeopleError is a ValueError, as is an unknown role
            raise BadInput(str(exc)) from exc
        print(f"{person.label}: {', '.join(ROLE_LABEL[r] for r in person.roles)}")
        return EXIT_SHIPPED
    people = repo.people.all()
    if args.json:
        print(json.dumps([p.model_dump(mode="json") for p in people], indent=2, ensure_ascii=False))
        return EXIT_SHIPPED
    rows = [("ID", "NAME", "ROLES", "UPDATED BY", "UPDATED AT")]
    rows += [(p.id, p.name, ",".join(r.value for r in p.roles), p.updated_by, f"{p.updated_at:%Y-%m-%d %H:%M}")
             for p in people]
    print(_columns(rows))
    return EXIT_SHIPPED


# --- batch ---------------------------------------------------------------------------------

BATCH_MAX_SAMPLES = 5
"""Samples `batch` draws before it stops without a clean one (a safety cap on resampling)."""
AUTO_APPROVER = "auto-approve"
"""Who approves a pattern's fix under --auto-approve: a system actor, as for a run."""
PROGRESS_S = 1.0
"""How often a progress line may be printed while a sample is reviewed (seconds)."""
OUT_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
DETECTION_SHOWN = (0.01, 0.05, 0.10)
"""Prevalences whose chance of being caught is shown before the first sample."""
BATCH_EXIT = {"clean": EXIT_SHIPPED, "waiting": EXIT_WAITING, "paused": EXIT_WAITING, "max_samples": EXIT_ESCALATED}
"""Exit code of each way a batch stops: clean 0, a person must decide 3, --max-samples reached 1."""


@dataclass
class _Decisions:
    """What this command decided about each pattern: why it waits for a person, which items a fix skipped."""

    waiting: dict[int, str] = field(default_factory=dict)
    skipped: dict[int, list[str]] = field(default_factory=dict)


def run_batch(args: argparse.Namespace) -> int:
    """`batch FILE`: store the batch, sample, find patterns, fix them (auto-approve) and resample until clean."""
    _check_batch_options(args)
    load_secrets_file()
    file = _read_batch_file(args)
    spec = _batch_spec(args, file)
    desk = _open_desk()
    try:
        defaults = desk.defaults()
        for name in ("rubric", "reviewer_b", "reviewer_c", "fixer"):  # as `review`: Settings, SANTA_*, built-ins
            if getattr(args, name) is None:
                setattr(args, name, getattr(defaults, name))
        rubric = load_rubric(args.rubric, desk.repo.rubrics, args.rubric_version)
        _check_batch_reviewers(args)
        _warn(args)
        batch_id = _create_batch(desk, file, _batch_config(args, file, spec, rubric))
        _say(_detection_line(desk, batch_id))
        decisions = _Decisions()
        try:
            outcome = _verify(desk, batch_id, args, decisions)
        except KeyboardInterrupt:
            _say(f"stopped: batch {batch_id} keeps every review that came in; the app carries on with an unfinished "
                 "sample when it starts (Batch page)")
            return 130
        if args.out:
            _write(desk.batches.export(batch_id, OUT_FORMATS[Path(args.out).suffix.lower()]), args.out)
        result = _batch_result(desk, batch_id, outcome, decisions, args.out)
    finally:
        desk.close()
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else _batch_summary(result))
    return BATCH_EXIT[outcome]


def _check_batch_options(args: argparse.Namespace) -> None:
    """Options that are wrong whatever the file holds (bad usage, exit 2, before anything is read)."""
    rate = args.sample_rate
    if not (math.isfinite(rate) and 0 < rate <= 1):
        hint = f" ({rate:g} % is {rate / 100:g})" if 1 < rate <= 100 else ""
        raise BadInput(f"--sample-rate must be a share above 0 and at most 1, e.g. 0.15 for 15 %{hint}")
    for flag, value, low, high in (("--min-sample", args.min_sample, 1, None), ("--max-samples", args.max_samples, 1, None),
                                   ("--concurrency", args.concurrency, 1, 64)):
        if value is not None and (value < low or (high is not None and value > high)):
            raise BadInput(f"{flag} must be {'between 1 and 64' if high else 'at least 1'}, not {value}")
    if args.out:
        out = Path(args.out)
        if out.suffix.lower() not in OUT_FORMATS:
            raise BadInput(f"--out {args.out}: the export format comes from the extension: end it in .csv or .jsonl")
        if not out.parent.is_dir():
            raise BadInput(f"--out {args.out}: the folder {out.parent} does not exist")


def _read_batch_file(args: argparse.Namespace) -> BatchFile:
    """The batch file read in full, or every problem with it (exit 2, nothing stored)."""
    from santa_core.batch.file import MAX_FILE_BYTES, BatchFileError, read_batch

    path = Path(args.file)
    if not path.is_file():
        raise BadInput(f"batch file not found: {args.file}")
    try:
        if path.stat().st_size > MAX_FILE_BYTES:  # checked before reading: a wrong file should not fill memory
            raise BadInput(f"batch file {args.file} is larger than {MAX_FILE_BYTES:,} bytes: split it into smaller "
                           "batches")
        data = path.read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot read batch file {args.file}: {exc.strerror or exc}") from exc
    try:
        file = read_batch(data, path.name, id_column=args.id_column, output_column=args.output_column,
                          spec_column=args.spec_column, strata=args.strata)
    except BatchFileError as exc:
        raise BadInput(f"batch file {args.file}: nothing stored:\n" + "\n".join(f"  {e}" for e in exc.errors)) from exc
    for warning in file.warnings:
        _say(f"santa: warning: {warning}")
    return file


def _batch_spec(args: argparse.Namespace, file: BatchFile) -> str:
    """The one spec for items without their own ('' when every item has one)."""
    if args.spec_file:
        spec = read_text(args.spec_file, "spec")
    elif args.spec is not None:
        if not args.spec.strip():
            raise BadInput("--spec is empty: give the task specification the outputs were generated from")
        if len(args.spec) > MAX_TEXT_CHARS:
            raise BadInput(f"--spec has {len(args.spec):,} characters; the limit is {MAX_TEXT_CHARS:,}")
        spec = args.spec
    else:
        spec = ""
    missing = [item.key for item in file.items if item.spec is None]
    if missing and not spec:
        where = f"its '{file.spec_column}' cell is empty" if file.spec_column else "the file has no spec column"
        some = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise BadInput(f"no spec for item {some} ({where}): give one spec for all with --spec TEXT or --spec-file "
                       "PATH, or name the spec column with --spec-column")
    return spec


def _check_batch_reviewers(args: argparse.Namespace) -> None:
    """A sample is reviewed by two models, so a person slot or a missing key is bad usage."""
    if PERSON in (args.reviewer_b, args.reviewer_c):
        raise BadInput("a batch sample is reviewed by two models; a person reviews single runs (use review, "
                       "or pick models with --reviewer-b and --reviewer-c)")
    if not api_key_present():
        raise BadInput("no Anthropic API key: set ANTHROPIC_API_KEY")


def _batch_config(args: argparse.Namespace, file: BatchFile, spec: str, rubric: Rubric) -> BatchConfig:
    """How the batch is verified, from the options and the file."""
    from storage.batches import BatchConfig

    extra = {} if args.concurrency is None else {"concurrency": args.concurrency}
    return BatchConfig(name=Path(args.file).name, file_format=file.format, columns=file.columns,
                       id_column=file.id_column, output_column=file.output_column, spec_column=file.spec_column,
                       spec=spec, strata=file.strata, rubric=rubric, reviewer_b=args.reviewer_b,
                       reviewer_c=args.reviewer_c, fixer=args.fixer, sample_rate=args.sample_rate,
                       min_sample=args.min_sample, seed=args.seed, message_batches=args.message_batches,
                       auto_approve=args.auto_approve, source="cli", **extra)


def _create_batch(desk: Desk, file: BatchFile, config: BatchConfig) -> int:
    """Store the batch; a batch the store refuses is bad input (it checks before writing anything)."""
    from storage.batches import BatchProblem

    try:
        return desk.batches.create(file, config, CLI_ACTOR)
    except BatchProblem as exc:
        raise BadInput(f"batch file {config.name}: nothing stored: {exc}") from exc


def _detection_line(desk: Desk, batch_id: int) -> str:
    """Before sampling: the sample's size and its chance of catching a pattern spread over the batch."""
    from santa_core.batch.sampling import detection_table, percent

    est = desk.batches.estimate(batch_id)
    rows = detection_table(est.items, est.sample, DETECTION_SHOWN)
    chances = " / ".join(percent(r.chance) for r in rows)
    shares = " / ".join(percent(r.prevalence) for r in rows)
    return (f"batch {batch_id}: {est.items:,} items, {est.sample:,} in each sample; a pattern in {shares} of the "
            f"items is caught with probability {chances}")


def _verify(desk: Desk, batch_id: int, args: argparse.Namespace, decisions: _Decisions) -> str:
    """Sample until a sample is clean, a person must decide, or --max-samples is reached; how it stopped."""
    from storage.batch_service import STOPPED

    for _ in range(args.max_samples):
        progress = _review_sample(desk, batch_id)
        if not progress.finished:
            if desk.batches.store.is_paused(batch_id):
                return "paused"  # someone paused the batch in the app: they resume it there
            if (progress.api_status or "").startswith(STOPPED):
                raise RuntimeError(f"sample {progress.number} of batch {batch_id}: the Message Batch "
                                   f"{progress.api_status}; Try again on the Batch page goes on")
            raise RuntimeError(f"sample {progress.number} of batch {batch_id}: {progress.size - progress.done:,} "
                               "review(s) did not finish (a worker failed); the app resumes them when it starts")
        found = desk.batches.find_patterns(progress.id)
        if not found:
            return "clean"
        for record in found:
            _decide(desk, record, args.auto_approve, decisions)
        if decisions.waiting:
            return "waiting"
    return "max_samples"


def _review_sample(desk: Desk, batch_id: int) -> SampleProgress:
    """Draw the next sample and review it, with progress lines on stderr; its progress once the driver stops."""
    sample_id = desk.batches.store.draw_sample(batch_id, CLI_ACTOR)
    future = desk.batches.drive(sample_id)  # what BatchService.sample does, keeping the driver's future
    progress = desk.batches.store.progress(sample_id)
    _say(f"sample {progress.number}: reviewing {progress.size:,} items with both reviewers")
    shown = ""
    while not futures.wait([future], timeout=PROGRESS_S).done:
        line = _progress_line(desk.batches.store.progress(sample_id))
        if line != shown:
            _say(line)
            shown = line
    try:
        future.result()
    except Exception as exc:  # noqa: BLE001 - reported as an internal error naming the batch to pick up
        raise RuntimeError(f"sample {progress.number} of batch {batch_id} stopped: {exc}; what was reviewed is "
                           "kept, and the app carries on with it when it starts (Batch page)") from exc
    progress = desk.batches.store.progress(sample_id)
    _say(_progress_line(progress))
    return progress


def _progress_line(progress: SampleProgress) -> str:
    """e.g. `sample 1: 12 of 30 reviewed, 2 NAUGHTY, about 40 s left`."""
    if progress.api_batch_id and not progress.finished:
        return (f"sample {progress.number}: Message Batch {progress.api_batch_id} is "
                f"{progress.api_status or 'submitted'}; {progress.done:,} of {progress.size:,} collected")
    head = f"sample {progress.number}: {progress.done:,} of {progress.size:,} reviewed, {progress.naughty:,} NAUGHTY"
    left = progress.seconds_left
    return head if left is None else f"{head}, about {_duration(left)} left"


def _duration(seconds: float) -> str:
    """A rough duration for an ETA: `40 s`, `3 min`, `2 h`."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min" if seconds < 5400 else f"{round(seconds / 3600)} h"


def _decide(desk: Desk, record: PatternRecord, auto_approve: bool, decisions: _Decisions) -> None:
    """Ask for the pattern's fix and, with --auto-approve, apply it; note why it waits for a person otherwise."""
    if record.pattern.get("kind", "issue") != "issue":
        decisions.waiting[record.id] = "no issue to fix: review these items by hand or dismiss the group with a reason"
        return
    proposal = desk.batches.propose(record.id, CLI_ACTOR)
    if not auto_approve:
        decisions.waiting[record.id] = "its fix waits for a person to approve, edit or dismiss"
        return
    preview = desk.batches.preview(record.id)
    if proposal.error or not proposal.edits or not preview.changed:
        why = proposal.error or "the fix agent proposed no edit that applies"
        decisions.waiting[record.id] = f"not auto-approved ({why.splitlines()[0]}): a person fixes it"
        return
    desk.batches.approve(record.id, AUTO_APPROVER, reason="auto-approved from the command line (--auto-approve)")
    decisions.skipped[record.id] = preview.skipped


def _batch_result(desk: Desk, batch_id: int, outcome: str, decisions: _Decisions, out: str | None) -> dict:
    """Everything the command did, as one JSON-ready object."""
    store = desk.batches.store
    batch = store.get(batch_id)
    number = {s.id: s.number for s in batch.samples}
    changes = store.changes(batch_id)
    changed = Counter(c.pattern_id for c in changes)
    est, rule = desk.batches.estimate(batch_id), desk.batches.stopping_rule(batch_id)
    actual = store.cost(batch_id)
    return {
        "batch_id": batch_id, "name": batch.name, "items": batch.items, "status": outcome,
        "rubric": {"name": batch.config.rubric.name, "version": batch.config.rubric.version},
        "reviewers": {"B": batch.config.reviewer_b, "C": batch.config.reviewer_c}, "fixer": batch.config.fixer,
        "sample_rate": batch.config.sample_rate, "seed": batch.config.seed, "strata": batch.config.strata,
        "message_batches": batch.config.message_batches, "auto_approve": batch.config.auto_approve,
        "samples": [_sample_json(store.reviews(s.id), s) for s in batch.samples],
        "patterns": [_pattern_json(p, number[p.sample_id], changed[p.id], decisions) for p in store.patterns(batch_id)],
        "items_changed": len({c.item_id for c in changes}),
        "stopping_rule": None if rule is None else {
            "statement": rule.statement(), "clean": rule.clean, "population": rule.population, "sample": rule.sample,
            "failed": rule.failed, "confidence": rule.confidence, "upper_items": rule.upper_items,
            "upper_rate": rule.upper_rate, "stratified": rule.stratified},
        "cost": {"estimated_sample_usd": est.sample_usd, "estimated_usd": est.sample_usd * len(batch.samples),
                 "actual_usd": actual, "full_usd": est.full_usd,
                 "actual_share": actual / est.full_usd if est.full_usd else None},
        "out": out,
        "next": _next_step(batch_id, outcome, batch.samples[-1].number if batch.samples else 0),
    }


def _sample_json(reviews: list[SampledReview], progress: SampleProgress) -> dict:
    """One sample: its draw, its counts and which items it drew and failed."""
    return {"number": progress.number, "seed": progress.seed, "size": progress.size, "nice": progress.nice,
            "naughty": progress.naughty, "review_errors": progress.errors, "clean": progress.clean,
            "cost_usd": progress.cost_usd, "api_batch_id": progress.api_batch_id,
            "items": [r.key for r in reviews], "failed": [r.key for r in reviews if r.done and not r.nice]}


def _pattern_json(record: PatternRecord, sample: int, changed: int, decisions: _Decisions) -> dict:
    """One pattern: what it is, where it showed, its fix and what the fix did."""
    pattern, proposal = record.pattern, record.proposal or {}
    edits = record.approved_edits if record.approved_edits is not None else proposal.get("edits", [])
    return {"id": record.id, "sample": sample, "key": record.key, "kind": pattern.get("kind", "issue"),
            "criterion": record.criterion, "title": record.title, "count": pattern.get("count", 0),
            "items": pattern.get("items", []), "strata": pattern.get("strata", {}),
            "representative": pattern.get("representative"), "status": record.status,
            "fix": [{"before": e["before"], "after": e["after"]} for e in edits],
            "fix_error": proposal.get("error"), "decided_by": record.decided_by, "items_changed": changed,
            "items_skipped": decisions.skipped.get(record.id, []), "waiting": decisions.waiting.get(record.id)}


def _next_step(batch_id: int, outcome: str, samples: int) -> str | None:
    """What a person does next, in words (None when the batch is verified)."""
    if outcome == "waiting":
        return (f"open batch {batch_id} on the Batch page (/batch?batch={batch_id}): approve, edit or dismiss each "
                "waiting pattern, then sample again")
    if outcome == "paused":
        return f"batch {batch_id} was paused on the Batch page: resume it there (/batch?batch={batch_id})"
    if outcome == "max_samples":
        return (f"no clean sample in {samples} samples (--max-samples): open batch {batch_id} on the Batch page "
                f"(/batch?batch={batch_id}) to look at the patterns and sample again")
    return None


def _batch_summary(result: dict) -> str:
    """The batch run as plain text: samples, patterns, the stopping rule, cost and what comes next."""
    lines = [f"batch {result['batch_id']} ({result['name']}): {result['items']:,} items, rubric "
             f"{result['rubric']['name']} v{result['rubric']['version']}, reviewers {result['reviewers']['B']} (B) "
             f"and {result['reviewers']['C']} (C)"]
    for sample in result["samples"]:
        clean = ": clean" if sample["clean"] else ""
        lines.append(f"sample {sample['number']}: {sample['size']:,} items (seed {sample['seed']}): "
                     f"{sample['nice']:,} NICE, {sample['naughty']:,} NAUGHTY{clean}")
        lines += [_pattern_text(p) for p in result["patterns"] if p["sample"] == sample["number"]]
    rule = result["stopping_rule"]
    if rule is not None:
        lines.append(f"stopping rule: {rule['statement']}" if result["status"] == "clean" else
                     f"not verified yet: sample {result['samples'][-1]['number']}: {rule['statement']}")
    lines.append(_cost_text(result["cost"], len(result["samples"])))
    if result["out"]:
        lines.append(f"wrote {result['out']}")
    if result["next"]:
        lines.append(("waiting for a person: " if result["status"] != "max_samples" else "stopped: ") + result["next"])
    return "\n".join(lines)


def _pattern_text(p: dict) -> str:
    """`  pattern 3 [compliance] promises free shipping: 4 sampled items (template promo 4); fix applied …`."""
    where = "; ".join(f"{col} " + ", ".join(f"{v} {n}" for v, n in counts.items()) for col, counts in p["strata"].items())
    head = f"  pattern {p['id']} [{p['criterion'] or p['kind']}] {p['title']}: {p['count']} sampled item(s)"
    head += f" ({where})" if where else ""
    fix = "; ".join(f"{e['before']!r} -> {e['after']!r}" for e in p["fix"])
    if p["status"] == "applied":
        skipped = f", {len(p['items_skipped'])} skipped (fix by hand)" if p["items_skipped"] else ""
        return f"{head}\n    fix {fix} applied to {p['items_changed']} item(s) by {p['decided_by']}{skipped}"
    proposed = f"\n    fix proposed: {fix}" if fix else ""
    example = ", ".join(p["items"][:3])
    return f"{head}, e.g. {example}{proposed}\n    waits: {p['waiting'] or p['status']}"


def _cost_text(cost: dict, samples: int) -> str:
    """Actual cost against the estimate and against reviewing every item."""
    from santa_core.batch.sampling import percent

    share = f"; this run cost {percent(cost['actual_share'])} of that" if cost["actual_share"] is not None else ""
    return (f"cost: {_usd(cost['actual_usd'])} spent (about {_usd(cost['estimated_usd'])} estimated for {samples} "
            f"sample(s)); reviewing every item with both reviewers: about {_usd(cost['full_usd'])}{share}")


def _usd(value: float) -> str:
    return f"${value:.4f}" if value >= 0.01 or value == 0 else f"${value:.6f}"


def _say(line: str) -> None:
    """A progress or warning line on stderr (stdout carries only the answer, for --json)."""
    print(line, file=sys.stderr, flush=True)


def _columns(rows: list[tuple[str, ...]]) -> str:
    """Rows as left-aligned columns two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def _rubric_list(rubrics: list, as_json: bool) -> str:
    if as_json:
        return json.dumps([r.model_dump(mode="json") for r in rubrics], indent=2, ensure_ascii=False)
    rows = [("NAME", "DOMAIN", "VERSION", "CRITERIA", "SAVED BY", "SAVED AT")]
    rows += [(r.name, r.domain, f"v{r.version}", str(r.criteria), r.author, f"{r.saved_at:%Y-%m-%d %H:%M}") for r in rubrics]
    return _columns(rows)


def _rubric_export(store, args: argparse.Namespace) -> str:
    try:
        text = store.export(args.name, args.version, args.format)
    except LookupError as exc:
        raise BadInput(str(exc.args[0]) if exc.args else str(exc)) from exc
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:  # a path that cannot be written is bad usage (exit 2), not a crash (exit 4)
            raise BadInput(f"cannot write {args.out}: {exc.strerror or exc}") from exc
        return f"wrote {args.name} v{args.version or store.latest_version(args.name)} to {args.out}"
    return text.rstrip("\n")


def exit_code(status: str) -> int:
    """The documented exit code for a run status."""
    if status in (RunStatus.SHIPPED, RunStatus.RESOLVED_SHIPPED):
        return EXIT_SHIPPED
    if status in WAITING:
        return EXIT_WAITING
    if status == RunStatus.INTERRUPTED:  # the worker failed: a crash, not an escalation
        return EXIT_INTERNAL
    return EXIT_ESCALATED


def _summary(result: dict) -> str:
    lines = [f"run {result['run_id']}: {result['status']}"
             + (f" ({result['escalation_reason']})" if result.get("escalation_reason") else "")]
    for rnd in result["rounds"]:
        verdicts = ", ".join(f"{s}={r['verdict']}" for s, r in rnd["reviews"].items())
        lines.append(f"  round {rnd['round']}: {rnd.get('gate') or 'pending'} [{verdicts}]")
    cost = result["cost_usd"]
    lines.append(f"  cost ${cost:.4f}" if cost >= 0.01 or cost == 0 else f"  cost ${cost:.6f}")
    return "\n".join(lines)


STORE_COMMANDS = {"record": run_record, "audit": run_audit, "people": run_people, "metrics": run_metrics}
"""Commands that open only the store (no runner, no model client); each prints its own answer."""


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    # stderr carries one line per problem; tracebacks only when asked for (SANTA_DEBUG=1).
    logging.basicConfig(level=logging.DEBUG if os.environ.get("SANTA_DEBUG") else logging.CRITICAL)
    try:
        args = build_parser().parse_args(argv)
        if args.command == "rubric":
            print(run_rubric(args))
            return EXIT_SHIPPED
        if args.command in STORE_COMMANDS:
            return STORE_COMMANDS[args.command](args)
        if args.command == "batch":
            return run_batch(args)
        result = run_review(args)
    except (BadInput, PermissionDenied) as exc:  # a refused --author is bad input, not a crash
        print(f"santa: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:  # noqa: BLE001 - a pipeline must tell a crash from an escalation
        print(f"santa: internal error: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return EXIT_INTERNAL
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else _summary(result))
    if result["status"] == RunStatus.INTERRUPTED:
        note = (result.get("note") or "the worker failed").splitlines()[0]
        print(f"santa: internal error: run {result['run_id']} interrupted: {note}", file=sys.stderr)
    return exit_code(result["status"])
