"""`rubric list|export|import|suggestions`: the stored rubric versions and what their runs suggest, without a runner
or a model client."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from desk.cli.common import BadInput, CliParser, as_columns, open_repo

if TYPE_CHECKING:  # annotations only
    from storage.rubrics import RubricStore


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`rubric list`, `rubric export NAME`, `rubric import FILE`."""
    rb = sub.add_parser("rubric", help="list, export or import stored rubrics")
    rsub = rb.add_subparsers(dest="rubric_command", required=True, parser_class=CliParser)
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
    sg = rsub.add_parser(
        "suggestions", help="what a rubric's recent failures suggest (accept them on the Rubrics page)"
    )
    sg.add_argument("name")
    sg.add_argument("--json", action="store_true", help="print one JSON array")


def run_rubric(args: argparse.Namespace) -> str:
    """`rubric list|export|import`: the text to print (BadInput on a bad name or file)."""
    from santa_core.rubrics import actions as rubric_actions
    from santa_core.rubrics import library as lib
    from santa_core.rubrics.store import RubricConflict

    if args.rubric_command == "suggestions":
        return _suggestions(args.name, args.json)
    store = _open_rubric_store()
    if args.rubric_command == "list":
        return _rubric_list(store.list_rubrics(), args.json)
    if args.rubric_command == "export":
        return _rubric_export(store, args)
    try:
        text = lib.read_rubric_text(Path(args.file))
        result = rubric_actions.import_file(store, text, lib.format_of(args.file), args.author, args.note)
    except (lib.RubricFileError, lib.RubricCompositionError) as exc:
        problems = getattr(exc, "errors", None) or [str(exc)]
        raise BadInput(f"rubric file {args.file}: nothing imported:\n" + "\n".join(f"  {e}" for e in problems)) from exc
    except RubricConflict as exc:  # another import of the same name took the version number first
        raise BadInput(f"rubric file {args.file}: nothing imported: {exc}") from exc
    if result.created:
        return f"imported {result.name} v{result.version}"
    return f"unchanged: {result.name} v{result.version} already has this content"


def _open_rubric_store() -> RubricStore:
    """The stored rubrics alone: no runner and no model client, so rubric commands start fast."""
    return open_repo().rubrics


def _rubric_list(rubrics: list, as_json: bool) -> str:
    """Every stored rubric with its latest version, as a JSON array or a table."""
    if as_json:
        return json.dumps([r.model_dump(mode="json") for r in rubrics], indent=2, ensure_ascii=False)
    rows = [("NAME", "DOMAIN", "VERSION", "CRITERIA", "SAVED BY", "SAVED AT")]
    rows += [
        (r.name, r.domain, f"v{r.version}", str(r.criteria), r.author, f"{r.saved_at:%Y-%m-%d %H:%M}") for r in rubrics
    ]
    return as_columns(rows)


def _rubric_export(store: RubricStore, args: argparse.Namespace) -> str:
    """The exported version as text, or written to --out with a line saying so."""
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


def _suggestions(name: str, as_json: bool) -> str:
    """The rubric's undecided suggestions, as a JSON array or one block each (BadInput on an unknown rubric)."""
    from santa_core.rubrics.learning import pending
    from santa_core.rubrics.store import RubricNotFound

    repo = open_repo()
    try:
        rubric = repo.rubrics.resolved(name)
    except RubricNotFound as exc:
        raise BadInput(str(exc)) from exc
    found, _, _ = pending(rubric, repo.suggestions)
    if as_json:
        return json.dumps([s.model_dump(mode="json") for s in found], indent=2, ensure_ascii=False)
    if not found:
        return f"no suggestions for {name}: no criterion keeps failing on the same words"
    blocks = []
    for s in found:
        change = (
            json.dumps(s.check, ensure_ascii=False)
            if s.kind == "forbidden_terms"
            else f"pass condition: {s.pass_condition}"
        )
        blocks.append(f"{s.key}  {s.title}\n  {change}\n  runs: {', '.join(str(r) for r in s.runs)}")
    return "\n\n".join(blocks)
