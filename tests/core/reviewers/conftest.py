"""The adapters' tests call them directly: each test opens the call log's door as the runner would, into a list
(`sent`), so every request the adapters make here has passed `note_sending` before it left."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from santa_core.reviewers.base import journaled


@pytest.fixture(autouse=True)
def sent() -> Iterator[list[tuple[str, str, dict]]]:
    """The (purpose, model, body) of every request noted as sent during the test, in order."""
    notes: list[tuple[str, str, dict]] = []
    with journaled(lambda purpose, model, body: notes.append((purpose, model, body))):
        yield notes
