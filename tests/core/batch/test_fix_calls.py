"""A batch's own fix calls: every request on record before it leaves and answered after, the fixes' Message Batch
sent at most once (a create without an answer waits for a person's Try again, a stop cancels it), and auto-approve
done by the driver for complete plans only.

The fix agent is the real Anthropic adapter talking to the loopback stub (`messages_stub`), which counts every
request that reached it: the record is compared with what the server saw, not with what the code says it sent.
The sample is reviewed by reviewer doubles (free, no call rows of their own)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import anthropic
import pytest
from sqlmodel import Session, select

from santa_core.batch.driver import BatchDriver
from santa_core.batch.file import read_batch
from santa_core.batch.fix_batch import CUT_SHORT, FixesStopped, auto_fix_note, stopped_fixes
from santa_core.batch.store import BatchProblem
from santa_core.reviewers.anthropic import AnthropicFixer
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer
from santa_core.roles import PermissionDenied
from santa_core.run.runner import Runner
from storage.batches import BatchStore
from storage.runs import RunStore
from storage.startup import init_db
from storage.tables import BatchPatternRow, BatchRow, CallSentRow, LLMCallRow
from tests.conftest import grant, migrated_sqlite
from tests.core.batch.test_driver import config, fixer, planted_csv, strict
from tests.support import varied_batch as vb
from tests.support.messages_api import MessagesStub, Reply, schema_properties
from tests.support.sampled_copy import copy_of

FIXER = "claude-sonnet-5-5"


_SAMPLED: list[tuple[str, int, int]] = []


def sampled_varied() -> tuple[str, int, int]:
    """A SQLite database with the varied batch (its fix agent `FIXER`) and its first sample reviewed by the reviewer
    doubles, made once per test process: each World starts from its own copy (the sample's 30 reviews are the costly
    part, and no fix agent is asked while they are made). (its URL, the batch's id, the sample's id)"""
    if not _SAMPLED:
        folder = Path(tempfile.mkdtemp(prefix="santa-varied-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        url = migrated_sqlite(folder / "santa.db")
        repo = grant(grant(RunStore(init_db(url, mark_interrupted=False))), {"vic": ("viewer",)})
        reviewers = {"b": FunctionReviewer("b", vb.review), "c": FunctionReviewer("c", vb.review)}
        runner = Runner(repo, lambda name: reviewers[name], lambda name: None, workers=4)
        driver = BatchDriver(repo, BatchStore(repo), runner, lambda name: None)
        try:
            file = read_batch(vb.varied_csv()[0], "emails.csv", strata=["template"])
            cfg = config(file).model_copy(update={"seed": vb.SEED, "fixer": FIXER})
            batch_id = driver.create(file, cfg, "ann")
            sample = driver.wait(driver.sample(batch_id, "ann"), timeout=60)
            assert sample.finished
        finally:
            driver.shutdown()
            runner.shutdown()
            repo.engine.dispose()
        _SAMPLED.append((url, batch_id, sample.id))
    return _SAMPLED[0]


class World:
    """A driver whose fix agent is the stub, a varied batch with its first sample reviewed (a copy of
    `sampled_varied`), and its one pattern."""

    def __init__(self, tmp_path, stub: MessagesStub, message_batches: bool, timeout_s: float) -> None:
        self.stub = stub
        stub.handler, stub.batch_end_after_polls = vb.varied_answer, 1
        url, self.batch_id, sample_id = sampled_varied()
        self.repo = RunStore(init_db(next(copy_of(url, tmp_path)), mark_interrupted=False))  # roles granted in it
        reviewers = {"b": FunctionReviewer("b", vb.review), "c": FunctionReviewer("c", vb.review)}
        self.runner = Runner(self.repo, lambda name: reviewers[name], lambda name: None, workers=4)
        client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0, timeout=timeout_s)
        self.driver = BatchDriver(
            self.repo,
            BatchStore(self.repo),
            self.runner,
            lambda name: AnthropicFixer(name, client=client, max_retries=0),
            client_for=lambda: client,
            poll_s=0.01,
        )
        [self.pattern] = self.driver.store.patterns(self.batch_id, sample_id)
        if message_batches:  # the batch reviews through Message Batches from now on (its fixes go that way too)
            with Session(self.repo.engine) as s:
                row = s.get(BatchRow, self.batch_id)
                row.message_batches = True
                s.add(row)
                s.commit()

    def rows(self) -> tuple[list[CallSentRow], list[LLMCallRow]]:
        """The batch's own call rows: (sent, answered)."""
        with Session(self.repo.engine) as s:
            return (
                list(s.exec(select(CallSentRow).where(CallSentRow.batch_id == self.batch_id))),
                list(s.exec(select(LLMCallRow).where(LLMCallRow.batch_id == self.batch_id))),
            )

    def paid_requests(self) -> int:
        """Fix requests the server received: synchronous ones plus every item of every Message Batch it made."""
        sync = [c for c in self.stub.message_calls() if "edits" in schema_properties(c["body"])]
        return len(sync) + sum(len(self.stub.batch(i).requests) for i in self.stub.batch_ids())

    def close(self) -> None:
        self.driver.shutdown()
        self.runner.shutdown()
        self.repo.engine.dispose()


@pytest.fixture
def world(tmp_path, messages_stub: MessagesStub) -> Iterator[Callable[..., World]]:
    made: list[World] = []

    def make(message_batches: bool, timeout_s: float = 60.0) -> World:
        made.append(World(tmp_path, messages_stub, message_batches, timeout_s))
        return made[-1]

    yield make
    for w in made:
        w.close()


@pytest.mark.parametrize("message_batches", [False, True], ids=["synchronous", "message batch"])
def test_every_fix_request_the_server_saw_is_on_record_before_and_after(
    world: Callable[..., World], message_batches: bool
) -> None:
    w = world(message_batches)
    w.driver.propose(w.pattern.id, "ann")
    sent, answered = w.rows()
    assert w.paid_requests() == 7 == len(sent)  # the representative and six items' own fixes
    assert len(w.stub.batch_ids()) == (1 if message_batches else 0)
    assert sorted(r.request_hash for r in sent) == sorted(r.request_hash for r in answered)
    assert all(r.run_id is None and r.purpose == "fix" and r.estimate_usd > 0 for r in sent)
    assert all(r.run_id is None and r.cost_usd > 0 and r.error is None for r in answered)
    with Session(w.repo.engine) as s:
        spent = s.get(BatchPatternRow, w.pattern.id).fix_spent_usd
    assert spent == pytest.approx(sum(r.cost_usd for r in answered))  # the column is the sum of its call rows


def test_a_fix_call_is_not_sent_when_it_cannot_be_put_on_record(world: Callable[..., World]) -> None:
    w = world(False)

    def refuse(*args: object) -> None:
        raise OSError("the database is gone")

    w.driver.store.note_fix_sent = refuse  # type: ignore[method-assign]
    with pytest.raises(Exception, match="could not be put on record"):
        w.driver.propose(w.pattern.id, "ann")
    assert w.stub.message_calls() == []


def test_a_fixes_message_batch_whose_create_timed_out_is_sent_again_only_by_a_person(
    world: Callable[..., World],
) -> None:
    w = world(True, timeout_s=0.5)
    w.stub.script_batches(Reply(200, {}, {}, delay_s=2.0))  # the create's answer comes too late
    with pytest.raises(FixesStopped, match="may have reached the API"):
        w.driver.propose(w.pattern.id, "ann")
    creates = [c for c in w.stub.batch_calls() if c["method"] == "POST"]
    sync = [c for c in w.stub.message_calls() if "edits" in schema_properties(c["body"])]
    assert len(creates) == 1 and len(sync) == 1  # the representative only: no synchronous fallback
    assert stopped_fixes(w.driver.store.pattern(w.pattern.id)).startswith(CUT_SHORT)
    sent, _ = w.rows()
    assert len(sent) == 7  # each item of the batch that may exist is on record (counted at its estimate)
    for again in (lambda: w.driver.prepare(w.pattern.id, "ann"), lambda: w.driver.propose(w.pattern.id, "ann")):
        with pytest.raises(FixesStopped):
            again()  # neither preparing again nor a new proposal sends the fixes again on their own
    assert len([c for c in w.stub.batch_calls() if c["method"] == "POST"]) == 1
    with pytest.raises(PermissionDenied):
        w.driver.retry_fixes(w.pattern.id, "vic")
    plans = w.driver.retry_fixes(w.pattern.id, "ann")  # a person looked: Try again
    assert len(w.stub.batch_ids()) == 1 and len(plans) == 8  # every reached item, six from the batch
    assert stopped_fixes(w.driver.store.pattern(w.pattern.id)) is None
    assert [e.actor for e in w.repo.audit.events(action="batch.fixes_retried")] == ["ann"]


def test_a_stop_while_the_fixes_message_batch_runs_cancels_it(world: Callable[..., World]) -> None:
    w = world(True)
    w.stub.batch_end_after_polls = None  # it never ends on its own
    failed: list[BaseException] = []

    def prepare() -> None:
        try:
            w.driver.propose(w.pattern.id, "ann")
        except BaseException as exc:  # noqa: BLE001 - kept for the test's thread
            failed.append(exc)

    thread = threading.Thread(target=prepare)
    thread.start()
    for _ in range(2000):
        if w.stub.batch_ids() and w.stub.batch().polls:
            break
        threading.Event().wait(0.01)
    w.driver._stopping.set()  # what shutting the desk down does
    thread.join(30)
    assert isinstance(failed[0], FixesStopped)
    assert w.stub.batch().cancel_initiated_at is not None
    assert "canceled" in stopped_fixes(w.driver.store.pattern(w.pattern.id))
    assert len([c for c in w.stub.message_calls() if "edits" in schema_properties(c["body"])]) == 1  # no fallback


def test_asking_the_fix_agent_again_never_reuses_the_answers_of_the_last_proposals_batch(
    world: Callable[..., World],
) -> None:
    """A fixes' Message Batch that was made (its id known) and stopped answered the old proposal's example: a new
    proposal asks its own batch, it does not read the old one's answers."""
    w = world(True)
    w.driver.propose(w.pattern.id, "ann")
    first = w.stub.batch_ids()
    assert len(first) == 1
    # As a stop while it ran leaves it: made, with its id, stopped (Try again would collect it).
    state = {
        **w.driver.store.pattern(w.pattern.id).pattern.get("fix_batch", {}),
        "api_id": first[0],
        "status": "stopped: canceled as the desk stopped; Try again collects what it answered",
    }
    w.driver.store.set_fix_batch(w.pattern.id, state)
    w.driver.propose(w.pattern.id, "ann")  # ask the fix agent again
    assert len(w.stub.batch_ids()) == 2  # the new proposal's own batch


# --- auto-approve, in the driver ------------------------------------------------------------------


@pytest.fixture
def doubles(tmp_path) -> Iterator[BatchDriver]:
    repo = grant(RunStore(init_db(f"sqlite:///{tmp_path / 'santa.db'}", mark_interrupted=False)))
    reviewers = {
        "b": FunctionReviewer("b", strict),
        "c": FunctionReviewer("c", strict),
        "vb": FunctionReviewer("vb", vb.review),
    }
    fixers = {"fixer": FunctionFixer("fixer", fixer), "varied": FunctionFixer("varied", vb.fix_plan)}
    runner = Runner(repo, lambda name: reviewers[name], lambda name: None, workers=4)
    driver = BatchDriver(repo, BatchStore(repo), runner, lambda name: fixers[name])
    yield driver
    driver.shutdown()
    runner.shutdown()


def test_the_driver_auto_approves_a_complete_plan_as_it_closes_the_sample(doubles: BatchDriver) -> None:
    data, planted = planted_csv()
    file = read_batch(data, "emails.csv", strata=["template"])
    batch_id = doubles.create(file, config(file, auto_approve=True), "ann")
    doubles.wait(doubles.sample(batch_id, "ann"), timeout=60)
    [pattern] = doubles.store.patterns(batch_id)  # nobody opened a page or asked for anything
    assert (pattern.status, pattern.decided_by, auto_fix_note(pattern)) == ("applied", "auto-approve", "approved")
    assert {it.key for it in doubles.store.items(batch_id) if it.changed} == planted
    assert [e.actor for e in doubles.repo.audit.events(action="batch.fix_applied")] == ["auto-approve"]


def test_auto_approve_leaves_an_incomplete_plan_to_a_person(doubles: BatchDriver) -> None:
    """The varied batch: one reached item (item-125) cannot take its fix, so the plan is not complete."""
    file = read_batch(vb.varied_csv()[0], "emails.csv", strata=["template"])
    cfg = config(file, auto_approve=True).model_copy(
        update={"seed": vb.SEED, "reviewer_b": "vb", "reviewer_c": "vb", "fixer": "varied"}
    )
    batch_id = doubles.create(file, cfg, "ann")
    doubles.wait(doubles.sample(batch_id, "ann"), timeout=60)
    [pattern] = doubles.store.patterns(batch_id)
    assert pattern.status == "proposed" and pattern.decided_by is None
    assert auto_fix_note(pattern).startswith("waits for a person: item item-125")
    assert not any(it.changed for it in doubles.store.items(batch_id))
    assert doubles.auto_fix(pattern.sample_id) == {}  # taken up once: a later grouping asks and pays nothing more


def test_an_approval_must_name_the_version_it_saw(doubles: BatchDriver) -> None:
    data, _ = planted_csv()
    file = read_batch(data, "emails.csv", strata=["template"])
    batch_id = doubles.create(file, config(file), "ann")
    doubles.wait(doubles.sample(batch_id, "ann"), timeout=60)
    [pattern] = doubles.store.patterns(batch_id)
    doubles.propose(pattern.id, "ann")
    with pytest.raises(TypeError):
        doubles.approve(pattern.id, "ann")  # type: ignore[call-arg] - no door approves without a version
    with pytest.raises(BatchProblem, match="changed since you opened them"):
        doubles.approve(pattern.id, "ann", seen="an older version")
    assert doubles.store.pattern(pattern.id).status == "proposed"
