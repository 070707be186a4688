"""`python -m santa_core review ...`: runs the installed `santa` command line.

Why through an entry point: santa_core is the method and imports no composition root, and the
command line is one (`desk.cli` wires the method to storage and the model APIs). The project
registers it as the `santa` console script (pyproject.toml); this module finds it with
`importlib.metadata`, the standard plugin mechanism, and runs it without naming the package that
provides it. So `python -m santa_core ...` and `santa ...` are the same program, byte for byte.
When nothing registers `santa` (the project is not installed), one line on stderr says how to
install it, and the exit code is 4, an internal error.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

DISTRIBUTION = "santa-desk"
"""The project (pyproject.toml) whose `santa` console script this runs."""
EXIT_INTERNAL = 4
"""The command line's exit code for an internal error: here, the command line itself is missing."""
INSTALL_HINT = (
    "run `pip install -r requirements.txt` in the repository (it installs this project and the `santa` command)"
)


def main() -> int:
    """Run the registered `santa` command line and return its exit code (4 when there is none)."""
    for command in entry_points(group="console_scripts", name="santa"):
        if command.dist is not None and command.dist.name != DISTRIBUTION:
            continue  # another package's `santa`: not this desk's command line
        try:
            run = command.load()
        except ImportError as exc:  # registered, but its code or a dependency is missing
            print(f"santa: the command line cannot be loaded ({exc}): {INSTALL_HINT}", file=sys.stderr)
            return EXIT_INTERNAL
        return run()
    print(f"santa: the command line is not installed: {INSTALL_HINT}", file=sys.stderr)
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
