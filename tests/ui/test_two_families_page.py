"""AppTest: a run with reviewer B on an OpenAI-compatible server and C on Claude, from the Review page:
review, fix (approved by a person), re-review, ship; the page names the panel's families."""

from __future__ import annotations

from santa_core.models import RunStatus
from storage.runs import RunStore
from tests.support.chat_api import ChatStub, for_chat
from tests.support.messages_api import MessagesStub, santa_scenario
from tests.ui.test_app import DEFECTIVE, latest_run, open_app, start_run, texts, wait_for


def test_b_on_openai_c_on_claude_reviews_fixes_and_ships(desk_env: RunStore, chat_stub: ChatStub,
                                                          messages_stub: MessagesStub) -> None:
    chat_stub.handler = for_chat(santa_scenario)
    at = open_app()
    # with keys for two families the default panel already spans them
    assert (at.selectbox(key="new_reviewer_b").value, at.selectbox(key="new_reviewer_c").value) == (
        "claude-sonnet-5-5", "openai:gpt-5.4-mini")
    start_run(at, DEFECTIVE, new_reviewer_b="openai:gpt-5.4-mini", new_reviewer_c="claude-haiku-5-5")
    run_id = latest_run(desk_env)
    wait_for(desk_env, run_id, lambda s: s == RunStatus.AWAITING_APPROVAL, at)
    assert "NAUGHTY" in texts(at) and "Panel: GPT + Claude, two model families." in texts(at)
    at.button(key="approve_fix").click().run()
    wait_for(desk_env, run_id, lambda s: s == RunStatus.SHIPPED, at)
    view = desk_env.get_run_view(run_id)
    assert view.final_output == "Acme's rocket launched in fact. It is ready for you."
    assert [sorted(o.reviewer for o in r.reviews.values()) for r in view.rounds] == [
        ["claude-haiku-5-5", "openai:gpt-5.4-mini"]] * 2
    assert len(chat_stub.chat_calls()) == 2  # B's review in each round, on its own provider
    assert "NICE" in texts(at)
    assert not [w for w in at.warning if "same model family" in w.value or "both Claude" in w.value]
