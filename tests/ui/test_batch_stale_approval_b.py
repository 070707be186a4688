"""Review probe: a person's approval on the Batch page names the plan version they SAW (issue 32: "a person's
approval names the plan version they saw"). The page computes `seen` again on the click's own rerun, from the
plans stored by then, so a plan changed between the render and the click is approved without being seen."""

from __future__ import annotations

from storage.batches import BatchStore
from storage.runs import RunStore
from tests.support.batch_page import open_batch, seeded_batch, texts
from tests.support.messages_api import MessagesStub


def test_a_plan_changed_after_the_render_is_not_approved_by_the_stale_click(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    batch_id = seeded_batch(messages_stub)
    store = BatchStore(desk_env)
    [pattern] = store.patterns(batch_id)
    at = open_batch(batch_id)
    at.button(key=f"batch_propose_{pattern.id}").click().run()
    fixes = store.pattern(pattern.id).item_fixes
    assert fixes
    seen_page = texts(at)
    # Another person (or process) prepares the items' fixes again meanwhile: one item's fix now reads otherwise.
    key = next(k for k, p in fixes.items() if p["via"] != "representative" and p["after_text"] != p["before_text"])
    changed = {**fixes, key: {**fixes[key], "after_text": fixes[key]["after_text"] + " NOBODY SAW THIS."}}
    store.save_item_fixes(pattern.id, changed, "ann")
    assert "NOBODY SAW THIS" not in seen_page
    at.button(key=f"batch_approve_{pattern.id}").click().run()  # the click on what the person saw
    items = {it.key: it for it in store.items(batch_id)}
    assert "NOBODY SAW THIS" not in items[key].output, "a plan nobody saw was approved"
