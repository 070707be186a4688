"""Every write a page makes goes through the core's actions: a guard over the concrete stores.

The public methods of the `storage` stores that open a write transaction are wrapped for the
length of a test. On each call the stack is walked outward from the store: the first frame that is
either core code (`santa_core/`: an action, the batch driver, the runner) or page code (`ui/`,
`pages/`, `app.py`) decides; reaching page code first means a page wrote around the core's door,
however many `desk/` or `storage/` helpers sat between, and the test fails. The AppTest page tests
run the real pages in this process, so a page that writes through a concrete store fails them.
"""

from __future__ import annotations

import ast
import functools
import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PAGE_CODE = (str(ROOT / "ui") + "/", str(ROOT / "pages") + "/", str(ROOT / "app.py"))
CORE_CODE = str(ROOT / "santa_core") + "/"
START_UP = str(ROOT / "storage" / "startup.py")
"""Opening the database (migrate, seed, mark orphaned runs): system code, whoever opens the desk."""


def _self_calls(method: ast.FunctionDef) -> set[str]:
    """The names of the `self.<name>(...)` methods a method calls."""
    return {
        n.func.attr
        for n in ast.walk(method)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "self"
    }


def _writers(cls: ast.ClassDef) -> set[str]:
    """Methods that open a write transaction (`self._tx()`), themselves or through another method of the class."""
    calls = {m.name: _self_calls(m) for m in cls.body if isinstance(m, ast.FunctionDef)}
    writers = {"_tx"}
    while True:
        more = {name for name, called in calls.items() if called & writers} - writers
        if not more:
            return writers - {"_tx"}
        writers |= more


@functools.cache
def write_methods() -> tuple[tuple[str, str, str], ...]:
    """(module, class, method) of every public store method that writes."""
    found = []
    for path in sorted((ROOT / "storage").glob("*.py")):
        module = f"storage.{path.stem}"
        for cls in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(cls, ast.ClassDef):
                continue
            found += [(module, cls.name, name) for name in sorted(_writers(cls)) if not name.startswith("_")]
    return tuple(found)


def from_page(filename: str) -> bool:
    """Whether code in this file is a page or a piece of one."""
    return filename.startswith(PAGE_CODE)


def page_around_the_door(frame: FrameType | None) -> str | None:
    """The page code that reached a store without going through the core, walking outward from `frame`; None
    when the core (or the start-up that opens the database) came first, or no page is on the stack (a test,
    the command line, a worker thread)."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(CORE_CODE) or filename == START_UP:
            return None
        if from_page(filename):
            return f"{Path(filename).relative_to(ROOT)}:{frame.f_code.co_name}"
        frame = frame.f_back
    return None


def _guarded(method: Callable[..., Any], where: str, seen: list[str]) -> Callable[..., Any]:
    @functools.wraps(method)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if page := page_around_the_door(sys._getframe(1)):
            seen.append(f"{where} called by {page}")
        return method(*args, **kwargs)

    return guarded


@contextmanager
def one_door() -> Iterator[list[str]]:
    """While inside: every page-made write through a concrete store is listed in the yielded list."""
    seen: list[str] = []
    patched = []
    for module, cls_name, name in write_methods():
        cls = getattr(importlib.import_module(module), cls_name)
        original = cls.__dict__[name]
        setattr(cls, name, _guarded(original, f"{cls_name}.{name}", seen))
        patched.append((cls, name, original))
    try:
        yield seen
    finally:
        for cls, name, original in patched:
            setattr(cls, name, original)
