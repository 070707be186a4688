"""The default panel is the cheapest pair that still spans two model families (santa_core.panels)."""

from __future__ import annotations

from itertools import combinations

import pytest

from santa_core import panels
from santa_core.config import env_defaults
from santa_core.pricing import ModelRates, Rates, load_rates
from santa_core.providers import spans_two_families, usable_model_ids

BOTH = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}


@pytest.mark.parametrize(
    ("env", "panel"),
    [
        (BOTH, ("claude-haiku-5-5", "openai:gpt-5.4-nano", "claude-opus-5-5")),
        ({"ANTHROPIC_API_KEY": "a"}, ("claude-haiku-5-5", "claude-haiku-4-5", "claude-opus-5-5")),
        ({"OPENAI_API_KEY": "o"}, ("openai:gpt-5.4-nano", "openai:gpt-5.4-mini", "openai:gpt-5.4-mini")),
        # a local model has no listed price: counted at the highest rate, still the only second family there is
        (
            {
                "ANTHROPIC_API_KEY": "a",
                "SANTA_PROVIDER_LOCAL_BASE_URL": "http://127.0.0.1:1/v1",
                "SANTA_PROVIDER_LOCAL_MODELS": "qwen3:32b",
            },
            ("claude-haiku-5-5", "local:qwen3:32b", "claude-opus-5-5"),
        ),
        ({}, ("claude-haiku-5-5", "claude-haiku-4-5", "claude-opus-5-5")),
    ],
)
def test_the_default_panel_is_the_cheapest_pair_spanning_two_families(env: dict, panel: tuple) -> None:
    assert panels.default_panel(env=env) == panel


def test_no_pair_spanning_two_families_is_cheaper_than_the_default() -> None:
    rates = load_rates()
    b, c, _ = panels.default_panel(env=BOTH)
    assert spans_two_families(b, c)
    chosen = panels.review_usd(b) + panels.review_usd(c)
    for x, y in combinations(usable_model_ids(env=BOTH), 2):
        if spans_two_families(x, y):
            assert panels.review_usd(x, rates) + panels.review_usd(y, rates) >= chosen


def test_the_panel_follows_the_prices_not_the_list_order() -> None:
    """Make Sonnet the cheapest Claude model in a rates table: the panel takes it instead of Haiku."""
    rows = dict(load_rates().models)
    rows["claude-sonnet-5-5"] = ModelRates(input=0.01, output=0.05, cache_write_5m=0.0125, cache_read=0.001)
    rates = Rates(as_of="2026-12-04", batch_discount=0.5, models=rows)
    b, c, _ = panels.default_panel(env=BOTH, rates=rates)
    assert "claude-sonnet-5-5" in (b, c) and "claude-haiku-5-5" not in (b, c)


def test_one_model_only_reviews_in_both_slots() -> None:
    assert panels.cheapest_pair(["openai:gpt-5.4-mini"]) is None
    env = {"OPENAI_API_KEY": "o", "SANTA_OPENAI_MODELS": "gpt-5.4-mini"}
    assert panels.default_panel(env=env)[:2] == ("openai:gpt-5.4-mini", "openai:gpt-5.4-mini")


def test_env_defaults_follow_the_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a")
    assert (env_defaults().reviewer_b, env_defaults().reviewer_c) == ("claude-haiku-5-5", "claude-haiku-4-5")
    monkeypatch.setenv("OPENAI_API_KEY", "o")
    assert (env_defaults().reviewer_b, env_defaults().reviewer_c) == ("claude-haiku-5-5", "openai:gpt-5.4-nano")
    monkeypatch.setenv("SANTA_REVIEWER_C", "claude-sonnet-5-5")  # an explicit choice wins
    assert env_defaults().reviewer_c == "claude-sonnet-5-5"


@pytest.mark.parametrize(
    ("fixed", "slot", "partner"),
    [
        ("openai:gpt-5.4-nano", "SANTA_REVIEWER_B", "claude-haiku-5-5"),
        ("claude-haiku-5-5", "SANTA_REVIEWER_C", "openai:gpt-5.4-nano"),
        ("claude-sonnet-5-5", "SANTA_REVIEWER_B", "openai:gpt-5.4-nano"),
    ],
)
def test_one_slot_set_alone_gets_a_partner_of_another_family_never_itself(
    monkeypatch: pytest.MonkeyPatch, fixed: str, slot: str, partner: str
) -> None:
    for key, value in BOTH.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv(slot, fixed)
    d = env_defaults()
    assert {d.reviewer_b, d.reviewer_c} == {fixed, partner}


def test_a_partner_is_never_the_given_model_in_another_spelling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a")
    assert panels.partner_for("anthropic:claude-haiku-5-5") == "claude-haiku-4-5"


@pytest.mark.parametrize(
    ("given", "default", "other"),
    [
        ("openai:gpt-5.4-nano", "openai:gpt-5.4-nano", "claude-haiku-5-5"),  # the default is the very model given
        ("claude-haiku-5-5", "anthropic:claude-haiku-5-5", "openai:gpt-5.4-nano"),
        ("claude-sonnet-5-5", "openai:gpt-5.4-nano", "openai:gpt-5.4-nano"),  # a different default stays
        ("person", "person", "person"),
    ],
)
def test_one_reviewer_given_on_the_command_line_never_doubles_its_model(
    monkeypatch: pytest.MonkeyPatch, given: str, default: str, other: str
) -> None:
    for key, value in BOTH.items():
        monkeypatch.setenv(key, value)
    assert panels.other_slot(given, default) == other


LOCAL = {
    "ANTHROPIC_API_KEY": "a",
    "OPENAI_API_KEY": "o",
    "SANTA_PROVIDER_LOCAL_BASE_URL": "http://127.0.0.1:1/v1",
    "SANTA_PROVIDER_LOCAL_MODELS": "qwen3:32b",
}


@pytest.mark.parametrize(
    ("env", "b", "c", "third"),
    [
        # no family left off the panel: the cheapest other model (gpt-5.4-mini $0.0019 a review < haiku-4-5 $0.0024)
        pytest.param(
            BOTH, "claude-haiku-5-5", "openai:gpt-5.4-nano", "openai:gpt-5.4-mini", id="two-families-on-panel"
        ),
        # a third family wins over price: its misses are the least correlated with B's and C's
        pytest.param(LOCAL, "claude-haiku-5-5", "openai:gpt-5.4-nano", "local:qwen3:32b", id="a-third-family"),
        # one family only: the cheapest Claude model that is neither (the two Sonnets cost alike: by name)
        pytest.param(
            {"ANTHROPIC_API_KEY": "a"}, "claude-haiku-5-5", "claude-haiku-4-5", "claude-sonnet-5", id="one-family"
        ),
        # a person in a slot takes no model: the cheapest model not on the panel, of another family than C
        pytest.param(BOTH, "person", "claude-haiku-5-5", "openai:gpt-5.4-nano", id="a-person-slot"),
    ],
)
def test_the_third_reviewer_is_the_cheapest_other_model_of_a_family_not_yet_on_the_panel(
    env: dict, b: str, c: str, third: str
) -> None:
    assert panels.third_for(b, c, env=env) == third


def test_the_default_third_reviewer_follows_the_panel_in_effect() -> None:
    from santa_core.config import effective_defaults

    d = effective_defaults({}, {**BOTH, "SANTA_REVIEWER_B": "openai:gpt-5.4-mini"}).defaults
    assert d.reviewer_d not in (d.reviewer_b, d.reviewer_c)
    assert (
        effective_defaults({}, {**BOTH, "SANTA_REVIEWER_D": "claude-opus-5-5"}).defaults.reviewer_d == "claude-opus-5-5"
    )
