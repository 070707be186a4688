"""What the commands share: exit codes, bad input, the parser class, reading files, the rubric a
run judges by, opening the database, and printing answers, tables and progress.

`storage` and the wiring are imported inside the functions that open the database, so `--help`
and bad usage answer without loading them.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from santa_core.config import Defaults, SettingError, diversity_warning, export_to_env
from santa_core.models import Rubric
from santa_core.panels import other_slot
from santa_core.pricing import UNKNOWN_PRICE_RULE, unpriced
from santa_core.providers import key_problem, provider_problems
from santa_core.reviewers.base import PERSON
from santa_core.text import text_problem

if TYPE_CHECKING:  # annotations only
    from desk import Desk
    from santa_core.rubrics.store import Store as RubricStore
    from storage.runs import RunStore

EXIT_SHIPPED, EXIT_ESCALATED, EXIT_BAD_INPUT, EXIT_WAITING, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_BROKEN = 1
"""`audit verify` found a broken link."""
CLI_ACTOR = "cli"
"""Who the command line acts as: a system actor (whoever can run it can open the database anyway)."""


class BadInput(Exception):
    """Bad usage or bad input: reported as one line on stderr with exit code 2."""


class CliParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are bad input (exit 2, one line), not argparse's own exit."""

    def error(self, message: str) -> NoReturn:
        raise BadInput(f"usage: {message}")


def load_secrets_file(path: Path = Path(".streamlit/secrets.toml")) -> None:
    """Like the app: root-level values of .streamlit/secrets.toml become environment variables.

    Values already in the environment win. The file's contents are never printed.
    """
    if not path.exists():  # only a missing file means none; a directory or an unreadable file is an error
        return
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path} cannot be read: {exc}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{path} is not valid TOML: {exc}") from exc
    export_to_env(data)


def read_text(path: str, what: str) -> str:
    """Read a UTF-8 file with a specific message for each way it can be bad."""
    p = Path(path)
    if not p.is_file():
        raise BadInput(f"{what} file not found: {path}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{what} file is not UTF-8 text: {path} (byte {exc.start})") from exc
    if problem := text_problem(text, f"{what} file"):
        raise BadInput(problem + (f": {path}" if not text.strip() else ""))
    return text


def load_rubric(name_or_path: str, store: RubricStore | None = None, version: int | None = None) -> Rubric:
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


def _label_file_rubric(rubric: Rubric, store: RubricStore | None) -> Rubric:
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
    print(
        f"santa: warning: {rubric.name} v{rubric.version} from the file is not a stored version; "
        f"recorded as {rubric.name!r} (file). Import it to version it.",
        file=sys.stderr,
    )
    return rubric.model_copy(update={"name": f"{rubric.name} (file)"})


def warn_about_models(args: argparse.Namespace) -> None:
    """The app's warnings, on stderr: reviewers not independent, models without a known price, provider settings
    left out."""
    for problem in provider_problems():
        print(f"santa: warning: {problem}", file=sys.stderr)
    if warning := diversity_warning(args.reviewer_b, args.reviewer_c):
        print(f"santa: warning: {warning}", file=sys.stderr)
    third = [args.reviewer_d] if getattr(args, "reviewer_d", None) else []  # `review` on a high-risk rubric only
    for model in unpriced(args.reviewer_b, args.reviewer_c, *third, args.fixer):
        print(f"santa: warning: price unknown for {model!r}: {UNKNOWN_PRICE_RULE}", file=sys.stderr)


def desk_defaults(desk: Desk) -> Defaults:
    """The desk's defaults (SANTA_* variables, else Settings, else built-ins); a variable set to an invalid value
    is bad input (exit 2), named."""
    try:
        return desk.defaults()
    except SettingError as exc:
        raise BadInput(f"error: {exc}") from exc


def check_screen(desk: Desk, args: argparse.Namespace) -> None:
    """Refuse (exit 2) before anything is stored or paid when the injection screen is on but cannot run for this
    panel: every round would stop at its screen (fail closed), so the command says why instead."""
    if problem := desk.runner.screen_problem((args.reviewer_b, args.reviewer_c)):
        raise BadInput(f"error: {problem}; nothing was started")


def pair_default(args: argparse.Namespace, defaults: Defaults) -> None:
    """One reviewer given alone (--reviewer-b or --reviewer-c): the other slot takes its default unless that is the
    very model given, then a partner of another family (`panels.other_slot`), never the same model twice."""
    if args.reviewer_b is not None and args.reviewer_c is None:
        args.reviewer_c = other_slot(args.reviewer_b, defaults.reviewer_c)
    elif args.reviewer_c is not None and args.reviewer_b is None:
        args.reviewer_b = other_slot(args.reviewer_c, defaults.reviewer_b)


def check_model_keys(*models: str) -> None:
    """Every model named can be called here: its provider is configured and has its key (else exit 2, one line
    naming the provider and the variable to set)."""
    for model in dict.fromkeys(models):
        if model != PERSON and (problem := key_problem(model)):
            raise BadInput(problem)


def open_desk(queued: bool | None = None, workers: int | None = None) -> Desk:
    """The desk for DATABASE_URL (`queued` and `workers` as `wiring.open_desk` takes them); a database that cannot
    be opened is bad input (exit 2)."""
    from desk import wiring
    from storage.db import cannot_open, database_url

    try:
        # The command line acts as `cli`, never as the local user: a desk where it does not act at all.
        return wiring.open_desk(mark_interrupted=False, local_user=False, queued=queued, workers=workers)
    except Exception as exc:  # noqa: BLE001 - whatever stops the database opening is a config problem
        raise BadInput(cannot_open(database_url(), exc)) from exc


def open_repo() -> RunStore:
    """The run store alone: no runner and no model client; a database that cannot be opened is bad input."""
    from storage.db import cannot_open, database_url
    from storage.runs import RunStore
    from storage.startup import init_db
    from storage.transactions import Database

    try:
        return RunStore(Database(init_db(mark_interrupted=False), local_user=False))
    except Exception as exc:  # noqa: BLE001 - whatever stops the database opening is a config problem
        raise BadInput(cannot_open(database_url(), exc)) from exc


def write_out(data: str | bytes, out: str | None) -> None:
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


def say(line: str) -> None:
    """A progress or warning line on stderr (stdout carries only the answer, for --json)."""
    print(line, file=sys.stderr, flush=True)


def as_columns(rows: Sequence[tuple[str, ...]]) -> str:
    """Rows as left-aligned columns two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows)
