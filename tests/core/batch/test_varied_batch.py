"""A pattern that generalises, below the page: 200 items, a fifth of the promo stratum carrying one
defect in varied sentences (tests/support/varied_batch.py). One approval fixes every defective item
(each its own edit, under the scope rule), one that cannot take a fix is fixed by hand, no clean
item changes by a byte, the resample is clean and the export says what was verified."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from santa_core.batch.driver import BatchDriver
from santa_core.batch.file import read_batch
from santa_core.batch.store import BatchProblem
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer
from santa_core.run.runner import Runner
from storage.batches import BatchStore
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import DB_KINDS, grant
from tests.core.batch.test_driver import approve_seen, config
from tests.support import varied_batch as vb
from tests.support.sampled_copy import copy_of, made_database

SAMPLED_DEFECTIVE = {"item-050", "item-100", "item-150", "item-175"}


def driver(url: str) -> BatchDriver:
    """The batch service over the database at `url`, its reviewers and fix agent the varied file's doubles."""
    repo = grant(grant(RunStore(init_db(url, mark_interrupted=False))), {"vic": ("viewer",)})
    reviewers = {"b": FunctionReviewer("b", vb.review), "c": FunctionReviewer("c", vb.review)}
    fx = FunctionFixer("fixer", vb.fix_plan)
    runner = Runner(repo, lambda name: reviewers[name], lambda name: fx, workers=4)
    svc = BatchDriver(repo, BatchStore(repo), runner, lambda name: fx)
    svc.fixer = fx
    return svc


def close(svc: BatchDriver) -> None:
    svc.shutdown()
    svc.runner.shutdown()
    svc.repo.engine.dispose()


def sample_first(service: BatchDriver) -> tuple[int, int, set[str]]:
    """A batch of the varied file with its first sample in: (batch id, sample id, defective keys)."""
    data, defective = vb.varied_csv()
    file = read_batch(data, "emails.csv", strata=["template"])
    batch_id = service.create(file, config(file), "ann")  # the seed is vb.SEED
    first = service.wait(service.sample(batch_id, "ann"), timeout=60)
    assert {r.key for r in service.store.reviews(first.id) if not r.nice} == SAMPLED_DEFECTIVE
    assert service.fixer.requests == []  # the fix agent is first asked by a test (each test's fixer starts empty)
    return batch_id, first.id, defective


@pytest.fixture(scope="module", params=DB_KINDS)
def sampled_database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    """One database per module and kind with the varied batch's first sample driven (30 reviews, the costly
    part): every test starts from its own copy of it, so none sees another's changes. (URL, ids)."""
    for url in made_database(request.param, request, tmp_path_factory.mktemp("sampled")):
        svc = driver(url)
        ids = sample_first(svc)
        close(svc)  # a template takes no connection while it is copied
        yield url, ids


@pytest.fixture
def copied(sampled_database: tuple, tmp_path: Path) -> Iterator[tuple[str, tuple[int, int, set[str]]]]:
    """This test's copy of the sampled database: (URL, the sampled batch's ids)."""
    url, ids = sampled_database
    yield from ((copy, ids) for copy in copy_of(url, tmp_path))


@pytest.fixture
def service(copied: tuple[str, tuple[int, int, set[str]]]) -> Iterator[BatchDriver]:
    svc = driver(copied[0])
    svc.sampled = copied[1]  # type: ignore[attr-defined]
    yield svc
    close(svc)


def sampled(service: BatchDriver) -> tuple[int, int, set[str]]:
    """The batch of the varied file with its first sample in (the module's sampled database, copied for this test):
    (batch id, sample id, defective keys)."""
    return service.sampled  # type: ignore[attr-defined]


def statuses(service: BatchDriver, batch_id: int) -> dict[str, str]:
    return {it.key: it.record["santa_status"] for it in read_batch(service.export(batch_id), "out.csv").items}


def test_one_approval_reaches_every_varied_item_and_the_resample_is_clean(service: BatchDriver) -> None:
    batch_id, sample_id, defective = sampled(service)
    originals = {it.key: it.output for it in service.store.items(batch_id)}
    assert len({vb.defects(originals[k])[0] for k in defective}) == 7  # varied: only item-000 repeats one

    [pattern] = service.find_patterns(sample_id)  # four differently worded quotes, one defect
    assert sorted(pattern.pattern["items"]) == sorted(SAMPLED_DEFECTIVE)
    assert pattern.pattern["signature"] == ["guaranteed"]  # not "within", which clean receipts show
    assert pattern.pattern["signature_check"]["false_matches"] == []

    seen: list[tuple[int, int]] = []
    service.propose(pattern.id, "ann", progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 6) and seen[-1] == (6, 6)  # item-000 took the text rule, 6 went to the fix agent
    preview = service.preview(pattern.id)
    assert set(preview.plans) == defective  # the whole batch, not only the sample
    assert preview.plans["item-000"].via == "text rule" and preview.plans["item-025"].via == "fix agent"
    assert preview.skipped == ["item-125"]
    assert "reaches beyond the sentence" in preview.plans["item-125"].outcome()  # the scope rule held
    for request in service.fixer.requests[1:]:  # an unsampled item's issues: its own sentence, with the example
        assert all(issue.evidence in request.output and "Approved fix" in issue.description for issue in request.issues)

    assert approve_seen(service, pattern.id, reason="we cannot promise timing") == 7
    items = {it.key: it.output for it in service.store.items(batch_id)}
    for key, text in items.items():
        if key in defective - {"item-125"}:
            assert "guaranteed" not in text and "expected within" in text
            assert text.split(". ")[0] == originals[key].split(". ")[0]  # only the flagged sentence changed
        else:
            assert text == originals[key]  # byte for byte
    assert statuses(service, batch_id)["item-125"] == "needs fix"
    assert "not counted as verified" in service.stopping_rule(batch_id).statement()

    service.edit_by_hand(
        pattern.id, "item-125", items["item-125"], vb.hand_fix(items["item-125"]), "ann", "rewrote the promise"
    )
    with pytest.raises(BatchProblem, match="changed"):  # a second person on the text the first one saw
        service.edit_by_hand(pattern.id, "item-125", items["item-125"], "Something else.", "ann")

    second = service.wait(service.sample(batch_id, "ann"), timeout=60)
    assert second.finished and second.clean
    rule = service.stopping_rule(batch_id)
    assert rule.clean and "with 95 % confidence" in rule.statement()
    assert "not counted" not in rule.statement()

    final = statuses(service, batch_id)
    assert set(final.values()) == {"fixed", "verified", "fixed by hand", "not sampled"}
    assert final["item-125"] == "fixed by hand"
    assert {final[k] for k in defective} <= {"fixed", "fixed by hand", "verified"}
    reviewed = {r.key for s in service.store.get(batch_id).samples for r in service.store.reviews(s.id)}
    assert {final[k] for k in reviewed - defective} == {"verified"}
    assert {final[k] for k in set(items) - reviewed - defective} == {"not sampled"}
    after = {it.key: it.output for it in read_batch(service.export(batch_id), "out.csv").items}
    assert all(after[k] == originals[k] for k in set(originals) - defective)


def test_a_person_can_exclude_items_and_no_decision_is_lost(service: BatchDriver) -> None:
    batch_id, sample_id, defective = sampled(service)
    [pattern] = service.find_patterns(sample_id)
    service.propose(pattern.id, "ann")
    with pytest.raises(BatchProblem, match="does not reach"):
        approve_seen(service, pattern.id, exclude=["item-001"], reason="x")  # a clean item: nothing to exclude
    with pytest.raises(BatchProblem, match="dismiss the pattern"):
        approve_seen(service, pattern.id, exclude=sorted(defective), reason="none of them")
    with pytest.raises(BatchProblem, match="say why"):
        approve_seen(service, pattern.id, exclude=["item-025"])
    before = {it.key: it.output for it in service.store.items(batch_id)}
    assert approve_seen(service, pattern.id, exclude=["item-025"], reason="a quote of the law") == 6
    after = {it.key: it.output for it in service.store.items(batch_id)}
    assert after["item-025"] == before["item-025"]
    assert "item-025" in service.store.pattern(pattern.id).reason


def test_a_signature_that_reaches_clean_items_is_refused(service: BatchDriver) -> None:
    _, sample_id, _ = sampled(service)
    [pattern] = service.find_patterns(sample_id)
    with pytest.raises(BatchProblem, match="refused, it would reach clean items"):
        service.set_signature(pattern.id, "results are\nwithin", "ann")  # the sampled receipts say both
    with pytest.raises(BatchProblem, match="too vague"):
        service.set_signature(pattern.id, "days", "ann")
    record = service.set_signature(pattern.id, "are guaranteed within", "ann")
    assert record.pattern["signature"] == ["are guaranteed within"]
    assert record.pattern["signature_check"]["matched"] == 4


def test_a_new_signature_after_the_proposal_prepares_every_item_again(service: BatchDriver) -> None:
    batch_id, sample_id, defective = sampled(service)
    [pattern] = service.find_patterns(sample_id)
    service.propose(pattern.id, "ann")
    seen = service.preview(pattern.id).version
    asked = len(service.fixer.requests)
    service.set_signature(pattern.id, "are guaranteed within", "ann")
    assert len(service.fixer.requests) == asked + 6  # each unsampled item's fix prepared again, not the proposal
    assert set(service.preview(pattern.id).plans) == defective  # not only the exact quotes
    with pytest.raises(BatchProblem, match="changed since you opened them"):
        service.approve(pattern.id, "ann", seen=seen)
    with pytest.raises(BatchProblem, match="not in what the reviewers quoted"):
        service.set_signature(pattern.id, "see you soon", "ann")  # tells the items apart, but is not the defect
    assert approve_seen(service, pattern.id) == 7


def test_a_fix_is_judged_by_its_sentence_not_by_the_signature(service: BatchDriver) -> None:
    """Issue 32: a fix is accepted when the flagged sentence's text is gone, whatever the recogniser still sees;
    a fix that leaves the flagged sentence as it was, or edits another, needs a person."""
    batch_id, sample_id, _ = sampled(service)
    [pattern] = service.find_patterns(sample_id)
    lazy = service.fixer.fn

    def half_fix(request):
        if "customer 75," in request.output:  # rewords the promise: "guaranteed" (the signature) stays
            [sentence] = vb.defects(request.output)
            reworded = sentence.replace("within", "in about")
            return vb.FixPlan(edits=[vb.FixEdit(issue=0, before=sentence, after=reworded)])
        if "customer 25," in request.output:  # fixes the promise and also edits the greeting nobody flagged
            [sentence] = vb.defects(request.output)
            return vb.FixPlan(
                edits=[
                    vb.FixEdit(issue=0, before=sentence, after="Results vary."),
                    vb.FixEdit(issue=0, before="Hello customer", after="Dear customer"),
                ]
            )
        return lazy(request)

    service.fixer.fn = half_fix
    service.propose(pattern.id, "ann")
    plans = service.preview(pattern.id).plans
    assert not plans["item-075"].needs_person and "in about" in plans["item-075"].after_text
    assert plans["item-025"].needs_person and "refused" in plans["item-025"].outcome()


def test_a_hand_edit_after_the_clean_sample_is_not_counted_as_verified(service: BatchDriver) -> None:
    batch_id, sample_id, _ = sampled(service)
    [pattern] = service.find_patterns(sample_id)
    service.propose(pattern.id, "ann")
    approve_seen(service, pattern.id)
    assert service.wait(service.sample(batch_id, "ann"), timeout=60).clean
    assert "not counted" not in service.stopping_rule(batch_id).statement()
    with pytest.raises(BatchProblem, match="not one the pattern reaches"):
        service.edit_by_hand(pattern.id, "item-001", "x", "y", "ann")
    text = {it.key: it.output for it in service.store.items(batch_id)}["item-125"]
    service.edit_by_hand(pattern.id, "item-125", text, vb.hand_fix(text), "ann", "rewrote it")
    assert "1 item fixed since is not counted as verified" in service.stopping_rule(batch_id).statement()
    assert statuses(service, batch_id)["item-125"] == "fixed by hand"


def test_what_every_fix_call_cost_stays_in_the_batch_cost(service: BatchDriver) -> None:
    """Every answered fix agent call counts, proposals asked again included: the batch's cost grows by each call
    row's cost as it is stored, whatever becomes of the proposal it served."""
    from santa_core.models import LLMCall

    batch_id, sample_id, _ = sampled(service)
    [pattern] = service.find_patterns(sample_id)
    reviews = service.store.cost(batch_id)
    proposal = service.propose(pattern.id, "ann").model_dump(mode="json")
    for n, cost in enumerate((0.25, 0.5, 0.125)):  # two proposals asked again, one item's own fix
        service.store.save_fix_calls(
            pattern.id, [LLMCall(purpose="fix", model="fixer", request={"n": n}, cost_usd=cost)]
        )
    service.store.save_proposal(pattern.id, proposal, "ann")  # a newer proposal: what was paid stays
    assert service.store.cost(batch_id) == pytest.approx(reviews + 0.25 + 0.5 + 0.125)
