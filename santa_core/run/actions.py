"""What a person can do to a run, the one door every page and command goes through: start a run,
approve, edit or reject a fix, fill or assign a reviewer slot, resume an interrupted run, try a run the
model provider failed again, resolve, assign or re-date an escalation, report an escape.

A decision and the state change it causes are committed in one transaction, decided by the
engine. The caller hands the run back to the runner when the returned state is `queued`. The
store checks the actor's stored roles inside each write, so a refusal writes nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict, Unpack

from santa_core.models import (
    EscalationReason,
    FixProposal,
    Review,
    ReviewOutcome,
    ReviewStatus,
    Rubric,
    RunState,
    RunStatus,
    Slot,
)
from santa_core.run import engine
from santa_core.run.fixer import fixed_by_person
from santa_core.run.runner import SLOTS, advance_run
from santa_core.run.store import ActionStore, Closing, DecisionIn, RoundRecord, RunRecord, Source, Store, current_round
from santa_core.run.unchanged import UNCHANGED, approval_refusal, rereview_refusal
from santa_core.run.unreviewed import TRIED_AGAIN
from santa_core.scope import anchor
from santa_core.text import control_problem, text_problem
from santa_core.words import usd


class ActionError(ValueError):
    """The action cannot be taken (wrong state, missing justification, bad text)."""


def _require(store: Store, run_id: int, *statuses: RunStatus) -> RunRecord:
    run = store.load_run(run_id)
    if run.state.status not in statuses:
        wanted = " or ".join(s.value for s in statuses)
        raise ActionError(f"run {run_id} is {run.state.status.value}, not {wanted}")
    return run


def _check_text(text: str, what: str) -> str:
    if problem := text_problem(text, f"The {what}"):
        raise ActionError(f"{problem}.")
    return text


def _decide(
    store: Store,
    run_id: int,
    state: RunState,
    event: engine.Event,
    decision: DecisionIn,
    next_round_text: str | None = None,
) -> RunState:
    """Commit decision, next round and state change together, or nothing if someone was faster."""
    if problem := control_problem(decision.reason, "The reason"):
        raise ActionError(f"{problem}.")
    new = engine.advance(state, event)
    if not store.commit_decision(run_id, state, new, decision, next_round_text):
        raise ActionError(f"Run {run_id} changed meanwhile (someone else decided first). Reload to see it.")
    return new


STALE_PROPOSAL = (
    "The fix proposal changed while you were deciding (someone asked the fix agent again); "
    "nothing was recorded. Look at the new proposal and decide again."
)


def _current_proposal(store: Store, run_id: int, attempt: int | None) -> tuple[RunRecord, RoundRecord, FixProposal]:
    """The run, its round and the round's proposal, refused unless a proposal awaits approval, and (given `attempt`,
    the attempt the person was shown) it is still that one."""
    run = _require(store, run_id, RunStatus.AWAITING_APPROVAL)
    rnd = current_round(store, run)
    if rnd.proposal is None or (attempt is not None and rnd.fix_attempts != attempt):
        raise ActionError(STALE_PROPOSAL)
    return run, rnd, rnd.proposal


def rounds_up_to(store: Store, run_id: int, current: RoundRecord) -> list[RoundRecord]:
    """The run's stored rounds up to and including `current`, oldest first."""
    earlier = [store.load_round(run_id, n) for n in range(1, current.round_no)]
    return [r for r in earlier if r is not None] + [current]


def approve_fix(
    store: Store, run_id: int, actor: str, edited_text: str | None = None, reason: str = "", attempt: int | None = None
) -> RunState:
    """Approve the proposal (or the person's edit of it); the next round reviews that text.

    `attempt`: which of the round's proposals the person saw; a newer one refuses the approval.
    Refused, with nothing recorded, when the text is one the reviewers already judged (`approval_refusal`).
    """
    run, rnd, proposal = _current_proposal(store, run_id, attempt)
    proposed = proposal.proposed_text
    after = _check_text(edited_text, "edited output") if edited_text is not None else proposed
    if problem := approval_refusal(run.fixer, rounds_up_to(store, run_id, rnd), after):
        raise ActionError(f"{UNCHANGED}{problem}")
    decision = DecisionIn(
        action="approve" if after == proposed else "edit",
        actor=actor,
        reason=reason.strip(),
        before_text=rnd.output_text,
        after_text=after,
    )
    return _decide(store, run_id, run.state, engine.Approve(), decision, next_round_text=after)


def reject_fix(store: Store, run_id: int, actor: str, reason: str, attempt: int | None = None) -> RunState:
    """Reject the proposal; the run escalates to a person."""
    run, rnd, proposal = _current_proposal(store, run_id, attempt)
    if not reason.strip():
        raise ActionError("Say why you reject the fix; the reason goes to the escalation.")
    decision = DecisionIn(
        action="reject", actor=actor, reason=reason, before_text=rnd.output_text, after_text=proposal.proposed_text
    )
    return _decide(store, run_id, run.state, engine.Reject(), decision)


MAX_FIX_ATTEMPTS = 3
"""Proposals a round may have: the first and two more asked for by a person."""


def retry_fix(store: Store, run_id: int, actor: str, reason: str = "", attempt: int | None = None) -> RunState:
    """Set the proposal aside and ask the fix agent again (same round, a counted and paid attempt).

    The caller hands the run back to the runner (the returned state is `queued`).
    """
    run, rnd, proposal = _current_proposal(store, run_id, attempt)
    if budget_spent(run.budget_usd, run.spent_usd):
        raise ActionError(
            "The run's budget is spent, so the fix agent cannot be asked again; approve, edit or reject this proposal."
        )
    if fixed_by_person(run.fixer, rnd.output_text, rnd.gate.issues if rnd.gate else []):
        raise ActionError("This fix is written by a person; there is no fix agent to ask again.")
    if rnd.fix_attempts >= MAX_FIX_ATTEMPTS:
        raise ActionError(
            f"The fix agent was asked {rnd.fix_attempts} times in this round, the most a round allows; "
            "approve, edit or reject this proposal."
        )
    decision = DecisionIn(
        action="retry_fix",
        actor=actor,
        reason=reason.strip() or "ask the fix agent again",
        before_text=rnd.output_text,
        after_text=proposal.proposed_text,
    )
    return _decide(store, run_id, run.state, engine.RetryFix(), decision)


def submit_person_review(store: Store, run_id: int, slot: Slot, review: Review, actor: str) -> RunState:
    """A person fills a reviewer slot; once both slots are in the run goes back to the queue."""
    run = _require(store, run_id, RunStatus.AWAITING_HUMAN_REVIEW, RunStatus.RUNNING, RunStatus.QUEUED)
    rnd = current_round(store, run)
    _check_person_review(review, run.rubric, rnd.output_text)
    outcome = ReviewOutcome(
        slot=slot,
        reviewer=f"person:{actor}",
        status=ReviewStatus.OK,
        review=review,
        raw_response=review.model_dump_json(),
    )
    # The check and the write are one transaction: of two people filling a slot, the first counts.
    if not store.save_review(run_id, rnd.round_no, outcome, only_if_empty=True):
        raise ActionError(f"Slot {slot} of round {rnd.round_no} already has a review (someone was faster).")
    run = store.load_run(run_id)
    rnd = current_round(store, run)
    if run.state.status == RunStatus.AWAITING_HUMAN_REVIEW and all(s in rnd.reviews for s in SLOTS):
        return advance_run(store, run_id, run.state, engine.HumanReviewSubmitted(), actor)
    return run.state


def _check_person_review(review: Review, rubric: Rubric, output: str) -> None:
    """A person's review judges every criterion, and what it quotes stands in the output (fail closed)."""
    seen = {c.criterion for c in review.checks}
    if missing := [c for c in rubric.criterion_ids() if c not in seen]:
        raise ActionError(f"Judge every criterion before submitting; not judged: {', '.join(missing)}.")
    if stray := [i.evidence for i in review.critical_issues if i.evidence and anchor(output, i.evidence)[0] is None]:
        raise ActionError(f"A quoted text must stand in the output word for word, at one place: {stray[0][:80]!r}.")


def resume(store: Store, run_id: int, actor: str) -> RunState:
    """Put an interrupted run back in the queue; it continues from its last committed step."""
    run = _require(store, run_id, RunStatus.INTERRUPTED)
    return advance_run(store, run_id, run.state, engine.Resume(), actor)


class RunOptions(TypedDict, total=False):
    """What a new run may set beyond its texts, rubric and panel (`ActionStore.create_run`'s defaults otherwise)."""

    auto_approve: bool
    budget_usd: float | None
    max_rounds: int
    source: Source
    person_b: str | None
    person_c: str | None
    generation_cost_usd: float | None
    reviewer_d: str | None


def start_run(
    store: ActionStore,
    spec: str,
    output: str,
    rubric: Rubric,
    reviewer_b: str,
    reviewer_c: str,
    fixer: str,
    actor: str,
    **options: Unpack[RunOptions],
) -> int:
    """Commit a queued run (round 1 holds `output`); its id. The caller submits it to the runner.

    `options`: auto_approve, budget_usd, max_rounds, source, person_b, person_c, generation_cost_usd, reviewer_d
    (the third reviewer, required by a rubric with high-risk criteria: `santa_core.run.third`).
    """
    return store.create_run(
        spec=spec,
        output=output,
        rubric=rubric,
        reviewer_b=reviewer_b,
        reviewer_c=reviewer_c,
        fixer=fixer,
        created_by=actor,
        **options,
    )


def budget_spent(budget_usd: float | None, spent_usd: float) -> bool:
    """Whether a run with this budget has spent it: no further paid round or fix may start."""
    return budget_usd is not None and spent_usd >= budget_usd


def refuse_over_budget(budget_usd: float | None, spent_usd: float, doing: str) -> None:
    """A paid round asked for when the run's budget is spent: refused with the reason, nothing recorded. Asked here
    (a clear message before anything is opened) and again by the store inside its write (every door)."""
    if budget_spent(budget_usd, spent_usd):
        raise ActionError(
            f"The run's budget ({usd(budget_usd or 0.0)}) is spent ({usd(spent_usd)}), so {doing} "
            "would pay beyond it; nothing was recorded. Ship it as is or reject it on the Escalations "
            "page, with your justification."
        )


def _refuse_over_budget(run: RunRecord, doing: str) -> None:
    refuse_over_budget(run.budget_usd, run.spent_usd, doing)


def try_again(
    store: ActionStore, run_id: int, actor: str, reason: str = "", escalation_id: int | None = None
) -> RunState:
    """Ask again for a run the model provider failed (`could_not_review`): a new round of the same text, a counted
    and paid attempt under the run's budget; its escalation closes as "tried again". The caller hands the run back
    to the runner (the returned state is `queued`). The store checks the person's roles inside the write."""
    run = _require(store, run_id, RunStatus.ESCALATED)
    if run.state.escalation_reason != EscalationReason.PROVIDER_FAILED:
        raise ActionError(
            f"Run {run_id} was judged, not stopped by the model provider, so there is nothing to try "
            "again; resolve its escalation on the Escalations page."
        )
    return resolve_escalation(
        store, run_id, "try_again", actor, reason.strip() or TRIED_AGAIN, escalation_id=escalation_id
    )


def resolve_escalation(
    store: ActionStore,
    run_id: int,
    resolution: Closing,
    actor: str,
    justification: str,
    edited_output: str | None = None,
    escalation_id: int | None = None,
) -> RunState:
    """Ship as is, re-review (optionally an edited output), try again (`try_again`) or reject an escalated run, with
    why.

    A re-review of a text both reviewers already judged is refused with nothing recorded (`rereview_refusal`);
    after a reviewer error, a failed screen, a budget stop or an interruption it is the way to an answer. A
    re-review or a try again of a run whose budget is spent is refused: it would start a paid round.
    """
    if problem := control_problem(justification, "The justification"):
        raise ActionError(f"{problem}.")
    if resolution in ("rereview", "try_again"):
        _refuse_over_budget(store.load_run(run_id), "another round" if resolution == "rereview" else "trying again")
    if resolution == "rereview" and justification.strip():
        run = store.load_run(run_id)  # (another state or no justification: the store refuses, as ever)
        rnd = store.load_round(run_id, run.state.round) if run.state.status == RunStatus.ESCALATED else None
        text = edited_output if edited_output is not None else rnd.output_text if rnd else ""
        if rnd is not None and (problem := rereview_refusal(rounds_up_to(store, run_id, rnd), text)):
            raise ActionError(f"{UNCHANGED}{problem}")
    return store.resolve_escalation(run_id, resolution, actor, justification, edited_output, escalation_id)


def assign_escalation(
    store: ActionStore, run_id: int, owner: str | None, actor: str, escalation_id: int | None = None
) -> None:
    """Give the run's open escalation an owner who may resolve it (None: unassign)."""
    store.assign_escalation(run_id, owner, actor, escalation_id)


def set_due(store: ActionStore, run_id: int, due_at: datetime, actor: str, escalation_id: int | None = None) -> None:
    """Set or change the due time of the run's open escalation."""
    store.set_due(run_id, due_at, actor, escalation_id)


def assign_reviewer(store: ActionStore, run_id: int, slot: Slot, person: str | None, actor: str) -> None:
    """Assign a person reviewer slot to someone who may review (None: anyone may take it)."""
    store.assign_person_slot(run_id, slot, person, actor)


def report_escape(store: ActionStore, run_id: int, criterion: str, description: str, severity: str, actor: str) -> int:
    """Record a defect found after the run shipped; its id."""
    return store.report_escape(run_id, criterion, description, severity, actor)


def interrupt_orphans(store: ActionStore) -> list[int]:
    """Runs whose worker process is gone become `interrupted` (resumable); their ids. Code acts here, not a person."""
    return store.mark_interrupted()
