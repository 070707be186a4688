"""Batch reviews through the real SDK's Message Batches client against the loopback stub."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import Any

import anthropic
import pytest

from santa_core.models import Criterion, Rubric, Usage
from santa_core.models import ReviewStatus as S
from santa_core.pricing import cost_usd
from santa_core.reviewers.anthropic import AnthropicReviewer
from santa_core.reviewers.base import ReviewRequest
from santa_core.reviewers.message_batches import (
    BatchError,
    BatchNotEnded,
    ReviewJob,
    build_requests,
    cancel,
    collect,
    custom_id_for,
    dump_jobs,
    load_jobs,
    may_have_made,
    outcome_of,
    poll,
    submit,
)
from santa_core.run.gate import slot_verdict
from tests.support.messages_api import (
    CANCELED,
    EXPIRED,
    MessagesStub,
    Reply,
    error_reply,
    errored,
    fenced_output,
    message,
    review_json,
)

MODEL = "claude-sonnet-5-5"
RUBRIC = Rubric(
    name="letters",
    criteria=[
        Criterion(
            id="facts",
            name="Facts",
            category="factual accuracy",
            pass_condition="every date matches the spec",
            fail_signal="a date differs",
        ),
        Criterion(id="tone", name="Tone", category="compliance", pass_condition="polite", fail_signal="rude words"),
    ],
)
SPEC = "Write to Ann: party on 3 May."
PASS_TEXT = review_json("PASS", [("facts", "PASS"), ("tone", "PASS")])
LETTER = "Dear Ann, see you on 4 May."
FAIL_TEXT = review_json("FAIL", [("facts", "FAIL"), ("tone", "PASS")], [("facts", "wrong date", "4 May")])
USAGE = {
    "input_tokens": 1000,
    "output_tokens": 500,
    "cache_creation_input_tokens": 2000,
    "cache_read_input_tokens": 10000,
}
# sonnet-5-5 list: 1000*2 + 500*10 + 2000*2.5 + 10000*0.20 = 14,000 USD per million tokens
SYNC_COST = 0.014
BATCH_COST = 0.007  # the rates file's batch_discount = 0.5 takes half off every line


def client_for(stub: MessagesStub, max_retries: int = 3) -> anthropic.Anthropic:
    """A real SDK client aimed at the stub."""
    return anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=max_retries)


def request(output: str) -> ReviewRequest:
    return ReviewRequest(rubric=RUBRIC, spec=SPEC, output=output)


def job(item: str, output: str | None = None, slot: str = "B", model: str = MODEL) -> ReviewJob:
    return ReviewJob(
        custom_id=custom_id_for(item, slot), model=model, slot=slot, request=request(output or f"Dear Ann ({item})")
    )


def by_output(body: dict) -> Any:
    """A stand-in model: FAIL an output containing '4 May', invalid JSON for 'GARBLED', else PASS."""
    output = fenced_output(body)
    if "GARBLED" in output:
        return message('{"verdict": "PASS", "checks": [', MODEL)
    return message(FAIL_TEXT if "4 May" in output else PASS_TEXT, MODEL, usage=USAGE)


def without_nonce(body: dict) -> str:
    """A request body as text with its fence nonce blanked, to compare two builds."""
    text = json.dumps(body, sort_keys=True)
    nonce = re.search(r"<untrusted_output_([0-9a-f]+)>", text)
    assert nonce, "no output fence in the request"
    return text.replace(nonce.group(1), "NONCE")


# --- jobs and requests --------------------------------------------------------------------


def test_batch_params_are_what_the_sync_reviewer_sends(messages_stub: MessagesStub) -> None:
    AnthropicReviewer(MODEL, client=client_for(messages_stub)).review(request("Dear Ann"), "B")
    sync_body = messages_stub.message_calls()[0]["body"]
    one = job("a", "Dear Ann")
    assert without_nonce(one.params) == without_nonce(sync_body)
    assert not any("cache_control" in block for block in one.params["system"])  # a short prefix: nothing to cache
    assert one.params["output_config"]["format"]["type"] == "json_schema"
    assert (one.params["max_tokens"], one.params["output_config"]["effort"]) == (8192, "medium")

    submit(client_for(messages_stub), [one])
    (create,) = [c for c in messages_stub.batch_calls() if c["method"] == "POST"]
    # Sent verbatim: the batch carries the job's params, nonce included, and nothing else.
    assert create["body"] == {"requests": [{"custom_id": "a-B", "params": one.params}]}
    assert messages_stub.message_calls() == messages_stub.message_calls()[:1]  # no sync call


@pytest.mark.parametrize(
    "custom_id",
    [
        pytest.param("", id="empty"),
        pytest.param("a" * 65, id="65-chars"),
        pytest.param("item 1", id="space"),
        pytest.param("item/1", id="slash"),
        pytest.param("élan", id="non-ascii"),
    ],
)
def test_invalid_custom_id_is_refused_with_the_rule(custom_id: str) -> None:
    with pytest.raises(ValueError, match="1-64 letters, digits, '_' or '-'"):
        ReviewJob(custom_id=custom_id, model=MODEL, slot="B", request=request("x"))


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        pytest.param(("sku-1", "B"), "sku-1-B", id="already-valid-kept"),
        pytest.param(("sku 12/é", "C"), None, id="cleaned-and-hashed"),
        pytest.param(("x" * 100, "B"), None, id="too-long-cut-and-hashed"),
    ],
)
def test_custom_id_for_always_gives_a_valid_id(parts: tuple[str, str], expected: str | None) -> None:
    cid = custom_id_for(*parts)
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", cid)
    if expected is not None:
        assert cid == expected
    else:
        assert cid != "-".join(parts) and len(cid) <= 64


def test_custom_id_for_keeps_ids_that_clean_up_alike_apart() -> None:
    assert custom_id_for("sku 12/é", "B") != custom_id_for("sku 12/è", "B")
    assert custom_id_for("a b", "B") != custom_id_for("a_b", "B")  # "a_b-B" is valid as is


def test_duplicate_custom_ids_and_empty_batches_are_refused(messages_stub: MessagesStub) -> None:
    with pytest.raises(ValueError, match="repeated: a-B"):
        build_requests([job("a"), job("a", "other text")])
    with pytest.raises(ValueError, match="at least one review job"):
        submit(client_for(messages_stub), [])
    assert messages_stub.batch_calls() == []


def test_jobs_survive_json_with_their_params() -> None:
    jobs = [job("a"), job("b", slot="C", model="claude-haiku-5-5")]
    again = load_jobs(dump_jobs(jobs))
    assert again == jobs
    assert [j.params for j in again] == [j.params for j in jobs]  # same nonce: not rebuilt
    assert again[0].params is not None and again[0].params == jobs[0].params


def test_params_for_another_model_are_refused() -> None:
    data = json.loads(dump_jobs([job("a")]))
    data[0]["model"] = "claude-haiku-5-5"
    with pytest.raises(ValueError, match="params were built for model 'claude-sonnet-5-5'"):
        load_jobs(json.dumps(data))


# --- the lifecycle ------------------------------------------------------------------------


def test_submit_poll_end_collect(messages_stub: MessagesStub) -> None:
    messages_stub.handler = by_output
    client = client_for(messages_stub)
    jobs = [job("ok", "Party on 3 May."), job("bad", "Party on 4 May."), job("garbled", "GARBLED")]
    batch_id = submit(client, jobs)

    status = poll(client, batch_id)
    assert (status.processing_status, status.request_counts.processing, status.ended) == ("in_progress", 3, False)
    assert status.latency_s == 0.0 and not status.results_available
    with pytest.raises(BatchNotEnded, match=f"{batch_id} is still in_progress"):
        collect(client, batch_id, jobs)

    messages_stub.end_batch(batch_id, duration_s=5400)
    status = poll(client, batch_id)
    assert status.ended and status.results_available
    assert (status.request_counts.succeeded, status.request_counts.processing) == (3, 0)

    out = collect(client, batch_id, jobs)
    assert list(out) == ["ok-B", "bad-B", "garbled-B"]
    ok, bad, garbled = out.values()
    assert (ok.status, slot_verdict(ok, RUBRIC.criterion_ids()), ok.reviewer, ok.slot) == (S.OK, "PASS", MODEL, "B")
    assert (bad.status, slot_verdict(bad, RUBRIC.criterion_ids())) == (S.OK, "FAIL")
    assert bad.review.critical_issues[0].evidence == "4 May"
    assert garbled.status == S.ERROR and "not valid JSON for the review schema" in garbled.error
    assert slot_verdict(garbled, RUBRIC.criterion_ids()) == "FAIL"
    # 5400 s between created_at and ended_at: the batch's wall time, the same for every item.
    assert {o.latency_s for o in out.values()} == {5400.0}
    assert ok.usage == Usage(**USAGE) and ok.cost_usd == pytest.approx(BATCH_COST)
    (call,) = ok.calls
    assert (call.purpose, call.model, call.request, call.response) == ("review", MODEL, jobs[0].params, PASS_TEXT)
    assert call.cost_usd == ok.cost_usd and call.latency_s == 5400.0
    results_get = messages_stub.batch_calls()[-1]
    assert results_get["path"].endswith(f"{batch_id}/results")
    assert results_get["headers"]["accept"] == "application/binary"


def test_batch_costs_half_of_the_same_review_done_synchronously(messages_stub: MessagesStub) -> None:
    messages_stub.handler = lambda body: message(PASS_TEXT, MODEL, usage=USAGE)
    client = client_for(messages_stub)
    sync = AnthropicReviewer(MODEL, client=client, answer_attempts=1).review(request("Dear Ann"), "B")
    batch_id = submit(client, [job("a", "Dear Ann")])
    messages_stub.end_batch(batch_id)
    batched = collect(client, batch_id, [job("a", "Dear Ann")])["a-B"]
    assert sync.usage == batched.usage == Usage(**USAGE)
    assert sync.cost_usd == pytest.approx(SYNC_COST)
    assert batched.cost_usd == pytest.approx(BATCH_COST)
    assert batched.cost_usd == pytest.approx(cost_usd(MODEL, batched.usage, batch=True))


TRUNCATED = PASS_TEXT[: len(PASS_TEXT) // 2]


@pytest.mark.parametrize(
    ("reply", "verdict", "needle"),
    [
        pytest.param(message(PASS_TEXT, MODEL), "PASS", None, id="pass"),
        pytest.param(message(FAIL_TEXT, MODEL), "FAIL", None, id="fail"),
        pytest.param(
            message(review_json("PASS", [("facts", "FAIL"), ("tone", "PASS")]), MODEL),
            "FAIL",
            "no critical issue names it",
            id="pass-contradicting-its-failed-check",
        ),
        pytest.param(message(PASS_TEXT, MODEL, thinking='{"verdict": "FAIL"}'), "PASS", None, id="thinking-first"),
        pytest.param(message(PASS_TEXT, MODEL, stop_reason="refusal"), "FAIL", "refused to answer", id="refusal"),
        pytest.param(
            message(TRUNCATED, MODEL, stop_reason="max_tokens"), "FAIL", "cut off at max_tokens=8192", id="max-tokens"
        ),
        pytest.param(message(PASS_TEXT, MODEL, stop_reason="pause_turn"), "FAIL", "did not finish", id="pause-turn"),
        pytest.param(message("It passes.", MODEL), "FAIL", "not valid JSON for the review schema", id="prose"),
        pytest.param(message(review_json("MAYBE"), MODEL), "FAIL", "verdict", id="wrong-enum"),
        pytest.param(message("", MODEL), "FAIL", "answered with no text", id="empty"),
    ],
)
def test_batch_answers_are_judged_exactly_like_sync_answers(
    messages_stub: MessagesStub, reply: dict, verdict: str, needle: str | None
) -> None:
    client = client_for(messages_stub)
    messages_stub.script(reply)
    sync = AnthropicReviewer(MODEL, client=client, answer_attempts=1).review(request(LETTER), "B")
    jobs = [job("a", LETTER)]
    batch_id = submit(client, jobs)
    messages_stub.end_batch(batch_id, results={"a-B": reply})
    batched = collect(client, batch_id, jobs)["a-B"]
    same = ("status", "error", "review", "raw_response", "usage", "reviewer", "slot")
    assert {k: getattr(batched, k) for k in same} == {k: getattr(sync, k) for k in same}
    assert slot_verdict(batched, RUBRIC.criterion_ids()) == slot_verdict(sync, RUBRIC.criterion_ids()) == verdict
    assert (needle is None) == (batched.error is None)
    if needle:
        assert needle in batched.error and batched.review is None
    assert batched.cost_usd == pytest.approx(sync.cost_usd / 2)


@pytest.mark.parametrize(
    ("result", "needle"),
    [
        pytest.param(
            errored("overloaded_error", "Overloaded"),
            "batch request errored: overloaded_error: Overloaded",
            id="errored",
        ),
        pytest.param(
            error_reply(400, "invalid_request_error", "max_tokens: too large"),
            "batch request errored: invalid_request_error: max_tokens: too large",
            id="errored-from-reply",
        ),
        pytest.param(EXPIRED, "expired: the batch reached its 24-hour limit", id="expired"),
        pytest.param(CANCELED, "canceled before it was processed", id="canceled"),
    ],
)
def test_unanswered_requests_are_errors_never_passes(messages_stub: MessagesStub, result: Any, needle: str) -> None:
    client = client_for(messages_stub)
    jobs = [job("a"), job("b")]
    batch_id = submit(client, jobs)
    messages_stub.end_batch(batch_id, results={"a-B": result})
    out = collect(client, batch_id, jobs)
    broken = out["a-B"]
    assert (broken.status, broken.review, slot_verdict(broken, RUBRIC.criterion_ids())) == (S.ERROR, None, "FAIL")
    assert needle in broken.error
    assert (broken.usage, broken.cost_usd) == (Usage(), 0.0)
    (call,) = broken.calls
    assert (call.error, call.request, call.response) == (broken.error, jobs[0].params, "")
    assert slot_verdict(out["b-B"], RUBRIC.criterion_ids()) == "PASS"  # the stub's default answer for the other item


def test_a_job_missing_from_the_results_is_an_error(messages_stub: MessagesStub) -> None:
    client = client_for(messages_stub)
    jobs = [job("a"), job("b")]
    batch_id = submit(client, jobs)
    messages_stub.end_batch(batch_id, omit=["b-B"])
    # A line for an id we never sent is ignored, not matched to anything.
    messages_stub.batch(batch_id).lines.append({"custom_id": "stranger-B", "result": EXPIRED})
    out = collect(client, batch_id, jobs)
    assert list(out) == ["a-B", "b-B"]
    assert slot_verdict(out["a-B"], RUBRIC.criterion_ids()) == "PASS"
    missing = out["b-B"]
    assert missing.status == S.ERROR and slot_verdict(missing, RUBRIC.criterion_ids()) == "FAIL"
    assert missing.error == f"no result returned for this request in message batch {batch_id}"
    assert missing.calls[0].request == jobs[1].params


def test_two_lines_for_one_request_fail_closed(messages_stub: MessagesStub) -> None:
    client = client_for(messages_stub)
    jobs = [job("a"), job("b")]
    batch_id = submit(client, jobs)
    batch = messages_stub.end_batch(batch_id)
    batch.lines.append(dict(batch.lines[0]))  # "a-B" PASS twice: which one was billed is unknowable
    out = collect(client, batch_id, jobs)
    assert out["a-B"].status == S.ERROR and out["a-B"].error == "the results hold two lines for this request"
    assert slot_verdict(out["b-B"], RUBRIC.criterion_ids()) == "PASS"


def test_out_of_order_results_are_matched_by_custom_id(messages_stub: MessagesStub) -> None:
    messages_stub.handler = by_output
    client = client_for(messages_stub)
    outputs = {"i1": "on 3 May", "i2": "on 4 May", "i3": "on 3 May", "i4": "on 4 May"}
    jobs = [job(item, text, slot) for item, text in outputs.items() for slot in ("B", "C")]
    batch_id = submit(client, jobs)
    order = [j.custom_id for j in reversed(jobs)]
    messages_stub.end_batch(batch_id, order=order)
    out = collect(client, batch_id, jobs)
    assert list(out) == [j.custom_id for j in jobs]  # job order, whatever the file's order
    assert {cid: slot_verdict(o, RUBRIC.criterion_ids()) for cid, o in out.items()} == {
        f"{item}-{slot}": "FAIL" if "4 May" in text else "PASS" for item, text in outputs.items() for slot in "BC"
    }
    assert all(o.slot == cid[-1] for cid, o in out.items())


def test_scripted_answers_go_to_requests_in_order(messages_stub: MessagesStub) -> None:
    client = client_for(messages_stub)
    jobs = [job("a"), job("b"), job("c")]
    batch_id = submit(client, jobs)
    messages_stub.script(FAIL_TEXT, error_reply(500, "api_error", "boom"), PASS_TEXT)
    messages_stub.end_batch(batch_id, order=["c-B", "a-B", "b-B"])
    out = collect(client, batch_id, jobs)
    assert [slot_verdict(o, RUBRIC.criterion_ids()) for o in out.values()] == ["FAIL", "FAIL", "PASS"]
    assert out["b-B"].error == "batch request errored: api_error: boom"
    assert poll(client, batch_id).request_counts.model_dump() == {
        "processing": 0,
        "succeeded": 2,
        "errored": 1,
        "canceled": 0,
        "expired": 0,
    }


def test_a_batch_that_finishes_after_a_restart(messages_stub: MessagesStub) -> None:
    messages_stub.handler = by_output
    jobs = [job("ok", "on 3 May"), job("bad", "on 4 May", slot="C", model="claude-haiku-5-5")]
    batch_id = submit(client_for(messages_stub), jobs)
    sent = messages_stub.batch(batch_id).requests
    stored = {"batch_id": batch_id, "jobs": dump_jobs(jobs)}  # what the app keeps in its database
    del jobs

    # The app restarts: a new process has only the stored plain data and a fresh client.
    stored = json.loads(json.dumps(stored))
    client = anthropic.Anthropic(base_url=messages_stub.url, api_key="test")
    jobs = load_jobs(stored["jobs"])
    assert not poll(client, stored["batch_id"]).ended
    messages_stub.end_batch(stored["batch_id"])
    out = collect(client, stored["batch_id"], jobs)

    assert {cid: (o.status, slot_verdict(o, RUBRIC.criterion_ids())) for cid, o in out.items()} == {
        "ok-B": (S.OK, "PASS"),
        "bad-C": (S.OK, "FAIL"),
    }
    assert out["bad-C"].reviewer == "claude-haiku-5-5"
    # The call log holds the params really sent before the restart (same fence nonce).
    assert [o.calls[0].request for o in out.values()] == [r["params"] for r in sent]


def test_batch_ends_after_n_polls_when_the_stub_is_set_so(messages_stub: MessagesStub) -> None:
    messages_stub.batch_end_after_polls = 2
    client = client_for(messages_stub)
    batch_id = submit(client, [job("a")])
    assert poll(client, batch_id).processing_status == "in_progress"
    assert poll(client, batch_id).processing_status == "ended"
    assert slot_verdict(collect(client, batch_id, [job("a")])["a-B"], RUBRIC.criterion_ids()) == "PASS"


def test_cancel_makes_unprocessed_requests_canceled_errors(messages_stub: MessagesStub) -> None:
    client = client_for(messages_stub)
    jobs = [job("a"), job("b")]
    batch_id = submit(client, jobs)
    status = cancel(client, batch_id)
    assert status.processing_status == "canceling" and status.cancel_initiated_at is not None
    messages_stub.end_batch(batch_id)
    out = collect(client, batch_id, jobs)
    assert all(o.status == S.ERROR and "canceled" in o.error for o in out.values())


# --- transient and API errors -------------------------------------------------------------


def test_rate_limits_and_overload_are_retried(messages_stub: MessagesStub) -> None:
    client = client_for(messages_stub, max_retries=3)
    messages_stub.script_batches(error_reply(429, "rate_limit_error"), error_reply(529, "overloaded_error"))
    batch_id = submit(client, [job("a")])
    assert len(messages_stub.batch(batch_id).requests) == 1
    creates = [c for c in messages_stub.batch_calls() if c["method"] == "POST"]
    assert len(creates) == 3  # a create is tried again only after an answer that says no batch was made
    assert messages_stub.batch_ids() == [batch_id]  # the retried create made one batch
    messages_stub.end_batch(batch_id)
    messages_stub.script_batches(error_reply(503, "api_error"))  # hits the results download path
    assert slot_verdict(collect(client, batch_id, [job("a")])["a-B"], RUBRIC.criterion_ids()) == "PASS"


@pytest.mark.parametrize(
    "reply", [Reply(200, {}, {}, delay_s=2.0), error_reply(500, "api_error", "lost")], ids=["timeout", "http-500"]
)
def test_a_create_that_may_have_made_a_batch_is_not_sent_again(messages_stub: MessagesStub, reply: Reply) -> None:
    """No answer, or a server error: the batch may exist (and be paid for). Sending it again is a person's call."""
    client = anthropic.Anthropic(base_url=messages_stub.url, api_key="test", max_retries=3, timeout=0.5)
    messages_stub.script_batches(reply)
    with pytest.raises(BatchError, match="could not create a message batch of 1 request") as caught:
        submit(client, [job("a")])
    assert len([c for c in messages_stub.batch_calls() if c["method"] == "POST"]) == 1
    assert may_have_made(caught.value)


@pytest.mark.parametrize(
    ("action", "replies", "needle"),
    [
        pytest.param(
            "poll",
            [error_reply(429, "rate_limit_error", "slow down")] * 3,
            "could not read message batch {id}: rate limited (429 rate_limit_error) after 2 retries: slow down",
            id="poll-429-after-retries",
        ),
        pytest.param(
            "poll",
            [error_reply(529, "overloaded_error", "Overloaded")] * 3,
            "API overloaded (529 overloaded_error) after 2 retries",
            id="poll-529-after-retries",
        ),
        pytest.param(
            "submit",
            [error_reply(400, "invalid_request_error", "requests.0: bad")],
            "could not create a message batch of 1 request(s): request rejected (400",
            id="submit-400",
        ),
        pytest.param(
            "collect",
            [error_reply(500, "api_error", "disk")] * 3,
            "could not read message batch {id}: server error (500",
            id="collect-500",
        ),
    ],
)
def test_api_failures_after_retries_raise_a_clear_batch_error(
    messages_stub: MessagesStub, action: str, replies: list, needle: str
) -> None:
    client = client_for(messages_stub, max_retries=2)
    batch_id = "" if action == "submit" else submit(client, [job("a")])
    if action == "collect":
        messages_stub.end_batch(batch_id)
    messages_stub.script_batches(*replies)
    with pytest.raises(BatchError) as caught:
        if action == "poll":
            poll(client, batch_id)
        elif action == "submit":
            submit(client, [job("a")])
        else:
            collect(client, batch_id, [job("a")])
    assert needle.format(id=batch_id) in str(caught.value)
    assert isinstance(caught.value.__cause__, anthropic.APIError)
    assert action != "submit" or not may_have_made(caught.value)  # a 400 is an answer: no batch was made


@pytest.mark.parametrize(
    ("download", "needle"),
    [
        pytest.param(error_reply(500, "api_error", "lost"), "server error (500 api_error): lost", id="http-500"),
        pytest.param(
            Reply(200, {"content-type": "application/binary"}, '{"custom_id": "a-B", "resu'),
            "not JSON",
            id="truncated-line",
        ),
    ],
)
def test_a_failure_while_downloading_results_raises(messages_stub: MessagesStub, download: Reply, needle: str) -> None:
    client = client_for(messages_stub, max_retries=0)
    batch_id = submit(client, [job("a")])
    messages_stub.end_batch(batch_id)
    # Our poll and the SDK's own retrieve succeed (None: no scripted reply); the download fails.
    messages_stub.script_batches(None, None, download)
    with pytest.raises(BatchError, match=f"could not read the results of message batch {batch_id}") as caught:
        collect(client, batch_id, [job("a")])
    assert needle in str(caught.value)
    assert messages_stub.batch_calls()[-1]["path"].endswith("/results")


def test_unknown_batch_id_is_a_clear_error(messages_stub: MessagesStub) -> None:
    with pytest.raises(BatchError, match="could not read message batch msgbatch_nope: not found"):
        poll(client_for(messages_stub), "msgbatch_nope")


@pytest.mark.parametrize(
    ("result", "needle"),
    [
        pytest.param(SimpleNamespace(type="weird"), "unknown batch result type 'weird'", id="unknown-type"),
        pytest.param(None, "unknown batch result type None", id="no-result"),
        pytest.param(
            SimpleNamespace(type="succeeded", message={"text": PASS_TEXT}),
            "answer was not a message",
            id="succeeded-without-a-message",
        ),
    ],
)
def test_unreadable_results_fail_closed(result: Any, needle: str) -> None:
    outcome = outcome_of(job("a"), result)
    assert (
        outcome.status == S.ERROR
        and needle in outcome.error
        and slot_verdict(outcome, RUBRIC.criterion_ids()) == "FAIL"
    )


def test_a_batch_answer_quoting_text_the_output_does_not_hold_is_refused(messages_stub: MessagesStub) -> None:
    """The contract holds on the batch path too: the quote is checked against the job's own output."""
    client = client_for(messages_stub)
    jobs = [job("a", "Dear Ann")]  # FAIL_TEXT quotes "4 May", which this output does not hold
    batch_id = submit(client, jobs)
    messages_stub.end_batch(batch_id, results={"a-B": message(FAIL_TEXT, MODEL)})
    outcome = collect(client, batch_id, jobs)["a-B"]
    assert outcome.review is None and "does not hold" in outcome.error
