"""House rules that keep the method pure, the pages safe and the package list honest."""

from __future__ import annotations

import ast
import re
import socket
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "santa_core").rglob("*.py")), ids=lambda p: p.name)
def test_santa_core_imports_nothing_of_ours_but_itself(path: Path) -> None:
    forbidden = {"streamlit", "sqlmodel", "sqlalchemy", "ui", "pages"}
    if path.name not in ("cli.py", "__main__.py"):  # the command line is a composition root
        forbidden.add("storage")
    assert not imported_modules(path) & forbidden


@pytest.mark.parametrize("path", sorted((ROOT / "storage").rglob("*.py")), ids=lambda p: p.name)
def test_storage_does_not_import_the_ui(path: Path) -> None:
    assert not imported_modules(path) & {"streamlit", "ui", "pages"}


UI_FILES = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py")])


@pytest.mark.parametrize("path", UI_FILES, ids=lambda p: p.name)
def test_no_raw_html_for_untrusted_text(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert "unsafe_allow_html" not in source and "st.html(" not in source


def test_every_page_file_is_in_the_navigation() -> None:
    app = (ROOT / "app.py").read_text(encoding="utf-8")
    for page in (ROOT / "pages").glob("*.py"):
        assert f'"pages/{page.name}"' in app, f"{page.name} is missing from st.navigation"


def test_requirements_are_pinned_and_xsrf_stays_on() -> None:
    lines = [ln.split("#")[0].strip() for ln in (ROOT / "requirements.txt").read_text().splitlines()]
    pins = [ln for ln in lines if ln]
    assert pins and all("==" in ln or ln == "-e ." for ln in pins)  # `-e .`: this project, editable
    assert any(re.fullmatch(r"streamlit(\[[a-z,]+\])?==1\.6\d*\.\d+", ln) for ln in pins)  # [auth]: st.login
    assert "enableXsrfProtection = true" in (ROOT / ".streamlit" / "config.toml").read_text()


def test_the_network_guard_refuses_non_loopback() -> None:
    with socket.socket() as s, pytest.raises(OSError, match="reach the network"):
        s.connect(("192.0.2.1", 443))
