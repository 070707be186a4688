"""Reviewer slots filled by people (`storage.slots`): a slot assigned to someone else is refused,
one person never fills both slots of a round, only people who may review fill one and only
assigners assign it, a person never fills a model's slot nor overwrites a review, and a run is
blind only while a reviewer is waited for; on SQLite and, when SANTA_TEST_POSTGRES_URL is set,
on PostgreSQL.
"""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from santa_core.models import EscalationReason, ReviewOutcome, ReviewStatus
from santa_core.reviewers.base import PERSON
from santa_core.roles import PermissionDenied
from santa_core.run import actions
from storage.errors import SlotAssigned
from storage.runs import RunStore
from storage.tables import AuditEventRow, ReviewRow, RunRow
from tests.support import people_runs
from tests.support.people import ADMIN, AUTHOR, EDITOR, OFFICER, STRANGER, VIEWER
from tests.support.people_runs import S, _review, count, escalate, events, make_runner, new_run

engine, repo = people_runs.engine, people_runs.repo  # the fixtures (an imported name would trip ruff's F811)


# --- person reviewer slots ------------------------------------------------------------------------


def test_a_slot_assigned_to_someone_else_is_refused(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo, reviewer_b=PERSON, reviewer_c=PERSON, person_c=OFFICER)
    audited = count(engine, AuditEventRow)
    with pytest.raises(SlotAssigned, match=f"slot C of run {run_id} is assigned to {OFFICER}, not {EDITOR}"):
        actions.submit_person_review(repo, run_id, "C", _review(), EDITOR)
    assert count(engine, ReviewRow) == 0 and count(engine, AuditEventRow) == audited
    actions.submit_person_review(repo, run_id, "C", _review(), OFFICER)
    actions.submit_person_review(repo, run_id, "B", _review(), EDITOR)  # B is anyone's
    assert {s: r.reviewer for s, r in repo.load_round(run_id, 1).reviews.items()} == {
        "B": f"person:{EDITOR}",
        "C": f"person:{OFFICER}",
    }
    assert [a for a, action in events(repo, run_id=run_id) if action == "review.saved"] == [OFFICER, EDITOR]


def test_one_person_cannot_fill_both_slots_of_a_round(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo, reviewer_b=PERSON, reviewer_c=PERSON)
    assert make_runner(repo).execute(run_id).status == S.AWAITING_HUMAN_REVIEW
    actions.submit_person_review(repo, run_id, "B", _review(), EDITOR)
    [pending] = repo.pending_human_reviews()
    assert (pending.slot, pending.assignee, pending.filled_other_slot_by) == ("C", None, EDITOR)
    with pytest.raises(SlotAssigned, match="different reviewers"):
        actions.submit_person_review(repo, run_id, "C", _review(), EDITOR)
    assert count(engine, ReviewRow, slot="C") == 0
    assert actions.submit_person_review(repo, run_id, "C", _review(), OFFICER).status == S.QUEUED


@pytest.mark.parametrize(
    "actor",
    [pytest.param(VIEWER, id="viewer"), pytest.param(AUTHOR, id="author"), pytest.param(STRANGER, id="stranger")],
)
def test_people_who_may_not_review_cannot_fill_a_slot(repo: RunStore, engine: Engine, actor: str) -> None:
    run_id = new_run(repo, reviewer_c=PERSON)
    with pytest.raises(PermissionDenied, match="may not fill a person reviewer slot"):
        actions.submit_person_review(repo, run_id, "C", _review(), actor)
    assert count(engine, ReviewRow) == 0


def test_slots_are_assigned_only_to_reviewers_by_assigners(repo: RunStore, engine: Engine) -> None:
    with pytest.raises(PermissionDenied, match=f"{VIEWER}"):  # at creation: only someone who may review
        new_run(repo, reviewer_c=PERSON, person_c=VIEWER)
    assert count(engine, RunRow) == 0
    run_id = new_run(repo, reviewer_c=PERSON)
    with pytest.raises(PermissionDenied, match="may not assign"):
        repo.assign_person_slot(run_id, "C", EDITOR, actor=EDITOR)
    with pytest.raises(PermissionDenied, match="may not fill a person reviewer slot"):
        repo.assign_person_slot(run_id, "C", AUTHOR, actor=OFFICER)
    repo.assign_person_slot(run_id, "C", EDITOR, actor=OFFICER)
    assert repo.get_run_view(run_id).person_c == EDITOR
    with pytest.raises(SlotAssigned):
        actions.submit_person_review(repo, run_id, "C", _review(), OFFICER)
    repo.assign_person_slot(run_id, "C", None, actor=ADMIN)  # anyone again
    actions.submit_person_review(repo, run_id, "C", _review(), OFFICER)
    assert [e.detail for e in repo.audit.events(action="review.assigned", newest_first=False)] == [
        {"slot": "C", "before": None, "person": EDITOR},
        {"slot": "C", "before": EDITOR, "person": None},
    ]


def _person_outcome(person: str, slot: str = "C", verdict: str = "PASS") -> ReviewOutcome:
    review = _review().model_copy(update={"verdict": verdict})
    return ReviewOutcome(
        slot=slot,
        reviewer=f"person:{person}",
        status=ReviewStatus.OK,
        review=review,
        raw_response=review.model_dump_json(),
    )


@pytest.mark.parametrize("filled", [pytest.param(False, id="empty"), pytest.param(True, id="model-reviewed")])
def test_a_person_cannot_fill_a_models_slot(repo: RunStore, engine: Engine, filled: bool) -> None:
    run_id = new_run(repo, reviewer_c=PERSON)  # B is the model "b"
    if filled:
        assert make_runner(repo).execute(run_id).status == S.AWAITING_HUMAN_REVIEW
    reviews, audited = repo.load_round(run_id, 1).reviews, count(engine, AuditEventRow)
    for only_if_empty in (False, True):
        with pytest.raises(SlotAssigned, match=f"slot B of run {run_id} is reviewed by b, not by a person"):
            repo.save_review(run_id, 1, _person_outcome(EDITOR, "B"), only_if_empty=only_if_empty)
    with pytest.raises(SlotAssigned, match="not by a person"):
        actions.submit_person_review(repo, run_id, "B", _review(), EDITOR)
    assert repo.load_round(run_id, 1).reviews == reviews and count(engine, AuditEventRow) == audited


def test_a_person_never_overwrites_a_review(repo: RunStore, engine: Engine) -> None:
    run_id = new_run(repo, reviewer_c=PERSON)
    assert make_runner(repo).execute(run_id).status == S.AWAITING_HUMAN_REVIEW
    first = _person_outcome(EDITOR)
    assert repo.save_review(run_id, 1, first)
    audited = count(engine, AuditEventRow)
    # someone else, or the same person changing their verdict, even without only_if_empty
    for later in (_person_outcome(OFFICER, verdict="FAIL"), _person_outcome(EDITOR, verdict="FAIL"), first):
        assert repo.save_review(run_id, 1, later) is False
    with pytest.raises(actions.ActionError, match="already has a review \\(someone was faster\\)"):
        actions.submit_person_review(repo, run_id, "C", _review(), OFFICER)
    assert repo.load_round(run_id, 1).reviews["C"] == first
    assert count(engine, ReviewRow, slot="C") == 1 and count(engine, AuditEventRow) == audited


def test_a_run_is_blind_only_while_a_reviewer_is_waited_for(repo: RunStore) -> None:
    """One rule on every page: blind while a person slot of the current round is open; an escalated or
    settled run waits for no reviewer, so its history and record show again (e.g. a budget stop)."""
    run_id = new_run(repo, reviewer_c=PERSON)
    assert repo.get_run_view(run_id).blind and run_id in repo.blind_run_ids()
    escalate(repo, run_id, EscalationReason.BUDGET)
    assert not repo.get_run_view(run_id).blind and run_id not in repo.blind_run_ids()
    repo.resolve_escalation(run_id, "ship_as_is", OFFICER, "fine as it is")
    assert not repo.get_run_view(run_id).blind and run_id not in repo.blind_run_ids()
    model_only = new_run(repo)
    assert not repo.get_run_view(model_only).blind and model_only not in repo.blind_run_ids()
