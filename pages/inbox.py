"""Inbox: person reviewer slots waiting for me; open one to review it blind."""

import streamlit as st

from ui import navigation
from ui.inbox import render_inbox
from ui.navigation import ensure_navigation

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

navigation.title("inbox", "Inbox")
st.caption(
    "Reviewer slots a person fills, waiting for you: assigned to you, or open to anyone who may review. "
    "Open one to judge the output blind: the other review stays hidden until yours is in."
)
render_inbox()
