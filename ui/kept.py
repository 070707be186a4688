"""Widget values that outlive a visit to another page (Streamlit forgets a widget's state once it is not drawn)."""

from __future__ import annotations

import streamlit as st


def keep(widget: str) -> None:
    """Give a widget its last value back after a page switch cleared it; call before drawing the widget."""
    copy = f"_kept_{widget}"
    if widget in st.session_state:
        st.session_state[copy] = st.session_state[widget]
    elif copy in st.session_state:
        st.session_state[widget] = st.session_state[copy]


def forget(widget: str) -> None:
    """Drop the kept copy, so the widget starts empty the next time it is drawn after a page switch."""
    st.session_state.pop(f"_kept_{widget}", None)
