"""Sign-in end to end: the real app in headless Chromium signs people in through a real OpenID Connect
provider on loopback (`oidc-provider-mock`, tests/support/oidc.py), with `[auth]` and `[santa.roles]`
in a throwaway secrets file, the way a team configures it (docs/operations.md, "Sign-in").

One journey in one browser, so each sign-out must really end the previous identity:
an editor (matched by an e-mail pattern) starts a review but cannot resolve escalations or manage
people, and signs out; a compliance officer (matched by a pattern) cannot start a run but resolves an
escalation, recorded under their e-mail; someone whose address matches the compliance pattern but
whose provider did not verify it stays a viewer. AppTest's injected user (tests/ui/test_signin.py)
skips all of this: the redirect URI, the cookie secret, the provider's metadata, ID token and claims,
Streamlit's callback and cookie, and the e-mail claims as they really arrive.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from santa_core.models import EscalationReason, RunState, RunStatus
from storage.runs import RunStore
from storage.startup import init_db
from tests.e2e import test_browser as browser
from tests.support.app_server import app_server, free_port
from tests.support.oidc import Account, Provider, oidc_provider, secrets_toml

chromium = browser.chromium  # the fixture (an imported name would trip ruff's F811)

EDITOR = Account(sub="ed", email="ed@newsroom.example.com", name="Ed Newsroom", email_verified=True)
OFFICER = Account(sub="olu", email="olu@legal.example.com", name="Olu Legal", email_verified=True)
UNVERIFIED = Account(sub="mallory", email="mallory@legal.example.com", name="Mallory", email_verified=False)
ROLES = {"editor": ["*@newsroom.example.com"], "compliance_officer": ["*@legal.example.com"]}

SPEC = "Announce the Acme rocket in two sentences. Mention the 2018 launch."
UNDONE = "Acme's rocket launched in 2019. It is ready for you."
SIGN_IN_PAGE = "Sign in to review, decide and resolve"
SESSION_COOKIE = "_streamlit_user"  # Streamlit's identity cookie (signed with [auth] cookie_secret)


@dataclass(frozen=True)
class Desk:
    base: str
    provider: Provider
    store: RunStore
    escalated: list[int]  # run ids, oldest first (the queue shows the oldest first)
    log: Path


def seed_escalations(store: RunStore, count: int) -> list[int]:
    """Runs stopped by their budget before any review: open escalations, no model needed."""
    rubric = store.rubrics.resolved("general")
    ids = []
    for _ in range(count):
        run_id = store.create_run(
            SPEC,
            UNDONE,
            rubric,
            "claude-sonnet-5-5",
            "claude-haiku-5-5",
            "claude-opus-5-5",
            max_rounds=1,
            created_by="cli",
        )
        store.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
        store.transition(
            run_id,
            {RunStatus.RUNNING},
            RunState(
                status=RunStatus.ESCALATED, round=1, escalation_reason=EscalationReason.BUDGET, note="budget spent"
            ),
            "worker",
        )
        ids.append(run_id)
    return ids


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Desk]:
    """The provider, then the app configured to sign in through it, on free loopback ports."""
    if importlib.util.find_spec("oidc_provider_mock") is None:
        reason = "oidc-provider-mock is not installed (pip install -r requirements.txt)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {reason}")
        pytest.skip(reason)
    url = f"sqlite:///{tmp_path / 'santa.db'}"
    store = RunStore(init_db(url, mark_interrupted=False))
    escalated = seed_escalations(store, 2)
    app_port = free_port()
    with oidc_provider(free_port(), [EDITOR, OFFICER, UNVERIFIED], tmp_path / "oidc.log") as provider:
        secrets = secrets_toml(tmp_path / "secrets.toml", provider, f"http://127.0.0.1:{app_port}", ROLES)
        log = tmp_path / "server.log"
        # --secrets.files replaces Streamlit's search list: the repository's .streamlit/secrets.toml
        # (and ~/.streamlit's) are neither read nor touched.
        with app_server(app_port, url, log, ["--secrets.files", str(secrets)]) as base:
            yield Desk(base, provider, store, escalated, log)


def body(page) -> str:
    return page.locator("body").inner_text()


def sign_in(page, desk: Desk, account: Account, roles: str) -> None:
    """From the app's sign-in button through the provider's form and back, signed in."""
    from playwright.sync_api import expect

    page.goto(f"{desk.base}/", wait_until="domcontentloaded")
    page.wait_for_selector(browser.APP_IDLE)
    expect(page.locator('[data-testid="stMain"]')).to_contain_text(SIGN_IN_PAGE, timeout=browser.STEP_MS)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{desk.provider.issuer}/oauth2/authorize?*")  # the provider's own page
    page.get_by_placeholder("sub").fill(account.sub)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{desk.base}/**")  # through /oauth2callback, back at the app
    browser.wait_until_rendered(page, "Review")
    browser.assert_no_error(page, f"signed in as {account.email}")
    sidebar = page.locator('[data-testid="stSidebar"]')
    # lower-case id, name from the ID token, roles from the patterns (or none, unverified)
    expect(sidebar).to_contain_text(f"Signed in as {account.name} <{account.email}> · {roles}", timeout=browser.STEP_MS)
    assert SESSION_COOKIE in {c["name"] for c in page.context.cookies()}


def sign_out(page, desk: Desk, deep_link: bool = False) -> None:
    """The app's Sign out button, the provider's end-session page, back to the sign-in button (and,
    with `deep_link`, a deep link after that stops at the sign-in button too)."""
    from playwright.sync_api import expect

    page.locator('[data-testid="stSidebar"]').get_by_role("button", name="Sign out").click()
    page.wait_for_url(f"{desk.provider.issuer}/oauth2/end_session?*")
    page.get_by_role("button", name="End session").click()
    page.wait_for_url(f"{desk.base}/**")
    page.wait_for_selector(browser.APP_IDLE)
    expect(page.locator('[data-testid="stMain"]')).to_contain_text(SIGN_IN_PAGE, timeout=browser.STEP_MS)
    assert SESSION_COOKIE not in {c["name"] for c in page.context.cookies()}, "sign-out left the identity cookie"
    if deep_link:
        page.goto(f"{desk.base}/escalations", wait_until="domcontentloaded")
        page.wait_for_selector(browser.APP_IDLE)
        expect(page.get_by_role("button", name="Sign in")).to_be_visible(timeout=browser.STEP_MS)
        shown = body(page)
        assert "Signed in as" not in shown and "Resolved escalations" not in shown, shown


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def open_page(page, desk: Desk, path: str, title: str) -> str:
    page.goto(f"{desk.base}/{path}", wait_until="domcontentloaded")
    browser.wait_until_rendered(page, title)
    browser.assert_no_error(page, f"/{path}")
    return main_text(page)


def start_review(page) -> None:
    """Fill the new-run form and start it (no key: both reviewer slots are person slots)."""
    from playwright.sync_api import expect

    page.locator(".st-key-new_spec textarea").fill(SPEC)
    output = page.locator(".st-key-new_output textarea")
    output.fill("Acme's rocket launched in 2018. It is ready for you.")
    output.press("Control+Enter")  # commit the text area, as a person's click elsewhere would
    page.wait_for_selector(browser.APP_IDLE)
    page.get_by_role("button", name="Start review").click()
    expect(page.locator('[data-testid="stMain"]')).to_contain_text(
        "waiting for a person reviewer", timeout=browser.STEP_MS
    )


def resolve_first_escalation(page, run_id: int) -> None:
    """Reject the escalation shown first, with a justification."""
    from playwright.sync_api import expect

    main = page.locator('[data-testid="stMain"]')
    main.locator('[data-testid="stRadio"]').get_by_text("Reject", exact=True).click()
    page.wait_for_selector(browser.APP_IDLE)
    why = main.get_by_role("textbox", name=re.compile("Justification"))
    why.fill("Out of budget and the launch year is wrong; not worth another round.")
    why.press("Control+Enter")
    page.wait_for_selector(browser.APP_IDLE)
    main.get_by_role("button", name="Record resolution").click()
    expect(main.locator('[data-testid="stAlertContentSuccess"]')).to_contain_text(
        f"Run #{run_id}", timeout=browser.STEP_MS
    )


@pytest.mark.timeout(300)
def test_people_sign_in_through_a_real_oidc_provider_with_their_roles(chromium: str, browser_once, desk: Desk) -> None:
    first, second = desk.escalated
    context = browser_once.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(browser.STEP_MS)

        # The editor: starts a review; escalations and people are not theirs to change.
        sign_in(page, desk, EDITOR, "editor")
        start_review(page)
        shown = open_page(page, desk, "escalations", "Escalations")
        assert "To resolve an escalation you need to be" in shown, shown
        assert page.get_by_role("button", name="Record resolution").count() == 0
        assert "To change people's roles you need to be" in open_page(page, desk, "people", "People")
        sign_out(page, desk)

        # The compliance officer: no new runs, but resolves an escalation under their own e-mail.
        sign_in(page, desk, OFFICER, "compliance officer")  # lands on the Review page
        shown = main_text(page)
        assert "To start a run you need to be" in shown, shown
        assert page.get_by_role("button", name="Start review").count() == 0
        open_page(page, desk, "escalations", "Escalations")
        resolve_first_escalation(page, first)
        browser.assert_no_error(page, "/escalations after the resolution")
        sign_out(page, desk)

        # Matches the compliance pattern, but the provider did not verify the address: a viewer.
        sign_in(page, desk, UNVERIFIED, "viewer")
        shown = main_text(page)
        assert "To start a run you need to be" in shown, shown
        assert page.get_by_role("button", name="Start review").count() == 0
        shown = open_page(page, desk, "escalations", "Escalations")
        assert f"Run #{second}" in shown and "To resolve an escalation you need to be" in shown, shown
        assert page.get_by_role("button", name="Record resolution").count() == 0
        sign_out(page, desk, deep_link=True)
    finally:
        context.close()

    people = desk.store.people
    assert people.get(EDITOR.email).roles == ["editor"]
    assert people.get(OFFICER.email).roles == ["compliance_officer"]
    assert people.get(UNVERIFIED.email).roles == ["viewer"]
    [started] = [r for r in desk.store.list_runs() if r.id not in desk.escalated]
    assert started.created_by == EDITOR.email
    [resolved] = desk.store.list_escalations(status="resolved")
    assert (resolved.run_id, resolved.resolution, resolved.resolved_by) == (first, "reject", OFFICER.email)
    assert [e.run_id for e in desk.store.list_escalations(status="open")] == [second]
    server_log = desk.log.read_text(errors="replace")
    assert "Traceback" not in server_log, f"the server logged a traceback:\n{server_log}"
