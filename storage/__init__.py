"""Persistence for Santa: tables, migrations, one store per record kind implementing the core's
store protocols, and start-up. `RunStore` is the runner's `Store` and the actions' `ActionStore`.

Imports santa_core, never streamlit, ui or the composition root. Typical use::

    from storage import RunStore, init_db
    repo = RunStore(init_db())  # the app wraps init_db in st.cache_resource
"""

from storage.db import database_url, get_engine, make_engine, migrate
from storage.errors import RoundConflict, RoundNotFound, RunNotFound
from storage.runs import RunStore
from storage.startup import init_db
from storage.views import DecisionView, EscalationView, PendingReview, RoundView, RunSummary, RunView, StateChangeView

__all__ = [
    "DecisionView",
    "EscalationView",
    "PendingReview",
    "RunStore",
    "RoundConflict",
    "RoundNotFound",
    "RoundView",
    "RunNotFound",
    "RunSummary",
    "RunView",
    "StateChangeView",
    "database_url",
    "get_engine",
    "init_db",
    "make_engine",
    "migrate",
]
