"""Settings and the Review page agree on where a new run's reviewer and fix-agent slots start, in every key setup
(no key, Anthropic only, OpenAI only, both), and on what they warn about; with no key both start on a person, and
saving Settings then keeps the models in effect for the day a key is set. The model APIs are the loopback stubs."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from storage.runs import RunStore
from tests.ui.test_app import open_app, plain

SLOTS = {"new_reviewer_b": "set_b", "new_reviewer_c": "set_c", "new_fixer": "set_fixer"}
"""The Review page's picker of each slot, and the Settings page's."""

EXPECTED = {
    # No key: nothing but a person can review or fix.
    "no key": ("person", "person", "person"),
    # The cheapest pair of the configured models (two Haikus), Opus fixing with an Anthropic key.
    "Anthropic only": ("claude-haiku-5-5", "claude-haiku-4-5", "claude-opus-5-5"),
    # The two cheapest GPT models; without an Anthropic key the fix agent is the first offered model.
    "OpenAI only": ("openai:gpt-5.4-nano", "openai:gpt-5.4-mini", "openai:gpt-5.4-mini"),
    # One model of each family, the cheapest such pair.
    "both": ("claude-haiku-5-5", "openai:gpt-5.4-nano", "claude-opus-5-5"),
}


def keys(setup: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The providers keyed in `setup` (desk_env's Anthropic stub is keyed; OpenAI's only with its stub)."""
    if setup in ("OpenAI only", "both"):
        request.getfixturevalue("chat_stub")
    if setup in ("no key", "OpenAI only"):
        monkeypatch.delenv("ANTHROPIC_API_KEY")


def alarms(at: AppTest) -> list[str]:
    """What a page warns about the default panel: the reviewers' family, and a screen that cannot run."""
    shown = [plain(e.value) for kind in ("warning", "error") for e in getattr(at, kind)]
    return sorted(
        {
            "one family" if "Reviewers B and C" in s else "screen"
            for s in shown
            if "Reviewers B and C" in s or "injection screen is on but" in s
        }
    )


@pytest.mark.parametrize("setup", list(EXPECTED))
def test_settings_and_review_start_each_slot_on_the_same_model(
    desk_env: RunStore, setup: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys(setup, request, monkeypatch)
    review, settings = open_app(), open_app("pages/settings.py")
    on_review = tuple(review.selectbox(key=k).value for k in SLOTS)
    on_settings = tuple(settings.selectbox(key=k).value for k in SLOTS.values())
    assert on_review == on_settings == EXPECTED[setup]
    assert alarms(review) == alarms(settings)
    [sources] = [d.value for d in settings.dataframe if "in effect" in d.value.columns]  # Where each setting comes from
    in_effect = dict(zip(sources["setting"], sources["in effect"], strict=True))
    assert tuple(in_effect[s].split(" ")[0] for s in ("Reviewer B", "Reviewer C", "Fix agent")) == EXPECTED[setup]
    if setup == "no key":  # no Claude model "· no key", no family warning, no screen error on either page
        assert alarms(settings) == [] and settings.selectbox(key="set_b").options == ["person"]


def test_with_no_key_saving_settings_keeps_the_models_for_when_a_key_is_set(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    desk_env.save_settings({"reviewer_b": "claude-sonnet-5-5", "reviewer_c": "claude-haiku-5-5"}, actor="local")
    settings = open_app("pages/settings.py")
    assert settings.selectbox(key="set_b").value == open_app().selectbox(key="new_reviewer_b").value == "person"
    assert any("claude-sonnet-5-5, claude-haiku-5-5" in plain(i.value) for i in settings.info)
    settings.number_input(key="set_rounds").set_value(2)
    settings.button(key="set_save").click().run()
    saved = desk_env.get_settings()
    assert (saved["max_rounds"], saved["reviewer_b"], saved["reviewer_c"]) == (
        2,
        "claude-sonnet-5-5",
        "claude-haiku-5-5",
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")  # the key arrives: both pages start on the saved models
    assert open_app().selectbox(key="new_reviewer_b").value == "claude-sonnet-5-5"
    assert open_app("pages/settings.py").selectbox(key="set_b").value == "claude-sonnet-5-5"
