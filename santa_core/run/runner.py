"""Executes runs on a process-wide thread pool and persists every step as it happens.

A worker never touches the UI. Each step (a review, the gate, a proposal, a decision, a state
change) is committed through the `Store` before the next one starts, so a run can always be
resumed from its last committed step.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from contextlib import AbstractContextManager
from typing import TypeVar

from santa_core.checks import precheck_issues, run_criterion_checks
from santa_core.checks.echo import compromised
from santa_core.checks.injection import UNFINISHED
from santa_core.checks.screen import SCREEN_FAILED, screened_text
from santa_core.models import (
    GateDecision,
    GateResult,
    ReviewOutcome,
    ReviewStatus,
    RunState,
    RunStatus,
    ScreenCheck,
    ScreenResult,
    ScreenRole,
    Slot,
    screen_entry,
)
from santa_core.pricing import estimate_call_usd
from santa_core.providers import scrub_keys
from santa_core.reviewers.base import PERSON, Fixer, Reviewer, ReviewRequest, Screen, journaled
from santa_core.reviewers.calls import UnavailableModel
from santa_core.run import engine
from santa_core.run.fixer import fixed_by_person, is_complete, person_fix, propose_fix
from santa_core.run.gate import PRECHECK, blocked, checked_out, decide, screened
from santa_core.run.store import Conflict, DecisionIn, RoundRecord, RunRecord, Store, current_round
from santa_core.run.unchanged import already_judged, judged_before
from santa_core.run.unreviewed import could_not_review
from santa_core.text import sha256_text

log = logging.getLogger(__name__)

T = TypeVar("T")
SLOTS: tuple[Slot, Slot] = ("B", "C")
"""The two reviewers of every round (a person may fill either); D is added by `panel_slots` when a rubric asks."""
__all__ = ["SLOTS", "Conflict", "Runner", "advance_run", "open_person_slots", "panel_slots", "reviewer_of"]


def reviewer_of(run: RunRecord, slot: Slot) -> str:
    """The model (or "person") filling a slot; works for any run record or view ("" for a D the run has not)."""
    if slot == "D":
        return getattr(run, "reviewer_d", None) or ""
    return run.reviewer_b if slot == "B" else run.reviewer_c


def panel_slots(run: RunRecord) -> tuple[Slot, ...]:
    """The slots that judge the run's rounds: B and C, and D when the rubric has high-risk criteria and the run
    names a model for it. A D the rubric asks for and the run lacks is not asked: the gate counts it as an error."""
    third = reviewer_of(run, "D")
    return (*SLOTS, "D") if run.rubric.third_reviewer_ids() and third and third != PERSON else SLOTS


def open_person_slots(run: RunRecord, reviews: dict) -> list[Slot]:
    """Slots a person fills that have no review yet."""
    return [s for s in SLOTS if reviewer_of(run, s) == PERSON and s not in reviews]


def _caused_by_conflict(exc: BaseException | None) -> bool:
    """Whether a Conflict (someone else changed the run, or holds its claim now) lies anywhere in the chain."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, Conflict):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def advance_run(store: Store, run_id: int, state: RunState, event: engine.Event, actor: str) -> RunState:
    """Apply an engine event and commit the new state with compare-and-set."""
    new = engine.advance(state, event)
    if not store.transition(run_id, {state.status}, new, actor, new.note):
        raise Conflict(f"run {run_id} changed while {type(event).__name__} was being applied")
    return new


def _request_for(slot: Slot, request: ReviewRequest) -> ReviewRequest:
    """What a slot is asked: B and C the whole rubric; D only its high-risk criteria (the part it gates on, at a
    fraction of the tokens; the rest B and C already judge twice)."""
    if slot != "D":
        return request
    return request.model_copy(update={"rubric": request.rubric.high_risk()})


class Runner:
    """Runs the method for stored runs; `submit` is safe to call twice (the claim is atomic)."""

    def __init__(
        self,
        store: Store,
        reviewer_for: Callable[[str], Reviewer],
        fixer_for: Callable[[str], Fixer],
        workers: int = 4,
        screen_for: Callable[[], Screen | None] = lambda: None,
    ) -> None:
        self.store = store
        self.reviewer_for = reviewer_for
        self.fixer_for = fixer_for
        self.screen_for = screen_for
        """The known-answer screen for the next round (None: screening is off). Read through `screen_now`."""
        self._screening: dict[tuple[str, str, str], Future] = {}
        """Screens in flight by (text hash, model, check), so one text is screened by each check once at a time."""
        self._screening_lock = threading.Lock()
        self._stopping = threading.Event()
        """Set by `stop`: no step starts and no request leaves any more."""
        self._active: set[int] = set()
        """Runs this runner has claimed and is working on."""
        self._active_lock = threading.Lock()
        self.workers = workers
        """Runs worked on at once; more wait in the pool's queue."""
        self._in_pool: dict[int, Future] = {}
        """Runs submitted that no thread has started yet, with their futures."""
        self._in_pool_lock = threading.Lock()
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="santa-run")
        # A separate pool for reviewer calls so a run waiting on its two reviewers can never
        # starve the pool its own reviewers need (no deadlock when every run worker is busy).
        self.review_pool = ThreadPoolExecutor(2 * workers, thread_name_prefix="santa-review")

    def submit(self, run_id: int) -> Future:
        """Queue the run on the pool; returns the future of `execute`. A run still waiting in the pool is not
        queued twice (its future is returned): the desk's sweep hands over queued runs this runner may hold."""
        with self._in_pool_lock:
            future = self._in_pool.get(run_id)
            if future is None:
                future = self._in_pool[run_id] = self.pool.submit(self._start, run_id)
            return future

    def _start(self, run_id: int) -> RunState:
        """A pool thread takes the run: from now on a submit queues it again (it reads the state afresh)."""
        with self._in_pool_lock:
            self._in_pool.pop(run_id, None)
        return self.execute(run_id)

    def execute(self, run_id: int) -> RunState:
        """Claim a queued run and drive it until it needs a person or finishes."""
        run = self.store.load_run(run_id)
        if run.state.status != RunStatus.QUEUED or self._stopping.is_set():
            return run.state
        with self._active_lock:  # before the claim: a claim of this process is never seen without its thread
            self._active.add(run_id)
        try:
            advance_run(self.store, run_id, run.state, engine.Claim(), "worker")
            return self._drive(run_id)
        except Conflict:
            return self.store.load_run(run_id).state
        except Exception as exc:  # noqa: BLE001 - never leave a run stuck in `running`
            if _caused_by_conflict(exc):  # e.g. a request refused because another process claimed the run since
                return self.store.load_run(run_id).state
            if self._stopping.is_set():  # e.g. the pools refuse work at interpreter exit: the stop decides
                log.warning("run %s stopped: %s: %s", run_id, type(exc).__name__, exc)
                return self.store.load_run(run_id).state
            log.exception("run %s failed", run_id)
            return self._interrupt(run_id, f"worker error: {type(exc).__name__}: {exc}")
        finally:
            with self._active_lock:
                self._active.discard(run_id)

    def stop_all(self, note: str) -> list[int]:
        """Stop (see `stop`) and mark every run this runner is working on interrupted with `note`; their ids.
        Answers already in stay stored; one arriving later is still stored (it was paid for)."""
        self.stop()
        with self._active_lock:
            active = sorted(self._active)
        return [i for i in active if self._interrupt(i, note).status == RunStatus.INTERRUPTED]

    def _stopped(self, failed: bool) -> bool:
        """True for a failed answer that came back after `stop`: it may be the refusal to send, so it is
        not stored (a resume asks again) and decides nothing. A real answer is stored whenever it comes."""
        return failed and self._stopping.is_set()

    def working_on(self, run_id: int) -> bool:
        """Whether a thread of this runner drives the run right now."""
        with self._active_lock:
            return run_id in self._active

    def active_runs(self) -> set[int]:
        """The runs this runner's threads drive now."""
        with self._active_lock:
            return set(self._active)

    @property
    def stopping(self) -> bool:
        """Whether `stop` was called: no step starts any more."""
        return self._stopping.is_set()

    def stop(self) -> None:
        """Take no new work (a signal, a shutdown): no further step starts, no further request leaves."""
        self._stopping.set()

    def screen_now(self) -> Screen | None:
        """The known-answer screen for a round starting now; None only when screening is off. A screen that cannot
        even be set up (the settings cannot be read, a client cannot be built) is one whose every answer is that
        error: fail closed, never an unscreened round."""
        try:
            return self.screen_for()
        except Exception as exc:  # noqa: BLE001 - any failure to build the screen stops the round, with the reason
            return UnavailableModel(
                "injection screen", scrub_keys(f"the screen could not be set up: {type(exc).__name__}: {exc}")
            )

    def screen_problem(self, reviewers: Iterable[str] | None = None) -> str | None:
        """Why a round with these reviewers (None: any with a model) would stop at its screen before any reviewer is
        asked (the screen is on and cannot run here), else None. The pages and the command line say it before
        Start; the round itself fails closed whatever they say."""
        screen = self.screen_now()
        if isinstance(screen, UnavailableModel) and (reviewers is None or any(r != PERSON for r in reviewers)):
            return f"the injection screen is on but cannot run: {screen.problem}"
        return None

    def _interrupt(self, run_id: int, note: str) -> RunState:
        """Mark the run interrupted; if even that fails, the next app start will (worker gone)."""
        try:
            state = self.store.load_run(run_id).state
            if state.status == RunStatus.RUNNING:
                return advance_run(self.store, run_id, state, engine.Interrupt(note=note), "system")
            return state
        except Exception:  # noqa: BLE001 - the database itself may be what failed
            log.exception("run %s could not be marked interrupted", run_id)
            return RunState(status=RunStatus.RUNNING, note=note)

    def _drive(self, run_id: int) -> RunState:
        """Run rounds while the run stays `running`."""
        while True:
            run = self.store.load_run(run_id)
            if run.state.status != RunStatus.RUNNING or self._stopping.is_set():
                return run.state
            self._step(run)

    def _over_budget(self, run: RunRecord) -> bool:
        return run.budget_usd is not None and run.spent_usd >= run.budget_usd

    def _step(self, run: RunRecord) -> None:
        """One committed step of the current round: reviews+gate, or the fix proposal."""
        rnd = current_round(self.store, run)
        if self._over_budget(run):
            advance_run(self.store, run.id, run.state, engine.BudgetExceeded(), "system")
        elif rnd.gate is None:
            self._review_round(run, rnd)
        elif rnd.proposal is None and run.state.note != engine.FIXING:
            # Resumed after the gate was stored but before its state change was: re-apply it.
            self._apply_gate(run, rnd.gate)
        else:
            self._fix(run, rnd, rnd.gate)

    def _review_round(self, run: RunRecord, rnd: RoundRecord) -> None:
        """Fresh reviewers for this round, concurrently; each review committed as it arrives."""
        earlier = (self.store.load_round(run.id, n) for n in range(rnd.round_no - 1, 0, -1))
        if (judged := judged_before(earlier, rnd.output_text)) is not None:
            # The last line of defence (the actions refuse this first): fail closed to a person, who
            # edits the text, ships it as is or rejects it. No gate is stored: nobody reviewed this round.
            why = f"round {rnd.round_no} not reviewed: {already_judged(judged)}; edit it, ship it as is or reject it"
            advance_run(
                self.store, run.id, run.state, engine.Gate(GateDecision.NAUGHTY, reviewer_error=True, why=why), "system"
            )
            return
        outcomes = run_criterion_checks(run.rubric, rnd.output_text)
        prechecks = precheck_issues(run.rubric, rnd.output_text, outcomes, spec=run.spec)
        if any(i.criterion == "injection" for i in prechecks):
            # Deterministic checks come first: an output that tries to instruct the reviewers
            # cannot ship whatever they say, so no reviewer is paid to read it.
            self._finish_round(run, rnd, blocked(prechecks).model_copy(update={"checks": outcomes}))
            return
        screens = self._screens(run, rnd)
        if self._stopping.is_set():
            return  # a screen refused because the desk is stopping decides nothing
        caught = screened(screens)
        if caught is not None:
            # The known-answer screen decides before the reviewers too: a text that took over the
            # screening model would take over a reviewer, and a screen that failed cannot vouch.
            self._finish_round(run, rnd, caught.model_copy(update={"checks": outcomes}))
            return
        if prechecks and not rnd.reviews:
            # A critical check failed: no verdict could ship this text, so no reviewer is paid to read it; the fix
            # agent gets the checks' issues and fresh reviewers judge the fixed text (reviews already in are used).
            self._finish_round(run, rnd, checked_out(prechecks).model_copy(update={"checks": outcomes}))
            return
        request = ReviewRequest(rubric=run.rubric, spec=run.spec, output=rnd.output_text)
        reviews = dict(rnd.reviews)
        missing = [s for s in panel_slots(run) if s not in reviews and reviewer_of(run, s) != PERSON]
        futures = {self._call(self._review, run, rnd.round_no, s, _request_for(s, request)): s for s in missing}
        failed: BaseException | None = None
        for fut in as_completed(futures):
            # Each answer is committed the moment it arrives, whatever happens to the other reviewer.
            try:
                outcome = fut.result()
                if self._stopped(outcome.status != ReviewStatus.OK):
                    continue
                self.store.save_review(run.id, rnd.round_no, outcome)
            except Exception as exc:  # noqa: BLE001 - raised below, once the other answer is saved
                failed = failed or exc
                continue
            reviews[outcome.slot] = outcome
        if failed is not None:
            raise failed
        if self._stopping.is_set():
            return
        if any(s not in reviews for s in SLOTS):
            self._wait_for_person(run)
            return
        gate = decide(
            reviews["B"],
            reviews["C"],
            prechecks,
            run.rubric.criterion_ids(),
            run.rubric.advisory_ids(),
            d=reviews.get("D"),
            third=run.rubric.third_reviewer_ids(),
        )
        # The check outcomes are stored with the gate they fed, so the run page shows what was decided on.
        self._finish_round(run, rnd, gate.model_copy(update={"checks": outcomes}))

    def _screens(self, run: RunRecord, rnd: RoundRecord) -> list[ScreenResult]:
        """The round's screen of its spec and output read together: a stored one kept, else screened
        (committed as it arrives)."""
        screen = self.screen_now()
        if screen is None:
            return []
        if isinstance(screen, UnavailableModel) and all(reviewer_of(run, s) == PERSON for s in panel_slots(run)):
            # Only people review this round: no model reviewer to take over. The screen helps them when it can run
            # (a take-over is still an injection); it is not required for a panel of people.
            return []
        role: ScreenRole = "spec and output"
        text = screened_text(run.spec, rnd.output_text)
        # Both model checks of the screen, each its own call (own fence, own nonce: one sentence must not beat
        # both), at once. A stored result counts only for the text it screened (a round's text is fixed once
        # reviewed), so a resumed round asks only what it has no answer to.
        asks: dict[ScreenCheck, Callable[[], ScreenResult]] = {
            "key": lambda: screen.screen(text, role),
            "extraction": lambda: screen.extract(run.spec, rnd.output_text, role),
        }
        entries = {check: screen_entry(role, check) for check in asks}
        results = {
            entry: sc
            for entry, sc in rnd.screens.items()
            if entry in entries.values() and sc.text_hash == sha256_text(text)
        }
        futures = [
            self._call(self._screen_text, run.id, rnd.round_no, screen, role, check, text, ask)
            for check, ask in asks.items()
            if entries[check] not in results
        ]
        for fut in as_completed(futures):
            result = fut.result()
            results[result.entry] = result
        return [results[entries[check]] for check in asks]

    def _screen_text(
        self,
        run_id: int,
        round_no: int,
        screen: Screen,
        role: ScreenRole,
        check: ScreenCheck,
        text: str,
        ask: Callable[[], ScreenResult],
    ) -> ScreenResult:
        """One model check of a text, stored with the round: an earlier verdict of the same check for the same
        text and model when there is one, else `ask()`. Runs screening the same text at once share one call (a
        batch's identical items): the others wait for it, then read its stored verdict."""
        key = (sha256_text(text), screen.name, check)
        with self._screening_lock:
            flight = self._screening.get(key)
            mine = flight is None
            if flight is None:
                flight = self._screening[key] = Future()
        try:
            if not mine:
                flight.result()  # the other screen of this text is stored (or failed: then ask ourselves)
            known = self.store.screened(*key)
            if known is None:
                with self._journal(run_id, round_no, None):
                    result = ask()
            else:
                result = known.model_copy(update={"role": role, "cached": True, "cost_usd": 0.0, "calls": []})
            if not self._stopped(result.verdict == "error"):
                self.store.save_screen(run_id, round_no, result)
            return result
        finally:
            if mine:
                with self._screening_lock:
                    del self._screening[key]
                flight.set_result(None)

    def _call(self, fn: Callable[..., T], *args: object) -> Future:
        """Run a model call of this run's step on the reviewer pool, in the step's context (what the caller set for
        its work, e.g. that its writes wait for a database that went away, holds for its calls too)."""
        return self.review_pool.submit(contextvars.copy_context().run, fn, *args)

    def _finish_round(self, run: RunRecord, rnd: RoundRecord, gate: GateResult) -> None:
        """Commit the gate, then the state change it causes."""
        self.store.save_gate(run.id, rnd.round_no, gate)
        self._apply_gate(run, gate)

    def _journal(self, run_id: int, round_no: int, slot: Slot | None) -> AbstractContextManager[None]:
        """Every model call made inside is first committed as *sent* (the write-ahead call log)."""

        def on_send(purpose: str, model: str, body: dict) -> None:
            if self._stopping.is_set():
                raise RuntimeError("the desk is stopping")
            self.store.note_sent(run_id, round_no, slot, purpose, model, body, estimate_call_usd(model, body))

        return journaled(on_send)

    def _review(self, run: RunRecord, round_no: int, slot: Slot, request: ReviewRequest) -> ReviewOutcome:
        """Build a fresh reviewer for this call (no state carried between rounds); a PASS that echoes
        the output's verdict or instructions is stored as the reviewer error it is."""
        with self._journal(run.id, round_no, slot):
            outcome = self.reviewer_for(reviewer_of(run, slot)).review(request, slot)
        return compromised(outcome, request.output)

    def _wait_for_person(self, run: RunRecord) -> None:
        """Hand the run to a person; if their review landed meanwhile, put it back in the queue."""
        state = advance_run(self.store, run.id, run.state, engine.NeedHumanReview(), "worker")
        rnd = self.store.load_round(run.id, state.round)
        if rnd is not None and all(s in rnd.reviews for s in SLOTS):
            try:
                advance_run(self.store, run.id, state, engine.HumanReviewSubmitted(), "worker")
            except Conflict:
                return
            self.submit(run.id)

    def _apply_gate(self, run: RunRecord, gate: GateResult) -> None:
        # The escalation's note names what failed when no reviewer did: the screen, or a check that could not finish.
        why = next((r for r in gate.reasons if r.startswith(SCREEN_FAILED)), "") or next(
            (r.removeprefix(PRECHECK) for r in gate.reasons if r.startswith(PRECHECK + UNFINISHED)), ""
        )
        # Read back from the store: the round as committed (its screens, reviews and this gate) is what is judged.
        unreviewed = could_not_review(self.store.load_round(run.id, run.state.round))
        event = engine.Gate(
            gate.decision, gate.reviewer_error, gate.injection, gate.disagreement, len(gate.issues), why, unreviewed
        )
        advance_run(self.store, run.id, run.state, event, "gate")

    def _fix(self, run: RunRecord, rnd: RoundRecord, gate: GateResult) -> None:
        """Ask the fix agent (once per round) and either wait for a person or auto-approve; `gate`: the round's."""
        proposal = rnd.proposal
        attempts = rnd.fix_attempts
        by_person = fixed_by_person(run.fixer, rnd.output_text, gate.issues)
        if proposal is None:
            with self._journal(run.id, rnd.round_no, None):
                proposal = (
                    person_fix(rnd.output_text, gate.issues)
                    if by_person
                    else propose_fix(self.fixer_for(run.fixer), run.spec, rnd.output_text, gate.issues)
                )
            if self._stopped(proposal.error is not None):
                return
            self.store.save_proposal(run.id, rnd.round_no, proposal)
            attempts += 1
        # A proposal a person asked for again is theirs to look at: auto-approve takes only the first.
        why = proposal.error or (proposal.rejected[0].reason if proposal.rejected else "")
        event = engine.ProposalReady(
            applied=len(proposal.edits),
            why=why,
            auto_approve=run.auto_approve and attempts == 1,
            by_person=by_person,
            complete=is_complete(proposal),
        )
        new = engine.advance(run.state, event)
        if new.status != RunStatus.RUNNING:
            advance_run(self.store, run.id, run.state, event, "worker")
            return
        # Auto-approved: the decision, the next round and the state change commit together.
        decision = DecisionIn(
            action="auto_approve",
            actor="auto-approve",
            reason="run set to auto-approve fixes",
            before_text=rnd.output_text,
            after_text=proposal.proposed_text,
        )
        if not self.store.commit_decision(run.id, run.state, new, decision, proposal.proposed_text):
            raise Conflict(f"run {run.id} changed while its fix was being auto-approved")

    def shutdown(self) -> None:
        """Stop accepting work and wait for running steps to commit."""
        self.pool.shutdown(wait=True)
        self.review_pool.shutdown(wait=True)
