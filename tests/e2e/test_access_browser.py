"""Sign-in fails closed and a desk is never anonymous by accident, in the real server (and Chromium):

- a secrets file with a typo: each page opened (the root, pages by URL, a deep link to a run) shows which file and
  the parse error, and nothing of the desk: no page list, no button, no field; the server log says it too;
- `[auth]` configured and nobody signed in: each page opened shows the sign-in button and nothing else;
- a desk without sign-in on every interface (0.0.0.0) does not start: it exits 2 with one line saying why; with
  SANTA_ALLOW_ANONYMOUS=1 it serves, and its first line says so.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e import test_browser as browser
from tests.support.app_server import START_S, app_server, free_port, start_server, stop
from tests.support.secrets_files import ROLES_TYPO
from tests.support.secrets_files import toml_error as parse_error

chromium = browser.chromium  # the fixture (an imported name would trip ruff's F811)

AUTH = (
    '[auth]\nredirect_uri = "http://127.0.0.1:8501/oauth2callback"\ncookie_secret = "access-test-cookie-secret"\n'
    'client_id = "santa"\nclient_secret = "not-a-secret"\n'
    'server_metadata_url = "http://127.0.0.1:9/.well-known/openid-configuration"\n'
)  # never asked: nobody signs in
TYPO = AUTH + ROLES_TYPO
PATHS = ["", "batch", "settings", "escalations?run=1"]
"""The root, a page that pays for work, the admin's page and a deep link: in the real server and browser. Every page
and action under the same secrets is checked through AppTest (tests/ui/test_access.py), at a fraction of the time."""


def visit_every_page(browser_once, base: str, check) -> None:  # noqa: ANN001
    """Open each path in a fresh browser context (no cookie, as a new profile), wait until the script run is over, then
    `check(page, path)`."""
    context = browser_once.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(browser.STEP_MS)
        for path in PATHS:
            page.goto(f"{base}/{path}", wait_until="domcontentloaded")
            page.wait_for_selector('[data-testid="stApp"]')
            page.wait_for_selector(browser.APP_IDLE)
            check(page, path)
    finally:
        context.close()


def nothing_of_the_desk(page, path: str, buttons: list[str]) -> str:
    """The main area's text, after checking it offers only `buttons`, no field, and no page list or sidebar."""
    main = page.locator('[data-testid="stMain"]')
    for name in buttons:  # drawn after the app went idle once: wait for it before reading what is offered
        main.get_by_role("button", name=name).first.wait_for()
    assert [b.inner_text().strip() for b in main.get_by_role("button").all()] == buttons, f"/{path}"
    for role in ("textbox", "combobox", "checkbox", "radio", "spinbutton"):
        assert main.get_by_role(role).count() == 0, f"/{path}: a {role}"
    assert page.locator('[data-testid="stSidebarNav"]').count() == 0, f"/{path}: the page list is shown"
    assert page.locator('[data-testid="stSidebarUserContent"]').count() == 0, f"/{path}: the sidebar is shown"
    browser.assert_no_error(page, f"/{path}")
    return main.inner_text()


@pytest.mark.timeout(240)
def test_a_secrets_file_with_a_typo_shows_its_parse_error_and_no_page_of_the_desk(
    chromium: str, browser_once, tmp_path: Path
) -> None:
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(TYPO, encoding="utf-8")
    detail, log = parse_error(TYPO), tmp_path / "server.log"

    def check(page, path: str) -> None:
        shown = nothing_of_the_desk(page, path, buttons=[])
        assert str(secrets) in shown and detail in shown and "nothing of the desk is served" in shown, shown

    with app_server(free_port(), f"sqlite:///{tmp_path / 'santa.db'}", log, ["--secrets.files", str(secrets)]) as base:
        visit_every_page(browser_once, base, check)
    said = log.read_text(errors="replace")
    assert "santa: sign-in: unknown. The secrets cannot be read" in said and detail in said, said
    assert "Server start: the desk stays closed" in said and "Desk opened" not in said, said
    assert not (tmp_path / "santa.db").exists()  # the database was never opened


@pytest.mark.timeout(240)
def test_with_sign_in_configured_nobody_signed_in_gets_only_the_sign_in_button(
    chromium: str, browser_once, tmp_path: Path
) -> None:
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(AUTH, encoding="utf-8")
    log = tmp_path / "server.log"

    def check(page, path: str) -> None:
        shown = nothing_of_the_desk(page, path, buttons=["Sign in"])
        assert "Sign in to review, decide and resolve" in shown, shown

    with app_server(free_port(), f"sqlite:///{tmp_path / 'santa.db'}", log, ["--secrets.files", str(secrets)]) as base:
        visit_every_page(browser_once, base, check)
    assert f"santa: sign-in: configured ([auth] in {secrets})" in log.read_text(errors="replace")


@pytest.mark.timeout(180)
def test_a_desk_without_sign_in_does_not_start_on_every_interface_unless_said_on_purpose(tmp_path: Path) -> None:
    url, absent = f"sqlite:///{tmp_path / 'santa.db'}", ["--secrets.files", str(tmp_path / "no-secrets.toml")]
    log = tmp_path / "refused.log"
    proc = start_server(free_port(), url, log, absent, address="0.0.0.0", SANTA_ALLOW_ANONYMOUS="")
    try:
        code = proc.wait(timeout=START_S)
    except subprocess.TimeoutExpired:
        stop(proc)
        raise AssertionError(
            f"a desk without sign-in kept serving 0.0.0.0:\n{log.read_text(errors='replace')}"
        ) from None
    said = log.read_text(errors="replace")
    assert code == 2, said
    assert (
        "santa: refusing to serve 0.0.0.0 without sign-in: everyone who reaches it would act as the local user, "
        "an admin." in said
    ), said
    assert "Traceback" not in said and not (tmp_path / "santa.db").exists(), said

    log = tmp_path / "on-purpose.log"
    with app_server(free_port(), url, log, absent, address="0.0.0.0", SANTA_ALLOW_ANONYMOUS="1"):
        pass  # it answered its health check
    assert "santa: sign-in: off on 0.0.0.0 because SANTA_ALLOW_ANONYMOUS=1" in log.read_text(errors="replace")
