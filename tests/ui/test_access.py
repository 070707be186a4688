"""Sign-in fails closed, and a desk is never anonymous by accident (ui/access.py, app.py's gates).

- A secrets file that exists but cannot be read (a parse error, not UTF-8, a folder), at any location Streamlit
  reads, shows one message naming the file and the error, and no page of the desk: not the page list, not a
  widget, and the desk is never opened. Only a missing file means "no sign-in".
- With `[auth]` configured and nobody signed in, `identity.current_person()` refuses, and so does the app's desk
  when handed the local user; switched on while the desk is open, from the next page on.
- Without sign-in the desk is served on a loopback address only, unless SANTA_ALLOW_ANONYMOUS=1: the decision,
  the page of a session, and the server's start.
"""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit import config as st_config
from streamlit.runtime.secrets import Secrets
from streamlit.testing.v1 import AppTest

from storage.runs import RunStore
from tests.support.secrets_files import ROLES_TYPO as TYPO_IN_ROLES
from tests.support.secrets_files import toml_error
from tests.ui.test_app import plain, texts
from tests.ui.test_signin import AUTH, sidebar
from ui import access, app_desk

ROOT = Path(__file__).resolve().parents[2]
TITLE = ":material/rate_review: Santa — review desk"
GOOD_AUTH = "[auth]\n" + "".join(f'{k} = "{v}"\n' for k, v in AUTH.items())
ROLES_TYPO = GOOD_AUTH + TYPO_IN_ROLES


@pytest.fixture
def secrets_files(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[list[Path]], None]]:
    """Point Streamlit's secrets locations (`secrets.files`) at the given paths, with nothing read yet."""
    before = st_config.get_option("secrets.files")

    def point(paths: list[Path]) -> None:
        st_config.set_option("secrets.files", [str(p) for p in paths])
        monkeypatch.setattr(st, "secrets", Secrets())  # a fresh reader: nothing cached from elsewhere

    yield point
    st_config.set_option("secrets.files", before)


@pytest.fixture
def address() -> Iterator[Callable[[str | None], None]]:
    """Set the server address this process says it serves (`server.address`), as a flag would."""
    before = st_config.get_option("server.address")
    yield lambda value: st_config.set_option("server.address", value)
    st_config.set_option("server.address", before)


@pytest.fixture
def never_opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every desk the app tries to open (none should be)."""
    opened: list[str] = []
    monkeypatch.setattr(app_desk, "open_desk", lambda url, **kw: opened.append(url))
    return opened


def broken_file(tmp_path: Path, kind: str) -> tuple[list[Path], Path, str]:
    """(the secrets locations, the broken one, what the message must say about it)."""
    project, home = tmp_path / "project" / "secrets.toml", tmp_path / "home" / "secrets.toml"
    project.parent.mkdir()
    home.parent.mkdir()
    if kind == "unclosed array in [santa.roles]":
        project.write_text(ROLES_TYPO, encoding="utf-8")
        return [home, project], project, toml_error(ROLES_TYPO)
    if kind == "not UTF-8":
        project.write_bytes(GOOD_AUTH.encode("utf-16"))
        return [home, project], project, "can't decode byte 0xff"
    if kind == "a folder where the file should be":
        project.mkdir()
        return [home, project], project, "Is a directory"
    if kind == "a link to nothing":
        project.symlink_to(tmp_path / "gone.toml")
        return [home, project], project, "which does not exist"
    if kind == "an unknown role in [santa.roles]":
        project.write_text(GOOD_AUTH + '[santa.roles]\nadministrator = ["kim@example.com"]\n', encoding="utf-8")
        return [home, project], project, "[santa.roles]: unknown role 'administrator'; the roles are"
    if kind == "a number for a role's patterns":
        project.write_text(GOOD_AUTH + "[santa.roles]\nadmin = 5\n", encoding="utf-8")
        return [home, project], project, "[santa.roles]: admin must be an e-mail pattern or a list of them"
    assert kind == "the global file broken, the project's good"
    home.write_text("[santa.roles\n", encoding="utf-8")
    project.write_text(GOOD_AUTH, encoding="utf-8")
    return [home, project], home, toml_error("[santa.roles\n")


def santa_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The lines on stderr that are the app's own start lines (`santa: …`), not a logger's."""
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("santa: ")]


def assert_nothing_of_the_desk(at: AppTest, path: Path, detail: str) -> None:
    assert not at.exception, at.exception
    [error] = at.error
    assert str(path) in plain(error.value) and detail in plain(error.value), plain(error.value)
    assert "nothing of the desk is served" in plain(error.value)
    assert [t.value for t in at.title] == [TITLE]
    assert not at.button and not at.text_area and not at.text_input and not at.selectbox and not at.dataframe
    assert sidebar(at) == "" and not at.sidebar.button


PAGES = [
    "pages/review.py",
    "pages/batch.py",
    "pages/runs.py",
    "pages/inbox.py",
    "pages/escalations.py",
    "pages/audit.py",
    "pages/metrics.py",
    "pages/rubrics.py",
    "pages/people.py",
    "pages/settings.py",
    "pages/home.py",
]


@pytest.mark.parametrize(
    "kind",
    [
        "unclosed array in [santa.roles]",
        "not UTF-8",
        "a folder where the file should be",
        "a link to nothing",
        "the global file broken, the project's good",
        "an unknown role in [santa.roles]",
        "a number for a role's patterns",
    ],
)
def test_a_secrets_file_that_cannot_be_read_shows_why_and_no_page_of_the_desk(
    desk_env: RunStore, tmp_path: Path, secrets_files: Callable, never_opened: list[str], kind: str
) -> None:
    locations, broken, detail = broken_file(tmp_path, kind)
    secrets_files(locations)
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.run()
    assert_nothing_of_the_desk(at, broken, detail)
    for page in PAGES:  # a deep link to any page: the same
        at.switch_page(page).run()
        assert_nothing_of_the_desk(at, broken, detail)
    assert never_opened == []


def test_only_a_missing_secrets_file_means_no_sign_in(
    desk_env: RunStore, tmp_path: Path, secrets_files: Callable
) -> None:
    secrets_files([tmp_path / "home" / "secrets.toml", tmp_path / "project" / "secrets.toml"])  # neither exists
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.run()
    assert not at.exception and not at.error, (at.exception, at.error)
    assert "Acting as **local user** (local user, admin)" in sidebar(at)


def test_the_server_start_leaves_the_desk_closed_while_the_secrets_cannot_be_read(
    desk_env: RunStore,
    tmp_path: Path,
    secrets_files: Callable,
    never_opened: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    locations, broken, detail = broken_file(tmp_path, "unclosed array in [santa.roles]")
    secrets_files(locations)
    access.announce_at_start()  # says so, and does not stop the server: its pages say why
    [said] = santa_lines(capsys)
    assert said.startswith("santa: sign-in: unknown. The secrets cannot be read") and str(broken) in said
    assert detail in said

    async def serve() -> None:
        async with app_desk.open_at_server_start(None):
            pass

    asyncio.run(serve())
    assert never_opened == []


# --- nobody signed in, with sign-in configured -----------------------------------------------------


def who_acts() -> None:
    """A page that asks who acts and tries an action as the local user through the app's desk."""
    import streamlit as st

    from santa_core.roles import LOCAL, NotSignedIn, Permission
    from santa_core.run import actions
    from ui import app_desk, identity

    desk = app_desk.desk()
    tries = {
        "current_person": identity.current_person,
        "actor": identity.actor,
        "can": lambda: identity.can(Permission.START_RUN),
        "start_run as local": lambda: actions.start_run(
            desk.runs, "A spec.", "An output.", desk.rubrics.resolved("general"), "person", "person", "person", LOCAL
        ),
    }
    for name, attempt in tries.items():
        try:
            attempt()
            st.text(f"{name}: allowed")
        except NotSignedIn as exc:
            st.text(f"{name}: refused: {exc}")


def test_with_sign_in_configured_nobody_signed_in_is_nobody(desk_env: RunStore) -> None:
    at = AppTest.from_function(who_acts, default_timeout=30)
    at.secrets["SANTA_SIGNIN_TEST"] = "1"  # no sign-in yet: the local user acts (so the script can tell)
    at.run()
    assert [t.value for t in at.text] == [
        "current_person: allowed",
        "actor: allowed",
        "can: allowed",
        "start_run as local: allowed",
    ]
    at.secrets["auth"] = AUTH  # sign-in switched on while the desk is open
    at.user = {"is_logged_in": False}
    at.run()
    refused = "refused: Nobody is signed in: sign in to"
    assert [t.value for t in at.text] == [
        f"current_person: {refused} use the desk. Sign-in is configured, so the local user does not act here.",
        f"actor: {refused} use the desk. Sign-in is configured, so the local user does not act here.",
        f"can: {refused} use the desk. Sign-in is configured, so the local user does not act here.",
        f"start_run as local: {refused} start a run. Sign-in is configured, so the local user does not act here.",
    ]
    assert len(desk_env.list_runs()) == 1  # the one run from before


# --- never anonymous by accident -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "auth_in", "allow", "allowed", "line"),
    [
        pytest.param(
            "localhost", None, False, True, "santa: sign-in: off, serving loopback only (localhost)", id="localhost"
        ),
        pytest.param(
            "127.0.0.1", None, False, True, "santa: sign-in: off, serving loopback only (127.0.0.1)", id="127"
        ),
        pytest.param(
            "127.8.9.1", None, False, True, "santa: sign-in: off, serving loopback only (127.8.9.1)", id="127/8"
        ),
        pytest.param("::1", None, False, True, "santa: sign-in: off, serving loopback only (::1)", id="ipv6-loopback"),
        pytest.param(
            "0.0.0.0",
            "/srv/.streamlit/secrets.toml",
            False,
            True,
            "santa: sign-in: configured ([auth] in /srv/.streamlit/secrets.toml)",
            id="auth",
        ),
        pytest.param(
            "0.0.0.0",
            None,
            True,
            True,
            "santa: sign-in: off on 0.0.0.0 because SANTA_ALLOW_ANONYMOUS=1: "
            "everyone who reaches it acts as the local user, an admin",
            id="on-purpose",
        ),
        pytest.param("0.0.0.0", None, False, False, "santa: refusing to serve 0.0.0.0 without sign-in", id="all-ipv4"),
        pytest.param("::", None, False, False, "santa: refusing to serve :: without sign-in", id="all-ipv6"),
        pytest.param(
            None,
            None,
            False,
            False,
            "santa: refusing to serve every interface (server.address unset) without sign-in",
            id="unset",
        ),
        pytest.param("", None, False, False, "santa: refusing to serve every interface", id="empty"),
        pytest.param("192.0.2.7", None, False, False, "santa: refusing to serve 192.0.2.7 without sign-in", id="lan"),
        pytest.param(
            "unix://santa.sock", None, False, False, "santa: refusing to serve unix://santa.sock", id="unix-socket"
        ),
        pytest.param(
            "no-such-host.invalid",
            None,
            False,
            False,
            "santa: refusing to serve no-such-host.invalid",
            id="unresolvable",
        ),
    ],
)
def test_without_sign_in_only_loopback_is_served_unless_said_on_purpose(
    address: str | None, auth_in: str | None, allow: bool, allowed: bool, line: str
) -> None:
    decision = access.serving(address, auth_in, allow)
    assert decision.allowed is allowed and decision.line.startswith(line), decision.line
    if not allowed:
        assert "SANTA_ALLOW_ANONYMOUS=1" in decision.line and "[auth]" in decision.line  # how to get out


def test_only_exactly_1_allows_an_anonymous_desk(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, allowed in (("1", True), (" 1 ", True), ("0", False), ("true", False), ("", False)):
        monkeypatch.setenv(access.ALLOW_ANONYMOUS, value)
        assert access.anonymous_allowed() is allowed, value
    monkeypatch.delenv(access.ALLOW_ANONYMOUS)
    assert access.anonymous_allowed() is False


def test_the_committed_config_serves_this_machine_only() -> None:
    """So `streamlit run app.py` without sign-in just works on a laptop: Streamlit unset listens everywhere."""
    committed = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert access.is_loopback(committed["server"]["address"])


def test_a_page_on_an_address_beyond_loopback_refuses_without_sign_in(
    desk_env: RunStore, address: Callable, monkeypatch: pytest.MonkeyPatch, never_opened: list[str]
) -> None:
    address("0.0.0.0")
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.secrets["SANTA_SIGNIN_TEST"] = "1"  # secrets without [auth], so no real secrets file is read
    at.run()
    assert not at.exception, at.exception
    assert [plain(e.value).split(":")[:2] for e in at.error] == [
        ["santa", " refusing to serve 0.0.0.0 without sign-in"]
    ]
    assert not at.button and not at.text_area and sidebar(at) == ""
    assert never_opened == []


def test_a_page_on_an_address_beyond_loopback_serves_with_sign_in_or_on_purpose(
    desk_env: RunStore, address: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    address("0.0.0.0")
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": False}
    at.run()
    assert not at.exception and not at.error
    assert [b.key for b in at.button] == ["sign_in"]  # sign-in configured: the sign-in button, as anywhere
    monkeypatch.setenv(access.ALLOW_ANONYMOUS, "1")
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.secrets["SANTA_SIGNIN_TEST"] = "1"
    at.run()
    assert not at.exception and not at.error
    assert "Start review" in [b.label for b in at.button] and "Acting as **local user**" in sidebar(at)


def test_the_server_refuses_to_start_beyond_loopback_without_sign_in(
    desk_env: RunStore,
    tmp_path: Path,
    secrets_files: Callable,
    address: Callable,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    secrets_files([tmp_path / "none.toml"])
    address("0.0.0.0")
    monkeypatch.delenv(access.ALLOW_ANONYMOUS, raising=False)
    with pytest.raises(SystemExit) as stopped:
        access.announce_at_start()
    assert stopped.value.code == 2
    [said] = santa_lines(capsys)
    assert said.startswith("santa: refusing to serve 0.0.0.0 without sign-in")
    address("localhost")
    access.announce_at_start()
    assert santa_lines(capsys) == ["santa: sign-in: off, serving loopback only (localhost)"]
    assert "Nobody" not in texts(AppTest.from_file("../../app.py", default_timeout=30).run())


def test_the_compose_file_serves_with_sign_in_from_a_mounted_secrets_file() -> None:
    """Its app listens on 0.0.0.0, so it needs [auth]: the file holding it is mounted where Streamlit reads the
    project's secrets (the image's working folder), anonymity is off unless .env says so, and the file is kept
    out of git and of the image."""
    import yaml

    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text(encoding="utf-8"))
    app = compose["services"]["app"]
    assert not access.is_loopback(app["command"][app["command"].index("--server.address") + 1])
    [workdir] = [
        line.split()[1]
        for line in (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8").splitlines()
        if line.startswith("WORKDIR ")
    ]
    [mount] = app["secrets"]
    assert mount["target"] == f"{workdir}/.streamlit/secrets.toml"
    assert compose["secrets"][mount["source"]] == {"file": "./secrets.toml"}  # deploy/secrets.toml
    assert app["environment"][access.ALLOW_ANONYMOUS] == "${SANTA_ALLOW_ANONYMOUS:-}"
    for ignore in (".gitignore", ".dockerignore"):
        assert "deploy/secrets.toml" in (ROOT / ignore).read_text(encoding="utf-8").splitlines(), ignore
    assert ".streamlit/secrets.toml" in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
