"""Defaults and environment settings, and the Settings page's actions (save the defaults, test a provider's
connection). Reads the environment only; never stores the key."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, Field

from santa_core import people
from santa_core.panels import default_panel, partner_for
from santa_core.providers import (
    CLAUDE_MODELS,
    Provider,
    configured_providers,
    default_screen_model,
    key_problem,
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
}
"""Default hours from escalation to due, per reason; Settings changes them."""


class Defaults(BaseModel):
    """The settings a new run starts from; the Settings page edits them."""

    reviewer_b: str = "claude-sonnet-5-5"
    # Why a different model for C: two instances of one model share blind spots.
    reviewer_c: str = "claude-haiku-5-5"
    fixer: str = "claude-opus-5-5"
    screen: bool = True
    """Run the known-answer injection screen before the reviewers (needs a key; without one it is off)."""
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


def env_defaults() -> Defaults:
    """Defaults overridden by SANTA_* environment variables where set. The panel and fix agent follow the
    configured providers: the cheapest pair spanning two model families (`panels.default_panel`)."""
    b, c, fixer = default_panel(configured_providers())
    env = {
        "reviewer_b": os.environ.get("SANTA_REVIEWER_B"),
        "reviewer_c": os.environ.get("SANTA_REVIEWER_C"),
        "fixer": os.environ.get("SANTA_FIXER"),
        "max_rounds": os.environ.get("SANTA_MAX_ROUNDS"),
        "budget_usd": os.environ.get("SANTA_BUDGET_USD"),
        "screen": os.environ.get("SANTA_SCREEN"),
        "screen_model": os.environ.get("SANTA_SCREEN_MODEL"),
    }
    # One slot set alone gets a partner that differs from it, not the default panel's model for its slot (which
    # may be the same model).
    if env["reviewer_b"] and not env["reviewer_c"]:
        c = partner_for(env["reviewer_b"])
    elif env["reviewer_c"] and not env["reviewer_b"]:
        b = partner_for(env["reviewer_c"])
    panel = {"reviewer_b": b, "reviewer_c": c, "fixer": fixer, "screen_model": default_screen_model()}
    return Defaults(**{**panel, **{k: v for k, v in env.items() if v}})


def screen_problem(defaults: Defaults, reviewers: tuple[str, ...]) -> str | None:
    """Why the injection screen, switched on, will not run for a panel of these reviewers (its model cannot be
    called here), else None. Only the fencing and the deterministic detector then stand between an injected
    text and the reviewers: the pages and the command line say so."""
    if not defaults.screen or all(r == "person" for r in reviewers):
        return None
    if problem := key_problem(defaults.screen_model):
        return (f"the injection screen is on but will not run: its model {defaults.screen_model} cannot be called "
                f"here ({problem}); pick a screening model you have a key for in Settings or SANTA_SCREEN_MODEL")
    return None


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

    def save_settings(self, values: dict[str, Any], actor: str) -> None:
        """Append the previous values updated with `values`."""
        ...


def save_defaults(store: DefaultsStore, defaults: Defaults, actor: str) -> None:
    """A person saves the defaults new runs and escalations start from."""
    store.save_settings(defaults.model_dump(), actor=actor)


T = TypeVar("T")


def try_connection(people_store: people.Store, actor: str, provider: Provider, ask: Callable[[Provider], T]) -> T:
    """Test connection on a person's behalf: `ask` sends the request (the provider's model list, on the install's
    key) only once the actor's stored roles allow testing providers; PermissionDenied, with nothing sent, else."""
    people_store.require(actor, Permission.TEST_PROVIDERS)
    return ask(provider)
