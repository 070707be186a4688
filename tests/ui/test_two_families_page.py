"""AppTest: a run with reviewer B on an OpenAI-compatible server and C on Claude, from the Review page:
review, fix (approved by a person), re-review, ship; the page names the panel's families (one family or two);
a rubric trial with an OpenAI model is asked on its own provider."""

from __future__ import annotations

from santa_core.models import RunStatus
from storage.runs import RunStore
from tests.support.chat_api import ChatStub, for_chat
from tests.support.messages_api import MessagesStub, santa_scenario
from tests.ui.test_app import DEFECTIVE, latest_run, open_app, start_run, texts, wait_for
from tests.ui.test_run_page import CLEAN, as_person, driven_run
from tests.ui.test_run_page import texts as run_texts


def test_b_on_openai_c_on_claude_reviews_fixes_and_ships(
    desk_env: RunStore, chat_stub: ChatStub, messages_stub: MessagesStub
) -> None:
    chat_stub.handler = for_chat(santa_scenario)
    at = open_app()
    # with keys for two families the default panel already spans them (the cheapest such pair)
    assert (at.selectbox(key="new_reviewer_b").value, at.selectbox(key="new_reviewer_c").value) == (
        "claude-haiku-5-5",
        "openai:gpt-5.4-nano",
    )
    start_run(at, DEFECTIVE, new_reviewer_b="openai:gpt-5.4-mini", new_reviewer_c="claude-haiku-5-5")
    run_id = latest_run(desk_env)
    wait_for(desk_env, run_id, lambda s: s == RunStatus.AWAITING_APPROVAL, at)
    assert "NAUGHTY" in texts(at) and "Panel: GPT + Claude, two model families." in texts(at)
    at.button(key="approve_fix").click().run()
    wait_for(desk_env, run_id, lambda s: s == RunStatus.SHIPPED, at)
    view = desk_env.get_run_view(run_id)
    assert view.final_output == "Acme's rocket launched in fact. It is ready for you."
    assert [sorted(o.reviewer for o in r.reviews.values()) for r in view.rounds] == [
        ["claude-haiku-5-5", "openai:gpt-5.4-mini"]
    ] * 2
    assert len(chat_stub.chat_calls()) == 2  # B's review in each round, on its own provider
    assert "NICE" in texts(at)
    assert not [w for w in at.warning if "same model family" in w.value or "both Claude" in w.value]


ONE_FAMILY = (
    "Panel: Claude + Claude, one model family: the reviewers share blind spots, so their misses are not independent."
)
TWO_FAMILIES = "Panel: Claude + GPT, two model families."


def test_the_run_page_names_a_one_family_panel(desk_env: RunStore) -> None:
    run_id = driven_run(desk_env, CLEAN)  # claude-sonnet-5-5 + claude-haiku-5-5
    assert desk_env.load_run(run_id).state.status == RunStatus.SHIPPED
    shown = run_texts(as_person(None, run_id))
    assert ONE_FAMILY in shown and "two model families" not in shown


def test_the_run_page_names_a_two_family_panel(desk_env: RunStore, chat_stub: ChatStub) -> None:
    chat_stub.handler = for_chat(santa_scenario)
    run_id = driven_run(desk_env, CLEAN, reviewer_c="openai:gpt-5.4-mini")
    assert desk_env.load_run(run_id).state.status == RunStatus.SHIPPED
    assert [c["body"]["model"] for c in chat_stub.chat_calls()] == ["gpt-5.4-mini"]  # C really was on the chat stub
    shown = run_texts(as_person(None, run_id))
    assert TWO_FAMILIES in shown and "one model family" not in shown


def test_a_rubric_trial_with_an_openai_model_is_asked_on_its_provider(
    desk_env: RunStore, chat_stub: ChatStub, messages_stub: MessagesStub
) -> None:
    from sqlmodel import Session, select

    from storage.tables import TrialRow
    from tests.support.chat_api import chat_user_text
    from tests.ui.test_rubric_studio import act, open_rubrics

    chat_stub.handler = for_chat(santa_scenario)
    at = open_rubrics("compliance")
    at.text_area(key="try_output").set_value("All investments carry risk. Contains DEFECT.")
    act(at)
    assert "openai:gpt-5.4-mini · GPT" in at.selectbox(key="try_model").options
    at.selectbox(key="try_model").set_value("openai:gpt-5.4-mini")
    act(at)
    at.button(key="try_review").click()
    act(at)
    assert "With this draft the sample is FAIL." in texts(at)
    [call] = chat_stub.chat_calls()
    assert call["body"]["model"] == "gpt-5.4-mini" and "Contains DEFECT." in chat_user_text(call["body"])
    assert not [c for c in messages_stub.message_calls() if "verdict" in str(c["body"])]  # not asked of Claude
    with Session(desk_env.engine) as s:
        trial = s.exec(select(TrialRow)).one()
    assert (trial.kind, trial.reviewer, trial.verdict) == ("try", "openai:gpt-5.4-mini", "FAIL")
