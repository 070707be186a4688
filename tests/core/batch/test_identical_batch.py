"""The identical-defect batch of issue 32: 200 items, 41 carrying one planted promise, fixed in every one of them.

The promise ("… is guaranteed forever") stands in two sentences: 29 items say it plainly, 12 add a tail, so the
approved edit applies to the 29 as a text rule and the fix agent fixes the 12 one by one (as one Message Batch, or
synchronously). The pattern's signature is "satisfaction": a word of the defective sentence that is not the defect,
and that every fix leaves in place. A fix is judged by the issue it fixes (the promise is gone from its sentence,
nothing else changed), not by the recogniser: every defective item is fixed, every clean item stays byte-identical,
whether a person approves or the driver auto-approves, and every paid request is on record (sent and answered).

The expected texts are written out by hand below (the oracle), not computed by the code under test.
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from sqlalchemy import Engine, text

from desk import open_desk
from santa_core.batch.file import read_batch
from santa_core.batch.store import BatchConfig
from santa_core.rubrics.library import load_builtin
from storage.hashing import json_hash
from tests.conftest import grant
from tests.support.messages_api import (
    MessagesStub,
    default_answer,
    fenced_output,
    fix_json,
    message,
    review_json,
    schema_properties,
)

PLAIN = "Your satisfaction is guaranteed forever."
TAILED = "Your satisfaction is guaranteed forever, whatever happens."
PLAIN_FIXED = "We hope you enjoy it."  # the approved fix: the representative says it plainly
TAILED_FIXED = "Your satisfaction matters to us, whatever happens."  # the fix agent keeps "satisfaction"
TEMPLATES = ("promo", "welcome", "receipt", "survey", "reminder")
SPEC = "Write a short customer e-mail for the template named in the item. Make no promise we cannot keep."
TITLE = "promises satisfaction guaranteed forever"
SEED = 4
_PROMISE = re.compile(r"Your satisfaction is guaranteed forever[^.]*\.")


def identical_csv() -> tuple[bytes, dict[str, str], dict[str, str]]:
    """(the file, key → its defective output, key → that output as fixed, written out by hand).

    Every promo item (40) and item-001 carry the promise; 12 promo items in its tailed sentence.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["id", "template", "output"])
    defective: dict[str, str] = {}
    fixed: dict[str, str] = {}
    for i in range(200):
        key, template = f"item-{i:03d}", TEMPLATES[i % len(TEMPLATES)]
        text = f"Hello customer {i}, thanks for reading our {template} note, number {i}."
        if template == "promo" or i == 1:
            tailed = template == "promo" and (i // 5) % 10 in (1, 4, 7)
            promise, honest = (TAILED, TAILED_FIXED) if tailed else (PLAIN, PLAIN_FIXED)
            text = f"Hello customer {i}, our spring sale starts today. {promise} Discounts apply to orders over $50."
            defective[key] = text
            fixed[key] = (
                f"Hello customer {i}, our spring sale starts today. {honest} Discounts apply to orders over $50."
            )
        writer.writerow([key, template, text])
    return buf.getvalue().encode("utf-8"), defective, fixed


def paid_requests(stub: MessagesStub) -> list[dict]:
    """Every request body the server was asked to answer (and bill): messages, screens, Message Batch items."""
    bodies = [c["body"] for c in stub.calls if c["path"].split("?")[0] == "/v1/messages"]
    for c in stub.batch_calls():
        if c["method"] == "POST" and c["path"].split("?")[0].rstrip("/").endswith("/batches"):
            bodies += [r["params"] for r in c["body"]["requests"]]
    return bodies


def call_rows(engine: Engine) -> tuple[list[tuple], list[tuple]]:
    """(what each sent note served, its request hash, its estimate), and the same of each answer with its cost."""
    with engine.connect() as conn:
        sent = conn.execute(text("SELECT coalesce(run_id, -batch_id), request_hash, estimate_usd FROM llm_call_sent"))
        answered = conn.execute(text("SELECT coalesce(run_id, -batch_id), request_hash, cost_usd FROM llm_call"))
        return [tuple(r) for r in sent], [tuple(r) for r in answered]


def answer(body: dict) -> dict:
    """The stub as both reviewers (FAIL on the promise, quoting its sentence) and the fix agent."""
    model, output = body.get("model", "stub-model"), fenced_output(body)
    found = _PROMISE.search(output)
    if "edits" in schema_properties(body):
        if found is None:
            return message(fix_json([]), model)
        after = (
            PLAIN_FIXED if found.group(0) == PLAIN else found.group(0).replace("is guaranteed forever", "matters to us")
        )
        return message(fix_json([(0, found.group(0), after)]), model)
    if found is None:
        return default_answer(body)
    return message(
        review_json(
            "FAIL", [("compliance", "FAIL", "a promise we cannot keep")], [("compliance", TITLE, found.group(0))]
        ),
        model,
    )


@pytest.mark.parametrize(
    ("message_batches", "auto"),
    [(True, False), (False, False), (True, True)],
    ids=["message batches", "synchronous", "auto-approve by the driver"],
)
def test_the_identical_defect_batch_is_fixed_in_every_defective_item(
    tmp_path, monkeypatch: pytest.MonkeyPatch, messages_stub: MessagesStub, message_batches: bool, auto: bool
) -> None:
    monkeypatch.setenv("SANTA_BATCH_POLL_S", "0.01")
    messages_stub.handler = answer
    messages_stub.batch_end_after_polls = 2
    data, defective, fixed = identical_csv()
    assert len(defective) == 41 and sum(PLAIN in t for t in defective.values()) == 29
    desk = open_desk(f"sqlite:///{tmp_path / 'santa.db'}", mark_interrupted=False)
    try:
        grant(desk.runs)
        file = read_batch(data, "emails.csv", strata=["template"])
        config = BatchConfig(
            name="emails.csv",
            file_format=file.format,
            columns=file.columns,
            id_column=file.id_column,
            output_column=file.output_column,
            spec=SPEC,
            strata=file.strata,
            rubric=load_builtin("general"),
            reviewer_b="claude-sonnet-5-5",
            reviewer_c="claude-haiku-5-5",
            fixer="claude-opus-5-5",
            seed=SEED,
            message_batches=message_batches,
            auto_approve=auto,
        )
        service = desk.batches
        batch_id = service.create(file, config, "ann")
        first = service.wait(service.sample(batch_id, "ann"), timeout=120)
        sampled = {r.key for r in service.store.reviews(first.id)}
        [pattern] = service.find_patterns(first.id)
        # The scenario of the issue: a recogniser that is a word of the sentence but not the defect.
        assert pattern.pattern["signature"] == ["satisfaction"]
        assert PLAIN in defective[pattern.pattern["representative"]]
        assert set(defective) - sampled  # most of the defective items were not sampled
        if not auto:
            service.propose(pattern.id, "ann")
        plans = service.preview(pattern.id).plans
        assert {k for k, p in plans.items() if p.via == "fix agent"} == {k for k, t in defective.items() if TAILED in t}
        if auto:  # the driver approved the complete plan as it closed the sample, nobody on a page
            assert service.store.pattern(pattern.id).decided_by == "auto-approve"
        else:
            service.approve(pattern.id, "ann", seen=service.preview(pattern.id).version)
        items = {it.key: it for it in service.store.items(batch_id)}
        unfixed = {
            k: plans[k].outcome() for k, it in items.items() if k in defective and it.output == it.original_output
        }
        assert not unfixed  # issue 32 saw 12 "needs fix": "the fix agent's edit leaves “satisfaction” in place"
        assert {k for k, it in items.items() if it.output != it.original_output} == set(defective)
        for key, item in items.items():
            assert item.output == fixed.get(key, item.original_output)  # fixed as written out, or byte-identical
        fix_calls = [c for c in messages_stub.message_calls() if "edits" in schema_properties(c["body"])]
        if message_batches:
            assert len(messages_stub.batch_ids()) == 2  # the sample's reviews, then the fixes: one Message Batch each
        else:
            assert len(fix_calls) == 1 + 12  # the representative, then the tailed items one by one
        # Every paid request the server received is on record before it left and answered after.
        paid = paid_requests(messages_stub)
        sent, answered = call_rows(desk.runs.engine)
        assert len(paid) == len(sent) == len(answered) > 100
        assert sorted(h for _, h, _ in sent) == sorted(h for _, h, _ in answered) == sorted(map(json_hash, paid))
        # The batch's cost is what those calls cost: each once, nothing cut off.
        assert service.store.cost(batch_id) == pytest.approx(sum(usd for _, _, usd in answered))
    finally:
        desk.close()
