"""Driving the Batch page in a real browser (tests/e2e/test_batch_browser.py): the app with a model key,
pointed at the loopback Messages API stub, and the few Streamlit widgets the batch journey uses, as a
person uses them (type, pick from a list, click), each step waiting for what the page shows next.

tests/support/app_server.py starts the app in no-key mode; a batch needs a model, so `keyed_app_server`
starts it with ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL pointing at the stub (and no OpenAI key, so the
panel is Claude only, whatever the machine's environment holds).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.e2e.test_browser import APP_IDLE
from tests.support.app_server import NO_GC_PER_RERUN, ROOT, START_S, stop, streamlit_command, wait_for

MAIN = '[data-testid="stMain"]'
DROP = (
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SANTA_REVIEWER_B",
    "SANTA_REVIEWER_C",
    "SANTA_FIXER",
    "SANTA_BATCH_POLL_S",
)


@contextmanager
def keyed_app_server(
    port: int, database_url: str, log: Path, messages_url: str, extra_env: dict[str, str] | None = None
) -> Iterator[str]:
    """`streamlit run app.py` on 127.0.0.1:`port` with an Anthropic key and the Messages API at
    `messages_url`; yields its base URL, stops it on exit."""
    env = {k: v for k, v in os.environ.items() if k not in DROP and not k.startswith("SANTA_PROVIDER_")}
    env.update(
        {
            "ANTHROPIC_API_KEY": "test",
            "ANTHROPIC_BASE_URL": messages_url,
            "DATABASE_URL": database_url,
            **NO_GC_PER_RERUN,
            **(extra_env or {}),
        }
    )
    with log.open("wb") as out:
        proc = subprocess.Popen(
            streamlit_command(port), cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(f"{base}/_stcore/health", proc, log, "streamlit", START_S)
        yield base
    finally:
        stop(proc)


def main_text(page) -> str:  # noqa: ANN001 - playwright's Page
    """What the page's main area shows, as a reader sees it."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        return page.locator(MAIN).inner_text(timeout=2_000)
    except PlaywrightError:
        return "<page text unavailable>"


SHOWS_JS = "([main, text]) => (document.querySelector(main)?.innerText ?? '').includes(text)"
"""The main area's text, as `main_text` reads it, holds `text`: looked at inside the page (`wait_for_text`)."""
POLL_MS = 200
"""Between two looks at the main area while waiting for a text."""


def wait_for_text(page, text: str, timeout_s: float, where: str) -> None:  # noqa: ANN001
    """Wait until the main area shows `text` (the page polls and reruns on its own meanwhile); on a
    timeout, say what it showed instead. The looks run in the page, not one round trip to the browser each."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(SHOWS_JS, arg=[MAIN, text], polling=POLL_MS, timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        raise AssertionError(
            f"{where}: {text!r} not shown in {timeout_s:g} s; the page shows:\n{main_text(page)}"
        ) from None


def idle(page) -> None:  # noqa: ANN001
    """Streamlit's script run is over (a rerun a click or a commit started has ended)."""
    page.wait_for_timeout(150)  # let the click's rerun begin before looking for its end
    page.wait_for_selector(APP_IDLE)


def widget(page, key: str):  # noqa: ANN001, ANN201 - playwright's Page and Locator
    """A widget's container by its Streamlit key (`st-key-<key>` class); a prefix ending in `*` matches
    keys that start with it (a pattern's widgets carry its id)."""
    if key.endswith("*"):
        return page.locator(f'[class*="st-key-{key[:-1]}"]').first
    return page.locator(f".st-key-{key}")


def type_in(page, key: str, text: str, tag: str = "input") -> None:  # noqa: ANN001
    """Type into a text input or text area and commit it (Enter / Ctrl+Enter), as a person leaving the box."""
    box = widget(page, key).locator(tag)
    box.fill(text)
    box.press("Control+Enter" if tag == "textarea" else "Enter")
    idle(page)


def pick(page, key: str, option: str) -> None:  # noqa: ANN001
    """Open a select box or multiselect and click one of its options.

    A multiselect opens on a click in its field. A Streamlit 1.67 select box does not: the first click
    (on its field or its arrow) only focuses it, a second click on the arrow opens the list."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = widget(page, key)
    box.get_by_role("combobox").click()
    listed = page.get_by_role("option", name=option, exact=True)
    # On a busy machine the list may open after the wait: a click on the arrow then closes it again. So look, and
    # click the arrow again, a few times before giving up.
    for _ in range(4):
        try:
            listed.wait_for(state="visible", timeout=2_000)
            break
        except PlaywrightTimeout:
            box.get_by_role("button", name="Open").click()
    listed.click()
    idle(page)
    if page.get_by_role("listbox").count():  # a multiselect stays open after a pick (never Escape a select
        page.keyboard.press("Escape")  # box: Escape in one clears its pick)


def upload(page, key: str, name: str, data: bytes, mime: str = "text/csv") -> None:  # noqa: ANN001
    """Give a file uploader a file, as the file chooser would."""
    widget(page, key).locator('input[type="file"]').set_input_files(
        files=[{"name": name, "mimeType": mime, "buffer": data}]
    )
    idle(page)
