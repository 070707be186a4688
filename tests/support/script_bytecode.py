"""AppTest compiles each page script once per test process, not once per AppTest.

Every new `AppTest` makes its own `ScriptCache`, so app.py and each page it opens are read, parsed for
Streamlit's "magic" (an `ast` walk) and compiled afresh: some 5 % of the pages' tests' CPU. A code object is
immutable and every run executes it in a fresh module namespace, so one compiled per script text serves
every later AppTest (a real server keeps one `ScriptCache` for all its sessions anyway). The key is the
script's path, its text and whether magic is on: an edited or different script is compiled anew.
"""

from __future__ import annotations

import os.path
from typing import Any

from streamlit import config
from streamlit.runtime.scriptrunner import magic
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.source_util import open_python_file

_COMPILED: dict[tuple[str, str, bool], Any] = {}


def _bytecode(self: ScriptCache, script_path: str) -> Any:
    """ScriptCache.get_bytecode, answered from the process-wide cache (same reading, magic and compile)."""
    script_path = os.path.abspath(script_path)
    with self._lock:
        bytecode = self._cache.get(script_path, None)
        if bytecode is not None:
            return bytecode
        with open_python_file(script_path) as f:
            filebody = f.read()
        magic_on = bool(config.get_option("runner.magicEnabled"))
        key = (script_path, filebody, magic_on)
        bytecode = _COMPILED.get(key)
        if bytecode is None:
            body = magic.add_magic(filebody, script_path) if magic_on else filebody
            bytecode = compile(body, script_path, mode="exec", flags=0, dont_inherit=True, optimize=-1)
            _COMPILED[key] = bytecode
        self._cache[script_path] = bytecode
        return bytecode


def compile_once() -> None:
    """Answer every AppTest's script cache from one compile per script text (idempotent)."""
    ScriptCache.get_bytecode = _bytecode  # type: ignore[method-assign]
