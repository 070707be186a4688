"""Persistence for Santa: SQLModel tables, engine, migrations and the `Repo` (a `Store`).

Imports santa_core, never streamlit. Typical use::

    from storage import Repo, init_db
    repo = Repo(init_db())  # the app wraps init_db in st.cache_resource
"""

from storage.db import database_url, get_engine, init_db, make_engine, migrate
from storage.repo import (
    DecisionView,
    EscalationView,
    PendingReview,
    Repo,
    RoundConflict,
    RoundNotFound,
    RoundView,
    RunNotFound,
    RunSummary,
    RunView,
    StateChangeView,
)

__all__ = [
    "DecisionView",
    "EscalationView",
    "PendingReview",
    "Repo",
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
