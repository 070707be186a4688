"""Pay only after permission: every door that makes a paid model call on a person's behalf asks that person's
stored roles before any request leaves. A viewer knocks on each door with the real adapters pointed at the
loopback Messages API: each door refuses (PermissionDenied, naming who may) and the model server receives no
request at all, not even once the desk has swept for runs left behind and its runner has nothing left to do.

The doors: a rubric trial and a re-check with a reviewer, Test connection, a batch's sample, resume and Try
again, a pattern's fix proposal, its per-item fixes and a new signature (which prepares them again), and the run
actions whose queued run the runner then pays for (start, approve, ask the fix agent again, resume, try again after
the model provider failed, re-review an escalation, a person's review that completes a round). The command line acts as `cli`, which is let through.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cached_property

import pytest

from desk import Desk, open_desk
from desk.wiring import sweep
from santa_core import config
from santa_core.models import RunStatus
from santa_core.providers import provider_of
from santa_core.roles import PermissionDenied
from santa_core.rubrics import actions as rubric_actions
from santa_core.run import actions
from storage.runs import RunStore
from tests.support.batch_page import seeded_batch
from tests.support.messages_api import MessagesStub, error_reply, repeat_key, santa_scenario
from tests.ui.test_run_page import CLEAN, DEFECTIVE, EDITOR, MODEL_B, MODEL_C, SPEC, VIEWER, driven_run, passing_review
from ui.providers import check_connection


class World:
    """What the doors act on, each piece made (through the stub, before counting) the first time a door needs it."""

    def __init__(self, repo: RunStore, stub: MessagesStub) -> None:
        self.repo, self.stub = repo, stub

    @cached_property
    def desk(self) -> Desk:
        """The desk the doors are knocked on: real model adapters, talking to the stub."""
        return open_desk(str(self.repo.engine.url), mark_interrupted=False)

    @cached_property
    def shipped(self) -> int:
        return driven_run(self.repo, CLEAN)

    @cached_property
    def awaiting(self) -> int:
        return driven_run(self.repo, DEFECTIVE)

    @cached_property
    def interrupted(self) -> int:
        run_id = driven_run(self.repo, DEFECTIVE)
        state = self.repo.load_run(run_id).state
        stopped = state.model_copy(update={"status": RunStatus.INTERRUPTED, "note": "the server stopped"})
        assert self.repo.transition(run_id, {RunStatus.AWAITING_APPROVAL}, stopped, "system")
        return run_id

    @cached_property
    def escalated(self) -> int:
        run_id = driven_run(self.repo, DEFECTIVE)
        actions.reject_fix(self.repo, run_id, EDITOR, "not like this")
        return run_id

    @cached_property
    def outage(self) -> int:
        """A run the model provider failed (its screen answered 500); the provider answers again afterwards."""
        self.stub.screen = lambda body: error_reply(500, "api_error", "Internal server error")
        run_id = driven_run(self.repo, CLEAN)
        self.stub.screen = repeat_key
        return run_id

    @cached_property
    def person_slot(self) -> int:
        return driven_run(self.repo, CLEAN, reviewer_c="person")

    @cached_property
    def batch(self) -> int:
        batch_id = seeded_batch(self.stub)
        self.stub.handler = santa_scenario
        return batch_id

    @cached_property
    def pattern(self) -> int:
        return self.desk.batches.store.patterns(self.batch)[0].id

    def reviewer(self):  # noqa: ANN201 - a model adapter
        return self.desk.runner.reviewer_for(MODEL_B)


DOORS: dict[str, Callable[[World], object]] = {
    "rubric-try-it": lambda w: rubric_actions.try_rubric(
        w.desk.rubrics, w.desk.rubrics.resolved("general"), CLEAN, VIEWER, SPEC, w.reviewer()
    ),
    "rubric-re-check": lambda w: rubric_actions.try_rubric(
        w.desk.rubrics,
        w.desk.rubrics.resolved("general"),
        CLEAN,
        VIEWER,
        SPEC,
        w.reviewer(),
        run_id=w.shipped,
        stored_version=1,
    ),
    "test-connection": lambda w: config.try_connection(w.desk.people, VIEWER, provider_of(MODEL_B), check_connection),
    "batch-next-sample": lambda w: w.desk.batches.sample(w.batch, VIEWER),
    "batch-resume": lambda w: w.desk.batches.resume(w.batch, VIEWER),
    "batch-try-again": lambda w: w.desk.batches.retry(w.batch, VIEWER),
    "batch-ask-the-fix-agent": lambda w: w.desk.batches.propose(w.pattern, VIEWER),
    "batch-prepare-each-items-fix": lambda w: w.desk.batches.prepare(w.pattern, VIEWER),
    "batch-fixes-try-again": lambda w: w.desk.batches.retry_fixes(w.pattern, VIEWER),
    "batch-new-signature": lambda w: w.desk.batches.set_signature(w.pattern, "guaranteed forever", VIEWER),
    "run-start": lambda w: actions.start_run(
        w.desk.runs, SPEC, CLEAN, w.desk.rubrics.resolved("general"), MODEL_B, MODEL_C, MODEL_B, VIEWER
    ),
    "run-approve-fix": lambda w: actions.approve_fix(w.desk.runs, w.awaiting, VIEWER),
    "run-ask-the-fix-agent-again": lambda w: actions.retry_fix(w.desk.runs, w.awaiting, VIEWER),
    "run-resume": lambda w: actions.resume(w.desk.runs, w.interrupted, VIEWER),
    "run-try-again": lambda w: actions.try_again(w.desk.runs, w.outage, VIEWER),
    "escalation-re-review": lambda w: actions.resolve_escalation(
        w.desk.runs, w.escalated, "rereview", VIEWER, "try again", edited_output=CLEAN
    ),
    "person-review": lambda w: actions.submit_person_review(
        w.desk.runs, w.person_slot, "C", passing_review(w.repo), VIEWER
    ),
}
"""door -> knock on it as a viewer. Written out by hand: a new paid door belongs here."""


@pytest.fixture
def world(desk_env: RunStore, messages_stub: MessagesStub) -> Iterator[World]:
    w = World(desk_env, messages_stub)
    yield w
    if "desk" in w.__dict__:
        w.desk.close()


@pytest.mark.parametrize("door", list(DOORS))
def test_a_viewer_is_refused_at_every_paid_door_before_any_request_leaves(world: World, door: str) -> None:
    _prepare(world, door)
    sent = len(world.stub.calls)
    with pytest.raises(PermissionDenied, match=f"^{re.escape(VIEWER)} \\(viewer\\) may not .+; an? .+ may\\.$"):
        DOORS[door](world)
    sweep(world.desk.runs, world.desk.runner)  # what the desk does on its own a moment later
    world.desk.runner.pool.shutdown(wait=True)  # and whatever it was handed has run
    world.desk.batches.pool.shutdown(wait=True)
    assert len(world.stub.calls) == sent, [c["path"] for c in world.stub.calls[sent:]]


def _prepare(world: World, door: str) -> None:
    """Make what the door acts on before counting requests (making it may call the stub)."""
    needs = {
        "rubric-re-check": "shipped",
        "run-approve-fix": "awaiting",
        "run-ask-the-fix-agent-again": "awaiting",
        "run-resume": "interrupted",
        "run-try-again": "outage",
        "escalation-re-review": "escalated",
        "person-review": "person_slot",
    }
    getattr(world, needs.get(door, "desk"))
    if door.startswith("batch-"):
        getattr(world, "pattern" if "fix" in door or "signature" in door else "batch")
        if door == "batch-resume":
            world.desk.batches.pause(world.batch, "ann")
    world.desk  # noqa: B018 - opened before counting


def test_the_command_line_is_let_through_and_pays(world: World) -> None:
    """The system actor `cli` passes the same check: the door is a role check, not a closed door."""
    sent = len(world.stub.calls)
    trial = rubric_actions.try_rubric(
        world.desk.rubrics, world.desk.rubrics.resolved("general"), CLEAN, "cli", SPEC, world.reviewer()
    )
    assert trial.verdict == "PASS" and len(world.stub.calls) == sent + 1
    assert [t.actor for t in world.desk.rubrics.trials()] == ["cli"]
