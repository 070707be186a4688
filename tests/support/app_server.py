"""The real app (`streamlit run app.py`) as a server process for browser tests, on a free port (of a
loopback address unless said) with a throwaway database, in no-key mode (no ANTHROPIC_API_KEY; the base URL points where
nothing listens, so no test can reach a model). Extra `streamlit run` options (e.g.
`--secrets.files`) are passed through.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START_S = 45
NO_GC_PER_RERUN = {"STREAMLIT_RUNNER_POST_SCRIPT_GC": "false"}
"""Streamlit runs a full collection (`gc.collect(2)`) after every script run (its runner.postScriptGC), memory
hygiene for a server that runs for weeks; in a test server of a few minutes it was a tenth to a third of the
server's CPU (py-spy, tests/e2e) and nothing a page shows depends on it (Python's own collector still runs). The
README walkthrough's server keeps it: it runs as a newcomer's would."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def streamlit_command(port: int, *extra_args: str, address: str = "127.0.0.1") -> list[str]:
    """`streamlit run app.py` on `address`:`port` (loopback unless said), headless, without usage statistics."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--server.address",
        address,
        "--browser.gatherUsageStats",
        "false",
        *extra_args,
    ]


def server_env(database_url: str, **extra: str) -> dict[str, str]:
    """The environment of a test server: no model key (the base URL where nothing listens), the database, `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    env["DATABASE_URL"] = database_url
    return {**env, **NO_GC_PER_RERUN, **extra}


def start_server(
    port: int, database_url: str, log: Path, extra_args: Sequence[str] = (), address: str = "127.0.0.1", **env: str
) -> subprocess.Popen:
    """`streamlit run app.py` as a process, its output in `log` (not waited for)."""
    with log.open("wb") as out:
        return subprocess.Popen(
            streamlit_command(port, *extra_args, address=address),
            cwd=ROOT,
            env=server_env(database_url, **env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


@contextmanager
def app_server(
    port: int, database_url: str, log: Path, extra_args: Sequence[str] = (), address: str = "127.0.0.1", **env: str
) -> Iterator[str]:
    """Run the app on `address`:`port` (`env` added to its environment); yields its loopback base URL, stops it
    on exit."""
    proc = start_server(port, database_url, log, extra_args, address, **env)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(f"{base}/_stcore/health", proc, log, "streamlit", START_S)
        yield base
    finally:
        stop(proc)


def wait_for(url: str, proc: subprocess.Popen, log: Path, what: str, timeout_s: float) -> None:
    """Poll `url` until it answers 200; RuntimeError with the process's log if it exits or never does."""
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: no answer from {url} in {timeout_s}s:\n{log.read_text(errors='replace')}")
        time.sleep(0.2)


def stop(proc: subprocess.Popen) -> None:
    """Terminate a server process (kill it if it does not stop in 10 s)."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
