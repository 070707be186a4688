"""Context isolation, checked on the wire: what each reviewer request actually carried."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from santa_core.reviewers.anthropic import AnthropicFixer, AnthropicReviewer
from santa_core.reviewers.prompts import build_review_prompt
from santa_core.rubrics.library import load_builtin
from santa_core.run.runner import Runner
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import migrated_sqlite
from tests.support.messages_api import MessagesStub, santa_scenario, schema_properties, uncached, user_text

SPEC = "Announce the Acme rocket. Mention the 2018 launch."
ROUND1 = "Acme's rocket launched in DEFECT. Order today."


def tagged_scenario(issued: dict[str, bool]):
    """The scenario model, but every reviewer answer carries a unique secret token (noted in `issued`, with
    whether it answered a round-1 text)."""
    lock = threading.Lock()

    def tagged(body: dict):
        reply = santa_scenario(body)
        if "edits" in schema_properties(body):
            return reply
        with lock:
            token = f"SECRET-{len(issued) + 1}"
            issued[token] = "DEFECT" in user_text(body)
        text = json.loads(reply["content"][0]["text"])
        text["suggestions"] = [f"{token} suggestion"]
        for issue in text["critical_issues"]:
            issue["description"] += f" {token}"
        reply["content"][0]["text"] = json.dumps(text)
        return reply

    return tagged


def test_reviewer_requests_carry_only_rubric_spec_and_this_rounds_output(
    tmp_path: Path, messages_stub: MessagesStub
) -> None:
    messages_stub.handler = tagged_scenario({})
    repo = RunStore(init_db(migrated_sqlite(tmp_path / "santa.db")))
    runner = Runner(repo, AnthropicReviewer, AnthropicFixer, workers=2)
    rubric = load_builtin("general")
    run_id = repo.create_run(
        spec=SPEC,
        output=ROUND1,
        rubric=rubric,
        reviewer_b="claude-sonnet-5-5",
        reviewer_c="claude-haiku-5-5",
        fixer="claude-opus-5-5",
        auto_approve=True,
    )
    assert runner.execute(run_id).status == "shipped"

    calls = [c["body"] for c in messages_stub.message_calls()]
    reviews = [b for b in calls if "verdict" in schema_properties(b)]
    fixes = [b for b in calls if "edits" in schema_properties(b)]
    assert len(reviews) == 4 and len(fixes) == 1
    outputs = [r.output_text for r in repo.get_run_view(run_id).rounds]
    assert outputs == [ROUND1, "Acme's rocket launched in fact. Order today."]

    for body in reviews:
        user = user_text(body)
        nonce = re.search(r"<untrusted_output_([0-9a-f]+)>", user).group(1)
        output = outputs[0] if "DEFECT" in user else outputs[1]
        expected = build_review_prompt(rubric, SPEC, output, nonce=nonce)
        # exactly the prompt built from rubric, spec and this round's output — nothing else
        assert uncached(body["system"]) == expected.system
        assert body["messages"] == [{"role": "user", "content": expected.user}]
        assert "SECRET-" not in json.dumps(body)  # no other reviewer's answer, no fix-agent context
        if output == outputs[1]:
            assert outputs[0] not in json.dumps(body)  # nothing of the earlier round

    # B and C get byte-identical instructions and rubric within a round
    round1 = [b for b in reviews if "DEFECT" in user_text(b)]
    assert uncached(round1[0]["system"]) == uncached(round1[1]["system"]) and round1[0]["model"] != round1[1]["model"]
    # the fix agent did see the merged issues (that is its job) — the secrets went there only
    assert "SECRET-" in user_text(fixes[0])


def test_isolation_holds_with_one_slot_on_each_provider(tmp_path: Path, messages_stub: MessagesStub, chat_stub) -> None:
    """B on an OpenAI-compatible server, C on Claude: each request carries only rubric, spec and this round's
    output, in its provider's own shape, and neither provider ever sees the other's answer."""
    from desk.wiring import model_fixer, model_reviewer
    from santa_core.reviewers.openai_compat import system_text
    from tests.support.chat_api import as_messages_body, for_chat

    issued: dict[str, bool] = {}
    """Each secret token handed out, and whether it was in a round-1 answer."""
    tagged = tagged_scenario(issued)
    messages_stub.handler = tagged
    chat_stub.handler = for_chat(tagged)
    repo = RunStore(init_db(migrated_sqlite(tmp_path / "santa.db")))
    runner = Runner(repo, model_reviewer, model_fixer, workers=2, screen_for=lambda: None)
    rubric = load_builtin("general")
    run_id = repo.create_run(
        spec=SPEC,
        output=ROUND1,
        rubric=rubric,
        reviewer_b="openai:gpt-5.4-mini",
        reviewer_c="claude-haiku-5-5",
        fixer="claude-opus-5-5",
        auto_approve=True,
    )
    assert runner.execute(run_id).status == "shipped"
    outputs = [r.output_text for r in repo.get_run_view(run_id).rounds]
    assert outputs == [ROUND1, "Acme's rocket launched in fact. Order today."]

    claude = [c["body"] for c in messages_stub.message_calls() if "verdict" in schema_properties(c["body"])]
    chat = [c["body"] for c in chat_stub.chat_calls()]
    assert len(claude) == 2 and len(chat) == 2  # one review per slot per round, each on its own provider
    assert {b["model"] for b in chat} == {"gpt-5.4-mini"} and {b["model"] for b in claude} == {"claude-haiku-5-5"}
    for body in chat:
        user = user_text(as_messages_body(body))
        nonce = re.search(r"<untrusted_output_([0-9a-f]+)>", user).group(1)
        output = outputs[0] if "DEFECT" in user else outputs[1]
        expected = build_review_prompt(rubric, SPEC, output, nonce=nonce)
        assert body["messages"] == [
            {"role": "system", "content": system_text(expected)},
            {"role": "user", "content": expected.user},
        ]
        assert "SECRET-" not in json.dumps(body)
        if output == outputs[1]:
            assert outputs[0] not in json.dumps(body)
    rounds_seen = set()
    for body in claude:
        user = user_text(body)
        nonce = re.search(r"<untrusted_output_([0-9a-f]+)>", user).group(1)
        output = outputs[0] if "DEFECT" in user else outputs[1]
        rounds_seen.add(output)
        expected = build_review_prompt(rubric, SPEC, output, nonce=nonce)
        # exactly the prompt built from rubric, spec and this round's output, in the Messages API's shape
        assert uncached(body["system"]) == expected.system
        assert body["messages"] == [{"role": "user", "content": expected.user}]
        assert "SECRET-" not in json.dumps(body)  # not B's answer from the other provider, no fix-agent context
        if output == outputs[1]:
            assert outputs[0] not in json.dumps(body)  # nothing of the earlier round
    assert rounds_seen == set(outputs)  # C was asked once in each round
    assert {"DEFECT" in user_text(as_messages_body(b)) for b in chat} == {True, False}  # and so was B
    # the same instructions and rubric reach both providers within a round
    assert chat[0]["messages"][0]["content"] == system_text(build_review_prompt(rubric, SPEC, ROUND1))
    assert uncached(claude[0]["system"]) == build_review_prompt(rubric, SPEC, ROUND1).system
    # the fix agent did see the merged issues (that is its job) — the secrets went there only
    [fix] = [c["body"] for c in messages_stub.message_calls() if "edits" in schema_properties(c["body"])]
    seen = set(re.findall(r"SECRET-\d+", user_text(fix)))
    assert len(issued) == 4 and seen  # the tokens are there to be found: a leak above would have shown
    assert all(issued[token] for token in seen)  # round 1's answers only (round 2 passed: no fix)
