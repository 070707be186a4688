"""`batch FILE`: verify a CSV/JSONL batch by sampling. Store the batch, review a sample with both
reviewers, group its failures into patterns, fix each pattern (with --auto-approve) and resample
until a sample is clean, a person must decide, or --max-samples is reached.

What the command prints at the end is built in `batch_report`.
"""

from __future__ import annotations

import argparse
import json
import math
from concurrent import futures
from pathlib import Path
from typing import TYPE_CHECKING

from desk.cli.batch_report import Decisions, batch_result, batch_summary
from desk.cli.common import (
    CLI_ACTOR,
    EXIT_ESCALATED,
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
    say,
    warn_about_models,
    write_out,
)
from santa_core.batch.report import batch_view
from santa_core.batch.sampling import DEFAULT_RATE, MIN_SAMPLE
from santa_core.models import Rubric
from santa_core.providers import canonical, message_batches_problem
from santa_core.reviewers.base import PERSON
from santa_core.text import text_problem

if TYPE_CHECKING:  # annotations only: storage is imported inside the command
    from desk import Desk
    from santa_core.batch.file import BatchFile
    from santa_core.batch.store import BatchConfig, PatternRecord, SampleProgress

BATCH_MAX_SAMPLES = 5
"""Samples `batch` draws before it stops without a clean one (a safety cap on resampling)."""
PROGRESS_S = 1.0
"""How often a progress line may be printed while a sample is reviewed (seconds)."""
OUT_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
DETECTION_SHOWN = (0.01, 0.05, 0.10)
"""Prevalences whose chance of being caught is shown before the first sample."""
BATCH_EXIT = {
    "clean": EXIT_SHIPPED,
    "waiting": EXIT_WAITING,
    "paused": EXIT_WAITING,
    "needs_person": EXIT_WAITING,
    "max_samples": EXIT_ESCALATED,
}
"""Exit code of each way a batch stops: clean 0, a person must decide or fix items by hand 3, --max-samples
reached 1."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`batch FILE [--rubric NAME] [--sample-rate R] [--strata COL,...] [--seed N] [--[no-]message-batches]
    [--auto-approve] [--out FILE] ...`."""
    ba = sub.add_parser(
        "batch",
        help="verify a CSV/JSONL batch by sampling: review a sample, fix its patterns, "
        "resample until a sample is clean",
    )
    ba.add_argument("file", help="the batch: a CSV or JSONL file with an id and an output per item")
    ba.add_argument("--id-column", help="column holding each item's unique id (default: id, item_id or key)")
    ba.add_argument(
        "--output-column", help="column holding the output (default: output, text, content, completion or response)"
    )
    ba.add_argument("--spec-column", help="column holding each item's spec (default: spec or specification, if any)")
    one_spec = ba.add_mutually_exclusive_group()
    one_spec.add_argument("--spec", help="one spec for every item without its own")
    one_spec.add_argument("--spec-file", help="file holding one spec for every item without its own")
    ba.add_argument(
        "--strata",
        type=_columns_list,
        default=[],
        help="comma-separated columns to stratify by, e.g. template,locale (length: short/medium/long)",
    )
    ba.add_argument("--rubric", help="stored rubric name (latest version) or a YAML/JSON rubric file")
    ba.add_argument("--rubric-version", type=int, help="judge by this version of a stored rubric")
    ba.add_argument("--reviewer-b", help="model for reviewer B")
    ba.add_argument("--reviewer-c", help="model for reviewer C")
    ba.add_argument("--fixer", help="model for the fix agent")
    ba.add_argument(
        "--sample-rate",
        type=float,
        default=DEFAULT_RATE,
        help=f"share of the batch in each sample (default {DEFAULT_RATE})",
    )
    ba.add_argument(
        "--min-sample", type=int, default=MIN_SAMPLE, help=f"fewest items in a sample (default {MIN_SAMPLE})"
    )
    ba.add_argument(
        "--seed",
        type=_seed,
        default=1,
        help="seed of the draw: the same seed draws the same sample (default 1; 0 to 2,147,483,646)",
    )
    ba.add_argument("--concurrency", type=int, help="reviews at a time (default 4)")
    ba.add_argument(
        "--message-batches",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="review each sample through Anthropic's Message Batches API (about half price, slower; "
        "it may take hours). Default: on when both reviewers are Claude models, else off (with a "
        "note); --no-message-batches reviews with synchronous calls",
    )
    ba.add_argument(
        "--max-samples",
        type=int,
        default=BATCH_MAX_SAMPLES,
        help=f"stop after this many samples without a clean one (default {BATCH_MAX_SAMPLES})",
    )
    ba.add_argument("--auto-approve", action="store_true", help="apply each pattern's fix without a person")
    ba.add_argument(
        "--hand-fixes",
        help="a person's own text for items no fix can reach: a CSV/JSONL file with the "
        "batch's id and output columns; applied (as that person's edit, audited) "
        "to the items that need a person before the next sample verifies them",
    )
    ba.add_argument("--out", help="export the verified batch to this .csv or .jsonl file")
    ba.add_argument("--json", action="store_true", help="print one JSON object")


def _seed(text: str) -> int:
    """A --seed argument: a whole number that fits the stored 32-bit seed."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value < 2**31 - 1:
        raise argparse.ArgumentTypeError(f"{value} is outside 0 to 2,147,483,646")
    return value


def _columns_list(text: str) -> list[str]:
    """A comma-separated list of column names (blanks dropped)."""
    return [c.strip() for c in text.split(",") if c.strip()]


def run_batch(args: argparse.Namespace) -> int:
    """`batch FILE`: store the batch, sample, find patterns, fix them (auto-approve) and resample until clean."""
    _check_batch_options(args)
    load_secrets_file()
    file = _read_batch_file(args)
    args.hand_fix_texts = _read_hand_fixes(args, file)
    spec = _batch_spec(args, file)
    desk = open_desk()
    try:
        defaults = desk_defaults(desk)
        pair_default(args, defaults)
        for name in ("rubric", "reviewer_b", "reviewer_c", "fixer"):  # as `review`: SANTA_*, Settings, built-ins
            if getattr(args, name) is None:
                setattr(args, name, getattr(defaults, name))
        for name in ("reviewer_b", "reviewer_c", "fixer"):  # one spelling per model, as `review`
            setattr(args, name, canonical(getattr(args, name)))
        rubric = load_rubric(args.rubric, desk.rubrics, args.rubric_version)
        _check_batch_reviewers(args)
        check_screen(desk, args)
        warn_about_models(args)
        batch_id = _create_batch(desk, file, _batch_config(args, file, spec, rubric))
        say(_detection_line(desk, batch_id))
        decisions = Decisions()
        try:
            outcome = _verify(desk, batch_id, args, decisions)
        except KeyboardInterrupt:
            say(
                f"stopped: batch {batch_id} keeps every review that came in; the app carries on with an unfinished "
                "sample when it starts (Batch page)"
            )
            return 130
        if outcome == "clean" and batch_view(desk.batches.store, batch_id).needs_fix:
            outcome = "needs_person"  # a clean sample, but items no fix could reach still carry the defect
        if args.out:
            write_out(desk.batches.export(batch_id, OUT_FORMATS[Path(args.out).suffix.lower()]), args.out)
        result = batch_result(desk, batch_id, outcome, decisions, args.out)
    finally:
        desk.close()
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else batch_summary(result))
    return BATCH_EXIT[outcome]


def _check_batch_options(args: argparse.Namespace) -> None:
    """Options that are wrong whatever the file holds (bad usage, exit 2, before anything is read)."""
    rate = args.sample_rate
    if not (math.isfinite(rate) and 0 < rate <= 1):
        hint = f" ({rate:g} % is {rate / 100:g})" if 1 < rate <= 100 else ""
        raise BadInput(f"--sample-rate must be a share above 0 and at most 1, e.g. 0.15 for 15 %{hint}")
    for flag, value, low, high in (
        ("--min-sample", args.min_sample, 1, None),
        ("--max-samples", args.max_samples, 1, None),
        ("--concurrency", args.concurrency, 1, 64),
    ):
        if value is not None and (value < low or (high is not None and value > high)):
            raise BadInput(f"{flag} must be {'between 1 and 64' if high else 'at least 1'}, not {value}")
    if args.out:
        out = Path(args.out)
        if out.suffix.lower() not in OUT_FORMATS:
            raise BadInput(f"--out {args.out}: the export format comes from the extension: end it in .csv or .jsonl")
        if not out.parent.is_dir():
            raise BadInput(f"--out {args.out}: the folder {out.parent} does not exist")


def _read_hand_fixes(args: argparse.Namespace, file: BatchFile) -> dict[str, str]:
    """--hand-fixes read up front (id → text, the batch's id and output columns), or its problems (exit 2)."""
    from santa_core.batch.file import BatchFileError, read_batch

    if not args.hand_fixes:
        return {}
    path = Path(args.hand_fixes)
    try:
        given = read_batch(path.read_bytes(), path.name, id_column=file.id_column, output_column=file.output_column)
    except OSError as exc:
        raise BadInput(f"cannot read --hand-fixes file {args.hand_fixes}: {exc.strerror or exc}") from exc
    except BatchFileError as exc:
        raise BadInput(
            f"--hand-fixes file {args.hand_fixes}: nothing stored:\n" + "\n".join(f"  {e}" for e in exc.errors)
        ) from exc
    return {it.key: it.output for it in given.items}


def _read_batch_file(args: argparse.Namespace) -> BatchFile:
    """The batch file read in full, or every problem with it (exit 2, nothing stored)."""
    from santa_core.batch.file import MAX_FILE_BYTES, BatchFileError, read_batch

    path = Path(args.file)
    if not path.is_file():
        raise BadInput(f"batch file not found: {args.file}")
    try:
        if path.stat().st_size > MAX_FILE_BYTES:  # checked before reading: a wrong file should not fill memory
            raise BadInput(
                f"batch file {args.file} is larger than {MAX_FILE_BYTES:,} bytes: split it into smaller batches"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot read batch file {args.file}: {exc.strerror or exc}") from exc
    try:
        file = read_batch(
            data,
            path.name,
            id_column=args.id_column,
            output_column=args.output_column,
            spec_column=args.spec_column,
            strata=args.strata,
        )
    except BatchFileError as exc:
        raise BadInput(f"batch file {args.file}: nothing stored:\n" + "\n".join(f"  {e}" for e in exc.errors)) from exc
    for warning in file.warnings:
        say(f"santa: warning: {warning}")
    return file


def _batch_spec(args: argparse.Namespace, file: BatchFile) -> str:
    """The one spec for items without their own ('' when every item has one)."""
    if args.spec_file:
        spec = read_text(args.spec_file, "spec")
    elif args.spec is not None:
        if problem := text_problem(args.spec, "--spec"):
            raise BadInput(
                problem
                + (": give the task specification the outputs were generated from" if not args.spec.strip() else "")
            )
        spec = args.spec
    else:
        spec = ""
    missing = [item.key for item in file.items if item.spec is None]
    if missing and not spec:
        where = f"its '{file.spec_column}' cell is empty" if file.spec_column else "the file has no spec column"
        some = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise BadInput(
            f"no spec for item {some} ({where}): give one spec for all with --spec TEXT or --spec-file "
            "PATH, or name the spec column with --spec-column"
        )
    return spec


def _check_batch_reviewers(args: argparse.Namespace) -> None:
    """A sample is reviewed by two models, so a person slot or a missing key is bad usage."""
    if PERSON in (args.reviewer_b, args.reviewer_c):
        raise BadInput(
            "a batch sample is reviewed by two models; a person reviews single runs (use review, "
            "or pick models with --reviewer-b and --reviewer-c)"
        )
    check_model_keys(args.reviewer_b, args.reviewer_c, args.fixer)
    problem = message_batches_problem(args.reviewer_b, args.reviewer_c)
    if args.message_batches and problem:  # asked for by name: refused, as any impossible option
        raise BadInput(f"--message-batches: {problem}")
    if args.message_batches is None:
        # Why on by default: nobody watches a command-line batch, so the discount costs no waiting person.
        args.message_batches = problem is None
        say(
            "santa: reviewing each sample through the Message Batches API (about half price; it may take longer; "
            "--no-message-batches for synchronous calls)"
            if problem is None
            else f"santa: note: reviewing with synchronous calls at full price: {_first_clause(problem)}"
        )


def _first_clause(problem: str) -> str:
    """The reason of a Message Batches problem, without its advice to change the options (nobody asked)."""
    return problem.split(";")[0]


def _batch_config(args: argparse.Namespace, file: BatchFile, spec: str, rubric: Rubric) -> BatchConfig:
    """How the batch is verified, from the options and the file."""
    from santa_core.batch.store import BatchConfig

    extra = {} if args.concurrency is None else {"concurrency": args.concurrency}
    return BatchConfig(
        name=Path(args.file).name,
        file_format=file.format,
        columns=file.columns,
        id_column=file.id_column,
        output_column=file.output_column,
        spec_column=file.spec_column,
        spec=spec,
        strata=file.strata,
        rubric=rubric,
        reviewer_b=args.reviewer_b,
        reviewer_c=args.reviewer_c,
        fixer=args.fixer,
        sample_rate=args.sample_rate,
        min_sample=args.min_sample,
        seed=args.seed,
        message_batches=args.message_batches,
        auto_approve=args.auto_approve,
        source="cli",
        **extra,
    )


def _create_batch(desk: Desk, file: BatchFile, config: BatchConfig) -> int:
    """Store the batch; a batch the store refuses is bad input (it checks before writing anything)."""
    from santa_core.batch.store import BatchProblem

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
    return (
        f"batch {batch_id}: {est.items:,} items, {est.sample:,} in each sample; a pattern in {shares} of the "
        f"items is caught with probability {chances}"
    )


def _verify(desk: Desk, batch_id: int, args: argparse.Namespace, decisions: Decisions) -> str:
    """Sample until a sample is clean, a person must decide, or --max-samples is reached; how it stopped."""
    from santa_core.batch.sample_batch import STOPPED

    for _ in range(args.max_samples):
        progress = _review_sample(desk, batch_id)
        if not progress.finished:
            if desk.batches.store.is_paused(batch_id):
                return "paused"  # someone paused the batch in the app: they resume it there
            if (progress.api_status or "").startswith(STOPPED):
                raise RuntimeError(
                    f"sample {progress.number} of batch {batch_id}: the Message Batch "
                    f"{progress.api_status}; Try again on the Batch page goes on (a new batch with "
                    "--no-message-batches reviews with synchronous calls instead)"
                )
            raise RuntimeError(
                f"sample {progress.number} of batch {batch_id}: {progress.size - progress.done:,} "
                "review(s) did not finish (a worker failed); the app resumes them when it starts"
            )
        found = desk.batches.find_patterns(progress.id)
        if not found:
            return "clean"
        for record in found:
            _decide(desk, record, args.auto_approve, decisions)
        if decisions.waiting:
            return "waiting"
        _hand_fixes(desk, batch_id, args)
    return "max_samples"


def _hand_fixes(desk: Desk, batch_id: int, args: argparse.Namespace) -> None:
    """Apply --hand-fixes to the items that need a person (each as the person's edit), before the next sample."""
    if not args.hand_fixes:
        return
    texts = dict(args.hand_fix_texts)
    view = batch_view(desk.batches.store, batch_id)
    keys = {it.id: it.key for it in view.items}
    outputs = {it.key: it.output for it in view.items}
    for change in view.changes:
        key = keys.get(change.item_id)
        if key in texts and key in view.needs_fix and change.before_hash == change.after_hash and not change.by_hand:
            desk.batches.edit_by_hand(
                change.pattern_id,
                key,
                outputs[key],
                texts.pop(key),
                CLI_ACTOR,
                f"from --hand-fixes {Path(args.hand_fixes).name}",
            )
            say(f"item {key}: fixed by hand (from --hand-fixes)")


def _review_sample(desk: Desk, batch_id: int) -> SampleProgress:
    """Draw the next sample and review it, with progress lines on stderr; its progress once the driver stops."""
    sample_id = desk.batches.draw(batch_id, CLI_ACTOR)
    future = desk.batches.drive(sample_id)  # what BatchDriver.sample does, keeping the driver's future
    progress = desk.batches.progress(sample_id)
    say(f"sample {progress.number}: reviewing {progress.size:,} items with both reviewers")
    shown = ""
    while not futures.wait([future], timeout=PROGRESS_S).done:
        line = _progress_line(desk.batches.progress(sample_id))
        if line != shown:
            say(line)
            shown = line
    try:
        future.result()
    except Exception as exc:  # noqa: BLE001 - reported as an internal error naming the batch to pick up
        raise RuntimeError(
            f"sample {progress.number} of batch {batch_id} stopped: {exc}; what was reviewed is "
            "kept, and the app carries on with it when it starts (Batch page)"
        ) from exc
    progress = desk.batches.progress(sample_id)
    say(_progress_line(progress))
    return progress


def _progress_line(progress: SampleProgress) -> str:
    """e.g. `sample 1: 12 of 30 reviewed, 2 NAUGHTY, about 40 s left`."""
    if progress.api_batch_id and not progress.finished:
        return (
            f"sample {progress.number}: Message Batch {progress.api_batch_id} is "
            f"{progress.api_status or 'submitted'}; {progress.done:,} of {progress.size:,} collected"
        )
    head = f"sample {progress.number}: {progress.done:,} of {progress.size:,} reviewed, {progress.naughty:,} NAUGHTY"
    left = progress.seconds_left
    return head if left is None else f"{head}, about {_duration(left)} left"


def _duration(seconds: float) -> str:
    """A rough duration for an ETA: `40 s`, `3 min`, `2 h`."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min" if seconds < 5400 else f"{round(seconds / 3600)} h"


def _decide(desk: Desk, record: PatternRecord, auto_approve: bool, decisions: Decisions) -> None:
    """With --auto-approve, say what the batch driver did with the pattern as it closed the sample (it fixes a
    complete plan as `auto-approve`, as in the app and the worker); else ask for its fix, for a person to approve."""
    from santa_core.batch.fix_batch import auto_fix_note

    if record.pattern.get("kind", "issue") != "issue":
        decisions.waiting[record.id] = "no issue to fix: review these items by hand or dismiss the group with a reason"
        return
    if auto_approve:
        record = desk.batches.store.pattern(record.id)
        if record.status == "applied":
            decisions.skipped[record.id] = []  # a complete plan: every reached item took its fix
        elif record.waiting:
            why = (auto_fix_note(record) or "auto-approve did not take it up").removeprefix("waits for a person: ")
            decisions.waiting[record.id] = f"not auto-approved ({why.splitlines()[0]}): a person fixes it"
        return

    def progress(done: int, total: int) -> None:
        if total and (done in (0, total) or done % max(1, total // 10) == 0):
            say(f"pattern {record.id}: each item's own fix: {done} of {total} prepared")

    desk.batches.propose(record.id, CLI_ACTOR, progress=progress)
    decisions.waiting[record.id] = "its fix waits for a person to approve, edit or dismiss"
