"""Exclusions hold across patterns: an item a person excluded from one pattern's fix is not rewritten by another
pattern's fix unless the approver includes it by name, with a reason; the driver leaves it out by default and says
why, and the store refuses a change to it whatever door the change came through."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import pytest

from santa_core.batch.driver import BatchDriver
from santa_core.batch.file import read_batch
from santa_core.batch.store import BatchProblem, ItemChange
from santa_core.models import CheckResult, FixEdit, FixPlan, Review, ReviewIssue
from santa_core.reviewers.base import ReviewRequest
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer, passing
from santa_core.run.runner import Runner
from storage.batches import BatchStore
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant
from tests.core.batch.test_driver import approve_seen, config
from tests.support import two_defects as td

RISKY = td.risk_sentence("Halo Fan")
PROMISE = td.guarantee_sentence("Halo Fan")
"""Long sentences: short ones share half their words, and the run's gate takes them for one issue of the item."""
OUTPUTS = {
    "risk-1": "Hi. The Juno Backpack is risk-free. Bye.",
    "risk-2": "Hi. The Flux Kettle is risk-free. Bye.",
    "guar-1": f"Hi. {td.guarantee_sentence('Juno Backpack')} Bye.",
    "guar-2": f"Hi. {td.guarantee_sentence('Flux Kettle')} Bye.",
    "both": f"Hi. {RISKY} {PROMISE} Bye.",
    "ok-1": "Hi. The Nova Mug ships in two days. Bye.",
    "ok-2": "Hi. The Pico Clock ships in three days. Bye.",
}
FIXES = {"is risk-free": "comes with a 30-day return", "guarantees a better night's sleep": "is quiet at night"}
WHY = "a quote from the customer's own review: it must stay as written"


def sentences(output: str) -> list[str]:
    return [s.strip() + "." for s in output.split(".") if s.strip()]


def review(request: ReviewRequest) -> Review:
    """FAIL factual_accuracy once per flagged sentence, worded as the walk's loopback reviewer words it."""
    issues = [
        ReviewIssue(criterion=td.CRITERION, description=td.description(phrase, s), evidence=s)
        for s in sentences(request.output)
        for phrase in (td.RISK, td.GUARANTEE)
        if phrase in s
    ]
    if not issues:
        return passing(request)
    checks = [
        CheckResult(criterion=i, result="FAIL" if i == td.CRITERION else "PASS", detail="x")
        for i in request.rubric.criterion_ids()
    ]
    return Review(verdict="FAIL", checks=checks, critical_issues=issues, suggestions=[])


def fix(request) -> FixPlan:
    """Each issue's sentence with its claim replaced by a true one."""
    edits = []
    for i, issue in enumerate(request.issues):
        for bad, good in FIXES.items():
            if bad in issue.evidence:
                edits.append(FixEdit(issue=i, before=issue.evidence, after=issue.evidence.replace(bad, good)))
    return FixPlan(edits=edits)


@pytest.fixture
def service(db_url: str) -> Iterator[BatchDriver]:
    repo = grant(grant(RunStore(init_db(db_url, mark_interrupted=False))))
    reviewers = {"b": FunctionReviewer("b", review), "c": FunctionReviewer("c", review)}
    fx = FunctionFixer("fixer", fix)
    runner = Runner(repo, lambda name: reviewers[name], lambda name: fx, workers=4)
    svc = BatchDriver(repo, BatchStore(repo), runner, lambda name: fx)
    yield svc
    svc.shutdown()
    runner.shutdown()
    repo.engine.dispose()


def patterns_of(service: BatchDriver) -> tuple[int, dict[str, int]]:
    """The batch, every item sampled and reviewed: (batch id, flagged phrase → its pattern's id)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerows([["id", "output"], *OUTPUTS.items()])
    file = read_batch(buf.getvalue().encode(), "promo.csv")
    batch_id = service.create(file, config(file, sample_rate=1.0, min_sample=len(OUTPUTS)), "ann")
    sample = service.wait(service.sample(batch_id, "ann"), timeout=60)
    assert sample.size == len(OUTPUTS)
    found = service.find_patterns(sample.id)
    by_phrase = {p: next(r.id for r in found if f"“{p}”" in r.title) for p in (td.RISK, td.GUARANTEE)}
    assert len(found) == 2 and {"both"} == set(found[0].pattern["items"]) & set(found[1].pattern["items"])
    return batch_id, by_phrase


def texts(service: BatchDriver, batch_id: int) -> dict[str, str]:
    return {it.key: it.output for it in service.store.items(batch_id)}


def excluded_from_the_first(service: BatchDriver) -> tuple[int, int]:
    """The risk-free pattern approved with the item holding both defects excluded: (batch id, the other pattern)."""
    batch_id, ids = patterns_of(service)
    for pattern_id in ids.values():
        service.propose(pattern_id, "ann")
    approve_seen(service, ids[td.RISK], exclude=["both"], reason=WHY)
    assert texts(service, batch_id)["both"] == OUTPUTS["both"]
    return batch_id, ids[td.GUARANTEE]


def test_an_item_excluded_from_one_pattern_is_left_out_of_the_next_and_the_preview_says_why(
    service: BatchDriver,
) -> None:
    batch_id, second = excluded_from_the_first(service)
    preview = service.preview(second)
    assert preview.held["both"].note() == (
        f"excluded from pattern 1 of sample 1 (Factual accuracy: “risk-free”): {WHY}"
    )
    assert approve_seen(service, second) == 2  # guar-1 and guar-2; "both" left out by default
    after = texts(service, batch_id)
    assert after["both"] == OUTPUTS["both"]
    assert after["guar-1"] == "Hi. The Juno Backpack is quiet at night. Bye."
    assert "left out, excluded from another pattern: both" in service.store.pattern(second).reason


def test_including_it_by_name_takes_a_reason_and_then_rewrites_it(service: BatchDriver) -> None:
    batch_id, second = excluded_from_the_first(service)
    with pytest.raises(BatchProblem, match="say why"):
        approve_seen(service, second, include=["both"])
    with pytest.raises(BatchProblem, match="cannot include guar-1"):
        approve_seen(service, second, include=["guar-1"], reason="x")
    assert approve_seen(service, second, include=["both"], reason="the guarantee is ours, not the customer's") == 3
    assert texts(service, batch_id)["both"] == f"Hi. {RISKY} The Halo Fan is quiet at night. Bye."


def test_the_store_refuses_a_change_to_an_item_excluded_elsewhere_whatever_door_sent_it(service: BatchDriver) -> None:
    batch_id, second = excluded_from_the_first(service)
    item = next(it for it in service.store.items(batch_id) if it.key == "both")
    change = ItemChange(item_id=item.id, before_text=item.output, after_text=item.output.replace(PROMISE, "Hi."))
    with pytest.raises(BatchProblem, match="excluded from pattern 1 of sample 1"):
        service.store.apply_fix(second, [], [change], "ann")
    assert texts(service, batch_id)["both"] == OUTPUTS["both"]  # nothing written
    assert service.store.apply_fix(second, [], [change], "ann", included={"both": "ours"}) == 1
