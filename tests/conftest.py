"""Shared pytest fixtures."""

from __future__ import annotations

import socket
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


_real_connect = socket.socket.connect
_LOOPBACK = ("127.", "::1", "localhost", "0:0:0:0:0:0:0:1")


def _loopback_only(sock: socket.socket, address: object) -> object:
    """Refuse any connection that is not to this machine: no test may reach the network."""
    host = address[0] if isinstance(address, tuple) else str(address)
    if sock.family == socket.AF_UNIX or str(host).startswith(_LOOPBACK):
        return _real_connect(sock, address)
    raise OSError(f"test tried to reach the network: {address!r}")


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs with outbound connections limited to loopback."""
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
