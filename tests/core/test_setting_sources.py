"""One rule for every setting (`santa_core.config.effective_defaults`): an environment variable that is set wins,
else the value saved on the Settings page, else the built-in default; each value says where it comes from."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from santa_core.config import ENV_VARIABLES, Defaults, Saved, SettingError, effective_defaults, save_defaults

WHEN = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
KEYS = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}

# (field, the variable's text, its value, a saved value, a value that is neither)
CASES = [
    ("reviewer_b", "claude-opus-5-5", "claude-opus-5-5", "claude-sonnet-5-5"),
    ("reviewer_c", "openai:gpt-5.5", "openai:gpt-5.5", "claude-sonnet-5-5"),
    ("reviewer_d", "openai:gpt-5.5", "openai:gpt-5.5", "claude-sonnet-5-5"),
    ("fixer", "openai:gpt-5.5", "openai:gpt-5.5", "claude-sonnet-5-5"),
    ("max_rounds", "5", 5, 2),
    ("budget_usd", "2.5", 2.5, 7.0),
    ("screen", "off", False, True),
    ("screen_model", "openai:gpt-5.4-nano", "openai:gpt-5.4-nano", "claude-sonnet-5-5"),
]


def saved(**values: object) -> dict[str, Saved]:
    return {k: Saved(v, "ann", WHEN) for k, v in values.items()}


def test_every_setting_with_a_variable_is_in_the_table() -> None:
    assert set(ENV_VARIABLES) == {c[0] for c in CASES}
    assert set(ENV_VARIABLES) < set(Defaults.model_fields)


@pytest.mark.parametrize(("field", "text", "value", "other"), CASES, ids=[c[0] for c in CASES])
def test_the_environment_wins_over_settings_which_win_over_the_default(
    field: str, text: str, value: object, other: object
) -> None:
    variable = ENV_VARIABLES[field]
    built_in = effective_defaults({}, KEYS)
    assert built_in.sources[field].origin == "default"
    assert value != other  # the layers are told apart (a yes/no setting has only two values: the default is one)
    assert isinstance(value, bool) or getattr(built_in.defaults, field) not in (value, other)

    from_settings = effective_defaults(saved(**{field: other}), KEYS)
    assert getattr(from_settings.defaults, field) == other
    assert from_settings.sources[field].origin == "settings"
    assert from_settings.sources[field].saved == Saved(other, "ann", WHEN)

    both = effective_defaults(saved(**{field: other}), {**KEYS, variable: text})
    assert getattr(both.defaults, field) == value
    source = both.sources[field]
    assert (source.origin, source.variable, source.text) == ("environment", variable, text)
    assert source.saved == Saved(other, "ann", WHEN)  # kept, to say it is not used


def test_the_written_defaults_are_the_built_in_panel_of_a_desk_without_keys() -> None:
    """`Defaults` says what a desk with no key (or Claude only) starts from, not a panel the code never picks."""
    assert effective_defaults(env={}).defaults == Defaults()


def test_settings_only_fields_come_from_settings_or_the_default() -> None:
    effective = effective_defaults(saved(rubric="marketing", due_hours={"injection": 1.0}), KEYS)
    assert effective.defaults.rubric == "marketing" and effective.defaults.due_hours_for("injection") == 1.0
    assert effective.sources["rubric"].origin == "settings" and effective.sources["display_name"].origin == "default"


def test_an_empty_variable_or_saved_value_is_not_set() -> None:
    effective = effective_defaults(saved(fixer=""), {**KEYS, "SANTA_SCREEN": ""})
    assert effective.sources["screen"].origin == "default" and effective.defaults.screen is True
    assert effective.sources["fixer"].origin == "default"


@pytest.mark.parametrize(
    ("variable", "text"), [("SANTA_SCREEN", "maybe"), ("SANTA_MAX_ROUNDS", "99"), ("SANTA_BUDGET_USD", "lots")]
)
def test_an_invalid_variable_is_an_error_naming_it_never_a_silent_fallback(variable: str, text: str) -> None:
    with pytest.raises(SettingError, match=f"^{variable}='{text}' is not a valid value"):
        effective_defaults(saved(screen=True, max_rounds=3, budget_usd=1.0), {**KEYS, variable: text})


def test_one_slot_set_by_the_environment_gets_a_partner_that_differs() -> None:
    effective = effective_defaults({}, {**KEYS, "SANTA_REVIEWER_C": "claude-haiku-5-5"})
    assert effective.defaults.reviewer_c == "claude-haiku-5-5" and effective.defaults.reviewer_b != "claude-haiku-5-5"


class Recorder:
    """A settings store that keeps what it was asked to save."""

    def __init__(self) -> None:
        self.values: dict = {}

    def saved_settings(self) -> dict[str, Saved]:
        return {}

    def get_settings(self) -> dict:
        return self.values

    def save_settings(self, values: dict, actor: str) -> None:
        self.values = values


def test_a_save_leaves_out_the_settings_the_environment_sets() -> None:
    store = Recorder()
    save_defaults(store, Defaults(screen=True, max_rounds=4), "ann", env={"SANTA_SCREEN": "off"})
    assert "screen" not in store.values and store.values["max_rounds"] == 4
    save_defaults(store, Defaults(screen=True), "ann", env={})
    assert store.values["screen"] is True


THREE_FAMILIES = {
    **KEYS,
    "SANTA_PROVIDER_LOCAL_BASE_URL": "http://127.0.0.1:1/v1",
    "SANTA_PROVIDER_LOCAL_MODELS": "qwen3:32b",
}
PANEL = {"SANTA_REVIEWER_B": "claude-sonnet-5-5", "SANTA_REVIEWER_C": "openai:gpt-5.4-mini"}


def test_the_default_screening_model_comes_from_a_third_family_when_keys_allow() -> None:
    """Issue 36: a text must then take over a family neither reviewer belongs to; an explicit choice still wins."""
    effective = effective_defaults(env={**THREE_FAMILIES, **PANEL})
    assert effective.defaults.screen_model == "local:qwen3:32b"
    assert effective_defaults(env={**KEYS, **PANEL}).defaults.screen_model == "claude-haiku-5-5"  # two: as before
    chosen = effective_defaults(env={**THREE_FAMILIES, **PANEL, "SANTA_SCREEN_MODEL": "claude-haiku-5-5"})
    assert chosen.defaults.screen_model == "claude-haiku-5-5" and chosen.sources["screen_model"].origin == "environment"
    kept = effective_defaults(saved(screen_model="openai:gpt-5.4-nano"), env={**THREE_FAMILIES, **PANEL})
    assert kept.defaults.screen_model == "openai:gpt-5.4-nano"  # a saved setting wins over the built-in too
