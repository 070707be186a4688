"""The pages before Start, and the Settings page's sources, driven like a user (AppTest, loopback Messages API).

- An injection screen that is on but cannot run (its model on OpenAI, no OpenAI key) is named, with how to fix
  it, next to Start on the Review page and the Batch page; the Review page's Start refuses (nothing stored, nothing
  sent), the Batch page's Start buttons are disabled.
- The Settings page shows, for every setting, the value in effect and where it comes from; a setting the
  environment sets is locked, says that the environment wins over the value saved, and a save leaves it out.
"""

from __future__ import annotations

import pandas as pd
import pytest

from santa_core.config import Defaults, save_defaults
from storage.runs import RunStore
from tests.core.batch.test_driver import planted_csv
from tests.support.batch_page import create_batch, open_batch, upload
from tests.support.messages_api import MessagesStub
from tests.ui.test_app import SPEC, open_app, plain, texts

CANNOT_RUN = "The injection screen is on but cannot run: the screening model cannot be called here"


@pytest.fixture
def no_screen_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reviewers' key is there (the loopback API's); the screening model's is not."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("SANTA_SCREEN", raising=False)
    monkeypatch.setenv("SANTA_SCREEN_MODEL", "openai:gpt-5.4-nano")


def screen_errors(at) -> list[str]:  # noqa: ANN001 - AppTest
    return [plain(e.value) for e in at.error if CANNOT_RUN in plain(e.value)]


def test_the_review_page_names_the_screen_problem_before_start_and_start_refuses(
    desk_env: RunStore, messages_stub: MessagesStub, no_screen_key: None
) -> None:
    at = open_app()
    [shown] = screen_errors(at)  # before anything is typed or clicked
    assert "OPENAI_API_KEY" in shown and "turn the injection screen off in Settings" in shown
    assert "not started" in shown
    at.text_area(key="new_spec").set_value(SPEC)
    at.text_area(key="new_output").set_value("Acme's rocket launched in 2018. It is ready for you.")
    at.button(key="start_review").click().run()
    assert not at.exception, at.exception
    refused = [plain(e.value) for e in at.error if plain(e.value).startswith("Not started.")]
    assert refused and "The injection screen cannot run" in refused[0]
    assert desk_env.list_runs(limit=5) == [] and messages_stub.calls == []


def test_the_review_page_says_nothing_when_the_screen_can_run_or_is_off(
    desk_env: RunStore, no_screen_key: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SANTA_SCREEN_MODEL", "claude-haiku-5-5")  # the loopback API's key serves it
    assert screen_errors(open_app()) == []
    monkeypatch.setenv("SANTA_SCREEN_MODEL", "openai:gpt-5.4-nano")
    monkeypatch.setenv("SANTA_SCREEN", "off")
    assert screen_errors(open_app()) == []


def test_the_batch_page_names_the_screen_problem_and_will_not_start(
    desk_env: RunStore, messages_stub: MessagesStub, no_screen_key: None
) -> None:
    at = upload(open_batch(), planted_csv(40)[0], spec=SPEC)
    [shown] = screen_errors(at)
    assert "OPENAI_API_KEY" in shown
    assert at.button(key="batch_create").disabled
    # A batch stored before the key went away: its next sample cannot start either.
    from desk import open_desk

    desk = open_desk(mark_interrupted=False)
    try:
        batch_id = create_batch(desk, planted_csv(40)[0])
    finally:
        desk.close()
    at = open_batch(batch_id)
    assert screen_errors(at) and at.button(key="batch_start").disabled
    assert messages_stub.calls == []


def sources(at) -> dict[str, tuple[str, str]]:  # noqa: ANN001 - AppTest
    """The Settings page's table: setting → (value in effect, where it comes from)."""
    [frame] = [d.value for d in at.dataframe if "from" in d.value.columns]
    assert isinstance(frame, pd.DataFrame)
    return {row["setting"]: (row["in effect"], row["from"]) for _, row in frame.iterrows()}


def test_the_settings_page_shows_where_each_setting_comes_from_and_the_environment_wins(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_defaults(desk_env, Defaults(screen=True, max_rounds=2), "ann", env={})
    monkeypatch.setenv("SANTA_SCREEN", "off")
    monkeypatch.setenv("SANTA_WORKERS", "3")
    monkeypatch.delenv("SANTA_BUDGET_USD", raising=False)
    at = open_app("pages/settings.py")
    table = sources(at)
    assert table["Injection screen"] == ("off", "environment SANTA_SCREEN=off")
    value, source = table["Max rounds before escalation"]
    assert value == "2" and source.startswith("Settings (saved by ") and " at " in source and source.endswith(" UTC)")
    assert table["Runs worked on at once"] == ("3", "environment SANTA_WORKERS=3")
    assert table["Message Batch polling (seconds)"][1].startswith("default")
    # Locked, and why: the environment wins, and the value saved on this page waits.
    assert at.toggle(key="set_screen").disabled and at.toggle(key="set_screen").value is False
    page = texts(at)
    assert "The environment sets SANTA_SCREEN=off, and the environment wins over Settings" in page
    assert "the saved value (on, saved by" in page and "is not used while SANTA_SCREEN is set" in page
    assert not at.number_input(key="set_rounds").disabled  # not set by the environment: editable
    at.number_input(key="set_rounds").set_value(4)
    at.button(key="set_save").click().run()
    assert desk_env.get_settings()["max_rounds"] == 4
    assert desk_env.get_settings()["screen"] is True  # the environment's value was not saved over it
    monkeypatch.delenv("SANTA_SCREEN")
    at = open_app("pages/settings.py")
    assert sources(at)["Injection screen"][0] == "on" and sources(at)["Injection screen"][1].startswith("Settings")
    assert not at.toggle(key="set_screen").disabled


def test_the_settings_page_says_when_the_screen_cannot_run(desk_env: RunStore, no_screen_key: None) -> None:
    at = open_app("pages/settings.py")
    [shown] = screen_errors(at)
    assert "every round a model reviews stops at its screen" in shown
    assert sources(at)["Screening model"] == (
        "openai:gpt-5.4-nano",
        "environment SANTA_SCREEN_MODEL=openai:gpt-5.4-nano",
    )


@pytest.mark.parametrize("page", ["pages/review.py", "pages/settings.py"])
def test_an_invalid_variable_is_named_on_the_page(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch, page: str
) -> None:
    monkeypatch.setenv("SANTA_SCREEN", "maybe")
    at = open_app(page)  # (no exception)
    assert any(plain(e.value).startswith("SANTA_SCREEN='maybe' is not a valid value of screen") for e in at.error)
    assert not [b for b in at.button if b.key in ("start_review", "set_save")]


def test_a_run_stopped_at_its_screen_says_why_on_its_page(
    desk_env: RunStore, messages_stub: MessagesStub, no_screen_key: None
) -> None:
    from desk import open_desk
    from santa_core.rubrics.library import load_builtin
    from santa_core.run import actions

    desk = open_desk(mark_interrupted=False)  # the run made below the page: the page's Start refuses it
    try:
        run_id = actions.start_run(
            desk.runs,
            SPEC,
            "Acme's rocket launched in 2018.",
            load_builtin("general"),
            "claude-haiku-5-5",
            "claude-sonnet-5-5",
            "claude-opus-5-5",
            "ann",
        )
        assert desk.runner.execute(run_id).status == "escalated"
    finally:
        desk.close()
    at = open_app(run_id=run_id)
    (line,) = [plain(e.label) for e in at.expander if e.label.startswith("Injection screen")]
    assert line.startswith(
        "Injection screen: not run: the screening model cannot be called here: no API key for provider 'openai'"
    )
    assert (
        "spec and output: openai:gpt-5.4-nano failed (could not run: the screening model cannot be called here: "
        "no API key for provider 'openai'" in texts(at)
    )
    assert messages_stub.calls == []
