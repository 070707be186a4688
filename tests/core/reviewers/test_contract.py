"""The terse answer contract (issue 18): a PASS needs no prose; a failure must be shown (a quote from the output,
or `missing` when something is absent); an answer that breaks it is asked again, then a reviewer error."""

from __future__ import annotations

import json

import anthropic
import openai
import pytest

from santa_core.models import Criterion, Review, ReviewStatus, Rubric
from santa_core.reviewers.anthropic import AnthropicReviewer
from santa_core.reviewers.base import ReviewRequest
from santa_core.reviewers.contract import contract_problem
from santa_core.reviewers.openai_compat import ChatReviewer
from santa_core.run.gate import slot_verdict
from tests.support.chat_api import ChatStub, completion
from tests.support.messages_api import MessagesStub, message, review_json

MODEL = "claude-sonnet-5-5"
RUBRIC = Rubric(
    name="copy",
    version=1,
    criteria=[
        Criterion(
            id="facts",
            name="Facts",
            category="factual accuracy",
            pass_condition="claims match the spec",
            fail_signal="a claim the spec does not make",
        ),
        Criterion(
            id="cta",
            name="Call to action",
            category="completeness",
            pass_condition="ends with a call to action",
            fail_signal="no call to action",
        ),
        Criterion(
            id="style",
            name="Style",
            category="style",
            pass_condition="short sentences",
            fail_signal="a long sentence",
            severity="suggestion",
        ),
    ],
)
IDS = RUBRIC.criterion_ids()
OUTPUT = 'Aurora lamp: "the brightest lamp" - ever made. Three brightness levels.'
REQUEST = ReviewRequest(rubric=RUBRIC, spec="Announce Aurora: three levels. End with a call to action.", output=OUTPUT)


def terse(verdict: str, failed: dict[str, str] | None = None, issues: list[dict] | None = None) -> str:
    """A terse answer: PASS checks carry no detail key at all; failed ones a sentence."""
    checks = [
        {"criterion": i, "result": "FAIL", "detail": failed[i]}
        if failed and i in failed
        else {"criterion": i, "result": "PASS"}
        for i in IDS
    ]
    return json.dumps({"verdict": verdict, "checks": checks, "critical_issues": issues or [], "suggestions": []})


QUOTED = {
    "criterion": "facts",
    "description": "An unbacked superlative.",
    "evidence": '"the brightest lamp" - ever made',
}
NO_QUOTE = {"criterion": "facts", "description": "An unbacked superlative."}
MISSING = {"criterion": "cta", "description": "No call to action.", "evidence": "", "missing": True}


def review_with(stub: MessagesStub, *answers: str, attempts: int = 1):
    stub.script(*[message(a, MODEL) for a in answers])
    client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
    return AnthropicReviewer(MODEL, client=client, answer_attempts=attempts).review(REQUEST, "B")


def test_a_pass_with_no_detail_is_accepted(messages_stub: MessagesStub) -> None:
    outcome = review_with(messages_stub, terse("PASS"))
    assert outcome.status == ReviewStatus.OK and outcome.error is None
    assert slot_verdict(outcome, IDS, advisory=["style"]) == "PASS"
    assert all(c.detail == "" for c in outcome.review.checks)


@pytest.mark.parametrize(
    ("answer", "ok"),
    [
        pytest.param(terse("FAIL", {"facts": "A superlative."}, [QUOTED]), True, id="quoted"),
        pytest.param(terse("FAIL", {"cta": "None at the end."}, [MISSING]), True, id="missing-says-so"),
        pytest.param(terse("PASS", {"style": "One long sentence."}), True, id="suggestion-needs-no-issue"),
        pytest.param(terse("FAIL", {"facts": "A superlative."}, [NO_QUOTE]), False, id="no-quote-not-missing"),
        pytest.param(
            terse("FAIL", {"facts": "A superlative."}, [{**QUOTED, "evidence": "   "}]), False, id="blank-quote"
        ),
        pytest.param(terse("FAIL", {"facts": "A superlative."}), False, id="failed-check-no-issue"),
        pytest.param(terse("PASS", {"facts": "A superlative."}), False, id="pass-with-failed-critical-check"),
        pytest.param(terse("FAIL"), False, id="fail-showing-nothing"),
        pytest.param(terse("FAIL", {"style": "One long sentence."}), False, id="fail-on-a-suggestion-only"),
        pytest.param(
            terse("FAIL", {"facts": "A superlative."}, [{**QUOTED, "missing": True}]),
            False,
            id="a-quote-said-to-be-missing",
        ),
        pytest.param(
            terse("FAIL", {"facts": "A superlative."}, [{**QUOTED, "evidence": "the best lamp in the world"}]),
            False,
            id="quote-the-output-does-not-hold",
        ),
        pytest.param(
            terse("FAIL", {"facts": "A superlative."}, [{**QUOTED, "evidence": 'the  brightest   lamp" - ever'}]),
            True,
            id="quote-held-up-to-spacing",
        ),
        pytest.param(
            terse("FAIL", {"facts": "A superlative."}, [{**QUOTED, "evidence": "“the brightest lamp” – ever"}]),
            True,
            id="quote-held-up-to-quote-marks-and-dashes",
        ),
    ],
)
def test_a_failure_must_be_shown(messages_stub: MessagesStub, answer: str, ok: bool) -> None:
    assert (contract_problem(Review.model_validate_json(answer), RUBRIC, OUTPUT) is None) == ok
    outcome = review_with(messages_stub, answer)
    if ok:
        assert outcome.status == ReviewStatus.OK and outcome.review is not None, outcome.error
    else:
        # refused, never read as a verdict either way; the raw answer and its cost are kept
        assert outcome.status == ReviewStatus.ERROR and outcome.review is None
        assert "answer broke the contract" in outcome.error
        assert outcome.raw_response == answer and len(outcome.calls) == 1


def test_a_refused_answer_is_asked_again(messages_stub: MessagesStub) -> None:
    bad = terse("FAIL", {"facts": "A superlative."}, [NO_QUOTE])
    good = terse("FAIL", {"facts": "A superlative."}, [QUOTED])
    outcome = review_with(messages_stub, bad, good, attempts=3)
    assert outcome.status == ReviewStatus.OK and outcome.review.critical_issues[0].evidence == QUOTED["evidence"]
    assert len(outcome.calls) == 2 and "quotes no evidence" in outcome.calls[0].error


def test_a_contract_breach_is_asked_again_once_not_four_times(messages_stub: MessagesStub) -> None:
    bad = terse("FAIL", {"facts": "A superlative."}, [NO_QUOTE])
    outcome = review_with(messages_stub, bad, bad, bad, bad, attempts=4)
    assert outcome.status == ReviewStatus.ERROR and len(outcome.calls) == 2
    assert "the last of 2 attempts" in outcome.error


def test_a_near_miss_of_an_advisory_id_blocks_as_the_gate_counts_it() -> None:
    """ "Style" is not the suggestion "style": the gate counts its FAIL as blocking, so the contract wants an issue."""
    answer = json.loads(terse("PASS"))
    answer["checks"][2] = {"criterion": "Style", "result": "FAIL", "detail": "Long."}
    assert "no critical issue names it" in contract_problem(Review.model_validate(answer), RUBRIC)


def test_suggestions_beyond_three_are_cut_not_asked_again(messages_stub: MessagesStub) -> None:
    answer = json.loads(terse("PASS"))
    answer["suggestions"] = [f"idea {i}" for i in range(50)]
    outcome = review_with(messages_stub, json.dumps(answer))
    assert outcome.status == ReviewStatus.OK and outcome.review.suggestions == ["idea 0", "idea 1", "idea 2"]
    assert len(outcome.calls) == 1 and "idea 49" in outcome.raw_response


def test_the_contract_holds_on_the_second_provider() -> None:
    with ChatStub() as stub:
        stub.script(completion(terse("FAIL", {"facts": "A superlative."}, [NO_QUOTE]), "gpt-5.4-nano"))
        client = openai.OpenAI(base_url=stub.url, api_key="test-openai", max_retries=0)
        outcome = ChatReviewer("openai:gpt-5.4-nano", "gpt-5.4-nano", client, answer_attempts=1).review(REQUEST, "C")
    assert outcome.status == ReviewStatus.ERROR and "quotes no evidence" in outcome.error


def test_the_completeness_rule_does_not_relax() -> None:
    """A terse PASS that skips a criterion still counts as FAIL at the gate (one check per criterion)."""
    from santa_core.models import ReviewOutcome

    skipped = json.loads(terse("PASS"))
    skipped["checks"] = skipped["checks"][:-1]
    review = Review.model_validate(skipped)
    assert contract_problem(review, RUBRIC) is None
    outcome = ReviewOutcome(slot="B", reviewer=MODEL, status=ReviewStatus.OK, review=review)
    assert slot_verdict(outcome, IDS, advisory=["style"]) == "FAIL"


def test_the_schema_sent_lets_a_pass_go_without_detail_and_asks_for_missing(messages_stub: MessagesStub) -> None:
    review_with(messages_stub, review_json("PASS", [(i, "PASS", "") for i in IDS]))
    schema = messages_stub.message_calls()[0]["body"]["output_config"]["format"]["schema"]
    assert schema["$defs"]["ReviewIssue"]["properties"]["missing"]["type"] == "boolean"
    assert schema["$defs"]["CheckResult"]["properties"]["detail"]["description"].startswith('"" for a PASS')
