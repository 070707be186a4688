"""Settings: where runs are worked (the Operations panel), model providers, sign-in and roles, the local user's name, defaults for new runs and due times."""

import pandas as pd
import streamlit as st

from santa_core import pricing, words
from santa_core.config import DEFAULT_DUE_HOURS
from santa_core.models import EscalationReason
from santa_core.providers import usable_model_ids
from santa_core.roles import LOCAL, ROLE_LABEL, Permission
from storage.db import redacted_url
from ui import alerts as alerts_ui
from ui import app_desk, components, identity, navigation, operations, setting_sources, settings_save
from ui import providers as providers_ui
from ui.metrics_confidence import picker_lines
from ui.navigation import ensure_navigation
from ui.safe import escape_markdown

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

navigation.title("settings", "Settings")
st.caption(f"Database: {escape_markdown(redacted_url(app_desk.desk().url))} · price list as of {pricing.rates_as_of()}")

st.subheader("Sign-in and roles")
if identity.auth_configured():
    st.success(
        "Sign-in is configured: people sign in through the OIDC provider in `[auth]` of "
        "`.streamlit/secrets.toml`, and their e-mail is recorded on everything they do."
    )
else:
    st.info(
        "Sign-in is not configured: everyone using this app acts as the local user (an admin). To let "
        "several people sign in with their own identity and roles, add an `[auth]` section to "
        "`.streamlit/secrets.toml` — see *Sign-in* in docs/operations.md."
    )
patterns = identity.role_patterns()
if patterns:
    st.caption(
        "Roles given on first sign-in by e-mail pattern (`[santa.roles]` in secrets.toml); "
        "an admin can change anyone's roles later on the People page."
    )
    rows = [
        {
            "role": ROLE_LABEL.get(r, r) if isinstance(r, str) else r,
            "e-mail patterns": ", ".join([p] if isinstance(p, str) else list(p)),
        }
        for r, p in patterns.items()
    ]
    components.full_table(pd.DataFrame(rows), wide=("e-mail patterns",), breakable=("e-mail patterns",))
else:
    st.caption(
        "No role e-mail patterns (`[santa.roles]`): a person signing in for the first time is a viewer "
        "until an admin gives them a role on the People page."
    )

st.subheader("Operations")
operations.operations_section()
alerts_ui.alerts_section()

st.subheader("Model providers")
providers_ui.provider_section()

allowed = identity.can(Permission.EDIT_SETTINGS)
if not allowed:
    st.info(escape_markdown(identity.refusal(Permission.EDIT_SETTINGS)) + " The values below are read-only.")
effective = app_desk.effective()
d = effective.defaults
local = app_desk.desk().people.get(LOCAL)

st.subheader("Where each setting comes from")
st.caption(
    "One rule for every setting: an environment variable (or the same name in `.streamlit/secrets.toml`) "
    "wins over what is saved here, which wins over the built-in default. A setting the environment sets is "
    "locked below; the workers of a PostgreSQL desk read their own environment, so set it there too."
)
setting_sources.sources_table(effective, local.name if local else None)

st.subheader("The local user")
name = st.text_input(
    words.setting("display_name"),
    local.name if local else d.display_name,
    key="set_name",
    disabled=not allowed,
    help="Without sign-in, everyone acts as the local user; this name is "
    "shown on their decisions and in the audit trail (which records the id `local`).",
)
settings_save.section_save("the name", "set_save_user", {"display_name": name}, d, allowed)


def fixed(field: str) -> bool:
    """Whether the widget of `field` is read-only: no right to edit settings, or the environment sets it (said)."""
    return setting_sources.locked(effective, field) or not allowed


# The pickers of the Review page's form (`slot_picker`): each slot starts where a new run's does, in every key setup.
usable = usable_model_ids()
st.subheader("Defaults for new runs")
if not usable:
    st.info(
        escape_markdown(
            f"No model provider has a key, so new runs start with a person in every slot, as on the "
            f"Review page. The models in effect ({d.reviewer_b}, {d.reviewer_c}, {d.fixer}) apply "
            "once their provider's key is set; saving keeps them."
        )
    )
b = providers_ui.slot_picker(words.setting("reviewer_b"), d.reviewer_b, "set_b", usable, disabled=fixed("reviewer_b"))
c = providers_ui.slot_picker(words.setting("reviewer_c"), d.reviewer_c, "set_c", usable, disabled=fixed("reviewer_c"))
providers_ui.panel_notes(b, c)
third = providers_ui.third_picker(
    words.setting("reviewer_d"),
    d.reviewer_d,
    "set_d",
    usable,
    disabled=fixed("reviewer_d"),
    help="Asked only by rubrics that mark criteria "
    "high-risk: it judges those too, and a run ships only when B, C and D all pass.",
)
picker_lines([b, c, *usable])  # how each model did against people
fixer = providers_ui.slot_picker(words.setting("fixer"), d.fixer, "set_fixer", usable, disabled=fixed("fixer"))
names = app_desk.desk().rubrics.names()
rubric = st.selectbox(
    words.setting("rubric"),
    names,
    index=names.index(d.rubric) if d.rubric in names else 0,
    key="set_rubric",
    disabled=not allowed,
)
rounds = st.number_input(
    words.setting("max_rounds"), 1, 10, d.max_rounds, key="set_rounds", disabled=fixed("max_rounds")
)
budget = st.number_input(
    words.setting("budget_usd"),
    0.01,
    100.0,
    max(0.01, float(d.budget_usd)),
    step=0.5,
    key="set_budget",
    disabled=fixed("budget_usd"),
)
run_defaults = {
    **{
        slot: providers_ui.slot_saved(choice, getattr(d, slot), usable)
        for slot, choice in (("reviewer_b", b), ("reviewer_c", c), ("fixer", fixer))
    },
    "reviewer_d": third,
    "rubric": rubric,
    "max_rounds": int(rounds),
    "budget_usd": float(budget),
}
settings_save.section_save("the defaults for new runs", "set_save_runs", run_defaults, d, allowed)

st.subheader(words.setting("screen"))
st.caption(
    "Before a model reviewer reads a text, a cheap model is asked to repeat a fresh random key while ignoring "
    "it. If it answers anything else, the text took a model over: the round is NAUGHTY (injection) and no "
    "reviewer is paid. Each distinct text is screened once. A screen that fails, or that is on but cannot run "
    "(no key for its model), stops the round before any reviewer is paid (a reviewer error, as for a reviewer "
    "with no key). Only turning it off runs rounds without it."
)
screen_on = st.toggle(
    "Screen every spec and output before review", value=d.screen, key="set_screen", disabled=fixed("screen")
)
screen_model = providers_ui.model_picker(
    st,
    words.setting("screen_model"),
    providers_ui.model_options(keep=[d.screen_model]),
    d.screen_model,
    "set_screen_model",
    disabled=fixed("screen_model") or not screen_on,
    check=screen_on,
    help="The cheapest model does: it only has to repeat a key. A model of another family than the reviewers "
    "has other weaknesses to fall for. A model whose provider has no key stops every round a model reviews.",
)
if usable and (problem := app_desk.desk().runner.screen_problem()):  # no key: no round reaches a screen
    st.error(
        escape_markdown(
            f"{problem[0].upper()}{problem[1:]}. Until then every round a model reviews stops at "
            "its screen before any reviewer is paid and waits in the escalation queue."
        )
    )
screen = {"screen": screen_on, "screen_model": screen_model}
settings_save.section_save("the injection screen", "set_save_screen", screen, d, allowed)

st.subheader("Escalations: default due time per reason")
st.caption(
    "A new escalation is due this many hours after it opens; whoever may assign can change one "
    "escalation's due time on the Escalations page."
)
due_hours: dict[str, float] = {}
cols = st.columns(2)
for i, reason in enumerate(r.value for r in EscalationReason):
    due_hours[reason] = cols[i % 2].number_input(
        f"{words.capital(words.reason(reason))} (hours)",
        0.25,
        24.0 * 90,
        float(d.due_hours_for(reason)),
        step=1.0,
        key=f"set_due_{reason}",
        disabled=not allowed,
        help=f"{words.reason_help(reason)} Built-in default: {DEFAULT_DUE_HOURS.get(reason, 24.0):g} h. "
        f"Reason code: `{reason}`.",
    )
due_hours["spot_check"] = cols[len(due_hours) % 2].number_input(
    "Spot-check (hours)",
    0.25,
    24.0 * 90,
    float(d.due_hours_for("spot_check")),
    step=1.0,
    key="set_due_spot_check",
    disabled=not allowed,
    help="Not an escalation: a drawn spot-check is due this many hours after the draw. "
    f"Built-in default: {DEFAULT_DUE_HOURS['spot_check']:g} h.",
)

settings_save.section_save("the due times", "set_save_due", {"due_hours": due_hours}, d, allowed)

st.divider()
if allowed and st.button("Save settings", type="primary", key=settings_save.WHOLE, help="Saves every section above."):
    settings_save.save({"display_name": name, **run_defaults, **screen, "due_hours": due_hours}, d, settings_save.WHOLE)
settings_save.saved_note(settings_save.WHOLE)
