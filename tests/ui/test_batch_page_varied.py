"""The Batch page with a defect in varied sentences (tests/support/varied_batch.py): 200 items, a fifth of
the promo stratum saying "… guaranteed …" each its own way. One approval reaches every defective item
(each gets its own fix), a person opens any item's diff, the one item no fix could reach is fixed by
hand in the page, no clean item changes by a byte, the resample is clean, the stopping rule is stated
and the export marks each item fixed, verified, fixed by hand or not sampled. The reviewers and the fix
agent are the real Anthropic adapters talking to the loopback stub."""

from __future__ import annotations

from santa_core.batch.driver import BatchDriver
from storage.batches import BatchStore
from storage.runs import RunStore
from tests.support import varied_batch as vb
from tests.support.batch_page import open_batch, rows, sample_in, texts, upload
from tests.support.messages_api import MessagesStub


def sampled_on_the_page(desk_env: RunStore, messages_stub: MessagesStub):  # noqa: ANN201 - a tuple of six
    """The varied file uploaded on the page (seed vb.SEED, strata template), its first sample in."""
    messages_stub.handler = vb.varied_answer
    store = BatchStore(desk_env)
    data, defective = vb.varied_csv()
    at = upload(open_batch(), data, strata=["template"], spec=vb.SPEC, seed=vb.SEED)
    at.button(key="batch_create").click().run()
    [batch] = store.batches()
    return store, data, defective, at, batch, sample_in(store, batch.id, 1, at)


def test_one_approval_reaches_every_varied_item_and_a_person_fixes_the_last_by_hand(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    store, data, defective, at, batch, first = sampled_on_the_page(desk_env, messages_stub)
    assert {r.key for r in store.reviews(first.id) if not r.nice} == {"item-050", "item-100", "item-150", "item-175"}

    [pattern] = store.patterns(batch.id, first.id)  # four differently worded promises: one pattern
    shown = texts(at)
    assert "Recognised in unsampled items by “guaranteed”" in shown
    assert "recognises 4 of the 4 sampled item(s) showing the pattern and 0 of the 26 that do not" in shown

    at.button(key=f"batch_propose_{pattern.id}").click().run()
    assert not at.exception, at.exception
    assert "8 item(s) in the batch show this pattern: approving changes 7; 1 need a person" in texts(at)
    table = at.dataframe[-1].value
    assert set(table["item"]) == defective
    by_item = dict(zip(table["item"], table["outcome"], strict=True))
    assert by_item["item-000"] == "fixed by the text rule" and by_item["item-025"] == "fixed by the fix agent"
    assert "reaches beyond the sentence" in by_item["item-125"]
    at.selectbox(key=f"batch_open_{pattern.id}").set_value("item-025").run()
    item_025, item_050 = rows(data)["item-025"]["output"], rows(data)["item-050"]["output"]
    [diff] = [c.value for c in at.code if c.language == "diff" and f"- {vb.defects(item_025)[0]}" in c.value]
    assert "expected within" in diff and vb.defects(item_050)[0] not in diff  # its own fix, not the example's

    at.text_input(key=f"batch_reason_{pattern.id}").set_value("we cannot promise timing")
    at.button(key=f"batch_approve_{pattern.id}").click().run()
    assert not at.exception, at.exception
    assert "Fix applied: 7 item(s) of the batch changed." in texts(at)
    assert "Items that need a person" in texts(at)

    hand = store.items(batch.id)
    current = {it.key: it.output for it in hand}["item-125"]
    at.selectbox(key=f"batch_hand_item_{batch.id}").set_value("item-125").run()
    at.text_area(key=f"batch_hand_text_{batch.id}_item-125").set_value(vb.hand_fix(current))
    at.text_input(key=f"batch_hand_reason_{batch.id}_item-125").set_value("rewrote the promise")
    next(b for b in at.button if b.label == "Save my edit").click().run()
    assert not at.exception, at.exception
    assert "Saved: item item-125 is fixed by hand." in texts(at)
    assert "Items that need a person" not in texts(at)

    at.button(key="batch_resample").click().run()
    second = sample_in(store, batch.id, 2, at)
    assert second.clean
    exporter = BatchDriver(desk_env, store, None, None)  # type: ignore[arg-type] - export only reads
    rule = exporter.stopping_rule(batch.id)
    assert rule is not None and rule.clean and rule.statement() in texts(at)
    exported = rows(exporter.export(batch.id, "csv"))
    exporter.shutdown()
    uploaded = rows(data)
    assert {r["santa_status"] for r in exported.values()} == {"fixed", "verified", "fixed by hand", "not sampled"}
    assert exported["item-125"]["santa_status"] == "fixed by hand"
    for key, row in uploaded.items():
        if key in defective:
            assert "guaranteed" not in exported[key]["output"]
            assert exported[key]["santa_status"] in ("fixed", "fixed by hand", "verified")
        else:
            assert exported[key]["output"].encode() == row["output"].encode()  # byte for byte
            assert exported[key]["santa_status"] in ("verified", "not sampled")


def test_signature_form_exclusions_and_an_interrupted_preparation(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    store, data, defective, at, batch, first = sampled_on_the_page(desk_env, messages_stub)
    [pattern] = store.patterns(batch.id, first.id)

    at.text_area(key=f"batch_signature_{pattern.id}").set_value("within")  # the sampled receipts say it too
    next(b for b in at.button if b.label == "Check against the sample and keep").click().run()
    assert "refused, it would reach clean items" in texts(at)
    assert store.pattern(pattern.id).pattern["signature"] == ["guaranteed"]  # kept as it was

    at.button(key=f"batch_propose_{pattern.id}").click().run()
    # Preparing stopped half-way (the storage dropped the prepared fixes, as a new signature does):
    store.set_signature(pattern.id, ["guaranteed"], store.pattern(pattern.id).pattern["signature_check"], "ann")
    at.run()
    assert "Each item's own fix is not prepared" in texts(at)
    assert f"batch_approve_{pattern.id}" not in {b.key for b in at.button}  # nothing half-prepared to approve
    at.button(key=f"batch_prepare_{pattern.id}").click().run()
    assert "8 item(s) in the batch show this pattern: approving changes 7" in texts(at)

    [call] = store.pattern(pattern.id).item_fixes["item-075"]["calls"]  # the item's fix call, kept with its plan
    assert call["purpose"] == "fix" and "customer 75," in str(call["request"])
    at.multiselect(key=f"batch_exclude_{pattern.id}").set_value(["item-025"]).run()
    at.button(key=f"batch_approve_{pattern.id}").click().run()
    assert "say why the excluded items keep their text" in texts(at)
    assert store.pattern(pattern.id).status == "proposed"
    at.text_input(key=f"batch_reason_{pattern.id}").set_value("item-025 quotes a law")
    at.button(key=f"batch_approve_{pattern.id}").click().run()
    assert "Fix applied: 6 item(s) of the batch changed." in texts(at) and "Excluded, unchanged: item-025." in texts(at)
    items = {it.key: it for it in store.items(batch.id)}
    assert not items["item-025"].changed and {k for k, it in items.items() if it.changed} == defective - {
        "item-025",
        "item-125",
    }
