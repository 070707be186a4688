"""Home: the root URL. Forwards to the Review page, keeping the query (e.g. `/?run=3`).

Why a page of its own: Streamlit serves the default page at `/` whatever its url_path says, so
Review could not also answer at `/review`. With this hidden default page, both work.
"""

import streamlit as st

from ui.navigation import ensure_navigation

ensure_navigation()  # first: a deep link may arrive before app.py ever ran
st.switch_page("pages/review.py", query_params=st.query_params.to_dict())
