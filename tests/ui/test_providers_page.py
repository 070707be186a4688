"""Providers are configuration, seen from the pages: the model pickers offer every provider with a key (each
model with its family), Settings lists the providers and tests their connection without ever showing a key,
the diversity warning follows model families, and Message Batches refuses a reviewer off Anthropic's API.
The reviewers' APIs are the loopback stubs (`messages_stub`, `chat_stub`)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from santa_core.pricing import UNKNOWN_PRICE_RULE
from storage.batches import BatchStore
from storage.runs import RunStore
from tests.core.batch.test_driver import SPEC as BATCH_SPEC
from tests.core.batch.test_driver import planted_csv
from tests.support.batch_page import open_batch, upload
from tests.support.chat_api import ChatStub, chat_error
from tests.support.messages_api import MessagesStub, Reply
from tests.ui.test_app import open_app, plain, texts
from tests.ui.test_rubric_studio import open_rubrics

GPT = "openai:gpt-5.4-mini"
GPT_LABEL = f"{GPT} · GPT"


def everything(at: AppTest) -> str:
    """Every element of the page as sent to the browser (widgets' labels, options and values, tables' data,
    help texts), escapes removed."""
    return plain("\n".join(str(getattr(node, "proto", "")) for node in at._tree))


def warnings(at: AppTest) -> list[str]:
    return [plain(w.value) for w in at.warning]


# --- the pickers -----------------------------------------------------------------------------------


def picker_options() -> dict[str, list[str]]:
    """The options of every model picker of the Review, Settings, Batch and Rubrics pages."""
    review = open_app()
    settings = open_app("pages/settings.py")
    batch = upload(open_batch(), planted_csv(40)[0], spec=BATCH_SPEC)
    rubrics = open_rubrics("general")
    rubrics.text_area(key="try_output").set_value("It is ready.").run()
    found = {key: review.selectbox(key=key).options for key in ("new_reviewer_b", "new_reviewer_c", "new_fixer")}
    found |= {key: settings.selectbox(key=key).options for key in ("set_b", "set_c", "set_fixer", "set_screen_model")}
    found |= {key: batch.selectbox(key=key).options for key in ("batch_reviewer_b", "batch_reviewer_c", "batch_fixer")}
    found["try_model"] = rubrics.selectbox(key="try_model").options
    return found


def test_the_pickers_offer_openai_models_only_with_an_openai_key(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch, chat_stub: ChatStub
) -> None:
    for key, options in picker_options().items():
        assert GPT_LABEL in options, key
        assert "claude-sonnet-5-5 · Claude" in options, key  # each model with its family
        offers_person = key.startswith(("new_", "set_")) and key != "set_screen_model"  # a batch is models only
        assert ("person" in options) == offers_person, key
    monkeypatch.delenv("OPENAI_API_KEY")
    for key, options in picker_options().items():
        assert not [o for o in options if o.startswith("openai:")], key
        assert "claude-haiku-5-5 · Claude" in options, key


def test_a_saved_model_whose_key_is_gone_stays_chosen_and_says_why(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch, chat_stub: ChatStub
) -> None:
    at = open_app("pages/settings.py")
    at.selectbox(key="set_c").set_value(GPT).run()
    at.button(key="set_save").click().run()
    assert desk_env.get_settings()["reviewer_c"] == GPT
    monkeypatch.delenv("OPENAI_API_KEY")
    review = open_app()
    picker = review.selectbox(key="new_reviewer_c")
    assert picker.value == GPT and f"{GPT_LABEL} · no key" in picker.options  # not silently another model
    assert any(
        "no API key for provider 'openai'" in plain(e.value) and "OPENAI_API_KEY" in plain(e.value)
        for e in review.error
    )
    review.text_area(key="new_spec").set_value("Say hello.")
    review.text_area(key="new_output").set_value("Hello.")
    review.button(key="start_review").click().run()
    assert any("Reviewer C (openai:gpt-5.4-mini) cannot be called here" in plain(e.value) for e in review.error)
    assert desk_env.list_runs(limit=5) == []
    settings = open_app("pages/settings.py")
    assert settings.selectbox(key="set_c").value == GPT  # saving again keeps it


# --- the diversity warning -------------------------------------------------------------------------


def test_the_diversity_warning_follows_model_families(desk_env: RunStore, chat_stub: ChatStub) -> None:
    at = open_app()
    # two families configured: one reviewer of each, the cheapest pair (Haiku 5.5 + GPT-5.4 nano)
    assert (at.selectbox(key="new_reviewer_b").value, at.selectbox(key="new_reviewer_c").value) == (
        "claude-haiku-5-5",
        "openai:gpt-5.4-nano",
    )
    assert not [w for w in warnings(at) if "Reviewers B and C" in w]
    at.selectbox(key="new_reviewer_b").set_value("claude-sonnet-5-5")
    at.selectbox(key="new_reviewer_c").set_value("claude-haiku-5-5").run()
    [warning] = [w for w in warnings(at) if "Reviewers B and C" in w]
    assert "both Claude models" in warning and f"for example {GPT}" in warning
    at.selectbox(key="new_reviewer_c").set_value(GPT).run()
    assert not [w for w in warnings(at) if "Reviewers B and C" in w]


def test_with_claude_only_the_default_panel_is_warned_about_on_every_page(desk_env: RunStore) -> None:
    """Haiku 5.5 + Haiku 4.5 (the cheapest pair with only Anthropic configured) are one family: Review, Batch and
    Settings say so, and what a second key would add."""
    batch = upload(open_batch(), planted_csv(40)[0], spec=BATCH_SPEC)
    for at in (open_app(), open_app("pages/settings.py"), batch):
        [warning] = [w for w in warnings(at) if "Reviewers B and C" in w]
        assert "both Claude models (claude-haiku-5-5, claude-haiku-4-5)" in warning
        assert "set OPENAI_API_KEY" in warning  # what a second key would add
    at = open_app()
    at.selectbox(key="new_reviewer_c").set_value("person").run()
    assert not [w for w in warnings(at) if "Reviewers B and C" in w]
    assert "Only Claude models are configured: set OPENAI_API_KEY" in texts(at)


# --- the Batch page: Message Batches is Anthropic's ---------------------------------------------------


def test_message_batches_with_an_openai_reviewer_is_refused(desk_env: RunStore, chat_stub: ChatStub) -> None:
    at = upload(
        open_batch(),
        planted_csv(40)[0],
        spec=BATCH_SPEC,
        reviewer_b="claude-sonnet-5-5",
        reviewer_c=GPT,
        message_batches=True,
    )
    assert any(
        "the Message Batches API is Anthropic's: openai:gpt-5.4-mini cannot review through it" in plain(e.value)
        for e in at.error
    )
    assert at.button(key="batch_create").disabled  # a browser cannot click it (AppTest refuses to as well)
    assert BatchStore(desk_env).batches() == []
    at.toggle(key="batch_message_batches").set_value(False).run()
    assert not at.error and not at.button(key="batch_create").disabled
    at.selectbox(key="batch_reviewer_c").set_value("claude-haiku-5-5")
    at.toggle(key="batch_message_batches").set_value(True).run()
    assert not at.error and not at.button(key="batch_create").disabled  # Claude on both slots may


# --- Settings: the providers ---------------------------------------------------------------------------

SECRET = "SANTAsecretKEY0123456789abcdefXYZ"
"""A key with no markdown-special character: it could only reach the page verbatim."""


def test_settings_lists_the_providers_and_never_a_key(desk_env: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("SANTA_PROVIDER_LOCAL_BASE_URL", "http://ollama:hunter2pass@127.0.0.1:9/v1?token=tok3nvalue")
    monkeypatch.setenv("SANTA_PROVIDER_LOCAL_API_KEY_ENV", "LOCAL_LLM_KEY")
    monkeypatch.setenv("SANTA_PROVIDER_LOCAL_MODELS", "qwen3:32b")
    at = open_app("pages/settings.py")
    shown = texts(at)
    assert "anthropic · Anthropic Messages API" in shown and "key present (ANTHROPIC_API_KEY" in shown
    assert "openai · OpenAI Chat Completions · https://api.openai.com/v1 (default)" in shown
    assert "no key (set OPENAI_API_KEY)" in shown and "no key (set LOCAL_LLM_KEY)" in shown
    assert "local · OpenAI Chat Completions · http://***@127.0.0.1:9/v1?token=***" in shown
    tables = {str(t.value["model"].tolist()): t.value for t in at.dataframe if "model" in t.value}
    local = tables["['local:qwen3:32b']"].iloc[0]
    assert local["family"] == "Qwen" and local["input (USD / M tokens)"] == "price unknown"
    claude = tables[
        str(
            [
                "claude-sonnet-5-5",
                "claude-haiku-5-5",
                "claude-opus-5-5",
                "claude-fable-5-1",
                "claude-opus-5",
                "claude-sonnet-5",
                "claude-haiku-4-5",
            ]
        )
    ].iloc[0]
    assert claude["input (USD / M tokens)"].startswith("$") and claude["price as of"] >= "2026"
    assert UNKNOWN_PRICE_RULE in shown
    monkeypatch.setenv("LOCAL_LLM_KEY", SECRET[::-1])
    at = open_app("pages/settings.py")
    at.button(key="provider_test_anthropic").click().run()  # an error from the stub
    page = everything(at)
    for secret in (SECRET, SECRET[::-1], "hunter2pass", "tok3nvalue"):
        assert secret not in page


def test_test_connection_lists_the_models_or_says_exactly_what_failed(
    desk_env: RunStore, chat_stub: ChatStub, messages_stub: MessagesStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_app("pages/settings.py")
    at.button(key="provider_test_openai").click().run()
    assert "Connected: openai lists 2 model(s): stub-gpt, gpt-5.4-mini" in texts(at)
    assert [c["path"] for c in chat_stub.calls] == ["/v1/models"]
    assert "Offered here but not in the provider's list: gpt-5.5" in texts(at)
    chat_stub.models_reply = chat_error(401, "Incorrect API key provided: test-openai", "invalid_request_error")
    at.button(key="provider_test_openai").click().run()
    [error] = [plain(e.value) for e in at.error if "Test connection of openai" in e.value]
    assert f"failed: HTTP 401 from {chat_stub.url}: Incorrect API key provided: ***" in error
    assert len(chat_stub.calls) == 2  # one request a click: no retries
    assert "Traceback" not in everything(at) and "test-openai" not in everything(at)
    messages_stub.models_reply = Reply(
        200,
        {},
        {
            "data": [
                {"id": "claude-sonnet-5-5", "type": "model", "display_name": "S", "created_at": "2026-01-01T00:00:00Z"}
            ],
            "has_more": False,
            "first_id": "claude-sonnet-5-5",
            "last_id": "claude-sonnet-5-5",
        },
    )
    at.button(key="provider_test_anthropic").click().run()
    assert "Connected: anthropic lists 1 model(s): claude-sonnet-5-5" in texts(at)
    monkeypatch.setenv("SANTA_PROVIDER_DOWN_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens on port 9
    monkeypatch.setenv("SANTA_PROVIDER_DOWN_MODELS", "llama3.3")
    monkeypatch.setenv("SANTA_PROVIDER_NOKEY_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SANTA_PROVIDER_NOKEY_API_KEY_ENV", "NOKEY_API_KEY")
    at = open_app("pages/settings.py")
    at.button(key="provider_test_down").click().run()
    assert "Test connection of down failed: could not connect to http://127.0.0.1:9/v1" in texts(at)
    at.button(key="provider_test_nokey").click().run()
    assert "Test connection of nokey failed: nothing was sent: no key (set NOKEY_API_KEY)" in texts(at)
    assert "Traceback" not in everything(at)


def test_a_base_url_with_credentials_is_redacted_however_it_parses() -> None:
    from desk.connection import redacted_base_url

    for url in ("alice:hunter2@gw.example/v1", "https://alice:hunter2@gw.example/v1", "gw.example@x:hunter2@h/v1"):
        assert "hunter2" not in redacted_base_url(url) and "***@" in redacted_base_url(url), url
    assert redacted_base_url("https://host/v1/p@th") == "https://host/v1/p@th"  # an @ in the path is no credential


def test_settings_names_provider_settings_it_leaves_out(desk_env: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANTA_PROVIDER_LEAKY_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SANTA_PROVIDER_LEAKY_API_KEY_ENV", "sk-proj-SECRET123456")
    at = open_app("pages/settings.py")
    assert any("'leaky' left out: api_key_env must be the NAME" in w for w in warnings(at))
    assert "SECRET123456" not in everything(at) and "provider_test_leaky" not in str(at.button)


def test_test_connection_gives_up_on_a_server_that_never_finishes(
    desk_env: RunStore, chat_stub: ChatStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    import desk.connection

    monkeypatch.setattr(desk.connection, "TEST_DEADLINE_S", 0.2)
    chat_stub.models_reply = Reply(200, {}, {"object": "list", "data": []}, delay_s=3.0)
    at = open_app("pages/settings.py")
    at.button(key="provider_test_openai").click().run()
    assert any("no complete answer from" in plain(e.value) for e in at.error)


def test_a_price_unknown_review_shows_its_tokens_not_dollars(
    desk_env: RunStore, chat_stub: ChatStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desk.wiring import model_fixer, model_reviewer
    from santa_core.run.runner import Runner
    from tests.support.chat_api import for_chat
    from tests.support.messages_api import santa_scenario

    monkeypatch.setenv("SANTA_PROVIDER_LOCAL_BASE_URL", chat_stub.url)
    chat_stub.handler = for_chat(santa_scenario)
    runner = Runner(desk_env, model_reviewer, model_fixer, workers=2, screen_for=lambda: None)
    run_id = desk_env.create_run(
        "Announce it.",
        "It launched in 2018.",
        desk_env.rubrics.resolved("general"),
        "local:qwen3:32b",
        "claude-haiku-5-5",
        "claude-opus-5-5",
        created_by="ann",
    )
    runner.execute(run_id)
    runner.shutdown()
    at = open_app(run_id=run_id)
    captions = [plain(c.value) for c in at.caption]
    card = [c for c in captions if "in /" in c and "out tokens" in c]
    assert any("price unknown" in c for c in card) and any("$" in c for c in card)  # B unknown, C priced
    assert any("counted against the budget (includes price unknown)" in c for c in captions)


def open_settings_as(email: str) -> AppTest:
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.user = {"is_logged_in": True, "email": email, "name": email.split("@")[0].title()}
    at.run()
    at.switch_page("pages/settings.py").run()
    assert not at.exception, at.exception
    return at


def test_only_who_may_test_providers_gets_test_connection_and_the_core_refuses_anyone_else(
    desk_env: RunStore, messages_stub: MessagesStub, chat_stub: ChatStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Test connection is a request on the install's key: the page offers it to admins, and the core's action asks the
    stored roles before the request leaves, so a page that shows the button to a viewer anyway sends nothing."""
    from ui import identity

    viewer = open_settings_as("viewer@example.com")
    assert not [b for b in viewer.button if (b.key or "").startswith("provider_test_")]
    assert "To test a model provider's connection you need to be an admin." in texts(viewer)
    monkeypatch.setattr(identity, "can", lambda permission: True)  # a page that forgot to hide it
    viewer = open_settings_as("viewer@example.com")
    for name in ("anthropic", "openai"):
        viewer.button(key=f"provider_test_{name}").click().run()
        assert (
            f"Test connection of {name} refused, nothing was sent: viewer@example.com (viewer) may not test a "
            "model provider's connection; an admin may."
        ) in [plain(e.value) for e in viewer.error]
    assert messages_stub.calls == [] and chat_stub.calls == []
    assert "Traceback" not in everything(viewer)
