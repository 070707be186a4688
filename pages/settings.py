"""Settings: API key status, defaults for new runs, database and price list."""

import streamlit as st

from santa_core import pricing
from santa_core.config import KNOWN_MODELS, Defaults, api_key_present, base_url, diversity_warning
from santa_core.reviewers.base import PERSON
from storage.db import redacted_url
from ui import services
from ui.bootstrap import ensure_navigation
from ui.safe import md

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

st.title("⚙️ Settings")
if api_key_present():
    st.success("Anthropic API key: present (the key itself is never shown or stored).")
else:
    st.warning("Anthropic API key: missing. Person reviewers still work. Add `ANTHROPIC_API_KEY` to the "
               "environment or to `.streamlit/secrets.toml` and restart the app to use model reviewers.")
if base_url():
    st.caption(f"Messages API base URL: {md(base_url())} (from ANTHROPIC_BASE_URL)")
st.caption(f"Database: {md(redacted_url(services.desk().url))} · price list as of {pricing.rates_as_of()}")

d = services.defaults()
models = [*KNOWN_MODELS, PERSON]
st.subheader("Defaults for new runs")
name = st.text_input("Default name for people who have not entered theirs (sidebar)", d.display_name, key="set_name",
                     help="Without sign-in, each person enters their name in the sidebar; it is recorded on "
                     "their decisions. This is only the starting value.")
b = st.selectbox("Reviewer B", models, index=models.index(d.reviewer_b) if d.reviewer_b in models else 0, key="set_b")
c = st.selectbox("Reviewer C", models, index=models.index(d.reviewer_c) if d.reviewer_c in models else 1, key="set_c")
if warning := diversity_warning(b, c):
    st.warning(md(warning))
fixer = st.selectbox("Fix agent", models, index=models.index(d.fixer) if d.fixer in models else 0, key="set_fixer")
names = services.desk().repo.rubrics.names()
rubric = st.selectbox("Rubric", names, index=names.index(d.rubric) if d.rubric in names else 0, key="set_rubric")
rounds = st.number_input("Max rounds before escalation", 1, 10, d.max_rounds, key="set_rounds")
budget = st.number_input("Budget per run (USD)", 0.01, 100.0, max(0.01, float(d.budget_usd)), step=0.5, key="set_budget")
if st.button("Save settings", type="primary", key="set_save"):
    if not name.strip():
        st.error("The display name is empty; decisions need a name.")
    else:
        new = Defaults(reviewer_b=b, reviewer_c=c, fixer=fixer, max_rounds=int(rounds),
                       budget_usd=float(budget), rubric=rubric, display_name=name.strip())
        services.desk().repo.save_settings(new.model_dump(), actor=services.actor())
        st.success("Saved. New runs start from these defaults.")
