"""On the Batch page, an item excluded from one pattern's fix is named on the next pattern that reaches it, left out
of that fix by default, and included only by name (the real adapters talk to the loopback stub)."""

from __future__ import annotations

import csv
import io
import json

from desk import open_desk
from santa_core.batch.file import read_batch
from santa_core.batch.store import BatchConfig
from santa_core.rubrics.library import load_builtin
from storage.batches import BatchStore
from storage.runs import RunStore
from tests.core.batch.test_exclusions_across import FIXES, OUTPUTS, PROMISE, RISKY, WHY, sentences
from tests.support import messages_api as api
from tests.support import two_defects as td
from tests.support.batch_page import open_batch, texts
from tests.support.messages_api import MessagesStub


def answer(body: dict) -> dict:
    """Reviewers FAIL factual_accuracy once per flagged sentence; the fix agent fixes the defect its issues name."""
    model, output = body.get("model", "stub-model"), api.fenced_output(body)
    if "edits" in api.schema_properties(body):
        asked = [
            bad
            for phrase, bad in zip((td.RISK, td.GUARANTEE), FIXES, strict=True)
            if f"'{phrase}' claim" in api.user_text(body)
        ]
        edits = [(0, s, s.replace(bad, FIXES[bad])) for s in sentences(output) for bad in asked if bad in s]
        return api.message(api.fix_json(edits), model)
    issues = [
        (td.CRITERION, td.description(p, s), s) for s in sentences(output) for p in (td.RISK, td.GUARANTEE) if p in s
    ]
    if not issues:
        return api.default_answer(body)
    passing = api.default_answer(body)
    ids = [c["criterion"] for c in json.loads(passing["content"][0]["text"])["checks"]]
    checks = [(i, "FAIL" if i == td.CRITERION else "PASS", "x") for i in ids]
    return api.message(api.review_json("FAIL", checks, issues), model)


def reviewed(messages_stub: MessagesStub) -> int:
    """The batch, every item sampled and reviewed, its two patterns found (below the page)."""
    messages_stub.handler = answer
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([["id", "output"], *OUTPUTS.items()])
    file = read_batch(buf.getvalue().encode(), "promo.csv")
    config = BatchConfig(
        name="promo.csv",
        file_format=file.format,
        columns=file.columns,
        id_column=file.id_column,
        output_column=file.output_column,
        spec="A short promo line.",
        rubric=load_builtin("general"),
        reviewer_b="claude-sonnet-5-5",
        reviewer_c="claude-haiku-5-5",
        fixer="claude-opus-5-5",
        sample_rate=1.0,
        min_sample=len(OUTPUTS),
    )
    desk = open_desk(mark_interrupted=False)
    try:
        batch_id = desk.batches.create(file, config, "ann")
        sample_id = desk.batches.sample(batch_id, "ann")
        assert desk.batches.wait(sample_id, timeout=60).finished
        assert len(desk.batches.find_patterns(sample_id)) == 2
        return batch_id
    finally:
        desk.close()


def test_the_next_pattern_names_the_excluded_item_leaves_it_out_and_offers_to_include_it(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    batch_id = reviewed(messages_stub)
    store = BatchStore(desk_env)
    at = open_batch(batch_id)
    shown = texts(at)
    assert "1. Factual accuracy: “risk-free”" in shown and "2. Factual accuracy: “guarantees”" in shown
    first, second = (p.id for p in store.patterns(batch_id))
    for pattern_id in (first, second):
        at.button(key=f"batch_propose_{pattern_id}").click().run()
    at.multiselect(key=f"batch_exclude_{first}").set_value(["both"]).run()
    at.text_input(key=f"batch_reason_{first}").set_value(WHY)
    at.button(key=f"batch_approve_{first}").click().run()
    assert "Excluded, unchanged: both." in texts(at)

    note = f"excluded from pattern 1 of sample 1 (Factual accuracy: “risk-free”): {WHY}"
    shown = texts(at)
    assert f"reaches were excluded from another pattern's fix, so approving leaves them out: both: {note}" in shown
    assert at.multiselect(key=f"batch_include_{second}").options == ["both"]
    assert "both" not in at.multiselect(key=f"batch_exclude_{second}").options
    at.button(key=f"batch_approve_{second}").click().run()
    assert "Left out (excluded from another pattern's fix): both." in texts(at)
    items = {it.key: it.output for it in store.items(batch_id)}
    assert items["both"] == OUTPUTS["both"] == f"Hi. {RISKY} {PROMISE} Bye."
    assert items["guar-1"] == "Hi. The Juno Backpack is quiet at night. Bye."
