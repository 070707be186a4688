"""With sign-in configured, nobody signed in can do nothing, on every door below the pages.

The app used to hand an anonymous visitor the local user (`local`, an admin) whenever nobody was signed in. Now
the desk is opened with the local user refused where sign-in is configured (`Database.local_user` False), so every
person-facing action of the core called with `local` is refused by the storage's role check (`NotSignedIn`) and
writes nothing: each action of `santa_core.run.actions`, `santa_core.rubrics.actions`, `santa_core.people`,
`santa_core.config.save_defaults` and the batch driver. The actions are found by introspection, so a new one
cannot be left out: it must be arranged here, or named as no person's action with why. One world is arranged
for all of them (a refused call writes nothing, which each case checks); only then is the local user refused,
as a page does when sign-in is switched on while the desk is open.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType

import pytest
from sqlalchemy import func
from sqlmodel import Session, SQLModel, select

from santa_core import config, people
from santa_core.batch.driver import BatchDriver
from santa_core.batch.file import read_batch
from santa_core.config import Defaults
from santa_core.models import EscalationReason, RunStatus
from santa_core.people import PeopleError
from santa_core.reviewers.base import PERSON
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer
from santa_core.roles import LOCAL, NotSignedIn
from santa_core.rubrics import actions as rubric_actions
from santa_core.rubrics.learning import Suggestion
from santa_core.run import actions
from santa_core.run.runner import Runner
from santa_core.spotchecks import actions as spot_actions
from santa_core.spotchecks.model import Judgement, RuleDraft
from storage.batches import BatchStore
from storage.runs import RunStore
from storage.startup import init_db
from storage.transactions import Database
from tests.conftest import grant
from tests.core.batch import test_driver as batch
from tests.core.run.test_runner import GOOD, RUBRIC, SPEC
from tests.storage.test_rubric_store import acme
from tests.support.people import ADMIN
from tests.support.people_runs import _review, awaiting_approval, escalate, make_runner, new_run

S = RunStatus


@dataclass
class World:
    """Something for every action to act on; `batches` drives the batch made from tests/core/batch's planted file."""

    repo: RunStore
    batches: BatchDriver
    runs: dict[str, int]
    batch_id: int
    pattern_id: int
    item_key: str
    item_text: str


def _batch_world(repo: RunStore) -> tuple[BatchDriver, int, int, str, str]:
    """A batch whose first sample is reviewed, its pattern found and its fix proposed (by an admin)."""
    reviewers = {"b": FunctionReviewer("b", batch.strict), "c": FunctionReviewer("c", batch.strict)}
    fixer = FunctionFixer("fixer", batch.fixer)
    runner = Runner(repo, lambda name: reviewers[name], lambda name: fixer, workers=4)
    driver = BatchDriver(repo, BatchStore(repo), runner, lambda name: fixer)
    file = read_batch(batch.planted_csv()[0], "emails.csv", strata=["template"])
    batch_id = driver.create(file, batch.config(file), ADMIN)
    [pattern] = driver.find_patterns(driver.wait(driver.sample(batch_id, ADMIN), timeout=60).id)
    driver.propose(pattern.id, ADMIN)
    key = pattern.pattern["representative"]
    text = next(it.output for it in driver.store.items(batch_id) if it.key == key)
    return driver, batch_id, pattern.id, key, text


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """Runs in every state an action needs, a rubric, a batch with a proposed fix; then the local user refused."""
    url = f"sqlite:///{Path(tmp_path_factory.mktemp('nobody')) / 'santa.db'}"
    repo = grant(RunStore(Database(init_db(url, mark_interrupted=False), local_user=True)))
    spot_actions.save_rule(
        repo.spot_checks, RuleDraft(rubric_name=RUBRIC.name, share_percent=100), ADMIN, [RUBRIC.name]
    )  # the shipped run below is drawn for a spot-check
    runs = {
        "approval": awaiting_approval(repo),
        "escalated": new_run(repo),
        "outage": new_run(repo),
        "interrupted": new_run(repo),
        "person": new_run(repo, reviewer_b=PERSON, reviewer_c=PERSON),
        "shipped": new_run(repo),
    }
    escalate(repo, runs["escalated"])
    escalate(repo, runs["outage"], EscalationReason.PROVIDER_FAILED)  # the model provider failed: Try again
    assert make_runner(repo).execute(runs["person"]).status == S.AWAITING_HUMAN_REVIEW
    assert make_runner(repo).execute(runs["shipped"]).status == S.SHIPPED
    actions.start_run(repo, SPEC, GOOD, RUBRIC, "b", "c", "fixer", ADMIN)  # and an interrupted one:
    repo.transition(
        runs["interrupted"],
        {S.QUEUED},
        repo.load_run(runs["interrupted"]).state.model_copy(update={"status": S.RUNNING}),
        "worker",
    )
    repo.transition(
        runs["interrupted"],
        {S.RUNNING},
        repo.load_run(runs["interrupted"]).state.model_copy(update={"status": S.INTERRUPTED, "note": "worker died"}),
        "system",
    )
    driver, batch_id, pattern_id, key, text = _batch_world(repo)
    repo.db.local_user = False  # sign-in is configured from here on: nobody signed in is nobody
    yield World(repo, driver, runs, batch_id, pattern_id, key, text)
    driver.shutdown()
    driver.runner.shutdown()
    repo.engine.dispose()


def rows(world: World) -> dict[str, int]:
    """Row counts of every table: a refused call changes none."""
    with Session(world.repo.engine) as s:
        return {t.name: int(s.exec(select(func.count()).select_from(t)).one()) for t in SQLModel.metadata.sorted_tables}


Act = Callable[[World, str], object]
"""Take the action as `actor` on the world."""

RUN_ACTIONS: dict[str, Act] = {
    "start_run": lambda w, a: actions.start_run(w.repo, SPEC, GOOD, RUBRIC, "b", "c", "fixer", a),
    "approve_fix": lambda w, a: actions.approve_fix(w.repo, w.runs["approval"], a),
    "reject_fix": lambda w, a: actions.reject_fix(w.repo, w.runs["approval"], a, "not good enough"),
    "retry_fix": lambda w, a: actions.retry_fix(w.repo, w.runs["approval"], a),
    "submit_person_review": lambda w, a: actions.submit_person_review(w.repo, w.runs["person"], "B", _review(), a),
    "resume": lambda w, a: actions.resume(w.repo, w.runs["interrupted"], a),
    "try_again": lambda w, a: actions.try_again(w.repo, w.runs["outage"], a),
    "resolve_escalation": lambda w, a: actions.resolve_escalation(
        w.repo, w.runs["escalated"], "ship_as_is", a, "checked by hand"
    ),
    "assign_escalation": lambda w, a: actions.assign_escalation(w.repo, w.runs["escalated"], None, a),
    "set_due": lambda w, a: actions.set_due(w.repo, w.runs["escalated"], datetime.now(UTC) + timedelta(hours=2), a),
    "assign_reviewer": lambda w, a: actions.assign_reviewer(w.repo, w.runs["person"], "B", None, a),
    "report_escape": lambda w, a: actions.report_escape(w.repo, w.runs["shipped"], "facts", "a wrong date", "major", a),
}


def suggestion(w: World) -> Suggestion:
    """A sharper pass condition for the stored rubric's first criterion, argued for by the shipped run."""
    first = w.repo.rubrics.resolved(RUBRIC.name).criteria[0]
    return Suggestion(
        key="s-1",
        rubric=RUBRIC.name,
        criterion=first.id,
        criterion_name=first.name,
        kind="pass_condition",
        phrase="in 2019",
        pass_condition=f"{first.pass_condition} Sharper.",
        runs=[w.runs["shipped"]],
    )


RUBRIC_ACTIONS: dict[str, Act] = {
    "save_version": lambda w, a: rubric_actions.save_version(w.repo.rubrics, acme(), a, "first", None),
    "import_file": lambda w, a: rubric_actions.import_file(w.repo.rubrics, acme().model_dump_json(), "json", a),
    "try_rubric": lambda w, a: rubric_actions.try_rubric(w.repo.rubrics, RUBRIC, GOOD, a, stored_version=1),
    "accept_suggestion": lambda w, a: rubric_actions.accept_suggestion(
        w.repo.rubrics, w.repo.suggestions, suggestion(w), a
    ),
    "dismiss_suggestion": lambda w, a: rubric_actions.dismiss_suggestion(w.repo.suggestions, suggestion(w), a),
}
PEOPLE_ACTIONS: dict[str, Act] = {
    "set_roles": lambda w, a: people.set_roles(w.repo.people, "new@example.com", ["viewer"], a),
    "rename_local": lambda w, a: people.rename_local(w.repo.people, "Somebody", a),
}
CONFIG_ACTIONS: dict[str, Act] = {"save_defaults": lambda w, a: config.save_defaults(w.repo, Defaults(max_rounds=2), a)}
SPOT_ACTIONS: dict[str, Act] = {
    "save_rule": lambda w, a: spot_actions.save_rule(
        w.repo.spot_checks, RuleDraft(rubric_name=RUBRIC.name, share_percent=5), a, [RUBRIC.name]
    ),
    "retire_rule": lambda w, a: spot_actions.retire_rule(w.repo.spot_checks, 1, a),
    "assign": lambda w, a: spot_actions.assign(w.repo.spot_checks, 1, None, a),
    "set_due": lambda w, a: spot_actions.set_due(w.repo.spot_checks, 1, datetime.now(UTC), a),
    "submit": lambda w, a: spot_actions.submit(
        w.repo.spot_checks, 1, [Judgement(criterion=c.id, verdict="PASS") for c in RUBRIC.criteria], a
    ),
}
BATCH_ACTIONS: dict[str, Act] = {
    "create": lambda w, a: w.batches.create(
        read_batch(batch.planted_csv(20)[0], "e.csv", strata=["template"]),
        batch.config(read_batch(batch.planted_csv(20)[0], "e.csv", strata=["template"])),
        a,
    ),
    "sample": lambda w, a: w.batches.sample(w.batch_id, a),
    "draw": lambda w, a: w.batches.draw(w.batch_id, a),
    "pause": lambda w, a: w.batches.pause(w.batch_id, a),
    "resume": lambda w, a: w.batches.resume(w.batch_id, a),
    "retry": lambda w, a: w.batches.retry(w.batch_id, a),
    "dismiss": lambda w, a: w.batches.dismiss(w.pattern_id, a, "not a defect"),
    "propose": lambda w, a: w.batches.propose(w.pattern_id, a),
    "prepare": lambda w, a: w.batches.prepare(w.pattern_id, a),
    "retry_fixes": lambda w, a: w.batches.retry_fixes(w.pattern_id, a),
    "approve": lambda w, a: w.batches.approve(w.pattern_id, a, seen=w.batches.preview(w.pattern_id).version),
    "set_signature": lambda w, a: w.batches.set_signature(
        w.pattern_id, "\n".join(w.batches.store.pattern(w.pattern_id).pattern["signature"]), a
    ),
    "edit_by_hand": lambda w, a: w.batches.edit_by_hand(
        w.pattern_id, w.item_key, w.item_text, w.item_text + " Edited.", a
    ),
}

NOT_A_PERSONS_ACTION: dict[tuple[str, str], str] = {
    ("santa_core.run.actions", "rounds_up_to"): "reads a run's rounds",
    ("santa_core.run.actions", "budget_spent"): "compares a run's spend with its budget",
    ("santa_core.run.actions", "refuse_over_budget"): "raises the budget refusal (the actions and the store ask it)",
    ("santa_core.run.actions", "interrupt_orphans"): "code marks dead runs interrupted at start",
    ("santa_core.people", "sign_in"): "the sign-in itself (it refuses the local user's id: see below)",
    ("santa_core.spotchecks.actions", "draw_spot_checks"): "the sweep is code: the same draws whoever runs it",
    ("santa_core.spotchecks.actions", "new_seed"): "makes a rule's seed",
}
"""Public functions of the action modules that take no actor, with why."""


ACTING = {"actor", "author"}
"""The parameters that name who acts (a rubric's author is its saver)."""


def acts(function: Callable) -> bool:
    """Whether the function takes who acts."""
    return bool(ACTING & set(inspect.signature(function).parameters))


def actor_functions(module: ModuleType) -> tuple[set[str], set[str]]:
    """(public functions of the module taking who acts, the other public functions)."""
    found = [
        (name, f)
        for name, f in inspect.getmembers(module, inspect.isfunction)
        if f.__module__ == module.__name__ and not name.startswith("_")
    ]
    takes = {name for name, f in found if acts(f)}
    return takes, {name for name, _ in found} - takes


@pytest.mark.parametrize(
    ("module", "table"),
    [
        pytest.param(actions, RUN_ACTIONS, id="run"),
        pytest.param(rubric_actions, RUBRIC_ACTIONS, id="rubrics"),
        pytest.param(people, PEOPLE_ACTIONS, id="people"),
        pytest.param(spot_actions, SPOT_ACTIONS, id="spot-checks"),
    ],
)
def test_every_action_of_a_module_is_in_the_table(module: ModuleType, table: dict[str, Act]) -> None:
    takes, others = actor_functions(module)
    assert takes == set(table), "arrange each new action below, so it is shown to refuse the anonymous visitor"
    assert {(module.__name__, n) for n in others} <= set(NOT_A_PERSONS_ACTION), f"no actor, no reason: {others}"
    assert acts(config.save_defaults) and set(CONFIG_ACTIONS) == {"save_defaults"}


def test_every_person_facing_method_of_the_batch_driver_is_in_the_table() -> None:
    methods = {
        name for name, f in inspect.getmembers(BatchDriver, inspect.isfunction) if not name.startswith("_") and acts(f)
    }
    assert methods == set(BATCH_ACTIONS)


EVERY_ACTION = {
    **{f"run.{k}": v for k, v in RUN_ACTIONS.items()},
    **{f"rubrics.{k}": v for k, v in RUBRIC_ACTIONS.items()},
    **{f"people.{k}": v for k, v in PEOPLE_ACTIONS.items()},
    **{f"config.{k}": v for k, v in CONFIG_ACTIONS.items()},
    **{f"batch.{k}": v for k, v in BATCH_ACTIONS.items()},
    **{f"spot.{k}": v for k, v in SPOT_ACTIONS.items()},
}


@pytest.mark.parametrize("action", list(EVERY_ACTION))
def test_the_local_user_is_refused_where_sign_in_is_configured_and_nothing_is_written(
    world: World, action: str
) -> None:
    before = rows(world)
    with pytest.raises(NotSignedIn, match="^Nobody is signed in: sign in to "):
        EVERY_ACTION[action](world, LOCAL)
    assert rows(world) == before


TARGETS: dict[str, tuple[Act, type[Exception], str]] = {
    "owner of an escalation": (
        lambda w, a: actions.assign_escalation(w.repo, w.runs["escalated"], LOCAL, a),
        ValueError,
        "local cannot own an escalation: Nobody is signed in",
    ),
    "reviewer of a slot": (
        lambda w, a: actions.assign_reviewer(w.repo, w.runs["person"], "C", LOCAL, a),
        NotSignedIn,
        "^Nobody is signed in",
    ),
    "reviewer of a new run": (
        lambda w, a: actions.start_run(w.repo, SPEC, GOOD, RUBRIC, PERSON, "c", "fixer", a, person_b=LOCAL),
        NotSignedIn,
        "^Nobody is signed in",
    ),
    "a signed-in person": (
        lambda w, a: people.sign_in(w.repo.people, LOCAL, "Not the local user"),
        PeopleError,
        "reserved for the desk itself",
    ),
}
"""Nor can anyone hand the local user a part: an admin naming it as owner or reviewer, a sign-in with its id."""


@pytest.mark.parametrize("target", list(TARGETS))
def test_nobody_hands_the_local_user_a_part_where_sign_in_is_configured(world: World, target: str) -> None:
    act, error, match = TARGETS[target]
    before = rows(world)
    with pytest.raises(error, match=match):
        act(world, ADMIN)
    assert rows(world) == before
