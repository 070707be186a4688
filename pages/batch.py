"""Batch: verify many outputs by sampling, fix failure patterns across the batch, resample until clean
(`?batch=<id>` reopens a batch)."""

import streamlit as st

from ui import batch, batch_list, navigation, query
from ui.batch_upload import new_batch_form
from ui.navigation import ensure_navigation

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

navigation.title("batch", "Batch")
batch_id = query.batch_id()
if batch_id is None:
    batch_list.intro()
    past = batch_list.past_batches()
    if not past:
        batch_list.empty_state()
        new_id = new_batch_form()
    else:
        new, reopen = st.tabs(["New batch", f"Past batches ({len(past)})"])
        with reopen:
            batch_list.batch_list(past)
        with new:
            new_id = new_batch_form()
    if new_id is not None:
        st.query_params["batch"] = str(new_id)
        st.rerun()
else:
    if st.button(":material/arrow_back: All batches", key="batch_back"):
        del st.query_params["batch"]
        st.rerun()
    batch.render_batch(batch_id)
