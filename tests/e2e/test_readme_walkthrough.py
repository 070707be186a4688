"""The README's "Your first review in five minutes", followed as a newcomer would, on a fresh copy of the
repository: its commands run there, the address it names is the one the server prints, the spec and output it
gives are pasted, the buttons it names are clicked, and its screenshots are this test's own.

What runs: the copy holds exactly the tracked files (as `git clone` gives them, with the working tree's edits).
`python3 -m venv .venv` and `source .venv/bin/activate` run in it as written. `pip install -r requirements.txt`
is the one command not run here (minutes, and the package registry): it is the very command `.ci/run` runs in
its own fresh virtual environment before this suite, so a missing install step fails CI there; the test checks
the two are the same command. `streamlit run app.py` runs in the copy with the suite's interpreter (the packages
that install gave), its key in `.streamlit/secrets.toml` as the walkthrough says, the Messages API a loopback
stub (tests/support/messages_api.py): the reviewers flag the promise, the fix agent rewrites that sentence,
fresh reviewers pass it.

Checked on the way: the start prints the address and no warning line; `data/santa.db` appears in the folder
the app was started from; the pages show what the walkthrough says they show. The screenshots (1,280 × 800, what
a person sees without scrolling) go to tmp_path, and to `docs/images/` when SANTA_README_SCREENSHOTS=1, which is
how the README's pictures are made. Chromium as in test_browser.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.e2e import test_browser as browser
from tests.support.app_server import START_S, stop, wait_for
from tests.support.batch_browser import idle, main_text, type_in, wait_for_text
from tests.support.messages_api import (
    MessagesStub,
    asked_criteria,
    fix_json,
    message,
    repeat_key,
    review_json,
    schema_properties,
    user_text,
)

chromium = browser.chromium  # the fixture

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Your first review in five minutes"
PROMISE = "You are guaranteed to never pay a late penalty again."
REWRITE = "Reminders help you file on time, so late penalties are easier to avoid."
REVIEW_S = 60


def walkthrough() -> str:
    """The README's walkthrough section, up to the next heading of its level."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end != -1 else None]


def fenced(section: str, lang: str) -> list[str]:
    """The bodies of the section's fenced blocks in `lang`, in order."""
    return re.findall(rf"```{lang}\n(.*?)\n```", section, flags=re.S)


def labelled(section: str, label: str) -> str:
    """The text block right after a bold label line (**Spec**, **Output**)."""
    found = re.search(rf"\*\*{label}\*\*\n\n```text\n(.*?)\n```", section, flags=re.S)
    assert found, f"the walkthrough gives no **{label}** block"
    return found.group(1)


def reviewer_answer(body: dict) -> dict:
    """The stub's models: a reviewer fails the promise on factual accuracy (quoting it), the fix agent rewrites
    that one sentence, a reviewer of text without it passes every criterion."""
    model = body.get("model", "stub-model")
    if "edits" in schema_properties(body):
        return message(fix_json([(0, PROMISE, REWRITE)]), model)
    ids = asked_criteria(body)
    if PROMISE in user_text(body):
        checks = [(i, "FAIL" if i == "factual_accuracy" else "PASS") for i in ids]
        issue = ("factual_accuracy", "An outcome is promised that nobody can guarantee.", PROMISE)
        return message(review_json("FAIL", checks, [issue]), model)
    return message(review_json("PASS", [(i, "PASS") for i in ids]), model)


def fresh_copy(dest: Path) -> Path:
    """The repository's tracked files (as a clone has them, with the working tree's edits) in `dest`."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if listed.returncode != 0:  # not a git checkout: everything but what a start or a test leaves behind
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(".git", "data", ".venv", "__pycache__", "*.egg-info"))
        return dest
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def shot(page, name: str, tmp_path: Path) -> None:  # noqa: ANN001
    """What the person sees now, scrolled to the top, under the README's name for it."""
    page.evaluate("window.scrollTo(0, 0)")
    page.locator('[data-testid="stMain"]').evaluate("el => el.scrollTo && el.scrollTo(0, 0)")
    page.wait_for_timeout(300)
    page.screenshot(path=str(tmp_path / name))
    if os.environ.get("SANTA_README_SCREENSHOTS") == "1":
        shutil.copy2(tmp_path / name, ROOT / "docs" / "images" / name)


@pytest.mark.timeout(300)
def test_the_readme_walkthrough_on_a_fresh_copy(
    chromium: str, browser_once, messages_stub: MessagesStub, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    section = walkthrough()
    commands = fenced(section, "bash")[0].splitlines()
    assert commands == [
        "python3 -m venv .venv",
        "source .venv/bin/activate",
        "pip install -r requirements.txt",
        "streamlit run app.py",
    ], commands
    assert "-r requirements.txt" in (ROOT / ".ci" / "run").read_text()  # the install CI runs in its fresh venv
    address = re.search(r"\*\*(http://localhost:(\d+))\*\*", section)
    assert address and address.group(2) == "8501", "the walkthrough names the address to open"
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert "port" not in config.get("server", {}), "the README's address assumes Streamlit's own port"
    images = re.findall(r"!\[[^\]]*\]\(docs/images/([^)]+)\)", section)
    assert images == ["first-review-1-form.png", "first-review-2-decision.png", "first-review-3-shipped.png"]

    # The commands, in the copy: a virtual environment made and activated as written.
    repo = fresh_copy(tmp_path / "santa")
    made = subprocess.run(
        ["bash", "-c", f"{commands[0]} && {commands[1]} && python -c 'import sys; print(sys.prefix)'"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    assert Path(made.stdout.strip()).resolve() == (repo / ".venv").resolve()

    # The key where the walkthrough puts it (a test key, and the stub's address beside it).
    secrets = tomllib.loads(fenced(section, "toml")[0])
    assert list(secrets) == ["ANTHROPIC_API_KEY"]
    (repo / ".streamlit" / "secrets.toml").write_text(
        f'ANTHROPIC_API_KEY = "test-key"\nANTHROPIC_BASE_URL = "{messages_stub.url}"\n'
    )
    messages_stub.handler = reviewer_answer
    messages_stub.screen = repeat_key

    port = browser.free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "SANTA_")) and k != "DATABASE_URL"
    }
    log = tmp_path / "server.log"
    start = commands[3].split() + ["--server.port", str(port)]
    assert start[:3] == ["streamlit", "run", "app.py"]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", *start],
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        base = f"http://localhost:{port}"
        wait_for(f"{base}/_stcore/health", proc, log, "streamlit", 2 * START_S)  # a first start migrates a new database
        page = browser_once.new_page(viewport={"width": 1280, "height": 800})  # in a context of its own
        page.set_default_timeout(browser.STEP_MS)
        try:
            # 1. The address opens Review; paste the spec and the output; Start review.
            page.goto(base, wait_until="domcontentloaded")
            browser.wait_until_rendered(page, "Review")
            type_in(page, "new_spec", labelled(section, "Spec"), tag="textarea")
            type_in(page, "new_output", labelled(section, "Output"), tag="textarea")
            assert "Start review" in section
            shot(page, images[0], tmp_path)
            page.get_by_role("button", name="Start review").click()

            # 2. Both reviews in, the promise flagged, the decision on the fix asked for at the top.
            approve = page.get_by_role("button", name=re.compile(r"^Approve"))
            expect(approve).to_be_visible(timeout=REVIEW_S * 1000)
            idle(page)
            shown = main_text(page)
            assert "guaranteed to never pay a late penalty" in shown, shown
            assert "your decision on the fix" in shown.lower(), shown
            jump = page.get_by_role("link", name="Decide ↓")
            box = jump.bounding_box()
            assert box is not None and box["y"] + box["height"] <= 800, (
                f"the way to the decision is at {box} px: not visible without scrolling at 1280×800"
            )
            shot(page, images[1], tmp_path)
            browser.assert_no_error(page, "the decision")

            # 3. Decide ↓, then Approve: fresh reviewers pass the fixed text; the run ships.
            assert "**Decide ↓**" in section and "**Approve**" in section
            jump.click()
            expect(approve).to_be_in_viewport()
            approve.click()
            wait_for_text(page, "shipped", REVIEW_S, "after Approve")
            idle(page)
            wait_for_text(page, REWRITE, 10, "the shipped text")
            shot(page, images[2], tmp_path)
            browser.assert_no_error(page, "the shipped run")
        except BaseException:
            page.screenshot(path=str(tmp_path / "walkthrough-failure.png"), full_page=True)
            raise
        finally:
            page.context.close()
    finally:
        stop(proc)

    started = log.read_text(errors="replace")
    assert f"URL: http://localhost:{port}" in started, started  # the address the walkthrough tells you to open
    warned = [line for line in started.splitlines() if re.search(r"warn", line, flags=re.I)]
    assert not warned, f"a normal start printed warning lines:\n{started}"
    assert "Traceback" not in started, started
    assert (repo / "data" / "santa.db").is_file(), "data/santa.db is made in the folder the app was started from"
    assert all((ROOT / "docs" / "images" / name).is_file() for name in images), "the README's pictures are in the repo"
