"""The People page: admins add people and set roles; the last admin stays; others only read."""

from __future__ import annotations

from santa_core.roles import Role
from storage.runs import RunStore
from tests.ui.test_app import texts
from tests.ui.test_escalation_queue import open_as


def test_an_admin_adds_a_person_by_email_and_changes_roles(desk_env: RunStore) -> None:
    at = open_as("admin@example.com", "pages/people.py")
    listed = at.dataframe[0].value
    assert {"local", "officer@example.com", "viewer@example.com"} <= set(listed["id"])
    assert "compliance officer" in listed["roles"].tolist()
    at.text_input(key="people_email").set_value("new.author@example.com")
    at.text_input(key="people_name").set_value("Nia Author")
    at.multiselect(key="people_roles___new__").set_value([Role.RUBRIC_AUTHOR, Role.EDITOR])
    at.button(key="people_save").click().run()
    assert not at.exception, at.exception
    person = desk_env.people.get("new.author@example.com")
    assert person is not None and person.name == "Nia Author"
    assert set(person.roles) == {Role.RUBRIC_AUTHOR, Role.EDITOR}
    assert "new.author@example.com" in at.dataframe[0].value["id"].tolist()
    # The next new person starts from an empty form: nothing of Nia's address or roles carries over.
    assert at.text_input(key="people_email").value == "" and at.multiselect(key="people_roles___new__").value == []

    at.selectbox(key="people_pick").set_value("viewer@example.com").run()
    at.multiselect(key="people_roles_viewer@example.com").set_value([Role.COMPLIANCE_OFFICER])
    at.button(key="people_save").click().run()
    assert desk_env.people.get("viewer@example.com").roles == [Role.COMPLIANCE_OFFICER]
    actions = [e.action for e in desk_env.audit.events(actor="admin@example.com")]
    assert actions.count("person.roles_set") == 2


def test_taking_admin_from_the_local_user_is_refused_with_the_storage_error(desk_env: RunStore) -> None:
    at = open_as(None, "pages/people.py")  # the local user
    at.selectbox(key="people_pick").set_value("local").run()
    at.multiselect(key="people_roles_local").set_value([Role.EDITOR])
    at.button(key="people_save").click().run()
    assert not at.exception, at.exception
    assert any("stays an admin" in e.value for e in at.error)
    assert Role.ADMIN in desk_env.people.get("local").roles
    assert at.multiselect(key="people_roles_local").value == [Role.EDITOR]  # the choice is kept


def test_a_non_admin_sees_the_list_read_only(desk_env: RunStore) -> None:
    for who in ("viewer@example.com", "officer@example.com"):
        at = open_as(who, "pages/people.py")
        assert "admin@example.com" in at.dataframe[0].value["id"].tolist()
        assert not any(b.key == "people_save" for b in at.button)
        assert "To change people's roles you need to be an admin" in texts(at)
