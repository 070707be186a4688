"""Settings is saved a section at a time, by the Save under each section (only that section's settings are written),
or all at once by Save settings at the bottom."""

from __future__ import annotations

from storage.runs import RunStore
from tests.ui.test_app import open_app


def test_a_section_save_writes_that_section_only(desk_env: RunStore) -> None:
    at = open_app("pages/settings.py")
    at.text_input(key="set_name").set_value("Ann Editor")
    at.number_input(key="set_rounds").set_value(2)
    at.button(key="set_save_user").click().run()
    assert not at.exception, at.exception
    saved = desk_env.get_settings()
    assert saved["display_name"] == "Ann Editor" and desk_env.people.get("local").name == "Ann Editor"
    assert "max_rounds" not in saved  # typed in another section, not saved with the name
    assert any("the other sections keep what was saved before" in s.value for s in at.success)
    assert at.number_input(key="set_rounds").value == 2  # what was typed there stays on the page
    at.button(key="set_save_runs").click().run()
    assert desk_env.get_settings()["max_rounds"] == 2
    at.number_input(key="set_due_budget").set_value(5.0)
    at.button(key="set_save_due").click().run()
    assert desk_env.get_settings()["due_hours"]["budget"] == 5.0
    at.toggle(key="set_screen").set_value(False)
    at.button(key="set_save_screen").click().run()
    assert desk_env.get_settings()["screen"] is False


def test_an_empty_name_is_refused_by_either_save(desk_env: RunStore) -> None:
    at = open_app("pages/settings.py")
    for key in ("set_save_user", "set_save"):
        at.text_input(key="set_name").set_value("  ")
        at.button(key=key).click().run()
        assert any("display name is empty" in e.value for e in at.error), key
        assert "display_name" not in desk_env.get_settings()
