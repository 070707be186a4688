"""Providers are configuration; a model's family comes from its provider and id; B and C of one family warn."""

from __future__ import annotations

import os
from unittest import mock

import pytest

from santa_core import providers as pv
from santa_core.config import export_to_env
from santa_core.pricing import is_known

ALL_KEYS = {
    "ANTHROPIC_API_KEY": "a",
    "OPENAI_API_KEY": "o",
    "SANTA_PROVIDER_LOCAL_BASE_URL": "http://127.0.0.1:11434/v1",
    "SANTA_PROVIDER_LOCAL_MODELS": "qwen3:32b,llama3.3:70b,gemma3:27b,mistral-small3.2",
    "SANTA_PROVIDER_GEMINI_BASE_URL": "https://generativelanguage.googleapis.com/v1beta/openai/",
    "SANTA_PROVIDER_GEMINI_API_KEY_ENV": "GEMINI_API_KEY",
    "GEMINI_API_KEY": "g",
    "SANTA_PROVIDER_GEMINI_MODELS": "gemini-2.5-flash",
}

FAMILY_OF = {
    # every model the app offers out of the box
    **dict.fromkeys(pv.CLAUDE_MODELS, "Claude"),
    **{f"openai:{m}": "GPT" for m in pv.OPENAI_MODELS},
    # named endpoints: the model name decides
    "local:qwen3:32b": "Qwen",
    "local:llama3.3:70b": "Llama",
    "local:gemma3:27b": "Gemini",
    "local:mistral-small3.2": "Mistral",
    "gemini:gemini-2.5-flash": "Gemini",
    # spellings and gateways
    "anthropic:claude-sonnet-5-5": "Claude",
    "openrouter:anthropic/claude-sonnet-4": "Claude",
    "openrouter:meta-llama/llama-3.3-70b-instruct": "Llama",
    "openrouter:deepseek/deepseek-r1-distill-llama-70b": "DeepSeek",
    "deepseek:deepseek-chat": "DeepSeek",
    "mistral:codestral-latest": "Mistral",
    "openai:o4-mini": "GPT",
    "openai:gpt-oss-120b": "GPT",
    "xai:grok-4": "Grok",
    "local:phi-4": "Phi",
    "local:acme-writer-7b": "unknown (acme)",
    "local:person-7b": "unknown (person)",  # a model named "person" is no person
    "anthropic:gpt-4o": "GPT",  # a gateway behind ANTHROPIC_BASE_URL serving another family
    "person": "person",
}


@pytest.mark.parametrize(("model_id", "fam"), sorted(FAMILY_OF.items()))
def test_family_of_each_model_id(model_id: str, fam: str) -> None:
    assert pv.family(model_id) == fam


def test_every_model_the_app_offers_has_a_family_in_the_table() -> None:
    offered = pv.usable_model_ids(env=ALL_KEYS)
    assert set(offered) <= set(FAMILY_OF), set(offered) - set(FAMILY_OF)
    assert {pv.family(m) for m in offered} >= {"Claude", "GPT", "Qwen", "Llama", "Gemini", "Mistral"}


@pytest.mark.parametrize(
    ("b", "c", "warns"),
    [
        ("claude-sonnet-5-5", "claude-haiku-5-5", "both Claude models"),  # the old default: one family
        ("claude-sonnet-5-5", "claude-sonnet-5-5", "both claude-sonnet-5-5"),
        ("claude-sonnet-5-5", "anthropic:claude-sonnet-5-5", "both claude-sonnet-5-5"),
        ("openai:gpt-5.4-mini", "openai:gpt-5.5", "both GPT models"),
        ("local:gemma3:27b", "gemini:gemini-2.5-flash", "both Gemini models"),
        ("claude-sonnet-5-5", "openai:gpt-5.4-mini", None),
        ("local:qwen3:32b", "claude-haiku-5-5", None),
        ("person", "claude-haiku-5-5", None),
    ],
)
def test_diversity_warning(b: str, c: str, warns: str | None) -> None:
    warning = pv.diversity_warning(b, c, env={})
    assert (warning is None) if warns is None else (warns in warning)


def test_a_one_family_warning_says_what_to_add() -> None:
    only_claude = pv.diversity_warning("claude-sonnet-5-5", "claude-haiku-5-5", env={"ANTHROPIC_API_KEY": "a"})
    assert "OPENAI_API_KEY" in only_claude
    both = pv.diversity_warning(
        "claude-sonnet-5-5", "claude-haiku-5-5", env={"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}
    )
    assert "openai:gpt-5.4-mini" in both


def test_named_endpoints_from_secrets_become_providers() -> None:
    with mock.patch.dict(os.environ):  # the whole environment comes back as it was
        export_to_env(
            {
                "santa": {
                    "providers": {
                        "local": {"base_url": "http://127.0.0.1:11434/v1", "models": ["qwen3:32b"], "strict": False},
                        "gemini": {"base_url": "https://example.test/v1beta/openai/", "api_key_env": "GEMINI_API_KEY"},
                    }
                }
            }
        )
        found = {p.name: p for p in pv.configured_providers()}
        assert found["local"].key_env is None and found["local"].key_present() and not found["local"].strict
        assert found["local"].model_ids() == ["local:qwen3:32b"]
        assert found["gemini"].key_env == "GEMINI_API_KEY" and not found["gemini"].key_present()
        assert "set GEMINI_API_KEY" in pv.key_problem("gemini:gemini-2.5-flash")
        assert pv.key_problem("local:qwen3:32b") is None
    assert not any(k.startswith("SANTA_PROVIDER_") for k in os.environ)


@pytest.mark.parametrize(
    ("model_id", "says"),
    [
        ("openai:gpt-5.4-mini", "no API key for provider 'openai'"),
        ("claude-haiku-5-5", "set ANTHROPIC_API_KEY"),
        ("nowhere:model-x", "unknown provider 'nowhere'"),
    ],
)
def test_a_model_that_cannot_be_called_names_the_provider_and_what_to_set(model_id: str, says: str) -> None:
    assert says in pv.key_problem(model_id, env={})


def test_ids_and_prices() -> None:
    assert pv.split_model("local:qwen3:32b") == ("local", "qwen3:32b")
    assert pv.split_model("claude-haiku-5-5") == ("anthropic", "claude-haiku-5-5")
    assert pv.canonical("anthropic:claude-haiku-5-5") == "claude-haiku-5-5"
    assert all(is_known(f"openai:{m}") for m in pv.OPENAI_MODELS)
    assert not is_known("local:qwen3:32b")


def test_message_batches_are_anthropics() -> None:
    assert pv.message_batches_problem("claude-sonnet-5-5", "claude-haiku-5-5") is None
    assert "openai:gpt-5.4-mini" in pv.message_batches_problem("claude-sonnet-5-5", "openai:gpt-5.4-mini")


def test_a_cut_off_chat_call_is_counted_at_its_whole_output_room() -> None:
    from santa_core.models import Usage
    from santa_core.pricing import cost_usd, estimate_call_usd

    body = {"model": "gpt-5.4-mini", "max_completion_tokens": 8192, "messages": []}
    most = estimate_call_usd("openai:gpt-5.4-mini", body)
    assert most >= cost_usd("openai:gpt-5.4-mini", Usage(output_tokens=8192))


def _exported(table: dict) -> tuple[list, list[str], dict]:
    """Providers and problems after exporting a secrets table, in an environment restored afterwards."""
    with mock.patch.dict(os.environ):
        pv._SECRETS_PROBLEMS.clear()
        export_to_env({"santa": {"providers": table}})
        env = {k: v for k, v in os.environ.items() if k.startswith(("SANTA_", "OPENAI_"))}
        found, problems = pv.configured_providers(), pv.provider_problems()
    pv._SECRETS_PROBLEMS.clear()
    return found, problems, env


def test_provider_names_map_back_to_themselves_and_bad_tables_are_named_without_their_values() -> None:
    found, problems, _ = _exported(
        {
            "my_local": {"base_url": "http://127.0.0.1:1/v1", "models": ["qwen3:32b"], "strict": "off"},
            "Gemini": {"base_url": "https://example.test/v1"},
            "anthropic": {"base_url": "http://127.0.0.1:2"},
            "leaky": {"base_url": "http://127.0.0.1:3/v1", "api_key_env": "sk-proj-SECRET123456"},
            "noscheme": {"base_url": "alice:hunter2@gw.example/v1"},
        }
    )
    names = {p.name: p for p in found}
    assert set(names) == {"anthropic", "openai", "my_local"}  # the bad tables left out, the good one kept as named
    assert names["my_local"].model_ids() == ["my_local:qwen3:32b"] and not names["my_local"].strict
    assert names["anthropic"].base_url is None  # a table cannot move Anthropic
    text = "\n".join(problems)
    assert "[santa.providers.Gemini]" in text and "[santa.providers.anthropic]" in text
    assert "'leaky' left out: api_key_env must be the NAME" in text and "'noscheme' left out" in text
    assert "SECRET123456" not in text and "hunter2" not in text


def test_the_openai_table_configures_the_built_in_provider() -> None:
    found, problems, env = _exported(
        {"openai": {"base_url": "http://127.0.0.1:4/v1", "strict": False, "models": ["qwen3:32b"]}}
    )
    openai = next(p for p in found if p.name == "openai")
    assert openai.base_url == "http://127.0.0.1:4/v1" and not openai.strict and openai.models == ("qwen3:32b",)
    assert problems == [] and env["OPENAI_BASE_URL"] == "http://127.0.0.1:4/v1"


@pytest.mark.parametrize(
    ("model_id", "says"),
    [
        ("gpt-5.4-mini", "names no provider"),
        ("OPENAI:gpt-5.4-mini", "did you mean openai:gpt-5.4-mini?"),
        (":gpt", "provider name is lower-case"),
        ("openai:gpt 5", "space or control character"),
        ("openai:gpt\x1b[31m", "space or control character"),
        ("", "empty"),
    ],
)
def test_what_is_not_a_model_id_is_refused(model_id: str, says: str) -> None:
    problem = pv.key_problem(model_id, env={"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"})
    assert problem is not None and says in problem and "\x1b" not in problem


@pytest.mark.parametrize(
    ("model_id", "fam"),
    [
        ("openai:ft:gpt-4o-mini:acme::x", "GPT"),
        ("gw:openai.gpt-oss-120b", "GPT"),
        ("local:my-gpt-finetune", "GPT"),
        ("gw:text-davinci-003", "GPT"),
    ],
)
def test_more_gpt_spellings(model_id: str, fam: str) -> None:
    assert pv.family(model_id) == fam and pv.family_known(model_id)


def test_a_model_of_unknown_family_never_counts_as_a_second_family() -> None:
    assert not pv.spans_two_families("openai:gpt-5.4-mini", "azure:prod-deployment")
    warning = pv.diversity_warning("openai:gpt-5.4-mini", "azure:prod-deployment", env={})
    assert warning is not None and "azure:prod-deployment is not known" in warning


@pytest.mark.parametrize(
    ("env", "screen"),
    [
        ({"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, "claude-haiku-5-5"),
        ({"OPENAI_API_KEY": "o"}, "openai:gpt-5.4-nano"),
        (
            {"SANTA_PROVIDER_LOCAL_BASE_URL": "http://127.0.0.1:1/v1", "SANTA_PROVIDER_LOCAL_MODELS": "qwen3:32b"},
            "local:qwen3:32b",
        ),
    ],
)
def test_the_screen_defaults_to_a_model_the_desk_can_call(env: dict, screen: str) -> None:
    assert pv.default_screen_model(env=env) == screen


def test_keys_are_scrubbed_from_text() -> None:
    env = {
        "OPENAI_API_KEY": "key-value-1234",
        "SANTA_PROVIDER_G_BASE_URL": "http://127.0.0.1:1/v1",
        "SANTA_PROVIDER_G_API_KEY_ENV": "G_KEY",
        "G_KEY": "gee-key-5678",
    }
    text = pv.scrub_keys("bad key key-value-1234, gee-key-5678 and sk-proj-abcdefgh1234", env=env)
    assert text == "bad key ***, *** and ***"


def test_scrubbing_keeps_ordinary_error_text() -> None:
    env = {"OPENAI_API_KEY": "ollama"}  # a placeholder key: no secret
    text = "model `claude-sonnet-4-5-20250929-thinking-extended` not found; 'ollama/qwen3:32b' (ollama pull)"
    assert pv.scrub_keys(text, env=env) == text
    assert pv.scrub_keys("bad key gsk_ABCDEFGHIJKLMNOPQRST1234", env={}) == "bad key ***"


@pytest.mark.parametrize("key_env", ["aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY", "ABCDEFGHIJKLMNOPQRSTUVWXYZ123456", "my key"])
def test_a_key_where_its_variables_name_belongs_is_refused_unechoed(key_env: str) -> None:
    env = {"SANTA_PROVIDER_X_BASE_URL": "http://127.0.0.1:1/v1", "SANTA_PROVIDER_X_API_KEY_ENV": key_env}
    assert "x" not in {p.name for p in pv.configured_providers(env)}
    problems = "\n".join(pv.provider_problems(env)) + (pv.key_problem("x:model", env=env) or "")
    assert "api_key_env must be the NAME" in problems and key_env not in problems


def test_the_record_never_calls_an_unknown_family_a_second_one() -> None:
    from santa_core.reports.record import VerificationRecord
    from santa_core.reports.record_panel import panel_line

    def line(b: str, c: str) -> str:
        return panel_line(
            VerificationRecord.model_construct(
                panel_families=pv.panel_families(b, c), spans_two_families=pv.spans_two_families(b, c)
            )
        )

    assert line("local:mystery-7b", "claude-haiku-5-5").endswith("independence cannot be told")
    assert line("person", "claude-haiku-5-5").endswith("a person in the panel")
    assert line("openai:gpt-5.4-mini", "claude-haiku-5-5").endswith("two model families")
    assert "one model family" in line("claude-sonnet-5-5", "claude-haiku-5-5")


THREE = {
    "ANTHROPIC_API_KEY": "a",
    "OPENAI_API_KEY": "o",
    "SANTA_PROVIDER_LOCAL_BASE_URL": "http://127.0.0.1:1/v1",
    "SANTA_PROVIDER_LOCAL_MODELS": "qwen3:32b",
}
"""Keys for three families: Claude, GPT and a local Qwen."""


@pytest.mark.parametrize(
    ("env", "reviewers", "screen"),
    [
        (THREE, ("claude-sonnet-5-5", "openai:gpt-5.4-mini"), "local:qwen3:32b"),  # a third family when keys allow
        (THREE, ("claude-sonnet-5-5", "claude-haiku-5-5"), "openai:gpt-5.4-nano"),  # the first family not on the panel
        (THREE, ("person", "claude-sonnet-5-5"), "openai:gpt-5.4-nano"),  # a person is nobody's family
        (
            {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"},
            ("claude-sonnet-5-5", "openai:gpt-5.4-mini"),
            "claude-haiku-5-5",
        ),  # no third family: the cheapest, as before
        ({"ANTHROPIC_API_KEY": "a"}, ("claude-sonnet-5-5", "claude-haiku-5-5"), "claude-haiku-5-5"),
        (
            {
                "ANTHROPIC_API_KEY": "a",
                "SANTA_PROVIDER_AZ_BASE_URL": "http://127.0.0.1:1/v1",
                "SANTA_PROVIDER_AZ_MODELS": "prod-deployment",
            },
            ("claude-sonnet-5-5", "claude-haiku-5-5"),
            "claude-haiku-5-5",
        ),  # a model of unknown family cannot be said to differ
    ],
)
def test_the_screen_prefers_a_family_other_than_the_reviewers(
    env: dict, reviewers: tuple[str, str], screen: str
) -> None:
    assert pv.default_screen_model(env=env, reviewers=reviewers) == screen
