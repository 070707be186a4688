"""Model providers in the app: the model pickers (every usable provider's models, each with its family), the
panel's diversity notes, and the Settings page's list of providers with a Test connection per provider.

Keys are only ever asked "is it there" (`Provider.key_present`): no key, nor its length, reaches a page.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from desk.connection import MAX_LISTED, ConnectionTest, check_connection, key_text, shown_url
from santa_core import pricing
from santa_core.config import try_connection
from santa_core.providers import (
    MESSAGES_API,
    Provider,
    configured_providers,
    diversity_warning,
    family,
    key_problem,
    provider_of,
    provider_problems,
    second_key_hint,
    usable_model_ids,
)
from santa_core.reviewers.base import PERSON
from santa_core.roles import Permission, PermissionDenied
from santa_core.run.runner import Runner
from santa_core.words import usd
from ui import app_desk, components, identity, table_fit
from ui.safe import escape_markdown

# --- pickers ----------------------------------------------------------------------------------


def model_label(model_id: str) -> str:
    """'openai:gpt-5.4-mini · GPT'; a model that cannot be called here says so ('· no key')."""
    if model_id == PERSON:
        return PERSON
    label = f"{model_id} · {family(model_id)}"
    provider = provider_of(model_id)
    if provider is None:
        return f"{label} · unknown provider"
    return label if provider.key_present() else f"{label} · no key"


def model_options(person: bool = False, keep: Sequence[str] = (), usable: list[str] | None = None) -> list[str]:
    """The usable models (and `person`), with the saved values in `keep` kept in front when they are not
    usable, so a saved choice never silently turns into another model."""
    options = [*(usable_model_ids() if usable is None else usable), *([PERSON] if person else [])]
    missing = [m for m in dict.fromkeys(keep) if m and m not in options]
    return [*missing, *options]


def model_problem(model_id: str | None) -> str | None:
    """Why this model cannot be called here (`key_problem`), else None (a person always can)."""
    if not model_id or model_id == PERSON:
        return None
    return key_problem(model_id)


def model_picker(
    where,
    label: str,
    options: list[str],
    default: str | None,
    key: str,  # noqa: ANN001 - st or a column
    help: str | None = None,
    disabled: bool = False,
    check: bool = True,
) -> str:
    """A model selectbox (each option with its family); under it, what is wrong when the choice cannot be called
    (unless no provider has a key at all: the page says that once)."""
    index = options.index(default) if default in options else 0
    choice = where.selectbox(
        label, options, index=index, key=key, format_func=model_label, help=help, disabled=disabled
    )
    if check and (problem := model_problem(choice)) and usable_model_ids():
        where.error(escape_markdown(f"{label}: {problem}"))
    return choice


def slot_start(default: str, usable: list[str]) -> str:
    """The model (or `person`) a reviewer or fix-agent slot starts on, the same on the Review page and in Settings:
    the default in effect, kept even when its provider has no key (marked, and a start refused, so a setting never
    silently turns into another model), except with no provider keyed at all: `person`, the one that can work."""
    return default if usable else PERSON


def slot_picker(
    label: str, default: str, key: str, usable: list[str], help: str | None = None, disabled: bool = False
) -> str:
    """A reviewer or fix-agent picker, as the Review page and Settings both draw it: every usable model and
    `person`, starting on `slot_start` (kept in front when it cannot be called); with no key at all, only `person`."""
    start = slot_start(default, usable)
    options = model_options(person=True, keep=[start], usable=usable) if usable else [PERSON]
    return model_picker(st, label, options, start, key, help=help, disabled=disabled)


def third_picker(
    label: str, default: str, key: str, usable: list[str], help: str | None = None, disabled: bool = False
) -> str:
    """The third reviewer's picker (slot D): models only, never `person` (people review in B and C), starting on
    `default`, kept in front when it cannot be called (marked, and a start refused)."""
    options = model_options(keep=[default], usable=usable)
    return model_picker(st, label, options, default, key, help=help, disabled=disabled)


def slot_saved(choice: str, default: str, usable: list[str]) -> str:
    """What saving a slot's picker keeps: the choice, except where the slot shows `person` only because no provider
    has a key (the default in effect then stays, and applies again once its key is set)."""
    return choice if usable else default


def one_family_hint(usable: list[str] | None = None) -> str | None:
    """What a second key would add, when every usable model is of one family (None: two families or none)."""
    families = {family(m) for m in (usable_model_ids() if usable is None else usable)}
    if len(families) != 1:
        return None
    fam = families.pop()
    return f"Only {fam} models are configured: {second_key_hint(fam)}."


def panel_notes(reviewer_b: str, reviewer_c: str) -> None:
    """The diversity warning for this panel; without one, on a desk of one model family, what a second key adds."""
    if warning := diversity_warning(reviewer_b, reviewer_c):
        st.warning(escape_markdown(warning))
    elif hint := one_family_hint():
        st.caption(escape_markdown(hint))


SCREEN_BLOCKS = (
    "A run started now would stop at its screen before any reviewer is paid and go to the escalation "
    "queue as a reviewer error, so it is not started."
)


def screen_notice(runner: Runner, reviewer_b: str, reviewer_c: str) -> str | None:
    """Next to Start: an error when the injection screen is on but cannot run for this panel (the same test the
    runner fails closed on), naming why and how to fix it; the problem, else None."""
    problem = runner.screen_problem((reviewer_b, reviewer_c))
    if problem:
        st.error(escape_markdown(f"{problem[0].upper()}{problem[1:]}. {SCREEN_BLOCKS}"), icon=":material/shield:")
    return problem


# --- the Settings page's provider list --------------------------------------------------------

PROTOCOL_LABEL = {MESSAGES_API: "Anthropic Messages API"}


def price_rows(provider: Provider) -> list[dict]:
    """The models offered for a provider with their family, list price and the date it was read."""
    rates = pricing.load_rates()
    rows = []
    for mid in provider.model_ids():
        row = rates.models.get(mid) if pricing.is_known(mid, rates) else None
        rows.append(
            {
                "model": mid,
                "family": family(mid),
                "input (USD / M tokens)": usd(row.input) if row else pricing.PRICE_UNKNOWN,
                "output (USD / M tokens)": usd(row.output) if row else pricing.PRICE_UNKNOWN,
                "price as of": pricing.model_as_of(mid, rates) or "—",
            }
        )
    return rows


def _show_test(provider: Provider, result: ConnectionTest) -> None:
    if result.problem:
        st.error(escape_markdown(f"Test connection of {provider.name} failed: {result.problem}"))
        return
    more = f" … and {result.total - len(result.models)} more" if result.total > len(result.models) else ""
    st.success(
        escape_markdown(
            f"Connected: {provider.name} lists {result.total} model(s): {', '.join(result.models) or 'none'}{more}"
        )
    )
    if result.total <= MAX_LISTED:
        absent = [m for m in provider.models if m not in result.models]
        if absent:
            st.caption(
                escape_markdown(
                    f"Offered here but not in the provider's list: {', '.join(absent)} "
                    "(a call to these models may fail)."
                )
            )


def provider_card(provider: Provider) -> None:
    """One provider: name, protocol, base URL, key status, its models with prices, and Test connection."""
    with st.container(border=True):
        protocol = PROTOCOL_LABEL.get(provider.protocol, "OpenAI Chat Completions")
        st.markdown(escape_markdown(f"{provider.name} · {protocol} · {shown_url(provider)}"))
        status = key_text(provider)
        (st.caption if provider.key_present() else st.warning)(escape_markdown(status))
        if not provider.strict:
            st.caption("Strict JSON schemas off for this endpoint (STRICT = 0): answers are validated by the desk.")
        rows = price_rows(provider)
        if rows:  # in a bordered card: its padding off the main area's width
            components.full_table(pd.DataFrame(rows), wide=("model",), room=table_fit.MAIN_PX - 40)
        else:
            st.caption(
                escape_markdown(
                    f"No models offered: list them in SANTA_PROVIDER_{provider.name.upper().replace('-', '_')}_MODELS."
                )
            )
        connection_panel(provider)


def connection_panel(provider: Provider) -> None:
    """The Test connection button and what the last test found; only for people who may test providers (the
    core's action asks their stored roles again before the request leaves)."""
    state = f"provider_test_result_{provider.name}"
    if not identity.can(Permission.TEST_PROVIDERS):
        st.caption(escape_markdown(identity.refusal(Permission.TEST_PROVIDERS)))
        return
    if st.button(
        "Test connection",
        key=f"provider_test_{provider.name}",
        help="Asks the provider for its model list (one request, no model is called).",
    ):
        try:
            with st.spinner(escape_markdown(f"Asking {provider.name} for its models…")):
                st.session_state[state] = try_connection(
                    app_desk.desk().people, identity.actor(), provider, check_connection
                )
        except PermissionDenied as exc:  # roles changed since the page was drawn
            st.session_state.pop(state, None)
            st.error(escape_markdown(f"Test connection of {provider.name} refused, nothing was sent: {exc}"))
            return
    if isinstance(result := st.session_state.get(state), ConnectionTest):
        _show_test(provider, result)


def provider_section() -> None:
    """Every configured provider, then the rule for models without a listed price."""
    found = configured_providers()
    ready = [p.name for p in found if p.key_present() and p.models]
    if ready:
        st.caption(
            escape_markdown(
                f"Models are offered from: {', '.join(ready)}. Keys are never shown or stored. "
                "Add a provider with OPENAI_API_KEY, or an OpenAI-compatible endpoint with "
                "SANTA_PROVIDER_<NAME>_BASE_URL (or [santa.providers.<name>] in secrets.toml)."
            )
        )
    else:
        st.warning(
            "No model provider has a key: person reviewers still work. Set `ANTHROPIC_API_KEY` or "
            "`OPENAI_API_KEY` (or add an OpenAI-compatible endpoint) in the environment or "
            "`.streamlit/secrets.toml` and restart the app to use model reviewers."
        )
    for problem in provider_problems():
        st.warning(escape_markdown(problem))
    for provider in found:
        provider_card(provider)
    st.caption(
        escape_markdown(f"Price unknown: {pricing.UNKNOWN_PRICE_RULE}. Price list as of {pricing.rates_as_of()}.")
    )
