"""Defaults for new runs and where each comes from, and the Settings page's actions (save the defaults, test a
provider's connection). Reads the environment only; never stores the key.

One rule for every setting (`effective_defaults`): an environment variable that is set wins, else the
value saved on the Settings page, else the built-in default. Why the environment wins: it is the
operator's explicit choice for a deployment (`SANTA_SCREEN=on` keeps the injection screen on whatever
anyone saves on a page; `SANTA_SCREEN=off` turns it off for a desk that must not call out), and it is
the same for the app and its workers when set in the deployment. The Settings page shows such a setting
locked, with the variable that sets it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel, Field, ValidationError

from santa_core import people
from santa_core.panels import default_panel, partner_for, third_for
from santa_core.providers import (
    CLAUDE_MODELS,
    Provider,
    configured_providers,
    default_screen_model,
    provider_settings_to_env,
)
from santa_core.providers import diversity_warning as diversity_warning  # re-exported: the pages' and CLI's import
from santa_core.roles import Permission

KNOWN_MODELS = CLAUDE_MODELS
"""The Claude models (the pickers offer `providers.usable_model_ids()`: every provider with a key)."""


DEFAULT_DUE_HOURS: dict[str, float] = {
    "round_cap": 24.0,
    "reviewer_error": 8.0,
    "budget": 24.0,
    "rejected_fix": 24.0,
    # Text addressed to the reviewers may be an attack on the pipeline: look sooner.
    "injection": 4.0,
    "fix_failed": 24.0,
    "disagreement": 24.0,
    # An outage usually passes within hours: a person should try again (or decide) the same day.
    "provider_failed": 8.0,
    # Not an escalation: a spot-check drawn from shipped work is due within the week it was drawn in.
    "spot_check": 168.0,
}
"""Default hours from escalation to due, per reason; Settings changes them."""


class Defaults(BaseModel):
    """The settings a new run starts from; the Settings page edits them.

    The models written here are the built-in panel of a desk with Claude only, or with no key yet (the cheapest two
    Claude models): `effective_defaults` puts the built-in panel of the configured providers in their place
    (`panels.default_panel`, `third_for`, `default_screen_model`), so with keys for two families the panel spans
    both."""

    # Why a different model for C: two instances of one model share blind spots.
    reviewer_b: str = "claude-haiku-5-5"
    reviewer_c: str = "claude-haiku-4-5"
    reviewer_d: str = "claude-sonnet-5"
    """The third reviewer, asked only by rubrics with high-risk criteria (built-in: `panels.third_for`)."""
    fixer: str = "claude-opus-5-5"
    screen: bool = True
    """Run the known-answer injection screen before a model reviewer is paid. On and unable to run (no key for
    its model, an unknown provider) it fails closed: the round escalates as a reviewer error. Only off is no screen."""
    # Why the cheapest model: the screen reads every distinct text once, and only has to repeat a key.
    screen_model: str = "claude-haiku-5-5"
    max_rounds: int = Field(default=3, ge=1, le=10)
    budget_usd: float = Field(default=1.0, ge=0)
    rubric: str = "general"
    display_name: str = "local user"
    due_hours: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_DUE_HOURS))
    """Hours from escalation to due, per escalation reason (Settings)."""

    def due_hours_for(self, reason: str | None) -> float:
        """The default due time of an escalation with this reason, in hours."""
        return float(self.due_hours.get(str(reason), DEFAULT_DUE_HOURS.get(str(reason), 24.0)))


ENV_VARIABLES: dict[str, str] = {
    "reviewer_b": "SANTA_REVIEWER_B",
    "reviewer_c": "SANTA_REVIEWER_C",
    "reviewer_d": "SANTA_REVIEWER_D",
    "fixer": "SANTA_FIXER",
    "max_rounds": "SANTA_MAX_ROUNDS",
    "budget_usd": "SANTA_BUDGET_USD",
    "screen": "SANTA_SCREEN",
    "screen_model": "SANTA_SCREEN_MODEL",
}
"""The settings an environment variable sets (it wins over Settings). The others (rubric, the local user's name,
due times) are set on the Settings page only."""

Origin = Literal["environment", "settings", "default"]


@dataclass(frozen=True)
class Saved:
    """A value saved on the Settings page: who saved it, and when (the save that set this value)."""

    value: Any
    saved_by: str
    saved_at: datetime


@dataclass(frozen=True)
class Source:
    """Where one effective setting comes from; `saved` is the saved value too when the environment overrides it."""

    origin: Origin
    variable: str | None = None
    text: str | None = None
    """The variable's value as set (environment)."""
    saved: Saved | None = None


class Effective(NamedTuple):
    """The defaults new runs start from, and where each field's value comes from."""

    defaults: Defaults
    sources: dict[str, Source]


class SettingError(ValueError):
    """An environment variable's value is not a valid value of its setting."""


def _from_env(field: str, variable: str, text: str) -> Any:
    """The variable's text as the setting's value (validated as the Settings page's value would be)."""
    try:
        return getattr(Defaults.model_validate({field: text.strip()}), field)
    except ValidationError as exc:
        why = exc.errors()[0].get("msg", "invalid")
        raise SettingError(f"{variable}={text!r} is not a valid value of {field}: {why}") from None


def effective_defaults(saved: Mapping[str, Saved] | None = None, env: Mapping[str, str] | None = None) -> Effective:
    """The defaults for new runs under the one rule: the environment, else the saved Settings, else the built-in.

    Built-in panel and screening model follow the configured providers (`panels.default_panel`); one reviewer
    slot set alone gets a partner that differs from it, not the default panel's model for its slot (which may be
    the same model). Raises `SettingError` for a variable that is set to an invalid value (never a silent
    fallback: a typo in SANTA_SCREEN must not turn the screen off or on unseen)."""
    env, saved = (os.environ if env is None else env), (saved or {})
    values: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    for field in Defaults.model_fields:
        variable = ENV_VARIABLES.get(field)
        text = env.get(variable) if variable else None
        kept = saved.get(field)
        kept = kept if kept is not None and kept.value not in (None, "") else None
        if text and variable:
            values[field], sources[field] = (
                _from_env(field, variable, text),
                Source("environment", variable, text, kept),
            )
        elif kept is not None:
            values[field], sources[field] = kept.value, Source("settings", saved=kept)
        else:
            sources[field] = Source("default")
    providers = configured_providers(env)
    b, c, fixer = default_panel(providers, env)
    if "reviewer_b" in values and "reviewer_c" not in values:
        c = partner_for(values["reviewer_b"], providers, env)
    elif "reviewer_c" in values and "reviewer_b" not in values:
        b = partner_for(values["reviewer_c"], providers, env)
    d = third_for(values.get("reviewer_b", b), values.get("reviewer_c", c), providers, env)
    built_in = {
        "reviewer_b": b,
        "reviewer_c": c,
        "reviewer_d": d,
        "fixer": fixer,
        # a screening model of a family other than both reviewers' when keys allow (issue 36)
        "screen_model": default_screen_model(
            providers, env, (values.get("reviewer_b", b), values.get("reviewer_c", c))
        ),
    }
    return Effective(Defaults(**{**built_in, **values}), sources)


def env_defaults() -> Defaults:
    """The defaults with nothing saved: SANTA_* variables where set, else the built-ins."""
    return effective_defaults().defaults


def screen_remedy(sources: Mapping[str, Source]) -> str:
    """How to get a screen that cannot run going, or turn it off, where the setting actually comes from."""
    model = sources.get("screen_model", Source("default"))
    pick = (
        f"set {model.variable} to a model you have a key for"
        if model.origin == "environment"
        else "pick a screening model you have a key for in Settings"
    )
    screen = sources.get("screen", Source("default"))
    off = (
        f"set {screen.variable}=off"
        if screen.origin == "environment"
        else "turn the injection screen off in Settings (or SANTA_SCREEN=off)"
    )
    return f"or {pick}, or {off}"


def export_to_env(values: dict) -> None:
    """Root-level str/int/float values become environment variables; values already set win.

    The app (st.secrets) and the command line (.streamlit/secrets.toml) share this rule. Named model
    endpoints (`[santa.providers.<name>]`) become SANTA_PROVIDER_<NAME>_* variables.
    """
    santa = values.get("santa")
    if isinstance(santa, Mapping) and isinstance(santa.get("providers"), Mapping):
        provider_settings_to_env(santa["providers"])
    for key, value in values.items():
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            os.environ.setdefault(key, str(value))


class DefaultsStore(Protocol):
    """Where the Settings page's defaults are kept (`storage.settings.SettingsStore`): append-only, newest counts."""

    def get_settings(self) -> dict[str, Any]:
        """The saved values ({} before the first save)."""
        ...

    def saved_settings(self) -> dict[str, Saved]:
        """The saved values, each with who saved it and when ({} before the first save)."""
        ...

    def save_settings(self, values: dict[str, Any], actor: str) -> None:
        """Append the previous values updated with `values`."""
        ...


def save_defaults(
    store: DefaultsStore,
    defaults: Defaults,
    actor: str,
    env: Mapping[str, str] | None = None,
    fields: Collection[str] | None = None,
) -> None:
    """A person saves the defaults new runs and escalations start from (only `fields` when given: one section of the
    Settings page; the rest keep what is saved). A setting an environment variable sets is not saved: the
    environment wins, so the value would not be used, and it would take over unseen the day the variable is unset
    (the Settings page shows such a setting locked)."""
    env = os.environ if env is None else env
    values = {
        k: v
        for k, v in defaults.model_dump().items()
        if not (k in ENV_VARIABLES and env.get(ENV_VARIABLES[k])) and (fields is None or k in fields)
    }
    store.save_settings(values, actor=actor)


T = TypeVar("T")


def try_connection(people_store: people.Store, actor: str, provider: Provider, ask: Callable[[Provider], T]) -> T:
    """Test connection on a person's behalf: `ask` sends the request (the provider's model list, on the install's
    key) only once the actor's stored roles allow testing providers; PermissionDenied, with nothing sent, else."""
    people_store.require(actor, Permission.TEST_PROVIDERS)
    return ask(provider)
