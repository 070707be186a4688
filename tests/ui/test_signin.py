"""Sign-in: with `[auth]` nobody gets past the sign-in button; signed-in people are registered with
the roles of the config's e-mail patterns; without `[auth]` the app runs as the local user."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from santa_core.roles import Role
from storage.runs import RunStore
from tests.ui.test_app import plain, texts

AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "test-cookie-secret",
    "client_id": "santa",
    "client_secret": "not-a-secret",
    "server_metadata_url": "https://id.example.com/.well-known/openid-configuration",
}


def app(secrets: dict, user: dict | None, page: str | None = None) -> AppTest:
    at = AppTest.from_file("../../app.py", default_timeout=30)
    for key, value in secrets.items():
        at.secrets[key] = value
    if user is not None:
        at.user = user
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def sidebar(at: AppTest) -> str:
    return "\n".join(plain(e.value) for kind in ("markdown", "caption") for e in getattr(at.sidebar, kind))


def test_configured_sign_in_shows_only_the_sign_in_button(desk_env: RunStore) -> None:
    at = app({"auth": AUTH}, {"is_logged_in": False})
    assert [b.key for b in at.button] == ["sign_in"]
    assert [t.value for t in at.title] == [":material/rate_review: Santa — review desk"]
    assert not at.text_area and not at.selectbox and not at.dataframe  # nothing of the desk
    assert sidebar(at) == ""
    assert desk_env.people.get("test@example.com") is None


def test_a_signed_in_person_gets_the_roles_of_their_email_pattern(desk_env: RunStore) -> None:
    secrets = {
        "auth": AUTH,
        "santa": {"roles": {"compliance_officer": ["*@legal.example.com"], "rubric_author": "kim@*"}},
    }
    user = {"is_logged_in": True, "email": "kim@legal.example.com", "name": "Kim Legal", "email_verified": True}
    at = app(secrets, user)
    person = desk_env.people.get("kim@legal.example.com")
    assert person is not None and person.name == "Kim Legal"
    assert set(person.roles) == {Role.COMPLIANCE_OFFICER, Role.RUBRIC_AUTHOR}
    assert "Signed in as **Kim Legal <kim@legal.example.com>**" in sidebar(at)
    assert any(b.key == "sign_out" for b in at.sidebar.button)
    assert [e.action for e in desk_env.audit.events(actor="kim@legal.example.com")] == ["person.signed_in_first"]
    settings = app(secrets, user, "pages/settings.py")
    shown = texts(settings)
    assert "Sign-in is configured" in shown
    patterns = settings.dataframe[0].value
    assert "*@legal.example.com" in patterns["e-mail patterns"].tolist()


PATTERNS = {"auth": AUTH, "santa": {"roles": {"admin": ["*@legal.example.com"]}}}


def test_an_unverified_address_gets_no_pattern_roles(desk_env: RunStore) -> None:
    """Where anyone may register any address, a pattern must not hand out roles to strangers."""
    for verified in (False, None):
        user = {"is_logged_in": True, "email": f"mallory{verified}@legal.example.com", "name": "M"}
        if verified is not None:
            user["email_verified"] = verified
        app(PATTERNS, user)
        assert desk_env.people.get(user["email"].casefold()).roles == [Role.VIEWER]


def test_ids_are_lower_case_emails_or_prefixed_subjects(desk_env: RunStore) -> None:
    at = app(PATTERNS, {"is_logged_in": True, "email": "Kim@Legal.Example.com", "name": "Kim", "email_verified": True})
    assert desk_env.people.get("kim@legal.example.com").roles == [Role.ADMIN]
    assert desk_env.people.get("Kim@Legal.Example.com") is None and "kim@legal.example.com" in sidebar(at)
    app(PATTERNS, {"is_logged_in": True, "sub": "local", "name": "Not the local user"})
    assert desk_env.people.get("sub:local").roles == [Role.VIEWER]  # a subject never passes for `local`
    assert desk_env.people.get("local").name == "local user"


def test_a_sign_in_with_a_reserved_id_is_refused(desk_env: RunStore) -> None:
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": True, "email": "cli", "name": "Sneaky"}
    at.run()
    assert any("cannot use the desk" in e.value for e in at.error)
    assert desk_env.people.get("cli") is None
    assert not at.text_area and not at.dataframe  # nothing of the desk


def test_someone_matching_no_pattern_is_a_viewer(desk_env: RunStore) -> None:
    app({"auth": AUTH}, {"is_logged_in": True, "email": "guest@else.example.com", "name": "Guest"})
    assert desk_env.people.get("guest@else.example.com").roles == [Role.VIEWER]


def test_without_auth_the_app_runs_as_the_local_user(desk_env: RunStore) -> None:
    at = app({"SANTA_SIGNIN_TEST": "1"}, None)  # some secret, so no real secrets file is read
    assert "sign_in" not in [b.key for b in at.button]
    assert "Acting as **local user** (local user, admin)" in sidebar(at)
    settings = app({"SANTA_SIGNIN_TEST": "1"}, None, "pages/settings.py")
    assert "Sign-in is not configured" in texts(settings)
