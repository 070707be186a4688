"""Santa — review desk for AI-generated work. Entry point: `streamlit run app.py`."""

import streamlit as st

from ui import bootstrap, services
from ui.safe import md

st.set_page_config(page_title="Santa — review desk", page_icon="🎅", layout="wide")

# Every file in pages/ is listed here: once st.navigation runs, Streamlit stops discovering
# pages/ on its own, so a file left out would vanish after the first run.
PAGES = {
    "Review desk": [
        st.Page("pages/review.py", title="Review", icon="🎅", url_path="review"),
        st.Page("pages/runs.py", title="Runs", icon="📜", url_path="runs"),
        st.Page("pages/escalations.py", title="Escalations", icon="🚨", url_path="escalations"),
    ],
    "Setup": [
        st.Page("pages/rubrics.py", title="Rubrics", icon="📋", url_path="rubrics"),
        st.Page("pages/settings.py", title="Settings", icon="⚙️", url_path="settings"),
        st.Page("pages/home.py", title="Home", url_path="home", default=True, visibility="hidden"),
    ],
}

services.secrets_to_env()
navigation = st.navigation(PAGES)
bootstrap.mark_app_ran()
desk = services.desk()
open_escalations = len(desk.repo.list_escalations(status="open"))
with st.sidebar:
    services.identity_widget()
    st.caption(f"Acting as **{md(services.actor())}**")
    if open_escalations:
        st.caption(f"🚨 {open_escalations} open escalation{'s' if open_escalations != 1 else ''}")
navigation.run()
