"""The test suite: a package, so pytest puts the repository root on sys.path and `tests.*` imports resolve."""

import sys

# Imported before any conftest or test module: with bytecode writing off (PYTHONDONTWRITEBYTECODE, common in
# containers) every pytest process, each xdist worker among them, would rewrite the asserts of all ~300 test
# modules and compile the project's modules again at every run (about 11 s of CPU a worker); their bytecode goes to
# the __pycache__ folders git ignores instead, as Python's default has it.
sys.dont_write_bytecode = False
