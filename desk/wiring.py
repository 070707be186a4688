"""The review desk wired together: one database and its run store, the runner with the Anthropic
reviewers and fix agent, and the batch driver over the batch store.

Shared by the app (held in `st.cache_resource` by `ui.app_desk`) and the command line.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from desk import connection
from desk.alerts import start_alerting
from desk.clients import NO_KEY, chat_client, shared_client  # noqa: F401 - used through wiring too
from desk.job_host import STOP_GRACE_S, JobHost
from desk.outage import PatientStore
from desk.queued import QueuedBatchDriver, QueuedRunner
from desk.task_engine import TaskEngine, task_engine, uses_task_engine
from desk.workers import start_in_app, workers_in_app
from santa_core import providers
from santa_core.batch.driver import BatchDriver
from santa_core.batch.store import SampleProgress
from santa_core.config import Defaults, Effective, effective_defaults, screen_remedy
from santa_core.models import RunStatus
from santa_core.reviewers.anthropic import DEFAULT_ANSWER_ATTEMPTS, AnthropicFixer, AnthropicReviewer, AnthropicScreen
from santa_core.reviewers.base import Fixer, Reviewer, Screen
from santa_core.reviewers.calls import UnavailableModel
from santa_core.run.runner import Runner
from storage.alerts import AlertStore
from storage.audit import AuditStore
from storage.batches import BatchStore
from storage.db import database_url
from storage.metrics import MetricsStore
from storage.people import PeopleStore
from storage.rubrics import RubricStore
from storage.runs import RunStore
from storage.startup import init_db
from storage.transactions import Database
from storage.views import RunClaim, RunSummary
from storage.workers import alive_on_this_host, is_orphaned, this_worker

log = logging.getLogger(__name__)


def answer_attempts() -> int:
    """Calls at most for one reviewer or fix answer while it comes back refused, cut off or malformed:
    SANTA_ANSWER_ATTEMPTS, default 4 (1 gives up after the first bad answer)."""
    try:
        return min(10, max(1, int(os.environ.get("SANTA_ANSWER_ATTEMPTS", DEFAULT_ANSWER_ATTEMPTS))))
    except ValueError:
        return DEFAULT_ANSWER_ATTEMPTS


def _chat(kind: str) -> Callable[..., object]:
    """The OpenAI-compatible adapter's `kind` (ChatReviewer, ChatFixer, ChatScreen), imported when a model on such a
    provider is built: a process whose models are all Anthropic's never loads the openai SDK (about half a second of
    CPU at every start of the app, a worker or a command)."""

    def build(*args: Any, **kwargs: Any) -> object:
        from santa_core.reviewers import openai_compat

        return getattr(openai_compat, kind)(*args, **kwargs)

    return build


def _model(name: str, anthropic_kind: Callable, chat_kind: Callable, **extra: Any) -> object:
    """A fresh model client for `name` on its provider; a model that cannot be called as configured (unknown
    provider, no key) is an `UnavailableModel` whose every answer is that error (fail closed: no verdict)."""
    provider = providers.provider_of(name)
    problem = providers.key_problem(name)
    if provider is None or problem:
        return UnavailableModel(name, problem or f"unknown provider for {name}")
    try:
        if provider.protocol == providers.MESSAGES_API:
            return anthropic_kind(
                providers.split_model(name)[1], client=shared_client(), answer_attempts=answer_attempts(), **extra
            )
        return chat_kind(
            providers.canonical(name),
            providers.split_model(name)[1],
            chat_client(provider),
            provider=provider.name,
            answer_attempts=answer_attempts(),
            **extra,
        )
    except Exception as exc:  # noqa: BLE001 - a client that cannot be built (a malformed base URL): no call, no verdict
        return UnavailableModel(name, providers.scrub_keys(f"cannot call {name}: {type(exc).__name__}: {exc}"))


def model_reviewer(name: str) -> Reviewer:
    """A fresh reviewer for one call (fresh per round: no carried context), on the model's provider."""
    # _model builds the kind it is given (or an UnavailableModel, every role's stand-in); it is typed for all roles
    return _model(name, AnthropicReviewer, partial_strict(_chat("ChatReviewer"), name))  # type: ignore[return-value]


def model_fixer(name: str) -> Fixer:
    """A fresh fix agent on the model's provider."""
    # as model_reviewer: _model is typed for all roles
    return _model(name, AnthropicFixer, partial_strict(_chat("ChatFixer"), name))  # type: ignore[return-value]


def partial_strict(kind: Callable, name: str) -> Callable:
    """`kind` with the provider's strict-schema setting (a server that refuses strict schemas gets strict=false)."""
    provider = providers.provider_of(name)
    return functools.partial(kind, strict=provider.strict) if provider is not None else kind


def effective_of(runs: RunStore) -> Effective:
    """Defaults for new runs and where each comes from: SANTA_* variables win, else what the Settings page saved,
    else the built-ins (`santa_core.config.effective_defaults`)."""
    return effective_defaults(runs.saved_settings())


def defaults_of(runs: RunStore) -> Defaults:
    """Defaults for new runs: SANTA_* variables, else what the Settings page saved, else built-ins."""
    return effective_of(runs).defaults


def model_screen(runs: RunStore) -> Callable[[], Screen | None]:
    """The known-answer screen as the settings say at the time of each round: the screen model on its provider,
    or None only when the setting is off. A screen that is on but cannot be called (no key, an unknown provider, a
    client that cannot be built) is an `UnavailableModel` whose every screen is an error naming the problem and
    what to do: the round fails closed, as it does for a reviewer with no key."""

    def current() -> Screen | None:
        effective = effective_of(runs)
        if not effective.defaults.screen:
            return None
        screen = _model(effective.defaults.screen_model, AnthropicScreen, _chat("ChatScreen"))
        if isinstance(screen, UnavailableModel):
            why = f"{screen.problem}; {screen_remedy(effective.sources)}"
            screen.problem = f"the screening model cannot be called here: {why}"
        return screen  # type: ignore[return-value]  # as model_reviewer: _model is typed for all roles

    return current


def batch_poll_seconds() -> float:
    """How often a Message Batch is polled: SANTA_BATCH_POLL_S, default 30 s (the API answers within 24 h)."""
    try:
        return max(0.01, float(os.environ.get("SANTA_BATCH_POLL_S", "30")))
    except ValueError:
        return 30.0


def runner_workers() -> int:
    """How many runs (single runs and batch reviews together) the desk works on at once: SANTA_WORKERS, default 4."""
    try:
        return min(64, max(1, int(os.environ.get("SANTA_WORKERS", "4"))))
    except ValueError:
        return 4


def screen_answers_of(runs: RunStore) -> Callable[[], str | None]:
    """Before a Message Batch is paid for: why the injection screen, on in the settings, would not answer (its
    provider's model list, asked for free), else None."""

    def check() -> str | None:
        defaults = effective_of(runs).defaults
        return connection.screen_answers(defaults.screen_model) if defaults.screen else None

    return check


ENV_ONLY_SETTINGS: tuple[tuple[str, str, Callable[[], float]], ...] = (
    ("Runs worked on at once", "SANTA_WORKERS", runner_workers),
    ("Calls at most per reviewer or fix answer", "SANTA_ANSWER_ATTEMPTS", answer_attempts),
    ("Message Batch polling (seconds)", "SANTA_BATCH_POLL_S", batch_poll_seconds),
)
"""Settings of the desk's process, set by the environment only (label, variable, value now): the Settings page lists
them with the others."""


@dataclass
class Desk:
    """What a page or the command line needs: the run store (with the stores of the other record kinds
    over the same database), the runner and the batch driver."""

    url: str
    runs: RunStore
    runner: Runner
    batches: BatchDriver
    jobs: JobHost | None = None
    """On PostgreSQL: this process's side of the task engine's jobs (None on SQLite: runs stay in-process)."""
    sweeping: threading.Event | None = None
    """Set to stop the app's sweep for runs left behind (SQLite; None: this desk does not sweep)."""

    @property
    def task_engine(self) -> TaskEngine | None:
        """The task engine runs go through (PostgreSQL), or None (SQLite)."""
        return self.runner.task_engine if isinstance(self.runner, QueuedRunner) else None

    @property
    def local_user(self) -> bool:
        """Whether the local user may act on this desk (no sign-in); the storage's role checks refuse it otherwise."""
        return self.runs.db.local_user

    @local_user.setter
    def local_user(self, allowed: bool) -> None:
        self.runs.db.local_user = allowed

    @property
    def rubrics(self) -> RubricStore:
        """Stored rubric versions and trials."""
        return self.runs.rubrics

    @property
    def people(self) -> PeopleStore:
        """Who may act, with which roles."""
        return self.runs.people

    @property
    def audit(self) -> AuditStore:
        """The hash-chained audit trail."""
        return self.runs.audit

    @property
    def alerts(self) -> AlertStore:
        """The alert outbox and its delivery log."""
        return AlertStore(self.runs)

    @property
    def metrics(self) -> MetricsStore:
        """The Metrics page's figures."""
        return self.runs.metrics

    def defaults(self) -> Defaults:
        """Defaults for new runs: SANTA_* variables, else what the Settings page saved, else built-ins."""
        return defaults_of(self.runs)

    def effective(self) -> Effective:
        """The defaults and where each comes from (the environment, a save on the Settings page, or built-in)."""
        return effective_of(self.runs)

    def run_json(self, run_id: int) -> dict:
        """The run as one JSON-ready object (the command line's --json answer)."""
        return self.runs.run_json(run_id)

    def close(self) -> None:
        """Wait for in-flight steps to commit, then stop the pools (and this process's job worker)."""
        if self.sweeping is not None:
            self.sweeping.set()
        if self.jobs is not None:
            self.jobs.stop()
        self.batches.shutdown()
        self.runner.shutdown()


def open_desk(
    url: str | None = None,
    reviewer_for: Callable[[str], Reviewer] = model_reviewer,
    fixer_for: Callable[[str], Fixer] = model_fixer,
    workers: int | None = None,
    mark_interrupted: bool = True,
    screen_for: Callable[[], Screen | None] | None = None,
    queued: bool | None = None,
    local_user: bool = True,
) -> Desk:
    """Open (and migrate) the database; for the app, mark dead runs interrupted and requeue queued ones.

    `queued`: runs go through the task engine (True: a worker, or the app on PostgreSQL). None: the app
    (`mark_interrupted`) on PostgreSQL does, the command line's in-process runs do not. The app on
    PostgreSQL also works jobs itself unless SANTA_WORKERS_IN_APP=0.
    `local_user`: whether the local user may act (`Desk.local_user`): the app says whether sign-in is configured;
    the command line acts as `cli` and opens with False.
    """
    url = url or database_url()
    engine = init_db(url, mark_interrupted=mark_interrupted)
    runs = RunStore(Database(engine, local_user=local_user))
    queued = (mark_interrupted and uses_task_engine(url)) if queued is None else queued
    # Through the task engine, the jobs' runs wait for a database that went away instead of failing (desk.outage).
    # The patient store answers every call the store does (it passes each one on, waiting for the database).
    driving = cast(RunStore, PatientStore(runs)) if queued else runs
    screen = model_screen(driving) if screen_for is None else screen_for
    count = workers or runner_workers()
    runner = (
        QueuedRunner(task_engine(url), driving, reviewer_for, fixer_for, count, screen)
        if queued
        else Runner(runs, reviewer_for, fixer_for, count, screen)
    )
    poll_s, screen_answers = batch_poll_seconds(), screen_answers_of(runs)
    batches = (
        QueuedBatchDriver(
            runner.task_engine,
            runs,
            BatchStore(runs),
            runner,
            fixer_for,
            shared_client,
            poll_s,
            screen_answers=screen_answers,
        )
        if isinstance(runner, QueuedRunner)
        else BatchDriver(
            runs, BatchStore(runs), runner, fixer_for, shared_client, poll_s, screen_answers=screen_answers
        )
    )
    desk = Desk(
        url=url,
        runs=runs,
        runner=runner,
        batches=batches,
        jobs=JobHost(driving, runner, batches) if isinstance(runner, QueuedRunner) else None,
    )
    if mark_interrupted:  # the app: batch samples a restart cut short carry on, and queued runs are picked up
        batches.resume_unfinished(leave=lambda sample_id: held_elsewhere(runs, batches, sample_id))
        batches.group_finished()
        resubmit_queued(runs, runner)
        if desk.jobs is None:  # on PostgreSQL the task engine's workers sweep (desk.task_engine.TaskEngine.maintain)
            desk.sweeping = start_sweeping(runs, runner, batches)
            start_alerting(AlertStore(runs), desk.sweeping)  # reminders with nobody on a page; stops with the sweep
        elif workers_in_app() and isinstance(runner, QueuedRunner):
            start_in_app(runner.task_engine, desk.jobs, count)
    return desk


def stop_on_exit(desk: Desk) -> None:
    """When this process shuts down (the app's server stopped by SIGTERM or Ctrl-C), before the pools wait for
    their threads: take no new work and mark the runs in flight interrupted ("the app stopped"), so they are
    resumable at once instead of `running` until the next start finds their process gone. Through the task
    engine (PostgreSQL) each run is handed over to the queue instead, once its step in flight is stored."""
    register = getattr(threading, "_register_atexit", None)  # what concurrent.futures itself uses
    if register is None:
        return
    try:
        register(lambda: stop_desk(desk))
    except RuntimeError:  # already shutting down
        pass


def stop_desk(desk: Desk) -> None:
    """The app's desk stops: no new work; runs in flight are marked interrupted, or, through the task engine,
    handed over to the queue once their step in flight is stored (`desk.job_host.JobHost`), so nobody has to
    press Resume. Said twice (the server's lifespan, then the process's exit), the second time is a no-op."""
    if desk.jobs is not None:
        desk.jobs.stop_and_wait()
    else:
        if desk.sweeping is not None:
            desk.sweeping.set()
        desk.runner.stop_all("the app stopped while this run was running")
        # Then wait (at most STOP_GRACE_S: a reviewer call's timeout and a margin) for the calls in flight: their
        # answers were paid for and are stored as they come. The server ends the process by its signal once this
        # returns, so the pools' own exit hooks never run; past the grace the answers are lost, nothing else.
        log.info("Stopping: waiting up to %g s for the model calls in flight", STOP_GRACE_S)

        def shut_down() -> None:
            desk.batches.shutdown()
            desk.runner.shutdown()

        waiting = threading.Thread(target=shut_down, name="santa-stop", daemon=True)
        waiting.start()
        waiting.join(STOP_GRACE_S)


QUEUED_ORPHAN_S = 5.0
"""A queued run untouched this long, whose process is not a live one on this host, was left by a process that is
gone (a live one claims its run within milliseconds, or holds it in its pool); younger ones are left alone."""
SWEEP_EVERY_S = 10.0
"""How often the app's desk on SQLite looks for runs and batch samples a process that is gone left behind
(`sweep`). A page that shows such a run or sample only says so: reading a page never writes."""
SWEPT_NOTE = "the process working on this run stopped while it was running"


def queued_by_other_live_process(worker: str | None) -> bool:
    """Whether a queued run was queued by another process on this host that is still running (a command line
    working its runs, a second app): it works the run itself, perhaps once a thread of its pool is free."""
    return worker is not None and worker != this_worker() and alive_on_this_host(worker)


def queued_left_behind(updated_at: datetime, worker: str | None, now: datetime) -> bool:
    """Whether no live process will pick up a queued run: untouched for QUEUED_ORPHAN_S, and not queued by another
    process on this host that is still running."""
    young = (now - updated_at).total_seconds() <= QUEUED_ORPHAN_S
    return not young and not queued_by_other_live_process(worker)


def left_behind(run: RunSummary, now: datetime) -> bool:
    """A run of `runs_to_resume` that no live process will pick up: not a batch sample (its driver's: it holds a
    paused batch's reviews back, `pick_up_samples`), and, when queued, `queued_left_behind`."""
    if run.source == "batch":
        return False
    return run.status != RunStatus.QUEUED or queued_left_behind(run.updated_at, run.worker, now)


def held_by_a_live_process(claim: RunClaim) -> bool:
    """Whether another process that is still running holds the run: it claimed it (running; one elsewhere is judged
    by its silence, as `RunStore.mark_interrupted` does) or queued it (queued, on this host)."""
    if claim.status == RunStatus.RUNNING:
        return claim.worker != this_worker() and not is_orphaned(claim.worker, claim.updated_at)
    return claim.status == RunStatus.QUEUED and queued_by_other_live_process(claim.worker)


def held_elsewhere(runs: RunStore, batches: BatchDriver, sample_id: int) -> bool:
    """Whether a live process other than this one holds a review of the sample: it drives the sample (a command
    line next to the app), which this desk must leave alone."""
    return any(held_by_a_live_process(c) for c in runs.claims(batches.store.run_ids(sample_id)).values())


def sample_left_behind(progress: SampleProgress, claims: dict[int, RunClaim], now: datetime) -> bool:
    """Whether a process that is gone left an unfinished sample (`claims`: its reviews' runs), judged from its runs:
    one the sweep marked interrupted (its process died while running it), one queued that `queued_left_behind`
    says nobody will pick up, or every review in but the sample not closed for QUEUED_ORPHAN_S (a live driver
    closes it within a second of its last review). Never while a live process holds one of its runs. A sample with
    no run yet (a Message Batch at the API, or one just drawn) says nothing of its driver: the desk's start takes
    it."""
    if any(held_by_a_live_process(c) for c in claims.values()):
        return False
    if progress.finished:
        last = progress.last_activity or progress.created_at
        return (now - last).total_seconds() > QUEUED_ORPHAN_S
    return any(
        (c.status == RunStatus.INTERRUPTED and c.note == SWEPT_NOTE)
        or (c.status == RunStatus.QUEUED and queued_left_behind(c.updated_at, c.worker, now))
        for c in claims.values()
    )


def pick_up_samples(runs: RunStore, batches: BatchDriver) -> list[int]:
    """Each unfinished sample of a batch that is not paused, which a process that is gone left behind
    (`sample_left_behind`) and this process does not drive: driven by this desk's driver, or closed (and grouped)
    when every review is in; their ids."""
    now, taken = datetime.now(UTC), []
    for sample_id in batches.store.unfinished_samples():
        progress = batches.store.progress(sample_id)
        if batches.driving(sample_id) or batches.store.is_paused(progress.batch_id):
            continue
        if sample_left_behind(progress, runs.claims(batches.store.run_ids(sample_id)), now):
            if progress.finished:
                batches.close(sample_id)
            else:
                batches.drive(sample_id)
            taken.append(sample_id)
    return taken


def resubmit_queued(runs: RunStore, runner: Runner) -> list[int]:
    """At app start (and on each sweep): queued runs a dead process left behind go to this runner (the claim is
    atomic, so a run another process claims first is skipped). Batch sample runs are their batch driver's."""
    now = datetime.now(UTC)
    ids = [r.id for r in runs.runs_to_resume() if r.status == RunStatus.QUEUED and left_behind(r, now)]
    for run_id in ids:
        runner.submit(run_id)
    return ids


def sweep(runs: RunStore, runner: Runner, batches: BatchDriver | None = None) -> list[int]:
    """One look for runs a process that is gone left behind (a killed command line, a crash between committing a
    run and handing it to a runner): `running` ones become interrupted (a person resumes them), queued ones go to
    this runner; their ids. Not batch sample runs: with `batches`, the samples such a process left behind are
    driven by this desk's driver (`pick_up_samples`: never a paused batch's), and closed samples whose failures
    are not grouped yet are grouped (`BatchDriver.group_finished`)."""
    swept = runs.mark_interrupted(SWEPT_NOTE) + resubmit_queued(runs, runner)
    if batches is not None:
        pick_up_samples(runs, batches)
        batches.group_finished()
    return swept


def start_sweeping(
    runs: RunStore, runner: Runner, batches: BatchDriver | None = None, every_s: float | None = None
) -> threading.Event:
    """Sweep every `every_s` (SWEEP_EVERY_S) on a daemon thread until the returned event is set or the runner
    stops: what the app on SQLite does instead of the task engine's workers."""
    stop = threading.Event()
    every = SWEEP_EVERY_S if every_s is None else every_s

    def loop() -> None:
        while not stop.wait(every) and not runner.stopping:
            try:
                sweep(runs, runner, batches)
            except Exception:  # noqa: BLE001 - the database may be busy or away: the next sweep tries again
                log.exception("the sweep for runs left behind failed; trying again in %g s", every)

    threading.Thread(target=loop, name="santa-sweep", daemon=True).start()
    return stop
