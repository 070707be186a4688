"""What every page and command prints draws on any machine and writes money one way.

Icons are Streamlit's bundled Material icons (`:material/name:`), never emoji: on a machine without an emoji
font an emoji is an empty box. Money is written by `santa_core.words.usd` only, so no amount reads at another
precision than the one beside it. Both read the source itself (string literals through `ast`, so comments are free).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from streamlit.material_icon_names import ALL_MATERIAL_ICONS

from ui.navigation import ICON

ROOT = Path(__file__).resolve().parents[1]
SHOWN = ("app.py", "pages", "ui", "desk", "santa_core/words.py", "santa_core/reports", "santa_core/run", "storage")
"""Everything whose strings are written for people: the pages, the command line, the words, the reports and the
verification record. (The checks and prompts hold look-alike characters as data to detect, not to show.)"""
USD = ROOT / "santa_core" / "words.py"
"""Where `usd` is defined: the one place an amount is formatted."""

EMOJI = re.compile("[\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\ufe0f\uff01-\uff60\U0001f000-\U0001faff]")
"""Emoji and pictographs (misc technical, misc symbols, dingbats, arrows-and-shapes, the emoji variation selector,
full-width forms such as "＋", the emoji planes). Typographic marks (—, →, ×, ÷, κ, ·) are in every text font."""

MATERIAL = re.compile(r":material/([a-z0-9_]+):")
ICON_ARGS = {"icon", "page_icon"}
MONEY_FORMAT = re.compile(r"\$\{[^}]*:[,]?\.\d+[fg]\}|\$%\{[^}]*:\.\d+f\}")
"""An amount formatted on the spot: f"${x:.4f}" in Python, "$%{y:.4f}" in a plotly hover."""


def sources() -> list[Path]:
    """Every Python file of the app, the pages and our packages."""
    files: list[Path] = []
    for name in SHOWN:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


def strings(tree: ast.AST) -> list[ast.Constant]:
    """Every string literal in a module (f-string parts included)."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{node.lineno}"


def test_no_string_shown_holds_an_emoji() -> None:
    found = [
        f"{where(p, s)} {EMOJI.findall(s.value)}"
        for p in sources()
        for s in strings(ast.parse(p.read_text(encoding="utf-8")))
        if EMOJI.search(s.value)
    ]
    assert found == [], "use a Material icon (':material/name:') or words, not an emoji"


def test_every_icon_argument_is_a_material_icon() -> None:
    found = []
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            for kw in node.keywords:
                if (
                    kw.arg in ICON_ARGS
                    and isinstance(kw.value, ast.Constant)
                    and kw.value.value is not None
                    and not str(kw.value.value).startswith(":material/")
                ):
                    found.append(f"{where(path, node)} {kw.arg}={kw.value.value!r}")
    assert found == []
    assert all(icon.startswith(":material/") for icon in ICON.values())


def test_every_material_icon_named_exists() -> None:
    # Streamlit checks an icon= argument's name when the page runs, but not one inside markdown (a title, a
    # button label): a misspelt name there would print as text. Check them all against Streamlit's own list.
    named = {
        (where(p, s), name)
        for p in sources()
        for s in strings(ast.parse(p.read_text(encoding="utf-8")))
        for name in MATERIAL.findall(s.value)
    }
    assert named, "the scan found no icon at all: it reads nothing"
    assert [f"{at} {name}" for at, name in sorted(named) if name not in ALL_MATERIAL_ICONS] == []


def test_every_page_has_its_navigation_icon_in_its_title() -> None:
    pages = sorted(p.stem for p in (ROOT / "pages").glob("*.py") if p.stem != "home")
    assert sorted(ICON) == pages
    for page in pages:
        assert f'navigation.title("{page}", ' in (ROOT / "pages" / f"{page}.py").read_text(encoding="utf-8")


def test_no_amount_is_formatted_on_the_spot() -> None:
    # Read as lines: an f-string's format spec (".4f") is its own node, apart from the "$" before it.
    found = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in sources()
        if p != USD
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if MONEY_FORMAT.search(line)
    ]
    assert found == [], "write amounts with santa_core.words.usd (components.usd on a page)"
