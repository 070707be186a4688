"""A real OpenID Connect provider on loopback for the sign-in tests: `oidc-provider-mock`.

It is started the documented way (`python -m oidc_provider_mock`, a uvicorn server in its own
process) on a free 127.0.0.1 port, with each person's claims given up front (`--user-claims`).
Its authorization page is a form with one `sub` field and an "Authorize" button: the browser test
types a subject there, as a person would type their account, and the provider issues a signed ID
token carrying that subject's claims (`email`, `email_verified`, `name`). It accepts any client id
and secret and any redirect URI, publishes `end_session_endpoint` (a page with an "End session"
button) and serves plain http on loopback (it sets AUTHLIB_INSECURE_TRANSPORT for itself).

`secrets_toml` writes what the app reads from `.streamlit/secrets.toml`: `[auth]` pointing at the
provider and `[santa.roles]`; the app is pointed at that file with `--secrets.files`, so the
repository's own `.streamlit/` is never touched or read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.app_server import stop, wait_for

START_S = 30


@dataclass(frozen=True)
class Account:
    """One person at the provider: the subject typed on its form and the claims it signs."""

    sub: str
    email: str
    name: str
    email_verified: bool

    def claims(self) -> dict[str, object]:
        return {"sub": self.sub, "email": self.email, "name": self.name, "email_verified": self.email_verified}


@dataclass(frozen=True)
class Provider:
    issuer: str
    log: Path

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"


@contextmanager
def oidc_provider(port: int, accounts: Sequence[Account], log: Path) -> Iterator[Provider]:
    """The provider on 127.0.0.1:`port`, knowing `accounts`; stopped on exit."""
    args = [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port)]
    for account in accounts:
        args += ["--user-claims", json.dumps(account.claims())]
    env = {**os.environ, "NO_COLOR": "1"}
    with log.open("wb") as out:
        proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    provider = Provider(issuer=f"http://127.0.0.1:{port}", log=log)
    try:
        wait_for(provider.metadata_url, proc, log, "oidc-provider-mock", START_S)
        yield provider
    finally:
        stop(proc)


def _toml(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def secrets_toml(path: Path, provider: Provider, app_base: str, roles: Mapping[str, Sequence[str]]) -> Path:
    """Write the app's secrets: sign-in through `provider` and the `[santa.roles]` patterns."""
    auth = {
        "redirect_uri": f"{app_base}/oauth2callback",
        "cookie_secret": "browser-test-cookie-secret-not-used-anywhere-else",
        "client_id": "santa-desk",
        "client_secret": "browser-test-client-secret",
        "server_metadata_url": provider.metadata_url,
    }
    lines = ["[auth]", *(f"{k} = {_toml(v)}" for k, v in auth.items()), "", "[santa.roles]"]
    lines += [f"{role} = {_toml(list(globs))}" for role, globs in roles.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
