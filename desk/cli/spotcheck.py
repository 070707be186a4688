"""`spotcheck list|next|submit|draw`: the spot-check queue for teams that review outside the app.

`next` prints what a blind reviewer sees (the spec, the shipped text, the run's rubric criteria) and never a
reviewer's verdict nor the run's number; `submit` (`--as PERSON` required) takes every criterion's verdict
(`--pass ID`, `--fail ID=EVIDENCE`, or `--file` with a JSON object
{criterion: "PASS" | {"verdict": "FAIL", "evidence": "..."}}) and prints the comparison with the reviewers only
after it is stored. `draw` is the sweep a scheduler may run (idempotent)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from desk.cli.common import CLI_ACTOR, EXIT_SHIPPED, BadInput, CliParser, as_columns, open_repo, read_text

JUDGEMENT_FILE_HELP = 'JSON object: {"criterion_id": "PASS", "other_id": {"verdict": "FAIL", "evidence": "..."}}'


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`spotcheck list`, `spotcheck next`, `spotcheck submit ID ...`, `spotcheck draw`."""
    sc = sub.add_parser("spotcheck", help="the spot-check queue: list, show the next, submit a blind review")
    ssub = sc.add_subparsers(dest="spot_command", required=True, parser_class=CliParser)
    ls = ssub.add_parser("list", help="spot-checks, open first")
    ls.add_argument("--status", choices=("open", "done", "all"), default="open")
    ls.add_argument("--json", action="store_true", help="print one JSON array")
    nx = ssub.add_parser("next", help="the oldest open spot-check (yours or unassigned), without any verdict")
    nx.add_argument("--as", dest="person", default=CLI_ACTOR, help="whose queue: a person's id (default: any)")
    nx.add_argument("--json", action="store_true", help="print one JSON object")
    sb = ssub.add_parser("submit", help="submit a blind review: every criterion PASS or FAIL with evidence")
    sb.add_argument("spot_check_id", type=int)
    sb.add_argument(
        "--pass",
        dest="passes",
        action="append",
        default=[],
        metavar="ID",
        help="a criterion that passes (repeat, or separate ids with commas)",
    )
    sb.add_argument(
        "--fail",
        dest="fails",
        action="append",
        default=[],
        metavar="ID=EVIDENCE",
        help="a criterion that fails, with what fails (repeat)",
    )
    sb.add_argument("--file", help=JUDGEMENT_FILE_HELP)
    sb.add_argument(
        "--as",
        dest="person",
        required=True,
        help="who judged: a person with the spot_check role (required: the verdicts are their labels)",
    )
    sb.add_argument("--json", action="store_true", help="print the comparison as JSON")
    dr = ssub.add_parser("draw", help="draw every shipped run not yet drawn under the active rules (idempotent)")
    dr.add_argument("--json", action="store_true", help="print the new spot-check ids as JSON")


def judgements(args: argparse.Namespace) -> list[Any]:
    """The verdicts given on the command line or in --file; BadInput names what is malformed."""
    from pydantic import ValidationError

    from santa_core.spotchecks.model import Judgement

    given: list[dict[str, str]] = [
        {"criterion": c.strip(), "verdict": "PASS"} for arg in args.passes for c in arg.split(",") if c.strip()
    ]
    for arg in args.fails:
        criterion, sep, evidence = arg.partition("=")
        if not sep:
            raise BadInput(f"--fail {arg!r}: write --fail ID=EVIDENCE (what fails, in a few words)")
        given.append({"criterion": criterion.strip(), "verdict": "FAIL", "evidence": evidence})
    if args.file:
        given += _from_file(read_text(args.file, "judgement file"))
    if not given:
        raise BadInput("give every criterion's verdict: --pass ID, --fail ID=EVIDENCE or --file")
    try:
        return [Judgement.model_validate(g) for g in given]
    except ValidationError as exc:
        raise BadInput(f"a verdict is PASS or FAIL: {exc.errors()[0]['msg']}") from exc


def _from_file(text: str) -> list[dict[str, str]]:
    """{criterion: "PASS" | {"verdict", "evidence"}} to judgement dicts."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"the judgement file is not JSON: {exc.msg} (line {exc.lineno})") from exc
    if not isinstance(data, dict):
        raise BadInput(f"the judgement file must hold {JUDGEMENT_FILE_HELP}")
    out = []
    for criterion, value in data.items():
        value = {"verdict": value} if isinstance(value, str) else value
        if not isinstance(value, dict):
            raise BadInput(f'{criterion!r} in the judgement file: give "PASS" or {{"verdict", "evidence"}}')
        out.append(
            {
                "criterion": str(criterion),
                "verdict": str(value.get("verdict", "")).upper(),
                "evidence": str(value.get("evidence", "")),
            }
        )
    return out


def run_spotcheck(args: argparse.Namespace) -> int:
    """The four subcommands."""
    from santa_core.spotchecks import actions
    from santa_core.spotchecks.store import SpotCheckError
    from storage.times import utcnow

    store = open_repo().spot_checks
    try:
        if args.spot_command == "list":
            return _list(store, args)
        if args.spot_command == "next":
            return _next(store, args)
        if args.spot_command == "draw":
            ids = actions.draw_spot_checks(store, utcnow())
            print(json.dumps(ids) if args.json else f"{len(ids)} new spot-check(s)")
            return EXIT_SHIPPED
        escapes = actions.submit(store, args.spot_check_id, judgements(args), args.person)
    except SpotCheckError as exc:
        raise BadInput(str(exc)) from exc
    compared = store.comparison(args.spot_check_id)
    if args.json:
        print(
            json.dumps(
                {
                    "spot_check": args.spot_check_id,
                    "escapes": escapes,
                    "criteria": [c.model_dump(mode="json") for c in compared],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return EXIT_SHIPPED
    print(f"spot-check {args.spot_check_id}: submitted; {len(escapes)} escape(s) recorded")
    rows = [("CRITERION", "YOU", *compared[0].reviewers)] if compared else []
    rows += [(c.criterion, c.person, *(v or "-" for v in c.reviewers.values())) for c in compared]
    print(as_columns(rows))
    return EXIT_SHIPPED


def _list(store: Any, args: argparse.Namespace) -> int:
    """The queue, open first, then oldest first."""
    checks = store.spot_checks(None if args.status == "all" else args.status)
    checks.sort(key=lambda c: (c.status != "open", c.id))
    if args.json:
        print(json.dumps([c.model_dump(mode="json", exclude={"seed"}) for c in checks], indent=2))
        return EXIT_SHIPPED
    rows = [("ID", "RUN", "RUBRIC", "STATUS", "OWNER", "DUE", "DRAWN BY")]
    rows += [
        (
            str(c.id),
            str(c.run_id),
            f"{c.rubric_name} v{c.rubric_version}",
            c.status,
            c.owner or "-",
            f"{c.due_at:%Y-%m-%d %H:%M}" if c.due_at else "-",
            c.drawn_by,
        )
        for c in checks
    ]
    print(as_columns(rows))
    return EXIT_SHIPPED


def _next(store: Any, args: argparse.Namespace) -> int:
    """The oldest open spot-check the person may take: the blind case only."""
    mine = [c for c in store.spot_checks("open") if args.person == CLI_ACTOR or c.owner in (None, args.person)]
    if not mine:
        print("{}" if args.json else "no open spot-checks")
        return EXIT_SHIPPED
    case = store.blind_case(mine[0].id)
    if args.json:
        # No run number: it would let the judge look the run's reviews up before judging.
        print(
            json.dumps(
                {
                    "spot_check": case.check.id,
                    "spec": case.spec,
                    "text": case.text,
                    "criteria": [c.model_dump(mode="json", exclude={"check"}) for c in case.criteria],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return EXIT_SHIPPED
    print(
        f"spot-check {case.check.id} · {case.check.rubric_name} "
        f"v{case.check.rubric_version}\n\n--- spec ---\n{case.spec}\n\n--- shipped text ---\n{case.text}\n"
    )
    print("--- criteria (judge each: --pass ID or --fail ID=EVIDENCE) ---")
    for c in case.criteria:
        print(f"{c.id} [{c.severity}]: {c.name}\n  passes when: {c.pass_condition}\n  fails when: {c.fail_signal}")
    return EXIT_SHIPPED
