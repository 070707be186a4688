"""`review`: one output judged against its spec by reviewers B and C, fixed and judged again until
it ships, escalates or waits for a person."""

from __future__ import annotations

import argparse
import json
import math
import sys

from desk.cli.common import (
    CLI_ACTOR,
    EXIT_ESCALATED,
    EXIT_INTERNAL,
    EXIT_SHIPPED,
    EXIT_WAITING,
    BadInput,
    check_model_keys,
    check_screen,
    desk_defaults,
    load_rubric,
    load_secrets_file,
    open_desk,
    pair_default,
    read_text,
    warn_about_models,
)
from desk.cli.driving import drive
from santa_core import words
from santa_core.config import Defaults
from santa_core.models import EscalationReason, Rubric, RunStatus
from santa_core.panels import third_for
from santa_core.providers import canonical
from santa_core.reviewers.base import PERSON
from santa_core.run.engine import PARTIAL_HELD

WAITING = {RunStatus.AWAITING_APPROVAL, RunStatus.AWAITING_HUMAN_REVIEW, RunStatus.QUEUED, RunStatus.RUNNING}
"""Exit 3. `running` at the end: another process claimed the run first (two `resume`s at once) and works on it."""
UNJUDGED = "could not be reviewed (the model provider failed)"
"""A round nobody judged, in the summary (`--json` keeps the stored gate and names the failed calls in `unreviewed`)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`review --spec FILE --output FILE [--rubric NAME|FILE] [--auto-approve] [--json] ...`."""
    rv = sub.add_parser("review", help="review one output against its spec")
    rv.add_argument("--spec", required=True, help="file holding the task specification")
    rv.add_argument("--output", required=True, help="file holding the generated output")
    rv.add_argument("--rubric", help="stored rubric name (latest version) or a YAML/JSON rubric file")
    rv.add_argument("--rubric-version", type=int, help="judge by this version of a stored rubric")
    rv.add_argument("--reviewer-b", help=f"model for reviewer B, or {PERSON!r}")
    rv.add_argument("--reviewer-c", help=f"model for reviewer C, or {PERSON!r}")
    rv.add_argument(
        "--reviewer-d",
        help="model for the third reviewer, asked only when the rubric marks criteria "
        "high-risk (third_reviewer); default: the Settings' one, else the cheapest "
        "other model, of a family not yet on the panel when there is one",
    )
    rv.add_argument("--fixer", help="model for the fix agent")
    rv.add_argument("--max-rounds", type=int, help="rounds before escalation (default 3)")
    rv.add_argument("--budget", type=float, help="per-run budget in USD")
    rv.add_argument("--auto-approve", action="store_true", help="apply fix proposals without a person")
    rv.add_argument("--generation-cost", type=float, help="what generating the output cost in USD (for metrics)")
    rv.add_argument("--json", action="store_true", help="print one JSON object")
    rv.add_argument(
        "--enqueue",
        action="store_true",
        help="put the run on the task engine's queue and exit at once (PostgreSQL; workers drive it)",
    )


def fill_defaults(args: argparse.Namespace, d: Defaults) -> None:
    """Options not given take the desk's defaults: SANTA_* variables, else the app's Settings, else built-ins."""
    pair_default(args, d)
    for name in ("rubric", "reviewer_b", "reviewer_c", "fixer", "max_rounds"):
        if getattr(args, name) is None:
            setattr(args, name, getattr(d, name))
    for name in ("reviewer_b", "reviewer_c", "fixer"):  # one spelling per model: `anthropic:claude-x` is claude-x
        setattr(args, name, canonical(getattr(args, name)))
    if args.budget is None:
        args.budget = d.budget_usd


def fill_third(args: argparse.Namespace, d: Defaults, rubric: Rubric) -> None:
    """The third reviewer, for a rubric with high-risk criteria only (None otherwise: nobody is paid for a slot the
    rubric does not ask for): as given, else the default unless it is B or C, else the cheapest other model."""
    if not rubric.third_reviewer_ids():
        args.reviewer_d = None
        return
    if args.reviewer_d is None:
        panel = {canonical(args.reviewer_b), canonical(args.reviewer_c)}
        args.reviewer_d = (
            d.reviewer_d if canonical(d.reviewer_d) not in panel else third_for(args.reviewer_b, args.reviewer_c)
        )
    if args.reviewer_d == PERSON:
        raise BadInput("--reviewer-d must be a model: people review in slots B and C")
    args.reviewer_d = canonical(args.reviewer_d)


def _validate(args: argparse.Namespace) -> None:
    """Options that are out of range, or model reviewers without an API key (bad usage, exit 2)."""
    if not 1 <= args.max_rounds <= 10:
        raise BadInput("--max-rounds must be between 1 and 10")
    if not math.isfinite(args.budget) or args.budget <= 0:
        raise BadInput("--budget must be a number of USD above 0")
    cost = args.generation_cost
    if cost is not None and not (math.isfinite(cost) and 0 <= cost < 1e9):
        raise BadInput("--generation-cost must be a number of USD, 0 or more")
    if args.reviewer_b != PERSON or args.reviewer_c != PERSON or args.reviewer_d:
        check_model_keys(*(m for m in (args.reviewer_b, args.reviewer_c, args.reviewer_d, args.fixer) if m))


def run_review(args: argparse.Namespace) -> dict:
    """Create the run, drive it to a stop, and return the run as a JSON-ready dict."""
    load_secrets_file()
    spec, output = read_text(args.spec, "spec"), read_text(args.output, "output")
    if args.enqueue:
        from desk.task_engine import uses_task_engine
        from storage.db import database_url

        if not uses_task_engine(database_url()):
            raise BadInput(
                "--enqueue needs DATABASE_URL on PostgreSQL, where workers take runs from the queue; "
                "on SQLite leave it out and the command works the run itself"
            )
    from santa_core.run import actions

    desk = open_desk()
    try:
        defaults = desk_defaults(desk)
        fill_defaults(args, defaults)
        rubric = load_rubric(args.rubric, desk.rubrics, args.rubric_version)
        fill_third(args, defaults, rubric)
        _validate(args)
        check_screen(desk, args)
        warn_about_models(args)
        run_id = actions.start_run(
            desk.runs,
            spec,
            output,
            rubric,
            args.reviewer_b,
            args.reviewer_c,
            args.fixer,
            CLI_ACTOR,
            auto_approve=args.auto_approve,
            budget_usd=args.budget,
            max_rounds=args.max_rounds,
            source="cli",
            generation_cost_usd=args.generation_cost,
            reviewer_d=args.reviewer_d,
        )
        if args.enqueue:
            from desk.task_engine import task_engine

            task_engine(desk.url).enqueue(desk.runs, run_id, "cli")
            return {"run_id": run_id, "status": RunStatus.QUEUED.value}
        drive(desk, [run_id])
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


NEXT: dict[str, str] = {
    RunStatus.AWAITING_APPROVAL: "a person approves, edits or rejects the fix on the app's Review page (?run={id})",
    RunStatus.AWAITING_HUMAN_REVIEW: "a person fills in the review in the app (Inbox, or the Review page's ?run={id})",
    RunStatus.RUNNING: "another process is working on the run; the app's Review page (?run={id}) shows where it stands",
    RunStatus.INTERRUPTED: "`python -m santa_core resume {id}` carries it on, keeping every answer that came in",
    RunStatus.ESCALATED: "a person decides on the app's Escalations page",
}
"""What happens next to a run that stopped short of shipping, as the human output says it."""


def why(result: dict) -> str:
    """Why the run stopped where it did, in words: the run's last note ("" when it only repeats the status line); a
    run set to auto-approve and held for a person says why auto-approve did not take the fix."""
    if result.get("note") == PARTIAL_HELD:
        return (
            "the fix proposal leaves a flagged issue unfixed, and --auto-approve only approves a fix for every "
            "flagged issue"
        )
    note = words.note(result.get("note") or "")
    return "" if note in (words.status(result["status"]), words.reason(result.get("escalation_reason"))) else note


def _summary(result: dict) -> str:
    """The run as plain text: its status and reason in words, why it stopped and what comes next (when it did not
    ship), each round's gate and verdicts, its cost. Codes stay in --json."""
    status = RunStatus(result["status"])
    head = words.status(status) + (
        f": {words.reason(result['escalation_reason'])}" if result.get("escalation_reason") else ""
    )
    lines = [f"run {result['run_id']}: {head}"]
    if status not in (RunStatus.SHIPPED, RunStatus.RESOLVED_SHIPPED):
        if reason := why(result):
            lines.append(f"  why: {reason}")
        if result.get("escalation_reason") == EscalationReason.PROVIDER_FAILED:  # nobody judged it: ask again
            lines.append(
                f"  next: `python -m santa_core resume {result['run_id']}` tries again once the provider "
                "answers (a paid attempt), or a person decides on the app's Escalations page"
            )
        elif status in NEXT:
            lines.append("  next: " + NEXT[status].format(id=result["run_id"]))
    for rnd in result["rounds"]:
        verdicts = ", ".join(f"{s}={r['verdict']}" for s, r in rnd["reviews"].items())
        # A round the provider failed was judged by nobody: its stored NAUGHTY is no verdict, so it is not printed.
        lines.append(
            f"  round {rnd['round']}: "
            + (UNJUDGED if rnd.get("unreviewed") else f"{rnd.get('gate') or 'pending'} [{verdicts}]")
        )
    cost = result["cost_usd"]
    lines.append(f"  cost {words.usd(cost)}")
    if result.get("price_unknown"):
        lines[-1] += (
            f" counted against the budget (price unknown for {', '.join(result['price_unknown'])}: "
            "counted at the highest listed rate)"
        )
    return "\n".join(lines)


def print_review(result: dict, as_json: bool) -> int:
    """Print the run (one JSON object or a summary), name an interrupted run on stderr; its exit code."""
    print(json.dumps(result, indent=2, ensure_ascii=False) if as_json else _summary(result))
    if result["status"] == RunStatus.INTERRUPTED:
        note = (result.get("note") or "the worker failed").splitlines()[0]
        print(f"santa: internal error: run {result['run_id']} interrupted: {note}", file=sys.stderr)
    elif result["status"] == RunStatus.ESCALATED and result.get("escalation_reason") == "provider_failed":
        print(
            f"santa: run {result['run_id']} could not be reviewed: the model provider failed "
            f"({result.get('note') or 'no answer'}); `santa resume {result['run_id']}` tries again",
            file=sys.stderr,
        )
    return exit_code(result["status"])
