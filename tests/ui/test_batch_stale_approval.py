"""revb (adversarial review of issue 32): "a person's approval names the plan version they saw". On the Batch page
the version is computed in the click's own rerun, after the fix was asked for again by someone else, so the stale
approval goes through with a plan the approver never saw."""

from __future__ import annotations

from storage.batches import BatchStore
from storage.runs import RunStore
from tests.core.batch.test_driver import DEFECT, SPEC, planted_csv
from tests.support.batch_page import batch_answer, open_batch, sample_in, texts, upload
from tests.support.messages_api import MessagesStub, fix_json, message, schema_properties

SEED = 13


def test_an_approval_of_a_plan_someone_replaced_is_refused(desk_env: RunStore, messages_stub: MessagesStub) -> None:
    messages_stub.handler = batch_answer
    store = BatchStore(desk_env)
    data, _ = planted_csv()
    ann = upload(open_batch(), data, strata=["template"], spec=SPEC, seed=SEED)
    ann.button(key="batch_create").click().run()
    [batch] = store.batches()
    first = sample_in(store, batch.id, 1, ann)
    [pattern] = store.patterns(batch.id, first.id)
    ann.button(key=f"batch_propose_{pattern.id}").click().run()
    assert "8 item(s) in the batch show this pattern: approving changes 8." in texts(ann)  # what ann sees

    def other_fix(body: dict) -> dict:  # the fix agent, asked again, now keeps the promise
        if "edits" in schema_properties(body):
            return message(fix_json([(0, "guaranteed forever", "guaranteed forever, truly")]), body.get("model", "m"))
        return batch_answer(body)

    messages_stub.handler = other_fix
    bob = open_batch(batch.id)
    bob.button(key=f"batch_repropose_{pattern.id}").click().run()  # another person asks again
    assert not bob.exception, bob.exception
    ann.button(key=f"batch_approve_{pattern.id}").click().run()  # ann clicks on what she saw
    changed = [it.key for it in store.items(batch.id) if it.changed]
    assert store.pattern(pattern.id).status != "applied", (
        f"a stale approval went through on a plan ann never saw; changed items now read: "
        f"{[it.output for it in store.items(batch.id) if it.changed][:1]} ({len(changed)} items)"
    )
    assert DEFECT  # (kept for reading)
