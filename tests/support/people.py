"""The people the storage tests act as: one role each (conftest.TEST_PEOPLE grants them), and a
stranger who was never registered.
"""

from __future__ import annotations

EDITOR, OFFICER, AUTHOR, VIEWER, ADMIN = (
    "editor@example.com",
    "officer@example.com",
    "author@example.com",
    "viewer@example.com",
    "admin@example.com",
)
STRANGER = "stranger@example.com"
"""Never registered: no person row, no role."""
PEOPLE = (EDITOR, OFFICER, AUTHOR, VIEWER, ADMIN, STRANGER)
