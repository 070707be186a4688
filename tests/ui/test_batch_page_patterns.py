"""The Batch page from a finished sample to a verified export: a planted defect is found as one
pattern, fixed across the batch and a fresh sample comes back clean, with the export byte-identical
outside the fix; auto-approve, dismissing a pattern, a group of failed reviews to handle by hand,
an item that could not take the fix (each caveat on the stopping rule), and the export names and
results shown to people. The reviewers and the fix agent are the real Anthropic adapters talking to the loopback stub
(`messages_stub`); background work is awaited by polling the database and re-running the page, as
the page's polling fragment would.
"""

from __future__ import annotations

from sqlmodel import Session, select

from santa_core.batch.driver import BatchDriver
from santa_core.batch.store import SampledReview
from storage.batches import BatchStore
from storage.runs import RunStore
from storage.tables import BatchItemRow
from tests.core.batch.test_driver import DEFECT, FIXED, SPEC, planted_csv
from tests.support.batch_page import (
    TITLE,
    batch_answer,
    downloads,
    keys,
    media_url,
    open_batch,
    rows,
    sample_in,
    seeded_batch,
    texts,
    upload,
    wait_until,
)
from tests.support.messages_api import MessagesStub, default_answer, error_reply, fenced_output
from ui.batch import MIME, export_name, result_of

SEED = 13
"""The draw is deterministic: SHA-256 ranks of seed and item id (the file's ids). With 5 templates of
40 items at 15 %, 6 promo items are sampled, so the planted 20 % (8 of 40 promo items) is caught with
probability 1 − C(32, 6)/C(40, 6) = 76.4 %. Seed 13 catches it with 3 of the 8, so the pattern has
several examples; seeds 1 (the default), 5, 11 and 12 miss it."""
CAUGHT = {"item-000", "item-125", "item-150"}


# --- acceptance -------------------------------------------------------------------------------------


PROGRESS_ANCHOR = (
    '<div id="batch-progress"></div><script>document.getElementById("batch-progress")'
    '.scrollIntoView({block: "start"});</script>'
)


def test_a_planted_defect_is_found_fixed_across_the_batch_and_a_fresh_sample_is_clean(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    messages_stub.handler = batch_answer
    store = BatchStore(desk_env)
    data, planted = planted_csv()  # 200 items, 5 templates of 40; 8 promo items (20 %) make the promise
    assert len(planted) == 8
    at = upload(open_batch(), data, strata=["template"], spec=SPEC, seed=SEED)
    shown = texts(at)
    assert "Detected CSV" in shown and "200 items" in shown and "id: id, output: output, spec: none" in shown
    # Before sampling: the sample size, the chances over the batch and inside the promo template, the cost.
    assert "What a sample of 30 of 200 items catches" in shown
    assert (
        "Least covered: A pattern in 20.0 % of stratum promo (8 of its 40 items) is caught with probability 76.4 %: "
        "6 of its items are sampled."
    ) in shown
    assert {m.label for m in at.metric} >= {"One sample (estimated)", "Full verification (estimated)"}
    assert store.batches() == []  # nothing stored before the click
    assert "No batches yet" not in shown  # the file is in: the form says the rest
    # What the click does, in numbers: 15 % of 200 is 30, six from each of the five templates.
    assert at.button(key="batch_create").label == "Create the batch and review sample 1 (30 of 200 items)"

    at.button(key="batch_create").click().run()
    [batch] = store.batches()
    assert at.query_params["batch"] in (str(batch.id), [str(batch.id)])
    # The render after Create brings the progress into view (a rerun keeps the scroll of the long form above).
    assert [h.proto.body for h in at.get("html")] == [PROGRESS_ANCHOR]
    assert at.get("progress")[0].text.startswith("Sample 1: ")
    at.run()
    assert not at.get("html")  # once: later renders keep whatever the person scrolled to
    first = sample_in(store, batch.id, 1, at)

    # The sample found the planted defect as one pattern, with its strata, evidence and examples.
    reviews = store.reviews(first.id)
    assert first.size == 30 and {r.key for r in reviews if not r.nice} == CAUGHT
    [pattern] = store.patterns(batch.id, first.id)
    shown = texts(at)
    assert "Sample 1: 27 NICE, 3 NAUGHTY of 30" in shown
    assert TITLE in shown and "3 of 30 sampled items (10.0 %)" in shown and "template: promo 3" in shown
    assert any(c.value == DEFECT for c in at.code)  # the evidence, quoted
    runs = {r.key: r.run_id for r in reviews}
    links = {link.proto.query_string for link in at.get("page_link")}
    assert {f"run={runs[k]}" for k in CAUGHT} <= links  # each example opens its run

    # Ask the fix agent: its proposal as a diff on the representative, and what it would do to the batch.
    at.button(key=f"batch_propose_{pattern.id}").click().run()
    assert not at.exception, at.exception
    assert any(c.language == "diff" and f"+ {FIXED}" in c.value for c in at.code)
    assert "8 item(s) in the batch show this pattern: approving changes 8." in texts(at)
    at.text_input(key=f"batch_reason_{pattern.id}").set_value("the offer ended")
    at.button(key=f"batch_approve_{pattern.id}").click().run()
    assert "Fix applied: 8 item(s) of the batch changed." in texts(at)
    items = {it.key: it for it in store.items(batch.id)}
    assert {k for k, it in items.items() if it.changed} == planted

    # No pattern is open: resample; a fresh sample comes back clean and the stopping rule is stated.
    at.button(key="batch_resample").click().run()
    second = sample_in(store, batch.id, 2, at)
    assert second.clean and second.size == 30
    shown = texts(at)
    rule = BatchDriver(desk_env, BatchStore(desk_env), None, None).stopping_rule(batch.id)  # type: ignore[arg-type]
    assert rule is not None and rule.clean and rule.statement() in shown
    assert "The sample came back clean: with 95 % confidence at most" in shown

    # The export on the page: fixed items carry the fix, every other item is byte-identical to the upload.
    exporter = BatchDriver(desk_env, BatchStore(desk_env), None, None)  # type: ignore[arg-type] - export only reads
    csv_bytes, jsonl_bytes = exporter.export(batch.id, "csv"), exporter.export(batch.id, "jsonl")
    exporter.shutdown()
    offered = downloads(at)
    assert offered["batch_export_csv"] == media_url(csv_bytes, MIME["csv"], "emails-verified.csv")
    assert offered["batch_export_jsonl"] == media_url(jsonl_bytes, MIME["jsonl"], "emails-verified.jsonl")
    uploaded, exported = rows(data), rows(csv_bytes)
    assert list(exported) == list(uploaded)  # every item, in file order
    for key, row in uploaded.items():
        out = exported[key]
        assert (out["template"], out["locale"]) == (row["template"], row["locale"])
        if key in planted:
            assert out["output"].encode() == row["output"].replace(DEFECT, FIXED).encode()
            assert out["santa_original_output"].encode() == row["output"].encode()
            assert out["santa_pattern"] == TITLE and out["santa_status"] in ("fixed", "verified")
        else:
            assert out["output"].encode() == row["output"].encode()  # byte for byte
            assert out["santa_original_output"] == "" and out["santa_pattern"] == ""


# --- the other paths -------------------------------------------------------------------------------


def test_auto_approve_applies_the_fix_without_a_person(desk_env: RunStore, messages_stub: MessagesStub) -> None:
    messages_stub.handler = batch_answer
    store = BatchStore(desk_env)
    data, planted = planted_csv()
    at = upload(open_batch(), data, strata=["template"], spec=SPEC, seed=SEED, auto=True)
    at.button(key="batch_create").click().run()
    [batch] = store.batches()
    assert batch.config.auto_approve
    sample_in(store, batch.id, 1, at)
    # The batch driver fixes it as it closes the sample (the page only shows what it did).
    wait_until("the auto-approved fix", lambda: [p.status for p in store.patterns(batch.id)] == ["applied"], at)
    [pattern] = store.patterns(batch.id)
    assert pattern.decided_by == "auto-approve" and pattern.reason.startswith("auto-approved")
    assert {it.key for it in store.items(batch.id) if it.changed} == planted
    shown = texts(at)
    assert "Fix approved by auto-approve: 8 item(s) of the batch changed." in shown and "batch_resample" in keys(at)


def test_fixes_whose_message_batch_may_exist_are_shown_with_try_again(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    """The fixes' Message Batch got no answer to its create: the pattern's card says it may exist and nothing sends
    it again on its own; Try again (a person's, on record) prepares each item's fix."""
    from santa_core.batch.fix_batch import CUT_SHORT, STOPPED

    batch_id = seeded_batch(messages_stub)
    store = BatchStore(desk_env)
    [pattern] = store.patterns(batch_id)
    at = open_batch(batch_id)
    at.button(key=f"batch_propose_{pattern.id}").click().run()
    store.set_fix_batch(pattern.id, {"status": f"{STOPPED}{CUT_SHORT} (request timed out)"})  # as a timed-out create
    store.save_proposal(pattern.id, store.pattern(pattern.id).proposal, "ann")  # its items' fixes not prepared
    at.run()
    shown = texts(at)
    assert "which stopped: sending the fixes' Message Batch got no clear answer" in shown
    assert "Nothing sends it again on its own." in shown
    at.button(key=f"batch_fix_retry_{pattern.id}").click().run()
    assert store.pattern(pattern.id).item_fixes is not None and "batch_fix_retry" not in " ".join(keys(at))
    assert [e.actor for e in desk_env.audit.events(action="batch.fixes_retried")] == ["local"]


def test_dismissing_needs_a_reason_and_leaves_a_caveat_on_the_stopping_rule(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    batch_id = seeded_batch(messages_stub)
    store = BatchStore(desk_env)
    [pattern] = store.patterns(batch_id)
    at = open_batch(batch_id)
    at.button(key=f"batch_dismiss_{pattern.id}").click().run()
    assert "Not done: say why the pattern is dismissed" in texts(at)
    assert store.pattern(pattern.id).status == "open" and "batch_resample" not in keys(at)
    at.text_input(key=f"batch_reason_{pattern.id}").set_value("legal approved the promise")
    at.button(key=f"batch_dismiss_{pattern.id}").click().run()
    assert store.pattern(pattern.id).status == "dismissed" and not any(it.changed for it in store.items(batch_id))
    shown = texts(at)
    assert "Dismissed by local user (local). Reason: legal approved the promise" in shown
    assert "with 95 % confidence" not in shown  # no bound from a sample that had failures
    assert "once a sample comes back clean" in shown
    # The reviewers now accept the promise (as legal did): the next sample is clean, with a caveat.
    messages_stub.handler = default_answer
    at.button(key="batch_resample").click().run()
    assert sample_in(store, batch_id, 2, at).clean
    shown = texts(at)
    assert "The sample came back clean: with 95 % confidence at most" in shown
    assert f"Caveat: 1 pattern(s) were dismissed without a fix: “{TITLE}” (legal approved the promise)" in shown


def test_items_whose_review_failed_are_a_group_to_handle_by_hand(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    def broken(body: dict) -> object:
        """A reviewer request about a promo output is refused (400: not retried): the review fails."""
        if DEFECT in fenced_output(body):
            return error_reply(400, "invalid_request_error", "stub refuses this request")
        return batch_answer(body)

    batch_id = seeded_batch(messages_stub, handler=broken)
    [bucket] = BatchStore(desk_env).patterns(batch_id)
    assert bucket.pattern["kind"] == "review_failed"
    at = open_batch(batch_id)
    shown = texts(at)
    assert "review failed" in shown and "fix or check them by hand, then mark the group handled" in shown
    assert f"batch_propose_{bucket.id}" not in keys(at)  # no fix agent for a group without an issue
    at.text_input(key=f"batch_reason_{bucket.id}").set_value("re-checked by hand: fine")
    at.button(key=f"batch_dismiss_{bucket.id}").click().run()
    assert BatchStore(desk_env).pattern(bucket.id).status == "dismissed" and "batch_resample" in keys(at)


def test_an_item_that_could_not_take_the_fix_leaves_a_caveat_on_the_stopping_rule(
    desk_env: RunStore, messages_stub: MessagesStub
) -> None:
    batch_id = seeded_batch(messages_stub)
    store = BatchStore(desk_env)
    victim = "item-000"  # a promo item neither sample draws (the draw is deterministic)
    with Session(desk_env.engine) as s, s.begin():  # the file had the promise twice in this item
        row = s.exec(select(BatchItemRow).where(BatchItemRow.item_key == victim)).one()
        row.output = row.original_output = f"{row.output} {DEFECT}"
    [pattern] = store.patterns(batch_id)
    at = open_batch(batch_id)
    at.button(key=f"batch_propose_{pattern.id}").click().run()
    wait_until("the proposal", lambda: store.pattern(pattern.id).proposal is not None, at)
    at.button(key=f"batch_approve_{pattern.id}").click().run()
    assert store.pattern(pattern.id).status == "applied"
    messages_stub.handler = default_answer
    at.button(key="batch_resample").click().run()
    second = sample_in(store, batch_id, 2, at)
    assert second.clean and victim not in {r.key for r in store.reviews(second.id)}
    shown = texts(at)
    assert "The sample came back clean: with 95 % confidence at most" in shown
    assert (
        f"Caveat: 1 item(s) showed a fixed pattern but could not take its edit and still need a fix by hand: {victim}."
    ) in shown


def test_names_and_results_for_people() -> None:
    from santa_core.models import RunStatus

    assert export_name("emails.csv", "jsonl") == "emails-verified.jsonl"
    assert export_name("in/items.tsv", "csv") == "items-verified.csv"
    review = SampledReview(
        item_id=1, key="a", run_id=3, status=RunStatus.SAMPLED, output="x", strata={}, reviewer_error=True
    )
    assert result_of(review) == "NAUGHTY (reviewer error)"
    assert result_of(review.model_copy(update={"status": None})) == "waiting"
