"""The Anthropic reviewer and fix agent, through the real SDK against the loopback stub; pricing."""

from __future__ import annotations

import contextvars
import json
from concurrent.futures import ThreadPoolExecutor

import anthropic
import pytest

from santa_core.config import KNOWN_MODELS
from santa_core.models import Criterion, MergedIssue, Rubric, Usage
from santa_core.models import ReviewStatus as S
from santa_core.pricing import cost_usd, estimate_call_usd, is_known, load_rates, rates_as_of
from santa_core.providers import OPENAI_MODELS
from santa_core.reviewers.anthropic import AnthropicFixer, AnthropicReviewer
from santa_core.reviewers.base import Fixer, FixRequest, Reviewer, ReviewRequest
from santa_core.run.gate import slot_verdict
from tests.support.messages_api import FAST_RETRY, MessagesStub, Reply, error_reply, fix_json, message, review_json

MODEL = "claude-opus-5-5"
RUBRIC = Rubric(
    name="letters",
    version=2,
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
REQUEST = ReviewRequest(rubric=RUBRIC, spec="Write to Ann: party on 3 May.", output="Dear Ann, party on 3 May.")
PASS_TEXT = review_json("PASS", [("facts", "PASS"), ("tone", "PASS")])


def client_for(stub: MessagesStub, max_retries: int = 3) -> anthropic.Anthropic:
    """A real SDK client aimed at the stub."""
    return anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=max_retries)


def reviewer(stub: MessagesStub, max_retries: int = 3, answer_attempts: int = 1, **kw) -> AnthropicReviewer:
    """One answer judged as it is (test_answer_retry covers asking again)."""
    return AnthropicReviewer(
        MODEL, client=client_for(stub, max_retries), max_retries=max_retries, answer_attempts=answer_attempts, **kw
    )


# --- request shape ------------------------------------------------------------------------


def test_request_uses_structured_output_and_nothing_forbidden(messages_stub: MessagesStub) -> None:
    outcome = reviewer(messages_stub).review(REQUEST, "B")
    (call,) = messages_stub.message_calls()
    body = call["body"]
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert body["output_config"]["effort"] == "medium"
    verdict = body["output_config"]["format"]["schema"]["properties"]["verdict"]
    assert set(verdict["enum"]) == {"PASS", "FAIL"}
    for forbidden in ("tool_choice", "tools", "temperature", "top_p", "top_k", "thinking"):
        assert forbidden not in body
    assert [m["role"] for m in body["messages"]] == ["user"]  # no assistant prefill
    # A first request of a prefix (and a prefix shorter than the model's minimum) carries no cache breakpoint:
    # its write would not be read (tests/core/reviewers/test_prompt_economy.py has when one is placed).
    assert not any("cache_control" in block for block in body["system"])
    user = body["messages"][0]["content"]
    assert "<untrusted_output_" in user and REQUEST.output in user
    assert body["model"] == MODEL and body["max_tokens"] == 8192
    # anthropic 2.15 sends the API key as a bearer token, not x-api-key.
    assert call["headers"]["authorization"] == "Bearer test"
    # The call log holds exactly the body that was sent; the key travels only in headers.
    assert outcome.calls[0].request == body
    assert "Bearer" not in json.dumps(outcome.calls[0].request)


def test_effort_none_sends_no_output_config_effort(messages_stub: MessagesStub) -> None:
    reviewer(messages_stub, effort=None).review(REQUEST, "B")
    assert "effort" not in messages_stub.message_calls()[0]["body"]["output_config"]


def test_adapters_satisfy_protocols() -> None:
    assert isinstance(AnthropicReviewer(MODEL), Reviewer)
    assert isinstance(AnthropicFixer(MODEL), Fixer)
    assert AnthropicReviewer(MODEL).name == MODEL


# --- happy paths --------------------------------------------------------------------------


def test_pass_answer_is_parsed_with_usage_cost_and_raw(messages_stub: MessagesStub) -> None:
    usage = {
        "input_tokens": 1000,
        "output_tokens": 500,
        "cache_creation_input_tokens": 2000,
        "cache_read_input_tokens": 10000,
    }
    messages_stub.script(message(PASS_TEXT, MODEL, usage=usage))
    outcome = reviewer(messages_stub).review(REQUEST, "C")
    assert (outcome.status, outcome.error, outcome.slot, outcome.reviewer) == (S.OK, None, "C", MODEL)
    assert outcome.review is not None and slot_verdict(outcome, RUBRIC.criterion_ids()) == "PASS"
    assert outcome.usage == Usage(**usage)
    # 1000*4 + 500*20 + 2000*5 + 10000*0.20 = 26,000 USD per million tokens
    assert outcome.cost_usd == pytest.approx(0.026)
    assert outcome.raw_response == PASS_TEXT
    assert outcome.latency_s > 0
    (call,) = outcome.calls
    assert (call.purpose, call.model, call.response, call.error) == ("review", MODEL, PASS_TEXT, None)
    assert call.usage == outcome.usage and call.cost_usd == outcome.cost_usd


def test_thinking_block_before_text_is_skipped(messages_stub: MessagesStub) -> None:
    messages_stub.script(message(PASS_TEXT, MODEL, thinking='{"verdict": "FAIL"} is what I thought'))
    outcome = reviewer(messages_stub).review(REQUEST, "B")
    assert outcome.status == S.OK and outcome.review.verdict == "PASS"
    assert outcome.raw_response == PASS_TEXT


def test_null_usage_fields_become_zero(messages_stub: MessagesStub) -> None:
    messages_stub.script(
        message(
            PASS_TEXT,
            MODEL,
            usage={
                "input_tokens": 7,
                "output_tokens": 3,
                "cache_creation_input_tokens": None,
                "cache_read_input_tokens": None,
            },
        )
    )
    outcome = reviewer(messages_stub).review(REQUEST, "B")
    assert outcome.usage == Usage(input_tokens=7, output_tokens=3)


def test_default_stub_answer_passes_every_criterion(messages_stub: MessagesStub) -> None:
    outcome = reviewer(messages_stub).review(REQUEST, "B")
    assert outcome.status == S.OK
    assert [c.criterion for c in outcome.review.checks] == ["facts", "tone"]


def test_rate_limit_then_success_is_retried_by_the_sdk(messages_stub: MessagesStub) -> None:
    messages_stub.script(error_reply(429, "rate_limit_error", "slow down"), message(PASS_TEXT, MODEL))
    outcome = reviewer(messages_stub).review(REQUEST, "B")
    assert outcome.status == S.OK
    calls = messages_stub.message_calls()
    assert len(calls) == 2
    assert calls[1]["headers"]["x-stainless-retry-count"] == "1"


def test_client_built_lazily_from_env(messages_stub: MessagesStub) -> None:
    outcome = AnthropicReviewer(MODEL, max_retries=0).review(REQUEST, "B")
    assert outcome.status == S.OK and len(messages_stub.message_calls()) == 1


def test_handler_can_answer_per_model_and_reviewers_run_concurrently(messages_stub: MessagesStub) -> None:
    fail = review_json("FAIL", [("facts", "FAIL"), ("tone", "PASS")], [("facts", "wrong date", "3 May")])
    messages_stub.handler = lambda body: fail if body["model"] == "claude-haiku-5-5" else PASS_TEXT
    b = AnthropicReviewer(MODEL, client=client_for(messages_stub))
    c = AnthropicReviewer("claude-haiku-5-5", client=client_for(messages_stub))
    # Each review in a copy of this thread's context, taken here: the journal goes along to the pool's threads.
    jobs = [(contextvars.copy_context(), b, "B"), (contextvars.copy_context(), c, "C")]
    with ThreadPoolExecutor(2) as pool:
        ob, oc = pool.map(lambda job: job[0].run(job[1].review, REQUEST, job[2]), jobs)
    assert (slot_verdict(ob, RUBRIC.criterion_ids()), slot_verdict(oc, RUBRIC.criterion_ids())) == ("PASS", "FAIL")
    assert oc.review.critical_issues[0].evidence == "3 May"
    assert len(messages_stub.message_calls()) == 2


# --- fail closed --------------------------------------------------------------------------

TRUNCATED = PASS_TEXT[: len(PASS_TEXT) // 2]
OVERLOADED = error_reply(529, "overloaded_error", "Overloaded")


@pytest.mark.parametrize(
    ("replies", "max_retries", "status", "needle", "http_calls"),
    [
        pytest.param(
            [OVERLOADED] * 3,
            2,
            S.ERROR,
            "overloaded (529 overloaded_error) after 2 retries",
            3,
            id="529-overloaded-after-retries",
        ),
        pytest.param(
            [error_reply(429, "rate_limit_error")] * 2, 1, S.ERROR, "rate limited (429", 2, id="429-after-retries"
        ),
        pytest.param(
            [error_reply(400, "invalid_request_error", "bad field")],
            3,
            S.ERROR,
            "request rejected (400 invalid_request_error): bad field",
            1,
            id="400-not-retried",
        ),
        pytest.param(
            [error_reply(401, "authentication_error", "invalid x-api-key")],
            3,
            S.ERROR,
            "authentication failed (401",
            1,
            id="401",
        ),
        pytest.param(
            [Reply(500, FAST_RETRY, "<html>oops</html>")], 0, S.ERROR, "server error (500)", 1, id="500-non-json-body"
        ),
        pytest.param(
            [message(PASS_TEXT, MODEL, stop_reason="refusal")],
            3,
            S.ERROR,
            f"reviewer {MODEL} refused to answer",
            1,
            id="refusal",
        ),
        pytest.param(
            [message(TRUNCATED, MODEL, stop_reason="max_tokens")],
            3,
            S.ERROR,
            "cut off at max_tokens=8192 (truncated JSON)",
            1,
            id="max-tokens-truncated",
        ),
        pytest.param(
            [message(PASS_TEXT, MODEL, stop_reason="pause_turn")],
            3,
            S.ERROR,
            "did not finish (stop_reason='pause_turn')",
            1,
            id="pause-turn",
        ),
        pytest.param(
            [message("I think it passes.", MODEL)],
            3,
            S.ERROR,
            "not valid JSON for the review schema",
            1,
            id="prose-not-json",
        ),
        pytest.param(
            [message(review_json("MAYBE"), MODEL)],
            3,
            S.ERROR,
            "not valid JSON for the review schema: verdict",
            1,
            id="wrong-enum",
        ),
        pytest.param(
            [message('{"verdict": "PASS"}', MODEL)], 3, S.ERROR, "checks: Field required", 1, id="missing-fields"
        ),
        pytest.param([message("", MODEL)], 3, S.ERROR, "answered with no text", 1, id="empty-text"),
        pytest.param([Reply(200, {}, "not json at all")], 3, S.ERROR, "not JSON", 1, id="200-non-json"),
        pytest.param(
            [Reply(200, {}, PASS_TEXT, delay_s=1.0)], 0, S.TIMEOUT, "timed out: no answer within 0.2s", 1, id="timeout"
        ),
    ],
)
def test_failures_are_error_outcomes_never_verdicts(
    messages_stub: MessagesStub, replies: list, max_retries: int, status: S, needle: str, http_calls: int
) -> None:
    messages_stub.script(*replies)
    outcome = reviewer(messages_stub, max_retries=max_retries, timeout=0.2).review(REQUEST, "B")
    assert outcome.status == status
    assert needle in outcome.error
    assert outcome.review is None and slot_verdict(outcome, RUBRIC.criterion_ids()) == "FAIL"
    assert len(messages_stub.message_calls()) == http_calls
    # Every attempt is its own call in the log (the SDK retried nothing unseen), the last one the outcome's.
    assert len(outcome.calls) == http_calls
    assert outcome.calls[-1].error == outcome.error and all(c.request["model"] == MODEL for c in outcome.calls)


@pytest.mark.parametrize(
    ("reply", "billed"),
    [
        pytest.param(OVERLOADED, True, id="529: the request left, the API may have done the work"),
        pytest.param(error_reply(500, "api_error", "boom"), True, id="500"),
        pytest.param(Reply(200, {}, PASS_TEXT, delay_s=1.0), True, id="timeout"),
        pytest.param(Reply(drop=True), True, id="dropped connection"),
        pytest.param(Reply(200, {}, "not json at all"), True, id="200 not JSON"),
        pytest.param(error_reply(429, "rate_limit_error"), False, id="429: refused, not billed"),
        pytest.param(error_reply(400, "invalid_request_error", "bad field"), False, id="400"),
        pytest.param(error_reply(401, "authentication_error"), False, id="401"),
        pytest.param(error_reply(413, "request_too_large"), False, id="413"),
    ],
)
def test_a_failed_call_counts_at_its_estimate_unless_the_api_refused_it(
    messages_stub: MessagesStub, reply: Reply, billed: bool
) -> None:
    messages_stub.script(reply)
    outcome = reviewer(messages_stub, max_retries=0, timeout=0.2).review(REQUEST, "B")
    (call,) = outcome.calls
    assert outcome.review is None and call.error
    sent = messages_stub.message_calls()[0]["body"]
    assert outcome.cost_usd == call.cost_usd == (pytest.approx(estimate_call_usd(MODEL, sent)) if billed else 0.0)


def test_a_connection_never_made_sent_nothing_and_costs_nothing() -> None:
    client = anthropic.Anthropic(base_url="http://127.0.0.1:9", api_key="test", max_retries=0)  # (discard port)
    outcome = AnthropicReviewer(MODEL, client=client, max_retries=0).review(REQUEST, "B")
    assert "could not reach the API" in outcome.error and outcome.cost_usd == 0.0


def test_refusal_keeps_raw_text_and_usage(messages_stub: MessagesStub) -> None:
    messages_stub.script(
        message("I can't help with that.", MODEL, stop_reason="refusal", usage={"input_tokens": 10, "output_tokens": 4})
    )
    outcome = reviewer(messages_stub).review(REQUEST, "B")
    assert outcome.raw_response == "I can't help with that."
    assert outcome.usage.input_tokens == 10 and outcome.cost_usd > 0


def test_missing_api_key_is_an_error_not_a_crash(messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    outcome = AnthropicReviewer(MODEL, max_retries=0).review(REQUEST, "B")
    assert outcome.status == S.ERROR and "ANTHROPIC_API_KEY" in outcome.error


# --- fix agent ----------------------------------------------------------------------------

FIX_REQUEST = FixRequest(
    spec=REQUEST.spec,
    output="Dear Ann, party on 4 May.",
    issues=[MergedIssue(criterion="facts", description="wrong date", evidence="4 May", flagged_by="both")],
)


def test_fixer_happy_path(messages_stub: MessagesStub) -> None:
    messages_stub.script(message(fix_json([(0, "4 May", "3 May")]), MODEL, usage={"input_tokens": 1_000_000}))
    answer = AnthropicFixer(MODEL, client=client_for(messages_stub), answer_attempts=1).propose(FIX_REQUEST)
    assert answer.error is None
    assert [(e.issue, e.before, e.after) for e in answer.plan.edits] == [(0, "4 May", "3 May")]
    assert answer.cost_usd == pytest.approx(4.0 + 50 * 20 / 1e6)
    body = messages_stub.message_calls()[0]["body"]
    assert "edits" in body["output_config"]["format"]["schema"]["properties"]
    assert "<untrusted_issues_" in body["messages"][0]["content"]
    assert answer.calls[0].purpose == "fix" and answer.calls[0].request == body


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        pytest.param(
            message('{"edits": [{"issue": "x"}]}', MODEL), "not valid JSON for the fix plan schema", id="wrong-schema"
        ),
        pytest.param(message(fix_json(), MODEL, stop_reason="refusal"), f"fix agent {MODEL} refused", id="refusal"),
        pytest.param(error_reply(400, "invalid_request_error", "nope"), "request rejected (400", id="http-400"),
    ],
)
def test_fixer_failures_set_error_and_no_plan(messages_stub: MessagesStub, reply: object, needle: str) -> None:
    messages_stub.script(reply)
    answer = AnthropicFixer(MODEL, client=client_for(messages_stub, 0), answer_attempts=1).propose(FIX_REQUEST)
    assert answer.plan is None and needle in answer.error
    assert answer.calls[0].error == answer.error


# --- pricing ------------------------------------------------------------------------------


def test_cost_is_hand_computed_including_cache_lines() -> None:
    usage = Usage(
        input_tokens=2_000, output_tokens=1_000, cache_creation_input_tokens=4_000, cache_read_input_tokens=100_000
    )
    # sonnet-5-5: 2000*2 + 1000*10 + 4000*2.5 + 100000*0.20 = 44,000 per million
    assert cost_usd("claude-sonnet-5-5", usage) == pytest.approx(0.044)
    assert cost_usd("claude-sonnet-5-5", usage, batch=True) == pytest.approx(0.022)
    # haiku-5-5: 2000*0.1 + 1000*0.5 + 4000*0.125 + 100000*0.01 = 2,200 per million
    assert cost_usd("claude-haiku-5-5", usage) == pytest.approx(0.0022)


def test_unknown_model_uses_most_expensive_rates() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_creation_input_tokens=1_000_000,
        cache_read_input_tokens=1_000_000,
    )
    assert not is_known("claude-nonesuch-9") and is_known("claude-fable-5-1")
    # max input 10 (fable), output 50 (fable), 5m write 12.5 (fable), read 0.50 (opus-5)
    assert cost_usd("claude-nonesuch-9", usage) == pytest.approx(73.0)
    assert all(cost_usd("claude-nonesuch-9", usage) >= cost_usd(m, usage) for m in load_rates().models)


def test_rates_file_is_dated_and_consistent() -> None:
    rates = load_rates()
    assert rates_as_of() == "2026-12-02" and rates.batch_discount == 0.5
    claude = {n: r for n, r in rates.models.items() if n.startswith("claude-")}
    openai = {n: r for n, r in rates.models.items() if n.startswith("openai:")}
    assert set(claude) == set(KNOWN_MODELS) and set(openai) == {f"openai:{m}" for m in OPENAI_MODELS}
    assert len(claude) + len(openai) == len(rates.models)  # every listed model is offered, every offered one priced
    for name, r in claude.items():
        assert r.cache_write_5m == pytest.approx(1.25 * r.input), name  # Anthropic bills a cache write premium
    for name, r in openai.items():
        # OpenAI bills no cache writes (caching is automatic) and reads cached input for less, dated per model
        assert r.cache_write_5m == r.input and r.cache_read < r.input and r.as_of, name


def test_load_rates_from_another_file(tmp_path) -> None:
    path = tmp_path / "rates.toml"
    path.write_text(
        'as_of = "2030-01-01"\n[models.m]\ninput = 1\noutput = 2\ncache_write_5m = 1.25\ncache_read = 0.1\n'
    )
    rates = load_rates(path)
    assert rates_as_of(rates) == "2030-01-01" and rates.batch_discount == 0.0
    assert cost_usd("m", Usage(output_tokens=1_000_000), rates=rates) == pytest.approx(2.0)


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": 0, "output_tokens": 0},
        {"input_tokens": -5, "output_tokens": -5},
        {"input_tokens": 10**20, "output_tokens": 5},
    ],
    ids=["none", "negative", "absurd"],
)
def test_usage_a_gateway_bends_is_counted_at_the_calls_upper_bound(messages_stub: MessagesStub, usage: dict) -> None:
    from santa_core.pricing import estimate_call_usd

    messages_stub.script(message(PASS_TEXT, MODEL, usage=usage))
    outcome = reviewer(messages_stub).review(REQUEST, "B")
    assert outcome.status == S.OK
    [call] = outcome.calls
    assert call.cost_usd > 0 and call.cost_usd == pytest.approx(estimate_call_usd(MODEL, call.request))
    assert call.usage == Usage()  # nothing absurd reaches the store
