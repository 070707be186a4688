"""Command line for pipelines and scripted checks.

Exit codes: 0 shipped, 1 escalated, 3 waiting for a person, 2 bad usage or bad input (one
line on stderr), 4 an internal error (one line on stderr). This is a composition root like `app.py`: it is the only santa_core module
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
from pathlib import Path

from santa_core.config import Defaults, api_key_present, diversity_warning, export_to_env
from santa_core.models import MAX_TEXT_CHARS, Rubric, RunStatus
from santa_core.pricing import is_known
from santa_core.reviewers.base import PERSON

EXIT_SHIPPED, EXIT_ESCALATED, EXIT_BAD_INPUT, EXIT_WAITING, EXIT_INTERNAL = 0, 1, 2, 3, 4
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
    rv.add_argument("--rubric", help="built-in rubric name or a rubric file")
    rv.add_argument("--reviewer-b", help=f"model for reviewer B, or {PERSON!r}")
    rv.add_argument("--reviewer-c", help=f"model for reviewer C, or {PERSON!r}")
    rv.add_argument("--fixer", help="model for the fix agent")
    rv.add_argument("--max-rounds", type=int, help="rounds before escalation (default 3)")
    rv.add_argument("--budget", type=float, help="per-run budget in USD")
    rv.add_argument("--auto-approve", action="store_true", help="apply fix proposals without a person")
    rv.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


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


def load_rubric(name_or_path: str) -> Rubric:
    """A built-in rubric by name, or a YAML/JSON rubric file."""
    from santa_core import rubric_library as lib

    if name_or_path in lib.builtin_names():
        return lib.load_builtin(name_or_path)
    if Path(name_or_path).is_file():
        try:
            return lib.load_rubric_file(name_or_path)
        except lib.RubricFileError as exc:
            raise BadInput(f"rubric file {name_or_path}: {exc}") from exc
    raise BadInput(f"unknown rubric {name_or_path!r}; built-in rubrics: {', '.join(lib.builtin_names())}")


def _validate(args: argparse.Namespace) -> None:
    if not 1 <= args.max_rounds <= 10:
        raise BadInput("--max-rounds must be between 1 and 10")
    if not math.isfinite(args.budget) or args.budget <= 0:
        raise BadInput("--budget must be a number of USD above 0")
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
    from storage.db import database_url, redacted_url
    from storage.desk import open_desk

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
        rubric = load_rubric(args.rubric)
        _validate(args)
        _warn(args)
        run_id = desk.repo.create_run(
            spec=spec, output=output, rubric=rubric, reviewer_b=args.reviewer_b,
            reviewer_c=args.reviewer_c, fixer=args.fixer, auto_approve=args.auto_approve,
            budget_usd=args.budget, max_rounds=args.max_rounds, created_by="cli", source="cli",
        )
        desk.runner.execute(run_id)
        return desk.run_json(run_id)
    finally:
        desk.close()


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


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    # stderr carries one line per problem; tracebacks only when asked for (SANTA_DEBUG=1).
    logging.basicConfig(level=logging.DEBUG if os.environ.get("SANTA_DEBUG") else logging.CRITICAL)
    try:
        args = build_parser().parse_args(argv)
        result = run_review(args)
    except BadInput as exc:
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
