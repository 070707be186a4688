"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit import config as st_config

from tests.llm_stub import MessagesStub


@pytest.fixture
def messages_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[MessagesStub]:
    """A running loopback Messages API; ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY point at it."""
    stub = MessagesStub().start()
    # Env too, so code that builds its own client (CLI, app, runner) hits the stub, never the API.
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    yield stub
    stub.stop()


def pytest_configure(config: pytest.Config) -> None:
    """AppTest keeps an unpicklable dict in session state; the committed config forbids those."""
    st_config.set_option("runner.enforceSerializableSessionState", False)
